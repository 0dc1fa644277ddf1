// SPDX-License-Identifier: GPL-2.0
/*
 * insn-count: count the instructions a workload of known length retires,
 * with the core PMU's instructions-retired counters.
 *
 *   insn-count [-w loop|syscall|rep|fault] [-n N] [--run-only [--migrate-at K]]
 *
 * Each workload is one asm loop of N iterations whose instructions per
 * iteration are fixed by its code (per_iter):
 *   loop     dec; jnz                                         2
 *   syscall  mov $SYS_getppid, %eax; syscall; dec; jnz         4
 *   rep      three movs; rep movsb (4096 bytes); dec; jnz       6
 *   fault    a store to a page not touched before; add; dec; jnz 4
 * A REP string instruction retires once however many bytes it moves, and
 * an instruction that faults (the store of "fault", each a page fault the
 * kernel resolves before the store runs again) retires when it completes.
 *
 * It runs the workload twice, with N = 1 and with N, each between a group
 * enable and disable of three counting events: instructions in user mode
 * (twice: the group has one fixed counter 0, so at least one of them is on
 * a general-purpose counter) and instructions in kernel mode. The user
 * counts of the two runs differ by exactly per_iter * (N - 1): the code
 * around the loop is the same. It prints the counts, and the minor page
 * faults of each run (getrusage), one line:
 *
 *   insn-count: workload=W n=N per_iter=P user=U user2=U2 kernel=K
 *               base_user=.. base_user2=.. base_kernel=.. faults=F base_faults=..
 *
 * --run-only runs the workload once, without counters (for perf record).
 * With --migrate-at K it runs the first K iterations on CPU 0 and the rest
 * on CPU 1, moving itself there in between (sched_setaffinity): a run that
 * migrates once, at an instruction of its own choosing, whatever the
 * scheduler does.
 * Exits 1 with one line if the PMU cannot count instructions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errname.h"

#define PAGE 4096

enum workload { W_LOOP, W_SYSCALL, W_REP, W_FAULT };

static const struct {
	const char *name;
	int per_iter;
} workloads[] = {
	[W_LOOP] = { "loop", 2 },
	[W_SYSCALL] = { "syscall", 4 },
	[W_REP] = { "rep", 6 },
	[W_FAULT] = { "fault", 4 },
};

static char src[PAGE], dst[PAGE];

/* The workload, @n >= 1 iterations; @mem: n fresh pages for W_FAULT */
static void run(enum workload w, uint64_t n, char *mem)
{
	switch (w) {
	case W_LOOP:
		asm volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
		break;
	case W_SYSCALL:
		asm volatile("1: mov %1, %%eax\n\tsyscall\n\tdec %0\n\tjnz 1b"
			     : "+d"(n) : "i"(SYS_getppid)
			     : "rax", "rcx", "r11", "cc", "memory");
		break;
	case W_REP:
		asm volatile("1: mov %1, %%rsi\n\tmov %2, %%rdi\n\tmov %3, %%ecx\n\t"
			     "rep movsb\n\tdec %0\n\tjnz 1b"
			     : "+d"(n) : "r"(src), "r"(dst), "i"(PAGE)
			     : "rsi", "rdi", "rcx", "cc", "memory");
		break;
	case W_FAULT:
		asm volatile("1: movb %%al, (%1)\n\tadd %2, %1\n\tdec %0\n\tjnz 1b"
			     : "+d"(n), "+r"(mem) : "i"(PAGE)
			     : "cc", "memory");
		break;
	}
}

static int open_event(int group, int exclude_user)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_INSTRUCTIONS,
		.disabled = group < 0,
		.pinned = group < 0,
		.exclude_user = exclude_user,
		.exclude_kernel = !exclude_user,
		.exclude_hv = 1,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	int fd = syscall(SYS_perf_event_open, &attr, 0, -1, group, 0);

	if (fd < 0) {
		fprintf(stderr, "insn-count: cannot count instructions retired: perf_event_open: %s (%s); "
			"run it where the CPU's PMU counts them\n", strerror(errno), errname(errno));
		exit(1);
	}
	return fd;
}

