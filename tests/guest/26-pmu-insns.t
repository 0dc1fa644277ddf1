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
# PMI of an overflow. The run is 2 * 10M instructions (plus the program's
# start, under 100k), the first 10.5M on CPU 0 and the rest on CPU 1:
# insn-count moves itself there (--migrate-at), so the run migrates once,
# at the same instruction every time, whatever the scheduler does.
# perf record opens one event per CPU by default, each with a period of
# its own: a migration leaves the old CPU's part of a period unfinished.
# That was the flake "19 samples, want 20": the scheduler had moved the
# program once, at a moment of its own. Here each count follows from the
# program by construction.
tmp=$(mktemp -d)
perf_run() { # OUT PERF-RECORD-OPTIONS...: the samples' CPUs, one a line
	_o=$1
	shift
	(cd $tmp && perf_unthrottled perf record -o $tmp/perf.data -e instructions:u -c 1000000 --sample-cpu "$@" -- \
		insn-count -w loop -n 10000000 --run-only --migrate-at 5250000) >$_o 2>&1
	perf script -i $tmp/perf.data -F cpu 2>/dev/null | tr -d ' []' >$_o.cpus
}
# one event for the program (--per-thread) carries its period across the
# migration: a sample per 1M instructions, 20 (fewer if a PMI is lost, or
# a counter programmed on the new CPU never overflows)
perf_run $tmp/thread --per-thread
samples=$(perf_samples "$(cat $tmp/thread)")
is "${samples:-none}" 20 "perf record --per-thread: a sample per 1M instructions across a migration (20)"
is "$(sort $tmp/thread.cpus | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" "000:10 001:10 " \
	"and the samples' CPUs: 10 on CPU 0 (its 10.5M), 10 on CPU 1"
# perf record's default, an event per CPU: CPU 0's counts its 10.5M (10
# overflows), CPU 1's the other 9.5M (9): 19
perf_run $tmp/cpu
is "$(sort $tmp/cpu.cpus | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" "000:10 001:9 " \
	"perf record's events per CPU: each CPU's own periods, 10 samples on CPU 0 and 9 on CPU 1"
rm -rf $tmp

# A bad workload name: usage, exit 2
insn-count -w nosuch >/dev/null 2>&1
is $? 2 "insn-count -w nosuch: exit 2 (usage)"
done_testing
