// SPDX-License-Identifier: GPL-2.0
/*
 * waitpkg_monitor: a test module for the lab's QEMU model. MONITOR and
 * UMONITOR share the address-monitoring hardware, so a UMWAIT that follows a
 * MONITOR executed after the last UMONITOR must not wait (SDM, UMWAIT).
 * User space cannot execute MONITOR, hence this module.
 *
 * Loading it runs ROUNDS waits of each kind, each with interrupts off, and
 * with the OS time limit (IA32_UMWAIT_CONTROL) the lab sets:
 *   - UMONITOR; UMWAIT: the limit ends the wait (CF=1);
 *   - UMONITOR; MONITOR; UMWAIT: the wait returns at once (CF=0).
 * It logs the counts and then refuses to load (-EAGAIN): nothing stays.
 * (busybox insmod tries finit_module, then init_module: it runs twice.)
 */
#include <linux/init.h>
#include <linux/irqflags.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/smp.h>
#include <asm/cpufeature.h>
#include <asm/msr.h>
#include <asm/mwait.h>

#include "waitpkg.h"

#define ROUNDS 20

static u64 lines[16] __aligned(64);

static void umonitor(const void *addr)
{
	/* umonitor %rax */
	asm volatile(".byte 0xf3, 0x0f, 0xae, 0xf0" :: "a"(addr));
}

static int __init waitpkg_monitor_init(void)
{
	unsigned int plain = 0, after_monitor = 0, i;
	unsigned long flags;

	if (!boot_cpu_has(X86_FEATURE_WAITPKG) || !boot_cpu_has(X86_FEATURE_MWAIT)) {
		pr_info("waitpkg_monitor: no WAITPKG or no MONITOR\n");
		return -ENODEV;
	}
	/*
	 * Interrupts are off within a round only: a masked interrupt ends
	 * UMWAIT too, and one left pending would end all the later rounds.
	 */
	for (i = 0; i < ROUNDS; i++) {
		local_irq_save(flags);
		umonitor(&lines[0]);
		plain += umwait(rdtsc() + (1ULL << 40));
		local_irq_restore(flags);
	}
	for (i = 0; i < ROUNDS; i++) {
		local_irq_save(flags);
		umonitor(&lines[0]);
		__monitor(&lines[8], 0, 0);
		after_monitor += umwait(rdtsc() + (1ULL << 40));
		local_irq_restore(flags);
	}
	pr_info("waitpkg_monitor: capped %u/%u after UMONITOR, %u/%u after UMONITOR+MONITOR\n",
		plain, ROUNDS, after_monitor, ROUNDS);
	return -EAGAIN;
}
module_init(waitpkg_monitor_init);

MODULE_DESCRIPTION("lab test: MONITOR disarms UMONITOR");
MODULE_LICENSE("GPL");
