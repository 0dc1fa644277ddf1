// SPDX-License-Identifier: GPL-2.0
/*
 * omp-waits: drive LLVM OpenMP's waiting code (libomp.so.5 of LLVM 14) the
 * way a program does: ROUNDS parallel regions of THREADS threads with a
 * barrier inside, the main thread sleeping MS milliseconds between them
 * while the other threads wait for the next region.  How they wait is
 * libomp's choice, set by its environment:
 *
 *   KMP_TPAUSE=1 (C0.1) or 2 (C0.2)  spinning waits use TPAUSE (__kmp_tpause)
 *   KMP_USER_LEVEL_MWAIT=1           sleeping waits use UMONITOR/UMWAIT
 *                                    (with KMP_BLOCKTIME=0: at once)
 *
 * libomp does not say how many waits it ran: the lab counts them in the
 * QEMU trace.
 *
 * usage: omp-waits [-r ROUNDS] [-t THREADS] [-m MS]
 */
#include <unistd.h>
#include <omp.h>

#include "client.h"

int main(int argc, char **argv)
{
	struct client_rounds o = { 5, 4, 20 };
	long r;
	unsigned long sum = 0;
	struct client_id id;
	char extra[128];

	client_parse_rounds("omp-waits", argc, argv, &o);
	if (client_mark("omp-waits", &id))
		return 1;

	omp_set_num_threads(o.threads);
	for (r = 0; r < o.rounds; r++) {
#pragma omp parallel reduction(+ : sum)
		{
			unsigned long x = omp_get_thread_num();
			int k;

			for (k = 0; k < 1000; k++)
				x = x * 6364136223846793005UL + 1442695040888963407UL;
#pragma omp barrier
			sum += x & 1;
		}
		usleep(o.ms * 1000);
	}
	snprintf(extra, sizeof(extra), "rounds=%ld threads=%ld sum=%lu", o.rounds, o.threads, sum);
	client_report("omp-waits", &id, extra);
	return 0;
}
