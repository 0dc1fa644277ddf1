# umwait-trace's kernel floor, Linux 5.15 (BPF cookies on uprobes): below it,
# caps says so in one line and exits 2 (Debian 11's 5.10); from it on, caps
# loads (no map of its BPF programs is allocated while they run: the build
# checks the object, tools/umwait-trace/check-bpf-maps) and counts exactly;
# on either side the kernel warns of nothing it did (5.7 to 6.0 warned of a
# hash map allocated in a tracing program). Runs on every kernel: which
# branch it took is in its first line. The count of checks is the kernel's:
# 4 below the floor, 5 from it on (tests/run runs it on 6.1 alone).
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/state.sh
state_guard

tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)
rel=$(uname -r)
maj=${rel%%.*}
min=${rel#*.}
min=${min%%[!0-9]*}
old=0
[ "$maj" -lt 5 ] || { [ "$maj" -eq 5 ] && [ "$min" -lt 15 ]; } && old=1
diag "kernel $rel: $([ $old = 1 ] && echo 'below the floor' || echo 'at or above the floor') (5.15)"
dmesg >$tmp/dmesg.before

if [ $old = 1 ]; then
	umwait-trace caps $tl >$tmp/out 2>$tmp/err
	is "$?" 2 "caps below Linux 5.15: exit status 2"
	is "$(cat $tmp/err)" "umwait-trace: needs Linux 5.15 or later: this kernel ($rel) lacks BPF cookies on uprobes" \
		"caps below Linux 5.15: one line, the floor and what is missing"
	is "$(cat $tmp/out)" "" "caps below Linux 5.15: nothing on stdout"
else
	ut_begin $tmp/caps.out caps --residency off --hist --hist-perturbing $tl
	out=$($tl -n 40 -c 1000000)
	ut_end "caps from Linux 5.15 on: exits 0 on Ctrl-C"
	eval "$(report tpause-loop "$out")"
	is "$(ut_waits $tmp/caps.out)" "${r_waits:-x}" "caps from Linux 5.15 on: loads and counts tpause-loop's ${r_waits:-?} waits"
	is "$(grep -c 'needs Linux' $tmp/caps.out.err)" 0 "caps from Linux 5.15 on: no floor to complain of"
fi
dmesg >$tmp/dmesg.after
is "$(diff $tmp/dmesg.before $tmp/dmesg.after | grep -c '^+.*\(WARNING\|BUG\)')" 0 \
	"caps: the kernel warned of nothing while it ran"
rm -rf $tmp
done_testing
