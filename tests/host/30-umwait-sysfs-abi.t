#!/bin/bash
# Host side of tests/guest/30-umwait-sysfs.t: the sysfs ABI is unchanged by the
# series. The same suite ran on our kernel (main boot) and on Debian's kernel
# without the series (base boot); each printed a transcript of every input
# (errno and the state after it). The two transcripts must be identical.
. "$(dirname "$0")/../lib/tap.sh"

main=${LAB_RESULTS:-}/guest-main.log
base=${LAB_RESULTS:-}/guest-base.log
if [ ! -s "$main" ] && [ ! -s "$base" ]; then
	skip "sysfs transcripts" "no guest boot in this run (tests/run -k filter)"
	done_testing
	exit
fi

# transcript LOG SUITE: the transcript lines of SUITE/30-umwait-sysfs.t in LOG
transcript() {
	awk -v file="# file: $2/30-umwait-sysfs.t" '
		/^# file: / { on = ($0 == file); next }
		on && /^# sysfs-transcript: / { sub(/^# sysfs-transcript: /, ""); print }' "$1" 2>/dev/null
}

ours=$(transcript "$main" guest)
theirs=$(transcript "$base" guest-base)
cmp_ok "$(printf '%s\n' "$ours" | grep -c .)" -ge 100 "our kernel's transcript has every input ($(printf '%s\n' "$ours" | grep -c .) lines)"
cmp_ok "$(printf '%s\n' "$theirs" | grep -c .)" -ge 100 "the base kernel's transcript has every input ($(printf '%s\n' "$theirs" | grep -c .) lines)"
cmp_ok "$(printf '%s\n' "$ours" | grep -c ' -> OK ')" -ge 20 "it has accepted writes"
cmp_ok "$(printf '%s\n' "$ours" | grep -c ' -> EINVAL ')" -ge 20 "it has EINVAL"
cmp_ok "$(printf '%s\n' "$ours" | grep -c ' -> ERANGE ')" -ge 2 "it has ERANGE"
d=$(diff <(printf '%s\n' "$theirs") <(printf '%s\n' "$ours"))
if [ -z "$d" ]; then
	pass "the transcripts of the base kernel and ours are identical"
else
	fail "the transcripts of the base kernel and ours are identical" "diff base ours:"
	printf '%s\n' "$d" | head -20 | sed 's/^/#     /'
fi
diag "transcript (ours), first and last lines:"
printf '%s\n' "$ours" | sed -n '1,3p;$p' | sed 's/^/#     /'
done_testing
