// SPDX-License-Identifier: GPL-2.0
/*
 * waitpkg-check: corner cases of TPAUSE and UMWAIT that tpause-loop does not
 * reach, each checked against what the CPU itself reports (the faulting
 * instruction's bytes, the single-step trap's RIP).
 *
 *   waitpkg-check tsd [--no-prctl] INSN
 *       Run INSN (rdtsc, tpause or umwait) in a child, after
 *       prctl(PR_SET_TSC, PR_TSC_SIGSEGV) unless --no-prctl, and print
 *       "INSN: SIGSEGV at INSN" when the child got SIGSEGV on that very
 *       instruction, "INSN: completed" when it ran to the end.
 *
 *   waitpkg-check step COUNT
 *       COUNT times: set EFLAGS.TF, run a TPAUSE whose deadline is 2^40
 *       cycles away (an interrupt ends it, given max_time=0), clear TF.
 *       Prints "step: waits=N early=N trapped=N late=N": how many waits
 *       ran, ended before their deadline with CF=0, were followed by a
 *       single-step trap whose RIP is the instruction right after TPAUSE,
 *       and had no such trap but one after the instruction that follows
 *       (the trap of TPAUSE was discarded: a machine check or an SMI came
 *       first, as their priority requires).
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include <x86intrin.h>

#define USAGE "usage: waitpkg-check tsd [--no-prctl] rdtsc|tpause|umwait | waitpkg-check step COUNT"

/* exit codes of the tsd child: which instruction faulted */
enum { HIT_NONE = 40, HIT_RDTSC, HIT_TPAUSE, HIT_UMWAIT, HIT_OTHER };

static const char *const insn_names[] = { "rdtsc", "tpause", "umwait" };

static volatile uint64_t mon_line[8] __attribute__((aligned(64)));

/* Which of our instructions the bytes at @p start */
static int decode(const unsigned char *p)
{
	if (p[0] == 0x0f && p[1] == 0x31)
		return HIT_RDTSC;
	/* 66/F2 0F AE /6 with mod=11: TPAUSE/UMWAIT */
	if ((p[0] == 0x66 || p[0] == 0xf2) && p[1] == 0x0f && p[2] == 0xae &&
	    (p[3] & 0xf8) == 0xf0)
		return p[0] == 0x66 ? HIT_TPAUSE : HIT_UMWAIT;
	return HIT_OTHER;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	_exit(decode((const unsigned char *)uc->uc_mcontext.gregs[REG_RIP]));
}

__attribute__((target("waitpkg")))
static void tsd_child(int insn, int use_prctl)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };

	sigaction(SIGSEGV, &sa, NULL);
	if (use_prctl && prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0)) {
		perror("waitpkg-check: prctl(PR_SET_TSC)");
		_exit(1);
	}
	/* a deadline of 0 is past: without a fault the waits return at once */
	switch (insn) {
	case 0:
		(void)__rdtsc();
		break;
	case 1:
		_tpause(0, 0);
		break;
	case 2:
		_umonitor((void *)mon_line);
		_umwait(0, 0);
		break;
	}
	_exit(HIT_NONE);
}

static int cmd_tsd(int argc, char **argv)
{
	int use_prctl = 1, insn, status;
	pid_t pid;

	if (argc == 2 && !strcmp(argv[0], "--no-prctl")) {
		use_prctl = 0;
		argv++;
		argc--;
	}
	if (argc != 1) {
		fprintf(stderr, "%s\n", USAGE);
		return 2;
	}
	for (insn = 0; insn < 3; insn++)
		if (!strcmp(argv[0], insn_names[insn]))
			break;
	if (insn == 3) {
		fprintf(stderr, "waitpkg-check: unknown instruction '%s' (rdtsc, tpause or umwait)\n",
			argv[0]);
		return 2;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("waitpkg-check: fork");
		return 1;
	}
	if (!pid)
		tsd_child(insn, use_prctl);
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpkg-check: waitpid");
		return 1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == HIT_NONE)
		printf("%s: completed\n", insn_names[insn]);
	else if (WIFEXITED(status) && WEXITSTATUS(status) > HIT_NONE &&
		 WEXITSTATUS(status) < HIT_OTHER)
		printf("%s: SIGSEGV at %s\n", insn_names[insn],
		       insn_names[WEXITSTATUS(status) - HIT_RDTSC]);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == HIT_OTHER)
		printf("%s: SIGSEGV elsewhere\n", insn_names[insn]);
	else if (WIFSIGNALED(status))
		printf("%s: killed by signal %d\n", insn_names[insn], WTERMSIG(status));
	else
		printf("%s: exit %d\n", insn_names[insn], WEXITSTATUS(status));
	return 0;
}