struct counts {
	uint64_t user, user2, kernel;
	long faults;
};

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* @n pages not touched yet, for W_FAULT (NULL for the others) */
static char *fresh_pages(enum workload w, uint64_t n)
{
	char *mem;

	if (w != W_FAULT)
		return NULL;
	mem = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "insn-count: mmap of %llu pages: %s; use a smaller -n\n",
			(unsigned long long)n, strerror(errno));
		exit(1);
	}
	/* a fault per page, not one per huge page */
	madvise(mem, n * PAGE, MADV_NOHUGEPAGE);
	return mem;
}

static void measure(int fd, enum workload w, uint64_t n, struct counts *c)
{
	struct {
		uint64_t nr, enabled, running, v[3];
	} buf;
	char *mem = fresh_pages(w, n);
	long f0;

	ioctl(fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	f0 = minflt();
	ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	run(w, n, mem);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	c->faults = minflt() - f0;
	if (read(fd, &buf, sizeof(buf)) != sizeof(buf) || buf.nr != 3) {
		fprintf(stderr, "insn-count: read of the counter group failed\n");
		exit(1);
	}
	if (buf.running != buf.enabled) {
		fprintf(stderr, "insn-count: the counters were shared (ran %llu of %llu ns); "
			"run it where no other perf user holds the PMU\n",
			(unsigned long long)buf.running, (unsigned long long)buf.enabled);
		exit(1);
	}
	c->user = buf.v[0];
	c->user2 = buf.v[1];
	c->kernel = buf.v[2];
	if (mem)
		munmap(mem, n * PAGE);
}

static int usage(void)
{
	fprintf(stderr, "usage: insn-count [-w loop|syscall|rep|fault] [-n N] [--run-only [--migrate-at K]]\n");
	return 2;
}

/* Run on @cpu alone from now on */
static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "insn-count: cannot move to CPU %d: %s (%s); --migrate-at needs CPUs 0 and 1 online\n",
			cpu, strerror(errno), errname(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	enum workload w = W_LOOP;
	struct counts base, c;
	unsigned long long n = 1000000, migrate_at = 0;
	int run_only = 0, fd, i;
	char *end;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--run-only")) {
			run_only = 1;
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			errno = 0;
			n = strtoull(argv[++i], &end, 10);
			if (errno || *end || !n || n > 1ULL << 40)
				return usage();
		} else if (!strcmp(argv[i], "--migrate-at") && i + 1 < argc) {
			errno = 0;
			migrate_at = strtoull(argv[++i], &end, 10);
			if (errno || *end || !migrate_at)
				return usage();
		} else if (!strcmp(argv[i], "-w") && i + 1 < argc) {
			const char *name = argv[++i];

			for (w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++)
				if (!strcmp(name, workloads[w].name))
					break;
			if (w == sizeof(workloads) / sizeof(workloads[0]))
				return usage();
		} else {
			return usage();
		}
	}
	if (migrate_at && (!run_only || migrate_at >= n))
		return usage();
	if (run_only && migrate_at) {
		char *mem = fresh_pages(w, n);

		pin(0);
		run(w, migrate_at, mem);
		pin(1);
		run(w, n - migrate_at, mem ? mem + migrate_at * PAGE : NULL);
		return 0;
	}
	if (run_only) {
		run(w, n, fresh_pages(w, n));
		return 0;
	}
	fd = open_event(-1, 0);
	open_event(fd, 0);
	open_event(fd, 1);
	measure(fd, w, 1, &base);
	measure(fd, w, n, &c);
	printf("insn-count: workload=%s n=%llu per_iter=%d user=%llu user2=%llu kernel=%llu "
	       "base_user=%llu base_user2=%llu base_kernel=%llu faults=%ld base_faults=%ld\n",
	       workloads[w].name, n, workloads[w].per_iter,
	       (unsigned long long)c.user, (unsigned long long)c.user2,
	       (unsigned long long)c.kernel, (unsigned long long)base.user,
	       (unsigned long long)base.user2, (unsigned long long)base.kernel,
	       c.faults, base.faults);
	return 0;
}
