# Instructions retired, from the TCG model's PMU (vm/qemu patch 0008): fixed
# counter 0 and event C0H on a general-purpose counter, through Linux's
# perf. The truth is insn-count's own code: each workload is an asm loop of
# a fixed number of instructions per iteration, and the user-mode counts of
# a run of N iterations and one of 1 differ by exactly that times N - 1.
# A model that counts nothing, counts a REP MOVSB once per byte, counts a
# store that page-faults once per attempt, or gives the SYSCALL's kernel
# code to user mode, misses the exact count here.
. /lab/tests/lib/tap.sh

# WORKLOAD:INSTRUCTIONS-PER-ITERATION, as insn-count's asm has them
n=20000
for wp in loop:2 syscall:4 rep:6 fault:4; do
	w=${wp%:*} per_iter=${wp#*:}
	out=$(insn-count -w $w -n $n 2>&1)
	diag "$out"
	# a missing report fails every check below
	r_user=-1 r_base_user=0 r_user2=-1 r_base_user2=0
	r_kernel=0 r_base_kernel=0 r_faults=0
	eval "$(report insn-count "$out")"
	want=$((per_iter * (n - 1)))
	is "$((r_user - r_base_user))" "$want" \
		"$w: $n iterations retire exactly $per_iter user-mode instructions each"
	is "$((r_user2 - r_base_user2))" "$want" \
		"$w: so does the group's second counter (one of the two is a general-purpose counter)"
	case $w in
	syscall)
		# Linux runs well over ten instructions per getppid
		cmp_ok "$((r_kernel - r_base_kernel))" -ge $((10 * (n - 1))) \
			"syscall: the kernel-mode counter has the system calls' instructions"
		;;
	fault)
		# otherwise the exact count above proves nothing about faults
		cmp_ok "$r_faults" -ge "$n" "fault: each of the $n stores page-faulted ($r_faults faults)"
		;;
	esac
done

# Overflow: perf record samples every 1M user-mode instructions, each on the
# PMI of an overflow. A run of 2 * 10M (plus the program's start, under
# 100k) has 20 of them: fewer if a PMI is lost or an overflow never raised
# or raised so late (a timer's guess, on a loaded host) that perf dropped
# the period it overran.
tmp=$(mktemp -d)
out=$(cd $tmp && perf_unthrottled perf record -o $tmp/perf.data -e instructions:u -c 1000000 -- \
	insn-count -w loop -n 10000000 --run-only 2>&1)
samples=$(perf_samples "$out")
diag "perf record -e instructions:u -c 1000000: ${samples:-?} samples"
is "${samples:-none}" 20 "perf record -e instructions:u -c 1000000: a sample per 1M instructions (20)"
rm -rf $tmp

# A bad workload name: usage, exit 2
insn-count -w nosuch >/dev/null 2>&1
is $? 2 "insn-count -w nosuch: exit 2 (usage)"
done_testing
