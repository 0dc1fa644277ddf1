#!/bin/bash
# Host side of tests/guest/30-umwait-sysfs.t: the sysfs ABI is unchanged by the
# series. The same suite ran on our kernel (main boot, 6.1 with patches/6.1),
# on 6.12 with patches/6.12 (main-6.12 boot), on 7.2 with patches/7.2
# (main-7.2 boot) and on Debian's packaged 6.1, without the series (the
# distro boot runs tests/guest-base before tests/guest-distro); each
# printed a transcript of every input (errno and the state after it). The
# transcripts must be identical.
. "$(dirname "$0")/../lib/tap.sh"

main=${LAB_RESULTS:-}/guest-main.log
main612=${LAB_RESULTS:-}/guest-main-6.12.log
main72=${LAB_RESULTS:-}/guest-main-7.2.log
base=${LAB_RESULTS:-}/guest-distro.log
for f in "$main" "$main612" "$main72" "$base"; do
	need_input "$f" '^# sysfs-transcript: ' "30-umwait-sysfs.t of that boot"
done

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
# same_as_base NAME TRANSCRIPT: TRANSCRIPT is the base kernel's, line for line
same_as_base() {
	local d
	d=$(diff <(printf '%s\n' "$theirs") <(printf '%s\n' "$2"))
	if [ -z "$d" ]; then
		pass "the transcripts of the base kernel and $1 are identical"
	else
		fail "the transcripts of the base kernel and $1 are identical" "diff base, $1:"
		printf '%s\n' "$d" | head -20 | sed 's/^/#     /'
	fi
}
same_as_base ours "$ours"
ours612=$(transcript "$main612" guest)
cmp_ok "$(printf '%s\n' "$ours612" | grep -c .)" -ge 100 "the 6.12 kernel's transcript has every input ($(printf '%s\n' "$ours612" | grep -c .) lines)"
same_as_base "6.12 with patches/6.12" "$ours612"
ours72=$(transcript "$main72" guest)
cmp_ok "$(printf '%s\n' "$ours72" | grep -c .)" -ge 100 "the 7.2 kernel's transcript has every input ($(printf '%s\n' "$ours72" | grep -c .) lines)"
same_as_base "7.2 with patches/7.2" "$ours72"
diag "transcript (ours), first and last lines:"
printf '%s\n' "$ours" | sed -n '1,3p;$p' | sed 's/^/#     /'
done_testing
