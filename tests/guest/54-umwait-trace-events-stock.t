# umwait-trace events on a kernel without the series (every stock kernel):
# from msr:write_msr, filtered to IA32_UMWAIT_CONTROL (0xE1) in BPF, and the
# sysfs store path for who wrote, the same events the series' tracepoints
# give. The same scripted changes as tests/guest/41 (sysfs writes, no-ops and
# rejected ones, a hotplug cycle), and what events reports, value by value:
# on a kernel with the series, the series' events and msr's side by side in
# one run; on one without (tests/guest-debian runs this file on Debian's own
# kernels), msr's against what the writes did. Suspend to RAM is
# left out: on a stock kernel, a resume with msr:write_msr on never comes
# back (the series' first patch fixes it; events says so when it starts).
# 9 checks on either kind of kernel, whether or not events started.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/state.sh
. /lab/tests/lib/events.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
tmp=$(mktemp -d)
series=0
[ -d /sys/kernel/tracing/events/umwait ] && series=1
diag "umwait tracepoints of the series in this kernel: $([ $series = 1 ] && echo yes || echo no)"

# what OUT: up to " cpu=" of each line, and the writer (pid and comm) of a
# control_update: what the event says; where a per-CPU event fired is the
# CPU it names
what() {
	sed 's/ cpu=[0-9]* pid=[0-9]* comm=\(.*\)/ comm=\1/; /^cpu_/s/ comm=.*//' "$1"
}

echo 100000 >$d/max_time
# (the boots have 4 CPUs or 2: the list this file must leave as it found it)
online=$(cat /sys/devices/system/cpu/online)
echo 1 >$d/enable_c02

# offline restores the MSR's value at boot (umwait_init() read it once): the
# model's reset value, 0
want="control_update target=all max_time=400000 c02=on raw=0x00061a80 old_max_time=100000 old_c02=on old_raw=0x000186a0 comm=lab-write
control_update target=all max_time=400000 c02=off raw=0x00061a81 old_max_time=400000 old_c02=on old_raw=0x00061a80 comm=lab-write
control_update target=all max_time=0 c02=off raw=0x00000001 old_max_time=400000 old_c02=off old_raw=0x00061a81 comm=lab-write
control_update target=all max_time=0 c02=on raw=0x00000000 old_max_time=0 old_c02=off old_raw=0x00000001 comm=lab-write
control_update target=all max_time=100000 c02=on raw=0x000186a0 old_max_time=0 old_c02=on old_raw=0x00000000 comm=lab-write
cpu_offline target=cpu1 max_time=0 c02=on raw=0x00000000
cpu_online target=cpu1 max_time=100000 c02=on raw=0x000186a0 old_max_time=0 old_c02=on old_raw=0x00000000"

# ev_side OUT ARGS...: umwait-trace events ARGS beside the one ut_begin
# started, without a check of its own: one that does not start leaves its
# checks below to fail; its PID in ev_pid, stopped (SIGSTOP) once it traces
ev_side() {
	_o=$1
	shift
	: >"$_o.err"
	umwait-trace events "$@" >"$_o" 2>"$_o.err" &
	ev_pid=$!
	until_true 60 grep -q '^Tracing' "$_o.err" && kill -STOP $ev_pid
}

# msr's as text and as JSON, and on a kernel with the series the series' too;
# each stopped (SIGSTOP) while the writes are made: every event must come out
# of its ring buffer at exit
ut_begin $tmp/msr.out events --source msr
msr_pid=$ut_pid
kill -STOP $msr_pid 2>/dev/null
ev_side $tmp/json.out --source msr --json
json_pid=$ev_pid
ser_pid=
if [ $series = 1 ]; then
	ev_side $tmp/ser.out
	ser_pid=$ev_pid
fi
is "$(ev_writes | tr '\n' ' ')" "OK OK EINVAL OK OK EINVAL OK OK OK OK OK " \
	"the writes: 5 changing, 2 no-ops, 2 rejected (events reports 5), cpu1 offline and online"
# the side tracers: stopped as ut_end_frozen stops one, bounded, silent
for p in $ser_pid $json_pid; do
	tr_stop --cont $p || diag "events (PID $p): $tr_why"
done
ut_end_frozen "msr: events exits 0 on Ctrl-C" $msr_pid
msr_said=$(what $tmp/msr.out)
is "$msr_said" "$want" \
	"msr: the events, decoded and raw, exactly: 5 updates with the old values and the writer, no no-op or rejected write, one hotplug cycle"
is "$(grep -c '"source": "msr"' $tmp/json.out) $(grep -c '^{.*}$' $tmp/json.out)" "7 7" \
	"msr --json: 7 objects, each with \"source\": \"msr\""
is "$(sed -n 's/.*"event": "control_update".*"cpus_written": \([0-9]*\).*/\1/p' $tmp/json.out | sort -u)" \
	"$(grep -c ^processor /proc/cpuinfo)" \
	"msr --json: a control_update is a sysfs store whose writes reached every online CPU"
check "msr: events says where its events come from" \
	grep -q 'Tracing umwait events (msr:write_msr of 0xE1 and the sysfs store path' $tmp/msr.out.err
if [ $series = 1 ]; then
	is "$(what $tmp/ser.out)" "${msr_said:-(events --source msr reported nothing)}" \
		"the series' tracepoints and msr:write_msr report the same events, value by value"
else
	umwait-trace events -d 1 >$tmp/auto.out 2>$tmp/auto.err
	check "no umwait tracepoints here: events reads msr:write_msr by itself" \
		grep -q 'msr:write_msr of 0xE1' $tmp/auto.err
fi
is "$(cat $d/max_time) $(cat $d/enable_c02) $(cat /sys/devices/system/cpu/online)" "100000 1 $online" \
	"controls and CPUs restored ($online online)"
rm -rf $tmp
done_testing
