// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: how much of its unhalted time each CPU spends in C0.1, C0.2
 * and either (C0_WAIT), from the core PMU:
 *
 *   CPU_CLK_UNHALTED.THREAD_P  event 0x3c umask 0x00  (the denominator)
 *   CPU_CLK_UNHALTED.C01       event 0xec umask 0x10
 *   CPU_CLK_UNHALTED.C02       event 0xec umask 0x20
 *   CPU_CLK_UNHALTED.C0_WAIT   event 0xec umask 0x70
 *
 * Names and umasks follow the SDM (Intel's JSON event files describe C01 and
 * C02 the other way round).  On hybrid parts these live on the cpu_core PMU
 * and count only its CPUs.  One counting group per CPU, read as a whole.
 */
#include <cpuid.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "residency.h"
#include "ut.h"

enum { EV_CYCLES, EV_C01, EV_C02, EV_C0WAIT, NR_EV };

static const uint64_t ev_config[NR_EV] = { 0x003c, 0x10ec, 0x20ec, 0x70ec };
static const char *const ev_name[NR_EV] = { "cycles", "c01", "c02", "c0_wait" };

struct residency {
	bool available;
	char reason[160];
	int nr;			/* CPUs counted */
	int *cpu;
	int (*fd)[NR_EV];
	uint64_t (*first)[NR_EV], (*prev)[NR_EV], (*cur)[NR_EV];
};

