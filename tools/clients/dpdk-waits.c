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
 * usage: dpdk-waits [-n N] [-c CYCLES]
 */
#include <unistd.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_power_intrinsics.h>

#include "client.h"

static unsigned long monitor_calls;

/* rte_power_monitor's abort check: never abort, so every call waits */
static int never_abort(const uint64_t val, const uint64_t opaque[RTE_POWER_MONITOR_OPAQUE_SZ])
{
	(void)val;
	(void)opaque;
	monitor_calls++;
	return 0;
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
	char extra[128];
	int c, err;

	while ((c = getopt(argc, argv, "n:c:")) != -1) {
		switch (c) {
		case 'n': n = client_arg("dpdk-waits", optarg, 1, 1000000); break;
		case 'c': cycles = client_arg("dpdk-waits", optarg, 100, 1000000000); break;
		default:
			fprintf(stderr, "usage: dpdk-waits [-n N] [-c CYCLES]\n");
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

	for (i = 0; i < n; i++) {
		uint64_t ahead = i % 2 ? cycles / 100 : cycles;

		err = rte_power_pause(__rdtsc() + ahead);
		if (err) {
			fprintf(stderr, "dpdk-waits: rte_power_pause: %s\n", strerror(-err));
			return 1;
		}
		pauses++;
		err = rte_power_monitor(&pmc, __rdtsc() + ahead);
		if (err) {
			fprintf(stderr, "dpdk-waits: rte_power_monitor: %s\n", strerror(-err));
			return 1;
		}
		monitors++;
	}
	rte_eal_cleanup();
	if (monitor_calls != monitors) {
		fprintf(stderr, "dpdk-waits: %lu monitor calls but %lu abort checks\n", monitors,
			monitor_calls);
		return 1;
	}
	snprintf(extra, sizeof(extra), "pauses=%lu monitors=%lu cycles=%ld", pauses, monitors,
		 cycles);
	client_report("dpdk-waits", &id, extra);
	return 0;
}
