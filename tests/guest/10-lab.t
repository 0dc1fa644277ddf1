# The guest the lab boots: WAITPKG visible, 4 CPUs, the kernel's umwait controls.
. /lab/tests/lib/tap.sh

check "CPUID WAITPKG flag in /proc/cpuinfo" grep -qw waitpkg /proc/cpuinfo
is "$(grep -c ^processor /proc/cpuinfo)" 4 "4 CPUs in /proc/cpuinfo"
is "$(cat /sys/devices/system/cpu/online)" 0-3 "CPUs 0-3 online"
d=/sys/devices/system/cpu/umwait_control
check "umwait_control directory exists" test -d $d
is "$(cat $d/enable_c02 2>&1)" 1 "enable_c02 defaults to 1"
is "$(cat $d/max_time 2>&1)" 100000 "max_time defaults to 100000"
for n in 0 1 2 3; do
	check "/dev/cpu/$n/msr exists" test -c /dev/cpu/$n/msr
done
check "tracefs mounted" test -e /sys/kernel/tracing/trace
check "debugfs mounted" test -d /sys/kernel/debug/x86
done_testing