static int perf_open(struct perf_event_attr *attr, int cpu, int group)
{
	return syscall(SYS_perf_event_open, attr, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int read_int_file(const char *path, int *val)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", val) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static bool cpu_is_intel(char vendor[13])
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
		return false;
	memcpy(vendor, &ebx, 4);
	memcpy(vendor + 4, &edx, 4);
	memcpy(vendor + 8, &ecx, 4);
	vendor[12] = '\0';
	return !strcmp(vendor, "GenuineIntel");
}

static void unavailable(struct residency *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void unavailable(struct residency *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	r->available = false;
}

static void close_fds(struct residency *r)
{
	int i, e;

	for (i = 0; r->fd && i < r->nr; i++)
		for (e = 0; e < NR_EV; e++)
			if (r->fd[i][e] >= 0) {
				close(r->fd[i][e]);
				r->fd[i][e] = -1;
			}
}

struct residency *residency_open(void)
{
	const char *pmu_dir = "/sys/bus/event_source/devices/cpu_core";
	char vendor[13], path[128];
	struct residency *r;
	int type, i, e;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (!cpu_has_waitpkg()) {
		unavailable(r, "CPU lacks WAITPKG");
		return r;
	}
	snprintf(path, sizeof(path), "%s/type", pmu_dir);
	if (read_int_file(path, &type)) {
		pmu_dir = "/sys/bus/event_source/devices/cpu";
		snprintf(path, sizeof(path), "%s/type", pmu_dir);
		if (read_int_file(path, &type)) {
			unavailable(r, "no core PMU: %s is missing", pmu_dir);
			return r;
		}
	}
	if (!cpu_is_intel(vendor)) {
		unavailable(r, "not an Intel CPU (vendor %s): no CPU_CLK_UNHALTED.C0x events",
			    vendor);
		return r;
	}
	snprintf(path, sizeof(path), "%s/cpus", pmu_dir);
	r->nr = parse_cpulist(path, &r->cpu);
	if (r->nr <= 0)
		r->nr = parse_cpulist("/sys/devices/system/cpu/online", &r->cpu);
	if (r->nr <= 0) {
		unavailable(r, "cannot list the CPUs");
		return r;
	}
	r->fd = calloc(r->nr, sizeof(*r->fd));
	r->first = calloc(r->nr, sizeof(*r->first));
	r->prev = calloc(r->nr, sizeof(*r->prev));
	r->cur = calloc(r->nr, sizeof(*r->cur));
	if (!r->fd || !r->first || !r->prev || !r->cur) {
		unavailable(r, "out of memory");
		return r;
	}
	for (i = 0; i < r->nr; i++)
		for (e = 0; e < NR_EV; e++)
			r->fd[i][e] = -1;
	r->available = true;
	for (i = 0; i < r->nr; i++) {
		for (e = 0; e < NR_EV; e++) {
			struct perf_event_attr attr = {
				.size = sizeof(attr),
				.type = type,
				.config = ev_config[e],
				.read_format = PERF_FORMAT_GROUP,
			};

			r->fd[i][e] = perf_open(&attr, r->cpu[i], e ? r->fd[i][0] : -1);
			if (r->fd[i][e] < 0) {
				int err = errno;

				close_fds(r);
				unavailable(r, "perf_event_open(%s, config 0x%llx, cpu %d): %s",
					    ev_name[e], (unsigned long long)ev_config[e],
					    r->cpu[i], strerror(err));
				return r;
			}
		}
	}
	residency_read(r);
	memcpy(r->first, r->cur, r->nr * sizeof(*r->cur));
	memcpy(r->prev, r->cur, r->nr * sizeof(*r->cur));
	return r;
}

void residency_mark(struct residency *r)
{
	if (residency_available(r))
		memcpy(r->prev, r->cur, r->nr * sizeof(*r->cur));
}

bool residency_available(const struct residency *r)
{
	return r && r->available;
}

const char *residency_reason(const struct residency *r)
{
	return r ? r->reason : "out of memory";
}

void residency_read(struct residency *r)
{
	struct {
		uint64_t nr;
		uint64_t v[NR_EV];
	} buf;
	int i;

	if (!residency_available(r))
		return;
	for (i = 0; i < r->nr; i++) {
		if (read(r->fd[i][0], &buf, sizeof(buf)) < (ssize_t)sizeof(buf) ||
		    buf.nr != NR_EV)
			continue;
		memcpy(r->cur[i], buf.v, sizeof(buf.v));
	}
}

/* deltas of CPU i (i == nr: the sum) over the chosen span */
static void span(const struct residency *r, bool since_open, int i, uint64_t d[NR_EV])
{
	const uint64_t (*base)[NR_EV] = since_open ? r->first : r->prev;
	int c, e;

	memset(d, 0, NR_EV * sizeof(uint64_t));
	for (c = 0; c < r->nr; c++) {
		if (i != r->nr && c != i)
			continue;
		for (e = 0; e < NR_EV; e++)
			d[e] += r->cur[c][e] - base[c][e];
	}
}

void residency_print(const struct residency *r, bool since_open)
{
	uint64_t d[NR_EV];
	int i;

	if (!residency_available(r))
		return;
	printf("C0.x residency (%% of unhalted cycles):\n%-6s %8s %8s %8s\n",
	       "CPU", "C0.1", "C0.2", "C0_WAIT");
	for (i = 0; i <= r->nr; i++) {
		span(r, since_open, i, d);
		if (i < r->nr)
			printf("%-6d", r->cpu[i]);
		else
			printf("%-6s", "all");
		printf(" %7.1f%% %7.1f%% %7.1f%%\n", pct(d[EV_C01], d[EV_CYCLES]),
		       pct(d[EV_C02], d[EV_CYCLES]), pct(d[EV_C0WAIT], d[EV_CYCLES]));
	}
}

void residency_json(FILE *f, const struct residency *r, bool since_open)
{
	uint64_t d[NR_EV];
	int i;

	if (!residency_available(r)) {
		fprintf(f, "{\"available\": false, \"reason\": ");
		json_str(f, residency_reason(r));
		fputc('}', f);
		return;
	}
	fprintf(f, "{\"available\": true, \"unit\": \"percent of unhalted cycles\", \"cpus\": [");
	for (i = 0; i <= r->nr; i++) {
		span(r, since_open, i, d);
		if (i == r->nr)
			fprintf(f, "], \"all\": ");
		else
			fprintf(f, "%s{\"cpu\": %d, ", i ? ", " : "", r->cpu[i]);
		if (i == r->nr)
			fputc('{', f);
		fprintf(f, "\"cycles\": %llu, \"c01\": %.2f, \"c02\": %.2f, \"c0_wait\": %.2f}",
			(unsigned long long)d[EV_CYCLES], pct(d[EV_C01], d[EV_CYCLES]),
			pct(d[EV_C02], d[EV_CYCLES]), pct(d[EV_C0WAIT], d[EV_CYCLES]));
	}
	fputc('}', f);
}

void residency_close(struct residency *r)
{
	if (!r)
		return;
	close_fds(r);
	free(r->fd);
	free(r->first);
	free(r->prev);
	free(r->cur);
	free(r->cpu);
	free(r);
}