/* RIPs of the single-step traps of one pass */
static volatile uint64_t trap_rip[64];
static volatile unsigned int ntraps;

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	if (ntraps < sizeof(trap_rip) / sizeof(trap_rip[0]))
		trap_rip[ntraps++] = uc->uc_mcontext.gregs[REG_RIP];
}

static int cmd_step(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO };
	unsigned long count, i, early = 0, trapped = 0, late = 0;
	char *end;

	if (argc != 1) {
		fprintf(stderr, "%s\n", USAGE);
		return 2;
	}
	count = strtoul(argv[0], &end, 0);
	if (end == argv[0] || *end || !count || count > 1000) {
		fprintf(stderr, "waitpkg-check: step COUNT must be 1 to 1000, not '%s'\n", argv[0]);
		return 2;
	}
	sigaction(SIGTRAP, &sa, NULL);
	for (i = 0; i < count; i++) {
		uint64_t deadline = __rdtsc() + (1ULL << 40), after, next, t1;
		unsigned char cf;
		unsigned int k, hit = 0;

		ntraps = 0;
		/*
		 * TF is set by POPF, so the traps start after the instruction
		 * that follows it. The red zone is stepped over: the compiler
		 * may keep locals there.
		 */
		asm volatile("lea 2f(%%rip), %[after]\n\t"
			     "lea 3f(%%rip), %[next]\n\t"
			     "lea -128(%%rsp), %%rsp\n\t"
			     "pushfq\n\t"
			     "orq $0x100, (%%rsp)\n\t"
			     "popfq\n\t"
			     "nop\n\t"
			     ".byte 0x66, 0x0f, 0xae, 0xf7\n" /* tpause %edi */
			     "2:\tsetc %[cf]\n"
			     "3:\tpushfq\n\t"
			     "andq $~0x100, (%%rsp)\n\t"
			     "popfq\n\t"
			     "lea 128(%%rsp), %%rsp"
			     : [after] "=&r"(after), [next] "=&r"(next), [cf] "=&q"(cf)
			     : "D"(0), "a"((uint32_t)deadline), "d"((uint32_t)(deadline >> 32))
			     : "cc", "memory");
		t1 = __rdtsc();
		if (!cf && t1 < deadline)
			early++;
		for (k = 0; k < ntraps; k++) {
			if (trap_rip[k] == after)
				hit |= 1;
			if (trap_rip[k] == next)
				hit |= 2;
		}
		if (hit & 1)
			trapped++;
		else if (hit & 2)
			late++;
	}
	printf("step: waits=%lu early=%lu trapped=%lu late=%lu\n", count, early, trapped, late);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int eax, ebx, ecx, edx;

	if (argc < 2) {
		fprintf(stderr, "%s\n", USAGE);
		return 2;
	}
	if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 5))) {
		fprintf(stderr, "waitpkg-check: this CPU lacks WAITPKG (CPUID.7.0:ECX[5])\n");
		return 2;
	}
	if (!strcmp(argv[1], "tsd"))
		return cmd_tsd(argc - 2, argv + 2);
	if (!strcmp(argv[1], "step"))
		return cmd_step(argc - 2, argv + 2);
	fprintf(stderr, "waitpkg-check: unknown command '%s'\n%s\n", argv[1], USAGE);
	return 2;
}
