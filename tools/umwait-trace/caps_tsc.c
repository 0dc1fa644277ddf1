// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: the TSC for the BPF side.  BPF has no RDTSC; it has
 * the monotonic clock.  Here RDTSC and CLOCK_MONOTONIC are read together
 * (the pair with the shortest gap of a few tries), the first pair is kept,
 * and each update hands BPF the latest pair as anchor and the rate between
 * the first and the latest: the longer caps runs, the better the rate.  The
 * error is measured at each update: the TSC the last calibration predicted
 * for now against RDTSC.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>
#include <bpf/libbpf.h>

#include "umwait-trace.h"
#include "umwait-trace.skel.h"
#include "caps.h"
#include "ut.h"

/*
 * How late after its deadline a probe may be and the wait still ran to it:
 * the thread (or, in a virtual machine, its vCPU) can be kept off a CPU
 * between the wait's end and the probe, for tens of milliseconds on a busy
 * host; a deadline a second behind is one the program never meant.
 */
#define PAST_SLACK_NS	1000000000ULL

struct pair {
	uint64_t ns, tsc;
};

static struct pair first;
static double max_err;		/* TSC cycles, the largest seen */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* RDTSC and the clock at one moment: the try with the shortest gap */
static struct pair read_pair(void)
{
	struct pair best = {};
	uint64_t gap = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t a = mono_ns(), t = __rdtsc(), b = mono_ns();

		if (b - a < gap) {
			gap = b - a;
			best = (struct pair){ .ns = a + (b - a) / 2, .tsc = t };
		}
	}
	return best;
}

static uint64_t predict(const struct tsc_cal *c, uint64_t ns)
{
	unsigned __int128 d = ns >= c->ns ? ns - c->ns : c->ns - ns;
	uint64_t cyc = (uint64_t)((d * c->mult) >> TSC_CAL_SHIFT);

	return ns >= c->ns ? c->tsc + cyc : c->tsc - cyc;
}

/*
 * A new calibration for the BPF side: the first call waits 20 ms for a rate
 * to measure.  0, or -EIO when the clocks do not advance together.
 */
int tsc_cal_update(struct umwait_trace_bpf *obj)
{
	uint32_t idx = obj->bss->tsc_cal_idx & 1;
	struct tsc_cal *cur = &obj->bss->tsc_cal[idx], *next = &obj->bss->tsc_cal[!idx];
	struct timespec wait = { .tv_nsec = 20 * 1000 * 1000 };
	struct pair now;
	double err;

	if (!first.ns) {
		first = read_pair();
		nanosleep(&wait, NULL);
	}
	now = read_pair();
	if (now.ns <= first.ns || now.tsc <= first.tsc)
		return -EIO;
	if (cur->mult) {
		err = (double)predict(cur, now.ns) - (double)now.tsc;
		if (err < 0)
			err = -err;
		if (err > max_err)
			max_err = err;
	}
	next->ns = now.ns;
	next->tsc = now.tsc;
	next->mult = (uint64_t)(((unsigned __int128)(now.tsc - first.tsc) << TSC_CAL_SHIFT) /
				(now.ns - first.ns));
	next->past_slack = (uint64_t)(((unsigned __int128)PAST_SLACK_NS * next->mult) >>
				      TSC_CAL_SHIFT);
	__atomic_store_n(&obj->bss->tsc_cal_idx, !idx, __ATOMIC_RELEASE);
	return 0;
}

/* the largest error of the TSC the BPF side computed, in cycles, so far */
double tsc_cal_error(void)
{
	return max_err;
}

/* the bounds of a log-linear slot (umwait-trace.h): [lower, upper) */
uint64_t ohist_lower(int slot)
{
	int l = slot / OHIST_SUB + OHIST_SUB_BITS - 1, sub = slot % OHIST_SUB;

	if (slot < OHIST_SUB)
		return slot;
	return (uint64_t)(OHIST_SUB + sub) << (l - OHIST_SUB_BITS);
}

uint64_t ohist_upper(int slot)
{
	if (slot < OHIST_SUB)
		return slot + 1;
	if (slot == OHIST_SLOTS - 1)
		return UINT64_MAX;
	return ohist_lower(slot + 1);
}
