// SPDX-License-Identifier: GPL-2.0
/*
 * host-spin: what the host alone does to a timed wait.  Runs COUNT waits of
 * CYCLES TSC cycles as a loop on RDTSC (with PAUSE until the last 1024
 * cycles, as the lab's QEMU spins), each measured from the RDTSC before it
 * to the RDTSC after it, and prints how far past the request they ended:
 * the host's own scheduling noise, with no QEMU and no guest, which bounds
 * what any model of TPAUSE can achieve on this host.
 *
 * Prints, for make bench, "METRIC<TAB>spin SIZE<TAB>VALUE" lines:
 * host_mean, host_p50 and host_p99 (cycles), host_want (CYCLES).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv)
{
	uint64_t cycles, count, i, sum = 0, *past;
	char size[32];

	if (argc != 3 || parse(argv[1], &cycles) || parse(argv[2], &count)) {
		fprintf(stderr, "usage: host-spin CYCLES COUNT (both at least 1)\n");
		return 2;
	}
	past = calloc(count, sizeof(*past));
	if (!past) {
		fprintf(stderr, "host-spin: no memory for %" PRIu64 " waits\n", count);
		return 1;
	}
	for (i = 0; i < count; i++) {
		uint64_t t0 = __rdtsc(), end = t0 + cycles, now = t0;
		volatile unsigned int gap;

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
	qsort(past, count, sizeof(*past), cmp_u64);

	if (cycles % 1000000 == 0)
		snprintf(size, sizeof(size), "%" PRIu64 "M", cycles / 1000000);
	else if (cycles % 1000 == 0)
		snprintf(size, sizeof(size), "%" PRIu64 "k", cycles / 1000);
	else
		snprintf(size, sizeof(size), "%" PRIu64, cycles);
	printf("host_want\tspin %s\t%" PRIu64 "\n", size, cycles);
	printf("host_mean\tspin %s\t%.0f\n", size, (double)sum / count);
	printf("host_p50\tspin %s\t%" PRIu64 "\n", size, percentile(past, count, 50));
	printf("host_p99\tspin %s\t%" PRIu64 "\n", size, percentile(past, count, 99));
	free(past);
	return 0;
}
