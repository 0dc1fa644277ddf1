# The TCG model's architectural PMU (vm/qemu patch 0008), seen through
# Linux's Intel perf driver and Debian's perf. Lines "# pmu LABEL: ..." are
# read again by tests/host/22-pmu-qemu-trace.t, which checks each count
# against the waits the lab's QEMU traced (waitpkg_wait) in the same window.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
ev=/sys/bus/event_source/devices/cpu
tmp=$(mktemp -d)

# The driver takes the PMU: without CPUID.0AH, with a mask shorter than the
# 7 architectural events, or with counters that do not read back what was
# written, Linux prints "no PMU driver" or "Broken PMU hardware detected".
line=$(dmesg | grep 'Performance Events:' | head -n 1)
diag "dmesg: $line"
case "$line" in
*'generic architected perfmon, Intel PMU driver.'*) pass "dmesg: Linux's Intel PMU driver took the generic architectural PMU" ;;
*) fail "dmesg: Linux's Intel PMU driver took the generic architectural PMU" "got: '$line'" ;;
esac
is "$(dmesg | grep -c 'Broken PMU\|perfevents: irq loop stuck\|NMI received for unknown reason')" 0 \
	"dmesg: no broken-PMU, stuck-PMI or unknown-NMI report"
check "$ev exists" test -d $ev
is "$(cat $ev/caps/pmu_name 2>&1)" generic_arch_v2+ "$ev/caps/pmu_name: a version 2 architectural PMU"
# CPUID.0AH:EBX marks the events the model does not count unavailable:
# instructions retired it counts (tests/guest/26-pmu-insns.t)
is "$(dmesg | grep -c "CPUID marked event: 'instructions' unavailable")" 0 \
	"dmesg: CPUID.0AH:EBX marks instructions retired available"
is "$(dmesg | grep -c "CPUID marked event: 'cache references' unavailable")" 1 \
	"dmesg: CPUID.0AH:EBX marks LLC references unavailable (not modelled)"

c01=cpu/event=0xec,umask=0x10/
c02=cpu/event=0xec,umask=0x20/
c0w=cpu/event=0xec,umask=0x70/

# stat LABEL EVENTS TPAUSE-LOOP-ARGS...: perf stat -e EVENTS on tpause-loop
# pinned to CPU 2; sets v_cycles v_ref v_c01 v_c02 v_c0w v_c02k (u suffix:
# user mode only, k: kernel only), r_* from tpause-loop's report (r_sum is
# the TSC cycles of all its waits), and prints both on one "# pmu" line.
stat() {
	label=$1 events=$2
	shift 2
	out=$(perf stat -x ';' -o $tmp/stat -e "$events" -- tpause-loop -p 2 "$@" 2>&1)
	eval "$(perf_counts $tmp/stat v_cycles=cycles v_ref=ref-cycles v_c01=${c01}u \
		v_c02=${c02}u v_c0w=${c0w}u v_c02k=${c02}k)"
	r_waits=x r_capped=x r_mean=x
	eval "$(report tpause-loop "$out")"
	r_sum=$(calc "$r_mean * $r_waits")
	# half the OS limit of each capped wait (none: x, and the check fails):
	# each capped wait was in its C0.x state from its start until max_time
	# had passed, whatever the host added after; half of it, for the host
	# preempting the vCPU between the wait's start and the PMU's update
	r_half=$(calc "$r_capped * $limit / 2")
	[ "$r_half" = 0 ] && r_half=x
	echo "# pmu $label: unhalted=$v_cycles ref=$v_ref c01=$v_c01 c02=$v_c02 c0wait=$v_c0w c02k=$v_c02k $(echo "$out" | grep '^tpause-loop:')"
}

all=cycles,ref-cycles,${c01}u,${c02}u,${c0w}u
# The waits ask for 10^12 cycles (some minutes) and the OS limit, 1M cycles,
# ends them: each then lasted max_time in its state, a time the program
# sets (a wait's run to its deadline would depend on when the host let it
# start).  One that an interrupt ended first lasted less: only the capped
# ones are counted on.
limit=1000000
far=1000000000000
echo $limit >$d/max_time
echo 1 >$d/enable_c02

# C0.2 waits: counted in umask 0x20 (and 0x70), never in 0x10. A wait counted
# in the state it requested regardless of what it used, or not at all, or
# the time around it counted too, fails here.
stat c02 "$all" -i tpause -s c02 -n 50 -c $far
cmp_ok "$v_c02" -ge "$r_half" "C0.2 waits: umask 0x20 counts at least half of max_time for each capped wait ($v_c02 of $r_capped x $limit)"
cmp_ok "$v_c02" -le "$r_sum" "C0.2 waits: umask 0x20 counts no more than their TSC time"
is "$v_c01" 0 "C0.2 waits: umask 0x10 (C0.1) counts nothing"
cmp_ok "$v_c0w" -ge "$v_c02" "C0.2 waits: umask 0x70 (C0_WAIT) counts them too"
cmp_ok "$v_cycles" -ge "$v_c02" "C0.2 waits: unhalted cycles include the waits (C0 is not halted)"
cmp_ok "$v_ref" -ge "$v_c02" "C0.2 waits: unhalted reference cycles include the waits"

