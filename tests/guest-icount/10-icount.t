# The lab's QEMU under -icount shift=auto (vm/run --icount): the virtual
# clock follows the instructions executed, and QEMU may read it only in the
# last instruction of a translation block. The WAITPKG model and the PMU
# (vm/qemu patches 0003, 0008) read it in instructions that wait, halt,
# change the CPL or access an MSR. Where they read it mid-block, this boot
# ended with "Bad icount read" before any of this ran (Linux's perf driver
# reads a PMU MSR while it starts); that is caught by the runner, which
# expects this file's plan. What follows is what a user of -icount (or of
# record/replay, which is built on it) relies on: the waits and the PMU
# behave as they do without it, on the instruction-driven TSC.
#
# The boot has one vCPU: icount runs vCPUs in turn on one thread, and a vCPU
# spinning on a lock the other holds (lockdep's, in this kernel) makes the
# instruction-driven clock run for many seconds before the holder runs:
# RCU reported a stall in a 2-vCPU boot on a loaded host.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
tmp=$(mktemp -d)
c01=cpu/event=0xec,umask=0x10/
c02=cpu/event=0xec,umask=0x20/

# run LABEL TPAUSE-LOOP-ARGS...: perf stat on tpause-loop (one vCPU: see below);
# sets v_u v_k (unhalted cycles in user and kernel mode), v_c01 v_c02 (user
# mode), and r_* from tpause-loop's own report
run() {
	label=$1
	shift
	out=$(perf stat -x ';' -o $tmp/stat -e "cycles:u,cycles:k,${c01}u,${c02}u" \
		-- tpause-loop "$@" 2>&1)
	eval "$(perf_counts $tmp/stat v_u=cycles:u v_k=cycles:k v_c01=${c01}u v_c02=${c02}u)"
	r_waits=x r_capped=x r_ran_to_deadline=x r_ended_early=x r_mean=0
	eval "$(report tpause-loop "$out")"
	r_sum=$((r_mean * r_waits))
	echo "# $label: user=$v_u kernel=$v_k c01=$v_c01 c02=$v_c02 $(echo "$out" | grep '^tpause-loop:')"
}

# The OS limit off: every wait runs to its deadline (CF=0). The PMU counts
# each in the state it used, on the same TSC as the program's own clock.
echo 0 >$d/max_time
echo 1 >$d/enable_c02
irq0=$(cpu_irqs 0)
run c02 -s c02 -n 100 -c 200000
irq1=$(cpu_irqs 0)
# (an interrupt may end a wait early, with CF=0 too; nothing else does)
is "$r_waits $r_capped" "100 0" "C0.2 TPAUSEs: none of the 100 capped (CF=0)"
cmp_ok "$r_ended_early" -le "$(calc "$irq1 - $irq0")" \
	"C0.2 TPAUSEs: each that ended before its deadline had an interrupt to end it ($r_ran_to_deadline of 100 ran to it, $(calc "$irq1 - $irq0") interrupts)"
cmp_ok "$v_c02" -ge $((r_ran_to_deadline * 200000 / 2)) "C0.2 TPAUSEs: umask 0x20 counts at least half the cycles those asked ($v_c02)"
cmp_ok "$v_c02" -le "$r_sum" "C0.2 TPAUSEs: umask 0x20 counts no more than the waits' TSC time ($r_sum)"
is "$v_c01" 0 "C0.2 TPAUSEs: umask 0x10 counts nothing"
cmp_ok "$v_u" -ge "$v_c02" "user-mode unhalted cycles include the waits"
# perf's own system calls and the program's start and exit run in the
# kernel: a PMU that never saw the CPL change (SYSCALL, SYSRET, IRET) puts
# them in one ring only
cmp_ok "$v_k" -gt 0 "kernel-mode unhalted cycles are counted ($v_k)"

irq0=$(cpu_irqs 0)
run c01 -i umwait -s c01 -n 100 -c 200000
irq1=$(cpu_irqs 0)
is "$r_waits $r_capped" "100 0" "C0.1 UMWAITs: none of the 100 capped (CF=0)"
cmp_ok "$r_ended_early" -le "$(calc "$irq1 - $irq0")" \
	"C0.1 UMWAITs: each that ended before its deadline had an interrupt to end it ($r_ran_to_deadline of 100 ran to it, $(calc "$irq1 - $irq0") interrupts)"
cmp_ok "$v_c01" -ge $((r_ran_to_deadline * 200000 / 2)) "C0.1 UMWAITs: umask 0x10 counts at least half the cycles those asked ($v_c01)"
is "$v_c02" 0 "C0.1 UMWAITs: umask 0x20 counts nothing"

# The OS limit of IA32_UMWAIT_CONTROL cuts each wait short (CF=1): the
# model's own timer, on the virtual clock icount drives
echo 2000 >$d/max_time
run capped -s c02 -n 20 -c 10000000
is "$r_waits $r_capped" "20 20" "max_time=2000: the OS limit cut all 20 waits of 10M cycles short (CF=1)"
cmp_ok "$r_sum" -lt $((20 * 10000000 / 10)) "max_time=2000: the waits took a small part of what they asked ($r_sum cycles)"

# Instructions retired (tests/guest/26-pmu-insns.t) under icount: exact, and
# an overflow raises its PMI from the middle of a TB, where the clock may
# not be read (a model that read it there stops QEMU: "Bad icount read")
out=$(insn-count -w rep -n 5000 2>&1)
diag "$out"
r_user=-1 r_base_user=0
eval "$(report insn-count "$out")"
is "$((r_user - r_base_user))" $((6 * 4999)) "5000 REP MOVSB iterations retire exactly 6 user-mode instructions each"
out=$(cd $tmp && perf_unthrottled perf record -o $tmp/perf.data -e instructions:u -c 1000000 -- \
	insn-count -w loop -n 5000000 --run-only 2>&1)
samples=$(perf_samples "$out")
is "${samples:-none}" 10 "perf record -e instructions:u -c 1000000 of 10M instructions: 10 samples"

echo 100000 >$d/max_time
rm -rf "$tmp"
done_testing
