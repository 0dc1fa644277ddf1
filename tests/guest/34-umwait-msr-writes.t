# The WRMSRs of IA32_UMWAIT_CONTROL as the kernel's own msr:write_msr event sees
# them (filtered on msr == 0xe1), independent of the series' umwait events: a
# no-op or rejected sysfs write writes no MSR, an effective one writes each online
# CPU exactly once with the new value; a CPU going offline gets one write of the
# boot value, one coming online one write of the cached value. msr:read_msr shows
# that the online callback reads the MSR only while umwait_cpu_online is enabled.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/events.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
# the lab's guest: 4 CPUs, cpu3 hotpluggable (tests/guest/10-lab.t)
last=3

# each_online VALUE [SKIP]: "cpuN VALUE" for every online CPU but SKIP, sorted
each_online() {
	for _n in $(seq 0 $last); do
		[ "$_n" = "${2:-}" ] || echo "cpu$_n $1"
	done | sort
}

# writes FILE DATA RESULT WANT DESC: the write gives RESULT and WANT are the WRMSRs
writes() {
	ev_clear
	is "$(lab-write "$1" "$2")" "$3" "$(basename "$1") <- '$2': $3"
	is "$(msr_ops write_msr | sort)" "$4" "$5"
}

check "the kernel has the msr trace events" test -d $t/events/msr/write_msr
echo 100000 >$d/max_time
echo 1 >$d/enable_c02
# the umwait events stay off, in the top-level buffer too: the WRMSRs must
# not depend on them (the state guard turns them on again if this file
# does not get to)
echo 0 >$t/events/umwait/enable
# the WRMSRs and RDMSRs of IA32_UMWAIT_CONTROL, in an instance of this file's own
ev_open g34 msr:write_msr
check "msr:write_msr filtered on msr == 0xe1" ev_filter msr:write_msr 'msr == 0xe1'

# 1. no-op writes: the value does not change, no CPU is written
for v in 100000 0x186a0 0303240; do
	writes $d/max_time $v OK "" "no WRMSR for max_time '$v' (already 100000)"
done
for v in 1 y Y on t T; do
	writes $d/enable_c02 $v OK "" "no WRMSR for enable_c02 '$v' (already 1)"
done

# 2. rejected writes write nothing
writes $d/max_time 100001 EINVAL "" "no WRMSR for a rejected max_time"
writes $d/max_time 4294967296 ERANGE "" "no WRMSR for an out-of-range max_time"
writes $d/enable_c02 x EINVAL "" "no WRMSR for a rejected enable_c02"

# 3. effective writes: each online CPU once, with the new value
writes $d/max_time 400000 OK "$(each_online 0x61a80)" "max_time 400000: one WRMSR of 0x61a80 on each CPU"
writes $d/enable_c02 0 OK "$(each_online 0x61a81)" "enable_c02 0: one WRMSR of 0x61a81 on each CPU"
writes $d/enable_c02 n OK "" "enable_c02 n: no-op, no WRMSR"

# 4. with a CPU offline: it gets the boot value once when it goes, no update
#    while it is away, and the cached value once when it comes back
writes /sys/devices/system/cpu/cpu$last/online 0 OK "cpu$last 0x0" \
	"cpu$last offline: one WRMSR, on cpu$last, of the boot value (0 in the model)"
writes $d/max_time 200000 OK "$(each_online 0x30d41 $last)" \
	"max_time 200000 with cpu$last offline: one WRMSR on each online CPU, none on cpu$last"
writes /sys/devices/system/cpu/cpu$last/online 1 OK "cpu$last 0x30d41" \
	"cpu$last online: one WRMSR, on cpu$last, of the cached value"

# 5. the online callback reads the MSR only for its trace event
echo "msr:read_msr" >>$ev_dir/set_event
check "msr:read_msr filtered on msr == 0xe1" ev_filter msr:read_msr 'msr == 0xe1'
echo 0 >/sys/devices/system/cpu/cpu$last/online
ev_clear
echo 1 >/sys/devices/system/cpu/cpu$last/online
is "$(msr_ops read_msr)" "" "umwait_cpu_online disabled: the online callback reads no MSR"
echo 1 >$ev_dir/events/umwait/umwait_cpu_online/enable
echo 0 >/sys/devices/system/cpu/cpu$last/online
ev_clear
echo 1 >/sys/devices/system/cpu/cpu$last/online
is "$(msr_ops read_msr)" "cpu$last 0x0" "umwait_cpu_online enabled: one RDMSR on cpu$last, for old_control"
is "$(grep -c 'umwait_cpu_online: old=0x00000000 new=0x00030d41 ' $ev_dir/trace)" 1 \
	"and the event reports what it read"

# back to the defaults; the umwait events on again as the boot left them
ev_close
echo 100000 >$d/max_time
echo 1 >$d/enable_c02
echo 1 >$t/events/umwait/enable
is "$(cat /sys/devices/system/cpu/online)" "0-$last" "all CPUs online"
done_testing
