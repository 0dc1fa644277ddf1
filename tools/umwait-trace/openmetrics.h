/* SPDX-License-Identifier: GPL-2.0 */
/*
 * umwait-trace --format prometheus|openmetrics: caps and status as metrics
 * for Prometheus, on stdout or (-o FILE) the node exporter textfile way.
 */
#ifndef UT_OPENMETRICS_H
#define UT_OPENMETRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "residency.h"
#include "ut.h"

/* caps: one series' counts since attach: a site's (and its executable's), or with --per-pid a process's */
struct om_site {
	uint32_t pid;
	const char *comm;
	const char *exe;
	const char *file;
	uint64_t offset;	/* file offset of the TPAUSE/UMWAIT */
	const char *symbol;
	const char *insn;
	const char *cgroup;	/* its cgroup's path, NULL for the root cgroup: no label */
	uint64_t waits;
	uint64_t capped;
	uint64_t deadline;	/* the outcomes (umwait-trace.h): with capped, they add up to waits */
	uint64_t early;
	uint64_t past;
};

struct om_caps {
	const struct om_site *sites;
	int nr_sites;
	uint64_t unpaired;	/* since attach */
	uint64_t unended;	/* since attach: ended never */
	uint64_t inflight;	/* now: not ended yet */
	uint64_t dropped;	/* since attach */
	int anon;		/* anonymous executable mappings at the last look */
	time_t start_time;	/* attach */
	const struct residency *res;
};

struct om_status {
	uint64_t cached;	/* what the kernel caches */
	const char *source;	/* where the CPUs' values come from */
	const struct cpu_val *cpus;
	int nr_cpus;
	int mismatched;		/* online CPUs holding another value */
	int unknown;		/* online CPUs whose value could not be read */
};

/*
 * Write one exposition to env.output (atomically) or stdout; 0 or
 * EXIT_TROUBLE.  om_status says why it failed on stderr; om_caps leaves
 * that to its caller (om_error), which runs it each interval.
 */
int om_caps(const struct om_caps *c);
int om_status(const struct om_status *s);
/* why the last om_caps or om_status failed */
const char *om_error(void);

#endif /* UT_OPENMETRICS_H */
