# Debian's stock qemu: no WAITPKG. umwait_init() must bail out before it touches
# anything: no sysfs directory, no debugfs file, no umwait event although
# trace_event=umwait:* enabled them, nothing about umwait in the kernel log.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

t=/sys/kernel/tracing

check "no waitpkg flag in /proc/cpuinfo" sh -c '! grep -qw waitpkg /proc/cpuinfo'
check "no /sys/devices/system/cpu/umwait_control" test ! -e /sys/devices/system/cpu/umwait_control
check "debugfs is mounted" test -d /sys/kernel/debug/x86
check "no /sys/kernel/debug/x86/umwait directory" test ! -e /sys/kernel/debug/x86/umwait
check "no /sys/kernel/debug/x86/umwait/control" test ! -e /sys/kernel/debug/x86/umwait/control

# the events exist (they are built in) and are enabled, yet none fired
check "the umwait events are registered" test -d $t/events/umwait/umwait_cpu_online
is "$(cat $t/events/umwait/enable 2>&1)" 1 "trace_event=umwait:* enabled them"
is "$(grep -c 'umwait_' $t/trace)" 0 "no umwait event in the trace buffer since boot"
if dmesg | grep -q 'switching default tracing clock'; then
	diag "the tracing clock switch at late_initcall cleared the buffer: boot events are"
	diag "only covered with trace_clock=global on the command line"
fi

# taking a CPU down and up runs no umwait callback either
check "cpu1 goes offline" sh -c 'echo 0 >/sys/devices/system/cpu/cpu1/online'
echo 1 >/sys/devices/system/cpu/cpu1/online
is "$(cat /sys/devices/system/cpu/online)" 0-3 "cpu1 back online"
is "$(grep -c 'umwait_' $t/trace)" 0 "no umwait event after a hotplug cycle"

umwait_log=$(dmesg | grep -v 'ommand line:' | grep -i -e umwait -e 'MSR.*0xe1')
is "$umwait_log" "" "the kernel log says nothing about umwait or MSR 0xe1 (but the command line)"
bad=$(dmesg | grep -E 'WARNING:|BUG:|Call Trace' | head -3)
is "$bad" "" "the kernel log has no WARNING, BUG or call trace"
# the series' kselftest (tests/guest/36-umwait-kselftest.t runs it where it
# must pass) skips here with the kselftest SKIP code and says why
if [ -x /lab/kselftest/run_kselftest.sh ]; then
	out=$(cd /lab/kselftest && ./run_kselftest.sh -t x86:umwait_control_64 2>&1)
	echo "$out" | sed 's/^/# /'
	is "$(echo "$out" | grep -E '^(not )?ok [0-9]+ selftests: ')" "ok 1 selftests: x86: umwait_control_64 # SKIP" \
		"kselftest umwait_control: SKIP (exit code 4) without WAITPKG"
	is "$(echo "$out" | grep -c '^# 1\.\.0 # SKIP no /sys/devices/system/cpu/umwait_control: the CPU has no WAITPKG$')" 1 \
		"kselftest umwait_control: it runs no check and names the missing WAITPKG"
else
	fail "kselftest umwait_control: SKIP without WAITPKG" "no /lab/kselftest/run_kselftest.sh (the kernel build installs it)"
fi
done_testing
