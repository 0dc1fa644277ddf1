// SPDX-License-Identifier: GPL-2.0
/*
 * host-spin: what the host alone does to a timed wait.  Runs COUNT waits of
 * CYCLES TSC cycles as a loop on RDTSC (with PAUSE until the last 1024
 * cycles, as the lab's QEMU spins), each measured from the RDTSC before it
 * to the RDTSC after it, and prints how far past the request they ended:
 * the host's own scheduling noise, with no QEMU and no guest, which bounds
 * what any model of TPAUSE can achieve on this host.
 *
 * With --wake, each "wait" is a thread blocked on a condition variable
 * that another thread signals CYCLES after it went to sleep, and what is
 * measured is the cycles from the signal to the sleeper running: the floor
 * for a model that wakes a halted vCPU's thread from another one (a store
 * that ends a UMWAIT).
 *
 * With --sleep, each wait is one clock_nanosleep() of CYCLES at the TSC's
 * rate instead: what a plain timed sleep of the host sees, the floor for a
 * model that halts the vCPU on a host timer.  make bench runs it beside each
 * boot of the accuracy runs, so that both see the same load; --tag names
 * that boot (e.g. smp2).
 *
 * Prints, for make bench, "METRIC<TAB>spin SIZE[ TAG]<TAB>VALUE" lines
 * ("sleep SIZE[ TAG]" with --sleep, "wake SIZE[ TAG]" with --wake):
 * host_mean, host_p50 and host_p99 (cycles), host_want (CYCLES).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#define RELAX_CYCLES 1024

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int parse(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *v == 0 || s[0] == '-';
}

/* tpause-loop's percentile: the smallest sample that P% do not exceed */
static uint64_t percentile(const uint64_t *sorted, uint64_t n, unsigned int p)
{
	return sorted[(n * p + 99) / 100 - 1];
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* TSC cycles per nanosecond, against CLOCK_MONOTONIC over 50 ms */
static double tsc_per_ns(void)
{
	uint64_t n0 = mono_ns(), t0 = __rdtsc(), n1;

	do
		n1 = mono_ns();
	while (n1 - n0 < 50000000);
	return (double)(__rdtsc() - t0) / (n1 - n0);
}

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t signalled;	/* the TSC at the signal, 0: none pending */
	uint64_t woke;		/* the sleeper's TSC once it runs */
	bool asleep, done;
} wk = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false, false };

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wk.lock);
	while (!wk.done) {
		/* the signalling side waits for this before it starts a round */
		wk.asleep = true;
		pthread_cond_broadcast(&wk.cond);
		while (!wk.signalled && !wk.done)
			pthread_cond_wait(&wk.cond, &wk.lock);
		wk.asleep = false;
		if (wk.signalled)
			wk.woke = __rdtsc();
		wk.signalled = 0;
		pthread_cond_broadcast(&wk.cond);
	}
	pthread_mutex_unlock(&wk.lock);
	return NULL;
}

/* One --wake round: the cycles from the signal to the sleeper running */
static uint64_t wake_once(uint64_t cycles)
{
	uint64_t t0, past;

	/* let the sleeper block, then CYCLES more */
	pthread_mutex_lock(&wk.lock);
	while (!wk.asleep)
		pthread_cond_wait(&wk.cond, &wk.lock);
	pthread_mutex_unlock(&wk.lock);
	t0 = __rdtsc();
	while (__rdtsc() - t0 < cycles)
		_mm_pause();
	pthread_mutex_lock(&wk.lock);
	wk.woke = 0;
	wk.signalled = __rdtsc();
	t0 = wk.signalled;
	pthread_cond_broadcast(&wk.cond);
	while (!wk.woke)
		pthread_cond_wait(&wk.cond, &wk.lock);
	past = wk.woke - t0;
	pthread_mutex_unlock(&wk.lock);
	return past;
}

int main(int argc, char **argv)
{
	uint64_t cycles, count, i, sum = 0, *past;
	static const char *const kinds[] = { "spin", "sleep", "wake" };
	enum { SPIN, SLEEP, WAKE } mode = SPIN;
	const char *tag = NULL;
	double rate = 0;
	pthread_t thr;
	char size[48];
	int a = 1;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--sleep"))
			mode = SLEEP;
		else if (!strcmp(argv[a], "--wake"))
			mode = WAKE;
		else if (!strcmp(argv[a], "--tag") && a + 1 < argc)
			tag = argv[++a];
		else
			break;
	}
	if (argc - a != 2 || parse(argv[a], &cycles) || parse(argv[a + 1], &count)) {
		fprintf(stderr, "usage: host-spin [--sleep | --wake] [--tag TAG] CYCLES COUNT (both at least 1)\n");
		return 2;
	}
	if (mode == SLEEP)
		rate = tsc_per_ns();
	if (mode == WAKE && pthread_create(&thr, NULL, sleeper, NULL)) {
		fprintf(stderr, "host-spin: cannot start the sleeping thread\n");
		return 1;
	}
	past = calloc(count, sizeof(*past));
	if (!past) {
		fprintf(stderr, "host-spin: no memory for %" PRIu64 " waits\n", count);
		return 1;
	}
	for (i = 0; i < count; i++) {
		uint64_t t0 = __rdtsc(), end = t0 + cycles, now = t0;
		volatile unsigned int gap;

		if (mode == WAKE) {
			past[i] = wake_once(cycles);
			sum += past[i];
			continue;
		}
		if (mode == SLEEP) {
			uint64_t ns = cycles / rate;
			struct timespec ts = { ns / 1000000000, ns % 1000000000 };

			clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
			now = __rdtsc();
			/* a sleep may end a little early in TSC terms */
			past[i] = now > end ? now - end : 0;
			sum += past[i];
			continue;
		}
		while (now < end) {
			if (end - now > RELAX_CYCLES)
				_mm_pause();
			now = __rdtsc();
		}
		past[i] = __rdtsc() - end;
		sum += past[i];
		/* a little work between waits, as a loop in a guest has */
		for (gap = 0; gap < 1000; gap++)
			;
	}
	if (mode == WAKE) {
		pthread_mutex_lock(&wk.lock);
		wk.done = true;
		pthread_cond_broadcast(&wk.cond);
		pthread_mutex_unlock(&wk.lock);
		pthread_join(thr, NULL);
	}
	qsort(past, count, sizeof(*past), cmp_u64);

	if (cycles % 1000000 == 0)
		snprintf(size, sizeof(size), "%" PRIu64 "M", cycles / 1000000);
	else if (cycles % 1000 == 0)
		snprintf(size, sizeof(size), "%" PRIu64 "k", cycles / 1000);
	else
		snprintf(size, sizeof(size), "%" PRIu64, cycles);
	if (tag)
		snprintf(size + strlen(size), sizeof(size) - strlen(size), " %s", tag);
	printf("host_want\t%s %s\t%" PRIu64 "\n", kinds[mode], size, cycles);
	printf("host_mean\t%s %s\t%.0f\n", kinds[mode], size, (double)sum / count);
	printf("host_p50\t%s %s\t%" PRIu64 "\n", kinds[mode], size, percentile(past, count, 50));
	printf("host_p99\t%s %s\t%" PRIu64 "\n", kinds[mode], size, percentile(past, count, 99));
	free(past);
	return 0;
}
