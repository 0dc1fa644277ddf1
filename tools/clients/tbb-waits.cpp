// SPDX-License-Identifier: GPL-2.0
/*
 * tbb-waits: drive oneTBB's waiting code (libtbb.so.12) the way a program
 * does: ROUNDS tbb::parallel_for over a small range on THREADS threads, the
 * main thread sleeping MS milliseconds between rounds while the workers idle
 * in their stealing loop (prolonged_pause: a TPAUSE of 700 TSC cycles), then
 * tbb::finalize, which waits for the workers to leave.  oneTBB does not say
 * how many waits it ran: the lab counts them in the QEMU trace.
 *
 * usage: tbb-waits [-r ROUNDS] [-t THREADS] [-m MS]
 */
#include <cerrno>
#include <cstdlib>
#include <new>
#include <atomic>
#include <unistd.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include "client.h"

static long arg(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "tbb-waits: '%s' is not a number in [%ld, %ld]\n", s, lo, hi);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long rounds = 5, threads = 4, ms = 20;
	std::atomic<unsigned long> sum{0};
	struct client_id id;
	char extra[128];
	int c;

	while ((c = getopt(argc, argv, "r:t:m:")) != -1) {
		switch (c) {
		case 'r': rounds = arg(optarg, 1, 1000); break;
		case 't': threads = arg(optarg, 1, 64); break;
		case 'm': ms = arg(optarg, 0, 10000); break;
		default:
			fprintf(stderr, "usage: tbb-waits [-r ROUNDS] [-t THREADS] [-m MS]\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tbb-waits: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (client_mark("tbb-waits", &id))
		return 1;

	oneapi::tbb::task_scheduler_handle handle{oneapi::tbb::attach{}};
	{
		oneapi::tbb::global_control gc(oneapi::tbb::global_control::max_allowed_parallelism,
					       threads);
		for (long r = 0; r < rounds; r++) {
			oneapi::tbb::parallel_for(0, 64, [&](int i) {
				unsigned long x = i;

				for (int k = 0; k < 1000; k++)
					x = x * 6364136223846793005UL + 1442695040888963407UL;
				sum += x & 1;
			});
			usleep(ms * 1000);
		}
	}
	if (!oneapi::tbb::finalize(handle, std::nothrow)) {
		fprintf(stderr, "tbb-waits: tbb::finalize failed\n");
		return 1;
	}
	snprintf(extra, sizeof(extra), "rounds=%ld threads=%ld sum=%lu", rounds, threads,
		 sum.load());
	client_report("tbb-waits", &id, extra);
	return 0;
}
