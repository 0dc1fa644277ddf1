# The umwait trace events (Documentation/trace/events-umwait.rst): the boot-time
# umwait_cpu_online of every CPU (trace_event=umwait:* on the command line), then
# exactly one umwait_control_update per changing sysfs write and none for no-op or
# rejected writes; after each change debugfs and /dev/cpu/N/msr agree on every CPU.
. /lab/tests/lib/tap.sh

d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
dbg=/sys/kernel/debug/x86/umwait/control
cpus=$(grep -c ^processor /proc/cpuinfo)

# events [NAME]: the umwait events in the trace buffer, "name: payload" per line
events() {
	grep -o "umwait_${1:-[a-z_]*}: .*" $t/trace
}

# cpu_events CPU [NAME]: the same for the records of one CPU (the [NNN] column)
cpu_events() {
	grep -F "[$(printf %03d "$1")]" $t/trace | grep -o "umwait_${2:-[a-z_]*}: .*"
}

# consistent CTRL: debugfs and the MSR of every online CPU hold CTRL (one
# test: the debugfs lines and each CPU's MSR, read with /dev/cpu/N/msr)
consistent() {
	_want=$(printf '0x%08x' "$1")
	_mt=$(($1 & 0xfffffffc))
	_c02=$((!($1 & 1)))
	_got=$(head -n 1 $dbg) _exp="cached $_want max_time=$_mt c02=$_c02"
	for _n in $(seq 0 $((cpus - 1))); do
		_got="$_got|$(grep "^cpu$_n " $dbg)|msr $(msr read $_n 0xe1)"
		_exp="$_exp|cpu$_n $_want max_time=$_mt c02=$_c02 ok|msr $(printf '0x%016x' "$1")"
	done
	is "$_got" "$_exp" "debugfs (cached and each CPU) and every CPU's MSR 0xe1 hold $_want"
}

# change FILE VALUE OLD NEW: the write succeeds and emits exactly one update event
change() {
	echo >$t/trace
	is "$(lab-write "$1" "$2")" OK "$(basename "$1") <- '$2'"
	_mt=$(($4 & 0xfffffffc))
	_c02=on
	[ $(($4 & 1)) -eq 1 ] && _c02=off
	is "$(events)" "$(printf 'umwait_control_update: old=0x%08x new=0x%08x max_time=%u c02=%s' \
		"$3" "$4" "$_mt" "$_c02")" "exactly one umwait_control_update $(printf '0x%x -> 0x%x' "$3" "$4")"
	consistent "$4"
}

# quiet FILE VALUE RESULT: a no-op or rejected write emits no event at all
quiet() {
	echo >$t/trace
	is "$(lab-write "$1" "$2")" "$3" "$(basename "$1") <- '$2': $3"
	is "$(events)" "" "no umwait event for '$2' ($3)"
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

# 2. changing writes: one event each, after every CPU has the new value
change $d/max_time 400000 0x186a0 0x61a80
change $d/enable_c02 0 0x61a80 0x61a81
change $d/max_time 0 0x61a81 0x1
change $d/enable_c02 on 0x1 0x0
change $d/max_time 0xfffffffc 0x0 0xfffffffc
change $d/max_time 100000 0xfffffffc 0x186a0

# 3. no-op writes: nothing changes, nothing fires
quiet $d/max_time 100000 OK
quiet $d/max_time 0x186a0 OK
quiet $d/enable_c02 1 OK
quiet $d/enable_c02 Y OK
quiet $d/enable_c02 on OK

# 4. rejected writes: nothing fires
quiet $d/max_time 100001 EINVAL
quiet $d/max_time 4294967296 ERANGE
quiet $d/max_time -4 EINVAL
quiet $d/max_time abc EINVAL
quiet $d/enable_c02 2 EINVAL
quiet $d/enable_c02 x EINVAL
consistent 0x186a0

# 5. the defaults are back and no other event fired meanwhile
is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "defaults restored"
echo >$t/trace
done_testing
