#!/bin/bash
# The kernel series in patches/7.2 (for Debian unstable's linux-source-7.2) and
# its backports patches/6.12 and patches/6.1: every patch of each series file is
# clean under the pristine tree's scripts/checkpatch.pl --strict (0 errors, 0
# warnings, 0 checks), each cover letter is a real one for exactly its series,
# and the S3 fix comes first in each, tagged for x86/urgent and stable.
#
# Three reports are tolerated, all false positives, and each one is listed as a
# diagnostic:
#  - FILE_PATH_CHANGES ("added, moved or deleted file(s), does MAINTAINERS need
#    updating?"): printed for every new file; the new files are covered by the
#    existing X86 ARCHITECTURE (arch/x86/) and TRACING entries.
#  - SPACING on "#define TRACE_INCLUDE_PATH asm/trace/" in a trace header: the
#    path which define_trace.h needs, read as a division (fpu.h and hyperv.h in
#    arch/x86/include/asm/trace/ get the same report).
#  - UNKNOWN_COMMIT_ID on a "Fixes:" tag whose commit is in the list below: Debian's
#    source tree has no upstream history, so checkpatch cannot find any upstream
#    commit. Each listed id was checked against the upstream history by hand.
#    7f47d8cc039f ("x86, tracing, perf: Add trace point for MSR accesses") added
#    the msr:write_msr event, and with it the traced writes the S3 fix removes.
#
# Each patch's subject names the subsystem it changes, as the tip tree wants it:
# x86/umwait: for umwait.c and its documents, x86/power: for the S3 fix (which
# stands alone, for stable), selftests/x86: for the kselftest.
#
# Each series is checked by its own tree's checkpatch (7.2's knows APIs that
# 6.1 and 6.12 do not have, such as kzalloc_obj()).
#
# usage: LAB_KERNEL_SRC=6.1_TREE LAB_KERNEL_SRC_6_12=6.12_TREE \
#        LAB_KERNEL_SRC_7_2=7.2_TREE tests/host/10-checkpatch.t
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/patches.sh"


# upstream commits named by Fixes: tags of the series
known_commits="7f47d8cc039f"

