# Debian's kernel without the series (the distro boot: vm/run --kernel distro), on the lab's
# WAITPKG qemu: umwait works (6.1's sysfs controls) but has no tracepoints.
. /lab/tests/lib/tap.sh

check "umwait_control exists (6.1's own sysfs ABI)" test -d /sys/devices/system/cpu/umwait_control
check "no umwait trace events in this kernel" test ! -e /sys/kernel/tracing/events/umwait
check "no debugfs umwait file in this kernel" test ! -e /sys/kernel/debug/x86/umwait/control

# events reads msr:write_msr here (tests/guest-debian/54); asked for the
# series' tracepoints, it says in one line that they are missing
umwait-trace events --source umwait >/tmp/out 2>/tmp/err
is "$?" 2 "events --source umwait on a kernel without the series: exit status 2"
is "$(cat /tmp/err)" "umwait-trace: kernel lacks umwait tracepoints (--source msr reads msr:write_msr instead)" "events: one line on stderr"
is "$(cat /tmp/out)" "" "events: nothing on stdout"

# status still works from /dev/cpu/N/msr on such a kernel
out=$(umwait-trace status 2>&1)
rc=$?
is "$rc" 0 "status on a kernel without the debugfs file: every CPU agrees (exit 0)"
case "$out" in
*"source: /dev/cpu/N/msr"* | *"source: /dev/cpu"*) pass "status reads the MSRs directly" ;;
*) fail "status reads the MSRs directly" "got: $out" ;;
esac
done_testing