stat c01 "$all" -i umwait -s c01 -n 50 -c $far
cmp_ok "$v_c01" -ge "$r_half" "C0.1 waits: umask 0x10 counts at least half of max_time for each capped wait ($v_c01 of $r_capped x $limit)"
cmp_ok "$v_c01" -le "$r_sum" "C0.1 waits: umask 0x10 counts no more than their TSC time"
is "$v_c02" 0 "C0.1 waits: umask 0x20 (C0.2) counts nothing"
cmp_ok "$v_c0w" -ge "$v_c01" "C0.1 waits: umask 0x70 (C0_WAIT) counts them too"

# enable_c02=0 sets IA32_UMWAIT_CONTROL[0]: C0.2 requests wait in C0.1
echo 0 >$d/enable_c02
stat demoted "$all" -i tpause -s c02 -n 50 -c $far
echo 1 >$d/enable_c02
cmp_ok "$v_c01" -ge "$r_half" "enable_c02=0: C0.2 requests count in umask 0x10 ($v_c01 of $r_capped x $limit)"
is "$v_c02" 0 "enable_c02=0: C0.2 requests count nothing in umask 0x20"

# Ring filtering: user waits are ring 3 time, none of it kernel time
stat ring "${c02}u,${c02}k" -i tpause -s c02 -n 30 -c $far
cmp_ok "$v_c02" -ge "$r_half" "ring filter: the user-mode count has the user waits ($v_c02 of $r_capped x $limit)"
is "$v_c02k" 0 "ring filter: the kernel-mode count has none of them"

# Halted time is not unhalted: CPU 3, taken offline, halts with interrupts
# off (only INIT wakes it) for as long as tpause-loop waits on CPU 2, a time
# the program measures itself (its RDTSCs around 2000 waits of 2M cycles,
# some 4G cycles: CPU 3's own work to go down and come up took some 200M).
# IA32_PMC3, programmed by hand for unhalted cycles (event 3CH, USR and OS),
# keeps its count across the INIT that brings CPU 3 back
# (tests/guest/37-pmu-init.t): it must gain less than that time, whatever
# the host's load (only CPU 3's own work to go down and come up counts). A
# model that counts halted time gains all of it.
echo 0 >$d/max_time
sel3=$(msr read 3 0x189) pmc3=$(msr read 3 0xc4) ctrl3=$(msr read 3 0x38f)
state_also="msr write 3 0x189 $sel3; msr write 3 0xc4 $pmc3; msr write 3 0x38f $ctrl3"
msr write 3 0x189 0x43003c
msr write 3 0xc4 0
msr write 3 0x38f $(calc "$ctrl3 | 8")
a=$(msr read 3 0xc4)
echo 0 >/sys/devices/system/cpu/cpu3/online
out=$(tpause-loop -p 2 -i tpause -n 2000 -c 2000000 2>&1)
echo 1 >/sys/devices/system/cpu/cpu3/online
b=$(msr read 3 0xc4)
eval "$(report tpause-loop "$out" h_)"
halted=$(calc "$h_tsc_end - $h_tsc_begin")
diag "offline CPU 3: IA32_PMC3 $a then $b; CPU 2's waits took $halted cycles"
is "$(cat /sys/devices/system/cpu/online)" 0-3 "CPU 3 went offline and came back"
is "$(calc "$b - $a > 0 && $b - $a < $halted")" 1 \
	"offline CPU 3: it gained unhalted cycles ($(calc "$b - $a"): its work to go down and come up), fewer than the cycles it was halted for ($halted)"
msr write 3 0x189 $sel3
msr write 3 0xc4 $pmc3
msr write 3 0x38f $ctrl3
state_also=
echo $limit >$d/max_time

# Sampling: perf record needs the overflow interrupt (the LVT's NMI): no
# sample means no PMI, one means the LVT stayed masked after the first, more
# than one per period of the whole run a PMI storm. How many periods a PMI
# covers depends on how late the host runs the vCPU, so the count is checked
# against the overflows QEMU traced between two marks (the TSC a one-wait
# tpause-loop reads) by tests/host/22-pmu-qemu-trace.t.
mark() {
	tpause-loop -n 1 -c 1000 | sed -n 's/.*tsc_begin=\([0-9]*\).*/\1/p'
}
m0=$(mark)
out=$(cd $tmp && perf record -o $tmp/perf.data -e cycles -c 2000000 -- \
	tpause-loop -p 2 -i tpause -n 100 -c 1000000 2>&1)
m1=$(mark)
samples=$(perf_samples "$out")
eval "$(report tpause-loop "$out")"
diag "perf record: ${samples:-?} samples; the waits took $((r_mean * r_waits)) cycles"
echo "# pmu record: samples=${samples:-x} period=2000000 mark_begin=$m0 mark_end=$m1 $(echo "$out" | grep '^tpause-loop:')"
cmp_ok "${samples:-0}" -ge 2 "perf record -e cycles: samples from more than one PMI"
cmp_ok "${samples:-0}" -le $(((m1 - m0) / 2000000 + 1)) "perf record -e cycles: at most one per 2M cycles of the whole run"
check "perf report reads the samples" sh -c "perf report -i $tmp/perf.data --stdio 2>/dev/null | grep -q tpause-loop"

echo 100000 >$d/max_time
rm -rf $tmp
done_testing
