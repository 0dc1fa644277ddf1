# umwait-trace's kernel floor, Linux 5.15 (BPF cookies on uprobes): below it,
# caps says so in one line and exits 2 (Debian 11's 5.10); from it on, caps
# loads (no map of its BPF programs is allocated while they run: the build
# checks the object, tools/umwait-trace/check-bpf-maps) and counts exactly,
# and the kernel warns of nothing it did (5.7 to 6.0 warned of a hash map
# allocated in a tracing program). Runs on every kernel: which branch it
# took is in its first line.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh

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
	if ut_start $tmp/caps.out caps --residency off --hist --hist-perturbing $tl; then
		out=$($tl -n 40 -c 1000000)
		ut_stop
		eval "$(report tpause-loop "$out")"
		is "$(ut_waits $tmp/caps.out)" "${r_waits:-x}" "caps from Linux 5.15 on: loads and counts tpause-loop's waits"
	fi
	is "$(grep -c 'needs Linux' $tmp/caps.out.err)" 0 "caps from Linux 5.15 on: no floor to complain of"
	dmesg >$tmp/dmesg.after
	is "$(diff $tmp/dmesg.before $tmp/dmesg.after | grep -c '^+.*\(WARNING\|BUG\)')" 0 \
		"caps from Linux 5.15 on: the kernel warned of nothing while it ran"
fi
rm -rf $tmp
done_testing
