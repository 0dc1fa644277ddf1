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
#include <new>
#include <atomic>
#include <unistd.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include "client.h"

int main(int argc, char **argv)
{
	struct client_rounds o = { 5, 4, 20 };
	std::atomic<unsigned long> sum{0};
	struct client_id id;
	char extra[128];

	client_parse_rounds("tbb-waits", argc, argv, &o);
	if (client_mark("tbb-waits", &id))
		return 1;

	oneapi::tbb::task_scheduler_handle handle{oneapi::tbb::attach{}};
	{
		oneapi::tbb::global_control gc(oneapi::tbb::global_control::max_allowed_parallelism,
					       o.threads);
		for (long r = 0; r < o.rounds; r++) {
			oneapi::tbb::parallel_for(0, 64, [&](int i) {
				unsigned long x = i;

				for (int k = 0; k < 1000; k++)
					x = x * 6364136223846793005UL + 1442695040888963407UL;
				sum += x & 1;
			});
			usleep(o.ms * 1000);
		}
	}
	if (!oneapi::tbb::finalize(handle, std::nothrow)) {
		fprintf(stderr, "tbb-waits: tbb::finalize failed\n");
		return 1;
	}
	snprintf(extra, sizeof(extra), "rounds=%ld threads=%ld sum=%lu", o.rounds, o.threads,
		 sum.load());
	client_report("tbb-waits", &id, extra);
	return 0;
}
