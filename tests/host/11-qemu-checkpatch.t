#!/bin/bash
# The QEMU series in vm/qemu/patches: every patch vm/qemu/series lists is
# clean under QEMU's own scripts/checkpatch.pl, from the same Debian source
# the lab builds (0 errors, 0 warnings), its subject names the subsystem it
# changes ("target/i386: ", "softmmu: ", "hw/intc/apic: ", "tests/tcg/x86_64: ")
# and it is signed off. One report is tolerated, and listed as a diagnostic:
# "added, moved or deleted file(s), does MAINTAINERS need updating?", printed
# for every new file; the new files (target/i386/tcg/sysemu/*_helper.c,
# tests/tcg/x86_64/system/*) are covered by the existing "X86 TCG CPUs" entry
# (F: target/i386/tcg/, F: tests/tcg/x86_64/).
#
# A negative control shows that the check fails: the first patch with one of
# its added lines indented by a tab must give an ERROR.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/patches.sh"

version=$("$top/vm/qemu-version")
upstream=${version#*:}
upstream=${upstream%-*}
orig=$("$top/vm/cache-dir")/qemu-source-${version#*:}/qemu_$upstream.orig.tar.xz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -r "$orig" ] ||
	! tar -xJf "$orig" --wildcards '*/scripts/checkpatch.pl' -O >"$tmp/checkpatch.pl" 2>/dev/null ||
	[ ! -s "$tmp/checkpatch.pl" ]; then
	fail "QEMU's scripts/checkpatch.pl" "no $orig with scripts/checkpatch.pl: vm/ensure qemu downloads it"
	done_testing
	exit
fi

# reports PATCH: one line per report, "ok ..." (tolerated) or "bad ...",
# then "total: ..."
reports() {
	perl "$tmp/checkpatch.pl" --no-tree "$1" 2>&1 | awk '
		/^(ERROR|WARNING):/ {
			if ($0 ~ /^WARNING: added, moved or deleted file\(s\), does MAINTAINERS need updating\?/)
				print "ok " $0
			else
				print "bad " $0
		}
		/^total: / { print }'
}


mapfile -t patches < <(series "$top/vm/qemu/series")
cmp_ok "${#patches[@]}" -gt 0 "vm/qemu/series lists patches"
for p in "${patches[@]}"; do
	f=$top/vm/qemu/patches/$p
	out=$(reports "$f")
	grep '^ok ' <<<"$out" | sed 's/^ok /tolerated: /' | while read -r l; do diag "$p: $l"; done
	bad=$(grep '^bad ' <<<"$out")
	if ! grep -q '^total: ' <<<"$out"; then
		fail "$p: QEMU checkpatch is clean (0 errors, 0 warnings but MAINTAINERS)" "checkpatch did not run"
	else
		is "$bad" "" "$p: QEMU checkpatch is clean (0 errors, 0 warnings but MAINTAINERS)"
	fi
	case "$(subject "$f")" in
	target/i386:\ ?* | softmmu:\ ?* | hw/intc/apic:\ ?* | tests/tcg/x86_64:\ ?*) pass "$p: subject names its subsystem" ;;
	*) fail "$p: subject names its subsystem" "got: '$(subject "$f")'" ;;
	esac
	check "$p: signed off" grep -q '^Signed-off-by: ' "$f"
done

# negative control: a tab-indented added line
awk 'done == 0 && /^\+    [a-z]/ { sub(/^\+    /, "+\t"); done = 1 } { print }' \
	"$top/vm/qemu/patches/${patches[0]}" >"$tmp/broken.patch"
out=$(reports "$tmp/broken.patch")
diag "negative control: $(grep '^bad ' <<<"$out" | head -n 1)"
check "the check rejects a patch with a tab-indented line (negative control)" \
	grep -q '^bad ERROR: code indent should never use tabs' <<<"$out"
done_testing
