# Guest ABI on an older machine type (vm/run --machine pc-i440fx-7.1 --cpu
# max,...,pmu=on): QEMU 7.1's TCG had no PMU, so CPUID.0AH was empty whatever
# "pmu" said, and a guest started on that machine type must keep seeing
# that, or it could not migrate to a QEMU without the model. The PMU model
# (vm/qemu patch 0008) has the compat property x-tcg-pmu, off for machine
# types up to 7.1; without it this guest finds a PMU. The main boot (the
# newest "pc") is the positive control: tests/guest/24 finds Linux's Intel
# PMU driver there.
. /lab/tests/lib/tap.sh

check "the guest's CPU is a TCG 'max' with WAITPKG" grep -qw waitpkg /proc/cpuinfo
is "$(grep -cw arch_perfmon /proc/cpuinfo)" 0 \
	"no arch_perfmon flag: CPUID.0AH reports no architectural PMU"
check "no core PMU in /sys/bus/event_source/devices" sh -c '! test -e /sys/bus/event_source/devices/cpu'
line=$(dmesg | grep 'Performance Events:' | head -n 1)
diag "dmesg: $line"
case "$line" in
*'Intel PMU driver'*) fail "dmesg: Linux's Intel PMU driver found no PMU" "got: '$line'" ;;
*) pass "dmesg: Linux's Intel PMU driver found no PMU" ;;
esac
done_testing
