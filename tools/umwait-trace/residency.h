/* SPDX-License-Identifier: GPL-2.0 */
/* umwait-trace: C0.1 / C0.2 / C0_WAIT residency from the core PMU. */
#ifndef UT_RESIDENCY_H
#define UT_RESIDENCY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct residency;

/* --residency: count where the CPU model is known to (auto), anyway (force), never (off) */
enum residency_mode {
	RESIDENCY_AUTO,
	RESIDENCY_FORCE,
	RESIDENCY_OFF,
};

/* Never NULL (except out of memory); check residency_available(). */
struct residency *residency_open(enum residency_mode mode);
bool residency_available(const struct residency *r);
const char *residency_reason(const struct residency *r);

/* Read the counters now; residency_mark() starts a new interval there. */
void residency_read(struct residency *r);
void residency_mark(struct residency *r);

/* Its own block: per CPU, percent of unhalted cycles over the last interval or since open. */
void residency_print(const struct residency *r, bool since_open);
void residency_json(FILE *f, const struct residency *r, bool since_open);

/*
 * Raw counts since open, for counters: the i-th listed CPU's number; false if
 * it is not counted (offline at start, or its counters stopped), else in d[]
 * its unhalted, C0.1, C0.2 and C0_WAIT cycles (residency_event_name()), in
 * t[] the nanoseconds its group was enabled and running (running < enabled:
 * the PMU was shared; scale by enabled / running).
 */
#define RESIDENCY_NR_EVENTS	4
int residency_nr_cpus(const struct residency *r);
int residency_cpu(const struct residency *r, int i);
bool residency_counts(const struct residency *r, int i, uint64_t d[RESIDENCY_NR_EVENTS],
		      uint64_t t[2]);
const char *residency_event_name(int e);

/*
 * C01 + C02 <= C0_WAIT <= cycles, allowing for counter skew (half a percent
 * of the cycles); false when the counts break it.
 */
bool residency_consistent(const uint64_t d[RESIDENCY_NR_EVENTS]);

void residency_close(struct residency *r);

#endif /* UT_RESIDENCY_H */
