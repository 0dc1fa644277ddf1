# umwait-trace events against a scripted series of sysfs writes and a CPU hotplug
# cycle: one line per changing write (none for a no-op or a rejected write), one
# umwait_cpu_offline and one umwait_cpu_online for the cycle, decoded and raw,
# naming the writer; the kernel's own trace buffer saw the same events.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/events.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
tmp=$(mktemp -d)

# This suite boots the kernel with the series: no umwait tracepoints is a failure
# (tests/guest-base checks the one line events prints on a kernel without them).
check "the kernel has the umwait tracepoints ($t/events/umwait)" test -d $t/events/umwait

# ev_start ARGS...: umwait-trace events ARGS, output in $tmp/ev.out{,.err};
# one TAP line for its start
ev_start() {
	ut_begin $tmp/ev.out events "$@"
}

# ev_start stops events (SIGSTOP) once it traces: the writes' events wait
# unread in the ring buffer. ev_stop DESC: SIGINT and SIGCONT at once; every
# event must still come out (its drain at exit); exit status in ut_rc, and
# one check DESC that it is 0
ev_freeze() {
	kill -STOP $ut_pid 2>/dev/null
}
ev_stop() {
	ut_end_frozen "$1"
}

# up to " cpu=": what the event says; the rest names where it fired
what() {
	sed 's/ cpu=[0-9]* pid=[0-9]* comm=.*//' $tmp/ev.out
}

echo 100000 >$d/max_time
echo 1 >$d/enable_c02
# the kernel's own record of the same events
ev_open g41 umwait

results="OK OK EINVAL OK OK EINVAL OK OK OK OK OK"

ev_start
ev_freeze
is "$(ev_writes | tr '\n' ' ')" "$results " "the writes: 7 changing, 2 no-ops, 2 rejected, cpu1 offline and online"
ev_stop "events exits 0 on Ctrl-C"

# offline restores the MSR's value at boot, before the kernel first
# wrote it (umwait_init() reads it once): the model's reset value,
# 0 (vm/qemu patch 0001), not the sysfs default
orig=0x00000000 omt=0 oc02=on
want="control_update target=all max_time=400000 c02=on raw=0x00061a80 old_max_time=100000 old_c02=on old_raw=0x000186a0
control_update target=all max_time=400000 c02=off raw=0x00061a81 old_max_time=400000 old_c02=on old_raw=0x00061a80
control_update target=all max_time=0 c02=off raw=0x00000001 old_max_time=400000 old_c02=off old_raw=0x00061a81
control_update target=all max_time=0 c02=on raw=0x00000000 old_max_time=0 old_c02=off old_raw=0x00000001
control_update target=all max_time=100000 c02=on raw=0x000186a0 old_max_time=0 old_c02=on old_raw=0x00000000
cpu_offline target=cpu1 max_time=$omt c02=$oc02 raw=$orig
cpu_online target=cpu1 max_time=100000 c02=on raw=0x000186a0 old_max_time=$omt old_c02=$oc02 old_raw=$orig"
real=$(what)
is "$real" "$want" "the events, decoded and raw, exactly: 5 updates, no no-op or rejected write, one hotplug cycle"
is "$(grep '^control_update' $tmp/ev.out | sed 's/.* comm=//' | sort -u)" lab-write \
	"control_update names the writer (comm=lab-write)"
is "$(grep '^cpu_o' $tmp/ev.out | sed 's/.* cpu=\([0-9]*\) .*/\1/' | tr '\n' ' ')" "1 1 " \
	"the hotplug callbacks ran on cpu1"
is "$(grep -c 'umwait_' $ev_dir/trace) $(grep -c . $tmp/ev.out)" "7 7" \
	"as many events as the kernel's own trace buffer recorded (7)"
is "$(tail -n 1 $tmp/ev.out.err)" "7 events, 0 lost" "the summary counts them, none lost"

# Negative controls: the same writes traced by umwait-trace with one bug
# (tests/mutants): the exact check above must fail on each, and it passed
# on umwait-trace itself.
for m in events-no-drain events-drop; do
	UT_BIN=umwait-trace-mutant-$m
	ev_start
	ev_freeze
	ev_writes >/dev/null
	ev_stop "mutant $m: exits 0 on Ctrl-C"
	unset UT_BIN
	diag "mutant $m printed $(grep -c . $tmp/ev.out) of 7 events, exit $ut_rc"
	mutant=$(what)
	if [ "$real" = "$want" ] && [ "$ut_rc" = 0 ] && [ "$mutant" != "$want" ]; then
		pass "mutant $m: the exact check of the events fails on it (and passed on umwait-trace)"
	else
		fail "mutant $m: the exact check of the events fails on it (and passed on umwait-trace)" \
			"real run matched: $([ "$real" = "$want" ] && echo yes || echo no); mutant exit $ut_rc; mutant matched: $([ "$mutant" = "$want" ] && echo yes || echo no)"
	fi
done

# --json and -T: the same first event, as an object and with a time stamp
ev_start --json -T
ev_freeze
lab-write $d/max_time 400000 >/dev/null
lab-write $d/max_time 100000 >/dev/null
ev_stop "--json -T: exits 0 on Ctrl-C"
is "$(sed -n 1p $tmp/ev.out | sed 's/"time": "[0-9:]*", "ts_ns": [0-9]*, //; s/, "cpu": .*//')" \
	'{"event": "control_update", "target": "all", "control": 400000, "max_time": 400000, "c02": true, "old_control": 100000, "old_max_time": 100000, "old_c02": true' \
	"--json: one object per event, decoded and raw"
is "$(grep -c '^{.*}$' $tmp/ev.out)" 2 "--json: two events, two objects"
# (stopped while the writes are made: on a slow guest they may take longer
# than its 2 s, and it drains what is left once the time is up)
ev_start -T -d 2
ev_freeze
lab-write $d/enable_c02 0 >/dev/null
lab-write $d/enable_c02 1 >/dev/null
kill -CONT $ut_pid 2>/dev/null
wait $ut_pid
is "$?" 0 "-d 2: events exits by itself"
is "$(grep -c '^[0-2][0-9]:[0-5][0-9]:[0-5][0-9] control_update ' $tmp/ev.out)" 2 \
	"-T: each line starts with HH:MM:SS"

is "$(cat $d/max_time) $(cat $d/enable_c02) $(cat /sys/devices/system/cpu/online)" "100000 1 0-3" \
	"controls and CPUs restored"
ev_close
rm -rf $tmp
done_testing
