# A performance-counter overflow on a CPU without a local APIC (vm/run --cpu
# ...,-apic,pmu=on): the PMI has no LVT to go to, so the overflow sets its
# IA32_PERF_GLOBAL_STATUS bit and nothing else. The PMU model (vm/qemu patch
# 0008) handed it to a NULL APIC, and QEMU died of a segmentation fault
# here; the runner, which expects this file's plan, reports that.
. /lab/tests/lib/tap.sh

check "the guest's CPU has no local APIC (no 'apic' flag)" sh -c '! grep -qw apic /proc/cpuinfo'
check "the guest's CPU has a PMU (/dev/cpu/0/msr reads IA32_PERF_GLOBAL_CTRL)" msr read 0 0x38f

# Counter 0 counts unhalted cycles with its interrupt bit (EN INT OS USR,
# event 3CH) from 2^48 - 2^20: it overflows after about a million cycles
check "IA32_PMC0 starts 2^20 cycles short of overflow" msr write 0 0xc1 0xfff00000
check "IA32_PERFEVTSEL0: unhalted cycles, with its PMI" msr write 0 0x186 0x53003c
overflowed() { [ $(($(msr read 0 0x38e) & 1)) -eq 1 ]; }
check "counter 0 overflowed: IA32_PERF_GLOBAL_STATUS bit 0 is set" until_true 60 overflowed
check "IA32_PERFEVTSEL0 stops it" msr write 0 0x186 0
check "IA32_PERF_GLOBAL_OVF_CTRL clears the status" msr write 0 0x390 1
is "$(msr read 0 0x38e)" 0x0000000000000000 "IA32_PERF_GLOBAL_STATUS is clear again"
# QEMU is still there to run the next command
is "$(echo alive)" alive "the guest runs on after the overflow"
done_testing
