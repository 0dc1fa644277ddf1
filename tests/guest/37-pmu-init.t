# INIT and the PMU model (vm/qemu patch 0008), through /dev/cpu/3/msr: INIT
# leaves the counters and their controls as they were and they count on (SDM
# Vol. 3A, Table 10-1: "Perf. Mon. Counters and Event Select: INIT:
# Unchanged"). Taking CPU 3 offline and back online sends it INIT and SIPI; a
# model that stops counting at INIT (or clears the counter) fails here.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

ctrl=$(msr read 3 0x38f)
sel=$(msr read 3 0x189)
pmc=$(msr read 3 0xc4)
# put back by the state guard too, if this file ends before it does
state_also="msr write 3 0x189 $sel; msr write 3 0xc4 $pmc; msr write 3 0x38f $ctrl"

check "program IA32_PERFEVTSEL3 for unhalted core cycles" msr write 3 0x189 0x43003c
check "enable counter 3 in IA32_PERF_GLOBAL_CTRL" msr write 3 0x38f $((ctrl | 8))
before=$(msr read 3 0xc4)
check "CPU 3 goes offline" sh -c 'echo 0 >/sys/devices/system/cpu/cpu3/online'
check "CPU 3 comes back online (INIT, SIPI)" sh -c 'echo 1 >/sys/devices/system/cpu/cpu3/online'
is "$(msr read 3 0x189)" 0x000000000043003c "INIT left IA32_PERFEVTSEL3 as it was"
is "$(msr read 3 0x38f)" "$(printf '0x%016x' $((ctrl | 8)))" "INIT left IA32_PERF_GLOBAL_CTRL as it was"
a=$(msr read 3 0xc4)
b=$(msr read 3 0xc4)
diag "IA32_PMC3: $before before INIT, then $a and $b"
cmp_ok $((a)) -ge $((before)) "INIT left IA32_PMC3's count"
cmp_ok $((b)) -gt $((a)) "IA32_PMC3 counts on after INIT"

check "restore IA32_PERFEVTSEL3" msr write 3 0x189 $sel
check "restore IA32_PMC3" msr write 3 0xc4 $pmc
check "restore IA32_PERF_GLOBAL_CTRL" msr write 3 0x38f $ctrl
done_testing
