// SPDX-License-Identifier: GPL-2.0
/*
 * dpdk-waits: call DPDK's power intrinsics (librte_eal.so.23) N times each:
 * rte_power_pause (TPAUSE) and rte_power_monitor (UMONITOR + UMWAIT on a
 * line nobody writes), deadlines alternating between CYCLES and CYCLES/100
 * TSC cycles ahead, and print how many waits it made: DPDK's own count.
 *
 * rte_power_monitor serves EAL threads only (it keeps per-lcore state), so
 * the EAL is initialized first, without hugepages, PCI or shared files:
 * --no-huge --no-pci --no-shconf --no-telemetry -l 0 -m 64.
 *
 * With -s, a second thread stores to the monitored line once each
 * rte_power_monitor has armed UMONITOR: its abort check, which DPDK calls
 * between UMONITOR and UMWAIT, tells the thread, and the store lands long
 * before the deadline (every deadline is then CYCLES ahead, none shorter),
 * so every UMWAIT ends early, woken by the store, unless the thread is kept
 * off a CPU for all of CYCLES.
 * The report then has stores=N.
 *
 * usage: dpdk-waits [-n N] [-c CYCLES] [-s]
 */
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_power_intrinsics.h>

#include "client.h"

static unsigned long monitor_calls;

/*
 * The hand-shake with the storing thread (-s), on a page apart from the
 * monitored line: the lab's model notices stores by page.
 */
static struct {
	volatile bool armed;	/* UMONITOR is armed: store now */
	volatile bool stop;
	volatile unsigned long stores;
} __attribute__((aligned(4096))) hs;
static bool store_mode;

/*
 * rte_power_monitor's abort check, called after UMONITOR and before
 * UMWAIT: never abort, so every call waits; with -s, let the store go
 */
static int never_abort(const uint64_t val, const uint64_t opaque[RTE_POWER_MONITOR_OPAQUE_SZ])
{
	(void)val;
	(void)opaque;
	monitor_calls++;
	if (store_mode)
		hs.armed = true;
	return 0;
}

static void *store_thread(void *arg)
{
	volatile uint64_t *line = arg;

	while (!hs.stop) {
		if (!hs.armed) {
			_mm_pause();
			continue;
		}
		line[0]++;
		hs.stores++;
		hs.armed = false;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	/*
	 * The monitored line gets a page of its own: the lab's model notices
	 * stores by page, and the abort check's own counter (monitor_calls),
	 * written between UMONITOR and UMWAIT, would otherwise end every wait.
	 */
	static volatile uint64_t line[4096 / sizeof(uint64_t)] __attribute__((aligned(4096)));
	char *eal_args[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf",
			     "--no-telemetry", "-l", "0", "-m", "64", "--log-level", "7", NULL };
	struct rte_power_monitor_cond pmc = {
		.addr = line, .size = sizeof(line[0]), .fn = never_abort,
	};
	unsigned long pauses = 0, monitors = 0;
	long n = 50, cycles = 1000000, i;
	struct client_id id;
	char extra[160];
	pthread_t thr;
	int c, err;

	while ((c = getopt(argc, argv, "n:c:s")) != -1) {
		switch (c) {
		case 'n': n = client_arg("dpdk-waits", optarg, 1, 1000000); break;
		case 'c': cycles = client_arg("dpdk-waits", optarg, 100, 1000000000); break;
		case 's': store_mode = true; break;
		default:
			fprintf(stderr, "usage: dpdk-waits [-n N] [-c CYCLES] [-s]\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dpdk-waits: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (client_mark("dpdk-waits", &id))
		return 1;
	if (rte_eal_init((int)(sizeof(eal_args) / sizeof(eal_args[0])) - 1, eal_args) < 0) {
		fprintf(stderr, "dpdk-waits: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (store_mode) {
		err = pthread_create(&thr, NULL, store_thread, (void *)line);
		if (err) {
			fprintf(stderr, "dpdk-waits: cannot start the storing thread: %s\n",
				strerror(err));
			return 1;
		}
	}

	for (i = 0; i < n; i++) {
		uint64_t ahead = i % 2 && !store_mode ? cycles / 100 : cycles;

		err = rte_power_pause(__rdtsc() + ahead);
		if (err) {
			fprintf(stderr, "dpdk-waits: rte_power_pause: %s\n", strerror(-err));
			return 1;
		}
		pauses++;
		/* the last store is in: none is left over for this wait */
		while (hs.armed)
			_mm_pause();
		err = rte_power_monitor(&pmc, __rdtsc() + ahead);
		if (err) {
			fprintf(stderr, "dpdk-waits: rte_power_monitor: %s\n", strerror(-err));
			return 1;
		}
		monitors++;
	}
	if (store_mode) {
		while (hs.armed)
			_mm_pause();
		hs.stop = true;
		pthread_join(thr, NULL);
	}
	rte_eal_cleanup();
	if (monitor_calls != monitors) {
		fprintf(stderr, "dpdk-waits: %lu monitor calls but %lu abort checks\n", monitors,
			monitor_calls);
		return 1;
	}
	if (store_mode)
		snprintf(extra, sizeof(extra), "pauses=%lu monitors=%lu cycles=%ld stores=%lu",
			 pauses, monitors, cycles, hs.stores);
	else
		snprintf(extra, sizeof(extra), "pauses=%lu monitors=%lu cycles=%ld", pauses,
			 monitors, cycles);
	client_report("dpdk-waits", &id, extra);
	return 0;
}
