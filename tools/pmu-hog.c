// SPDX-License-Identifier: GPL-2.0
/*
 * pmu-hog: another perf user, to make the core PMU's counters scarce on one
 * CPU for a test of how a tool shares them.
 *
 *   pmu-hog [--pinned] [-n N] CPU
 *
 * Opens N events that need a general-purpose counter (default: as many as
 * the CPU has, CPUID.0AH:EAX[15:8]) on CPU, counting until SIGINT or SIGTERM:
 * as one flexible group, which perf time-shares with every other group that
 * does not fit next to it (both get scaled), or with --pinned as one pinned
 * group, which perf schedules first, so a group that needs a general-purpose
 * counter too never runs there.  Prints "pmu-hog: ready ..." once counting,
 * and at the end its own group's enabled and running times (ns): the
 * kernel's word on whether the counters were shared.
 */
#include <cpuid.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errname.h"

#define MAX_EVENTS 64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: pmu-hog [--pinned] [-n N] CPU\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct {
		uint64_t nr, enabled, running;
		uint64_t v[MAX_EVENTS];
	} buf;
	unsigned int eax, ebx, ecx, edx;
	int fd[MAX_EVENTS], cpu = -1, n = 0, i;
	bool pinned = false;
	sigset_t set, old;
	char *end;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pinned")) {
			pinned = true;
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			n = strtol(argv[++i], &end, 10);
			if (*end || n < 1 || n > MAX_EVENTS)
				return usage();
		} else if (cpu < 0) {
			cpu = strtol(argv[i], &end, 10);
			if (*end || !*argv[i] || cpu < 0)
				return usage();
		} else {
			return usage();
		}
	}
	if (cpu < 0)
		return usage();
	if (!n) {
		if (!__get_cpuid(0xa, &eax, &ebx, &ecx, &edx) || !((eax >> 8) & 0xff)) {
			fprintf(stderr, "pmu-hog: CPUID.0AH reports no general-purpose counter\n");
			return 1;
		}
		n = (eax >> 8) & 0xff;
		if (n > MAX_EVENTS)
			n = MAX_EVENTS;
	}
	for (i = 0; i < n; i++) {
		/* event 0xec umask 0x10: general-purpose counters only */
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = PERF_TYPE_RAW,
			.config = 0x10ec,
			.pinned = pinned && !i,
			.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				       PERF_FORMAT_TOTAL_TIME_RUNNING,
		};

		fd[i] = syscall(SYS_perf_event_open, &attr, -1, cpu, i ? fd[0] : -1, 0);
		if (fd[i] < 0) {
			fprintf(stderr, "pmu-hog: perf_event_open (event %d of %d, cpu %d): %s (%s)\n",
				i + 1, n, cpu, strerror(errno), errname(errno));
			return 1;
		}
	}
	/* blocked but while sigsuspend() waits: no signal slips in between */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("pmu-hog: ready: %d events on cpu %d, %s\n", n, cpu, pinned ? "pinned" : "flexible");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	if (read(fd[0], &buf, sizeof(buf)) < (ssize_t)(3 + n) * 8) {
		fprintf(stderr, "pmu-hog: read: %s\n", strerror(errno));
		return 1;
	}
	printf("pmu-hog: cpu=%d events=%d enabled=%llu running=%llu\n", cpu, n,
	       (unsigned long long)buf.enabled, (unsigned long long)buf.running);
	return 0;
}