for pdir in patches/7.2 patches/6.12 patches/6.1; do
	case $pdir in
	patches/7.2) var=LAB_KERNEL_SRC_7_2 ;;
	patches/6.12) var=LAB_KERNEL_SRC_6_12 ;;
	*) var=LAB_KERNEL_SRC ;;
	esac
	src=${!var:-}
	if [ -z "$src" ] || [ ! -x "$src/scripts/checkpatch.pl" ]; then
		fail "checkpatch --strict on $pdir" \
			"$var is not set to the kernel tree of $pdir, with scripts/checkpatch.pl"
		continue
	fi
	mapfile -t patches < <(series "$top/$pdir/series")
	cmp_ok "${#patches[@]}" -gt 0 "$pdir/series lists patches"

	for p in "${patches[@]}"; do
		f=$top/$pdir/$p
		# a missing patch fails each of its checks (grep on no file fails)
		check "$p: exists" test -r "$f"
		out=$(cd "$src" && perl scripts/checkpatch.pl --strict --show-types "$f" 2>&1)
		# one line per report: "ok TYPE: message" (tolerated) or "bad TYPE: message | code"
		reports=$(printf '%s\n' "$out" | awk -v known="$known_commits" '
			function flush() {
				if (!hdr)
					return
				type = hdr
				sub(/^[A-Z]+:/, "", type)
				sub(/:.*/, "", type)
				id = hdr
				sub(/^[^\047]*\047/, "", id)
				sub(/\047.*/, "", id)
				if (type == "FILE_PATH_CHANGES" ||
				    (type == "SPACING" && code ~ /^\+#define TRACE_INCLUDE_PATH asm\/trace\/$/) ||
				    (type == "UNKNOWN_COMMIT_ID" && index(" " known " ", " " id " ") > 0))
					print "ok " hdr
				else
					print "bad " hdr " | " code
				hdr = ""
			}
			/^(ERROR|WARNING|CHECK):/ { flush(); hdr = $0; code = ""; next }
			hdr && /^\+/ && code == "" { code = $0; next }
			hdr && /^$/ { flush() }
			END { flush() }')
		bad=$(printf '%s\n' "$reports" | grep '^bad ' | sed 's/^bad //')
		if ! printf '%s\n' "$out" | grep -q '^total: [0-9]* errors'; then
			fail "$p: checkpatch --strict is clean" "checkpatch did not run:"
			printf '%s\n' "$out" | tail -5 | sed 's/^/#     /'
		elif [ -z "$bad" ]; then
			pass "$p: checkpatch --strict is clean"
		else
			fail "$p: checkpatch --strict is clean" "expected no report but the tolerated ones, got:"
			printf '%s\n' "$bad" | sed 's/^/#     /'
		fi
		printf '%s\n' "$reports" | grep '^ok ' | sed "s/^ok /$p: tolerated: /" |
			while IFS= read -r line; do diag "$line"; done

		from=$(sed -n 's/^From: //p' "$f" 2>/dev/null | head -1)
		is "$from" "Umwait Lab <lab@umwait.invalid>" "$p: author"
		check "$p: Signed-off-by the author" grep -qx 'Signed-off-by: Umwait Lab <lab@umwait.invalid>' "$f"
		subj=$(subject "$f" 2>/dev/null)
		case "$subj" in
		x86/umwait:\ [A-Z]* | x86/power:\ [A-Z]* | selftests/x86:\ [A-Z]*)
			pass "$p: subject '$subj' has its subsystem's prefix" ;;
		*) fail "$p: subject has the x86/umwait:, x86/power: or selftests/x86: prefix" "got: '$subj'" ;;
		esac
	done

	# the S3 fix: first, for x86/urgent and stable
	first=$top/$pdir/${patches[0]:-none}
	is "$(subject "$first" 2>/dev/null)" "x86/power: Do not trace MSR writes before the GS base is restored" \
		"$pdir: the S3 fix is the first patch"
	is "$(grep -cx -e 'Fixes: 7f47d8cc039f ("x86, tracing, perf: Add trace point for MSR accesses")' \
		-e 'Cc: stable@vger.kernel.org' "$first" 2>&1)" 2 \
		"$pdir: the S3 fix has Fixes: 7f47d8cc039f and Cc: stable@vger.kernel.org"

	# the cover letter: git format-patch --cover-letter --base, with the placeholders
	# replaced, listing exactly the patches of the series (a missing one
	# fails each check: grep on no file fails, and "! grep" is asked of
	# the file only once it is there)
	cover=$top/$pdir/0000-cover-letter.patch
	n=${#patches[@]}
	# the series for the current tree is v4; a backport names its stable tree
	prefix="PATCH v4"
	[ "$pdir" = patches/7.2 ] || prefix="PATCH ${pdir#patches/} v4"
	check "$pdir/0000-cover-letter.patch exists" test -r "$cover"
	check "cover letter: not listed in patches/series" \
		sh -c "! grep -qx '0000-cover-letter.patch' '$top/$pdir/series'"
	check "cover letter: subject is [$prefix 0/$n]" grep -q "^Subject: \[$prefix 0/$n\] " "$cover"
	check "cover letter: subject placeholder replaced" sh -c "test -r '$cover' && ! grep -q '\*\*\* SUBJECT HERE \*\*\*' '$cover'"
	check "cover letter: blurb placeholder replaced" sh -c "test -r '$cover' && ! grep -q '\*\*\* BLURB HERE \*\*\*' '$cover'"
	check "cover letter: base-commit trailer" grep -q '^base-commit: [0-9a-f]\{40\}$' "$cover"
	is "$(sed -n 's/^From: //p' "$cover" 2>/dev/null | head -1)" "Umwait Lab <lab@umwait.invalid>" "cover letter: author"
	for p in "${patches[@]}"; do
		subj=$(subject "$top/$pdir/$p" 2>/dev/null)
		check "cover letter: lists '$subj'" grep -qF "  $subj" "$cover"
	done
	words=$(sed -n '/^Subject:/,/^Umwait Lab (/p' "$cover" 2>/dev/null | wc -w)
	cmp_ok "$words" -ge 100 "cover letter: has a real text ($words words)"
done

done_testing
