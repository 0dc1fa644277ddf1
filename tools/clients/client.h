/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the library clients (tbb-waits, omp-waits, dpdk-waits) share: the
 * run's identity for the host side of the lab.
 *
 * A client executes one marker wait before it calls into its library: a
 * TPAUSE whose deadline (0) is already past, so it returns at once.  QEMU's
 * trace records that wait with its RIP and the process's CR3; the client
 * prints the marker's address, the TSC just before and after it, and its
 * executable file mappings.  The host then finds the marker in the trace,
 * takes the CR3 from it and attributes every later wait of that address
 * space to a file offset of a mapping: RIP - start + offset.
 */
#ifndef LAB_CLIENT_H
#define LAB_CLIENT_H

#include <cpuid.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

struct client_id {
	uintptr_t marker;
	uint64_t tsc_before, tsc_after;
};

/* client_arg: S as a number in [LO, HI], or NAME's one-line error and exit 2 */
static inline long client_arg(const char *name, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "%s: '%s' is not a number in [%ld, %ld]\n", name, s, lo, hi);
		exit(2);
	}
	return v;
}

struct client_rounds {
	long rounds, threads, ms;
};

/* client_parse_rounds: [-r ROUNDS] [-t THREADS] [-m MS], or exit 2 */
static inline void client_parse_rounds(const char *name, int argc, char **argv,
				       struct client_rounds *o)
{
	int c;

	while ((c = getopt(argc, argv, "r:t:m:")) != -1) {
		switch (c) {
		case 'r': o->rounds = client_arg(name, optarg, 1, 1000); break;
		case 't': o->threads = client_arg(name, optarg, 1, 64); break;
		case 'm': o->ms = client_arg(name, optarg, 0, 10000); break;
		default:
			fprintf(stderr, "usage: %s [-r ROUNDS] [-t THREADS] [-m MS]\n", name);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", name, argv[optind]);
		exit(2);
	}
}

static inline int client_has_waitpkg(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 5));
}

/* the marker wait; its address is returned */
static inline uintptr_t client_marker_wait(void)
{
	uintptr_t rip;

	asm volatile("lea 1f(%%rip), %0\n\t"
		     "xor %%eax, %%eax\n\t"
		     "xor %%edx, %%edx\n\t"
		     "xor %%ecx, %%ecx\n"
		     "1:\t.byte 0x66, 0x0f, 0xae, 0xf1"	/* tpause %ecx */
		     : "=&r"(rip)
		     :
		     : "eax", "ecx", "edx", "cc", "memory");
	return rip;
}

/* client_mark: run the marker wait and print NAME's maps; 0, or -1 without WAITPKG */
static inline int client_mark(const char *name, struct client_id *id)
{
	char line[512], path[400];
	unsigned long start, end, off;
	char perms[8];
	FILE *f;

	if (!client_has_waitpkg()) {
		fprintf(stderr, "%s: this CPU lacks WAITPKG (CPUID.7.0:ECX[5])\n", name);
		return -1;
	}
	id->tsc_before = __rdtsc();
	id->marker = client_marker_wait();
	id->tsc_after = __rdtsc();

	f = fopen("/proc/self/maps", "r");
	if (!f) {
		perror("/proc/self/maps");
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %399s", &start, &end, perms, &off,
			   path) == 5 && perms[2] == 'x' && path[0] == '/')
			printf("%s: map 0x%lx 0x%lx 0x%lx %s\n", name, start, end, off, path);
	}
	fclose(f);
	return 0;
}

/*
 * client_report: the one summary line; EXTRA holds the client's own counts.
 * First the uprobes XOL area, if a tracer made one: a probed wait
 * instruction runs there, out of line, not at its address in the library.
 */
static inline void client_report(const char *name, const struct client_id *id,
				 const char *extra)
{
	unsigned long start, end;
	char line[512];
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "[uprobes]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			printf("%s: map 0x%lx 0x%lx 0x0 [uprobes]\n", name, start, end);
	}
	if (f)
		fclose(f);
	printf("%s: pid=%d marker=0x%lx marker_begin=%llu marker_end=%llu%s%s\n", name,
	       (int)getpid(), (unsigned long)id->marker, (unsigned long long)id->tsc_before,
	       (unsigned long long)id->tsc_after, extra[0] ? " " : "", extra);
	fflush(stdout);
}

#endif
