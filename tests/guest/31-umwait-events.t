# The umwait trace events (Documentation/trace/events-umwait.rst): the boot-time
# umwait_cpu_online of every CPU (trace_event=umwait:* on the command line).
# One umwait_control_update per changing sysfs write, none for a write of the
# same value or a rejected one, and every CPU holding the value after each: the
# series' kselftest checks those (tests/guest/36-umwait-kselftest.t runs it),
# through the debugfs dump, which tests/guest/33-umwait-debugfs.t shows reads
# each CPU's real MSR.
. /lab/tests/lib/tap.sh

d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
cpus=$(grep -c ^processor /proc/cpuinfo)

# events [NAME]: the umwait events in the trace buffer, "name: payload" per line
events() {
	grep -o "umwait_${1:-[a-z_]*}: .*" $t/trace
}

# cpu_events CPU [NAME]: the same for the records of one CPU (the [NNN] column)
cpu_events() {
	grep -F "[$(printf %03d "$1")]" $t/trace | grep -o "umwait_${2:-[a-z_]*}: .*"
}

# 1. the boot: one umwait_cpu_online per CPU, before anything clears the buffer
is "$(cat $t/events/umwait/enable)" 1 "trace_event=umwait:* enabled the umwait events at boot"
is "$(events cpu_online | wc -l)" "$cpus" "one umwait_cpu_online per CPU since boot"
if ! events cpu_online >/dev/null && dmesg | grep -q 'switching default tracing clock'; then
	diag "the boot events were lost when the tracing clock was switched at late_initcall"
	diag "(unstable sched_clock): boot with trace_clock=global next to trace_event=umwait:*"
fi
# each CPU's own: old is the CPU's reset value (0: the SDM's and the model's),
# new the kernel's default (max_time 100000, C0.2 on), one record each
got= want=
for n in $(seq 0 $((cpus - 1))); do
	got="$got|cpu$n: $(cpu_events $n cpu_online | tr '\n' ' ')"
	want="$want|cpu$n: umwait_cpu_online: old=0x00000000 new=0x000186a0 max_time=100000 c02=on "
done
is "$got" "$want" "each CPU recorded one boot umwait_cpu_online, from the reset value 0 to 0x000186a0"
is "$(events cpu_offline)" "" "no umwait_cpu_offline at boot"
is "$(events resume)" "" "no umwait_resume at boot"

# 2. nothing has changed the defaults
is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "the defaults: max_time 100000, enable_c02 1"
echo >$t/trace
done_testing
