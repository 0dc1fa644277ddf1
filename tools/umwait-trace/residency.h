/* SPDX-License-Identifier: GPL-2.0 */
/* umwait-trace: C0.1 / C0.2 / C0_WAIT residency from the core PMU. */
#ifndef UT_RESIDENCY_H
#define UT_RESIDENCY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct residency;

/* Never NULL (except out of memory); check residency_available(). */
struct residency *residency_open(void);
bool residency_available(const struct residency *r);
const char *residency_reason(const struct residency *r);

/* Read the counters now; residency_mark() starts a new interval there. */
void residency_read(struct residency *r);
void residency_mark(struct residency *r);

/* Percent of unhalted cycles over the last interval or since open. */
void residency_print(const struct residency *r, bool since_open);
void residency_json(FILE *f, const struct residency *r, bool since_open);

/*
 * Raw counts since open, for counters: the i-th counted CPU's number, and in
 * d[] its unhalted, C0.1, C0.2 and C0_WAIT cycles (residency_event_name()).
 */
#define RESIDENCY_NR_EVENTS	4
int residency_nr_cpus(const struct residency *r);
int residency_counts(const struct residency *r, int i, uint64_t d[RESIDENCY_NR_EVENTS]);
const char *residency_event_name(int e);

void residency_close(struct residency *r);

#endif /* UT_RESIDENCY_H */
