// SPDX-License-Identifier: GPL-2.0
/*
 * waitpkg_smi: a test module for the lab's QEMU model. It raises SMIs on
 * CPU 0 from CPU 1 while it is loaded, so that a wait that CPU 0 single-
 * steps can be ended by an SMI. A write to the APM control port (B2H) of
 * the i440FX's PIIX4 raises an SMI on the first CPU; the firmware's SMI
 * handler (SeaBIOS) takes an unknown command and resumes. User space
 * cannot reach the port when the kernel lacks ioperm() or /dev/port,
 * hence this module.
 *
 * A kernel thread bound to CPU 1 writes the port every period_us
 * microseconds until 1 is written to its parameter stop, or for
 * duration_ms milliseconds at most, then logs how many times
 * ("waitpkg_smi: done: N SMIs") and ends. The module stays loaded (the
 * lab's kernels cannot unload modules), idle.
 */
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/init.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

#define APM_CNT 0xb2

static unsigned int period_us = 200;
module_param(period_us, uint, 0444);
MODULE_PARM_DESC(period_us, "Microseconds between two SMIs (default 200)");

static unsigned int duration_ms = 60000;
module_param(duration_ms, uint, 0444);
MODULE_PARM_DESC(duration_ms, "Milliseconds to raise SMIs for at most (default 60000)");

static bool stop;
module_param(stop, bool, 0644);
MODULE_PARM_DESC(stop, "Write 1 to stop raising SMIs");

static int smi_fn(void *arg)
{
	unsigned long end = jiffies + msecs_to_jiffies(duration_ms), smis = 0;

	while (time_before(jiffies, end) && !READ_ONCE(stop)) {
		outb(0, APM_CNT);
		smis++;
		usleep_range(period_us, period_us + period_us / 4 + 1);
	}
	pr_info("waitpkg_smi: done: %lu SMIs\n", smis);
	return 0;
}

static int __init waitpkg_smi_init(void)
{
	struct task_struct *thread;

	if (num_online_cpus() < 2 || !cpu_online(1)) {
		pr_info("waitpkg_smi: needs CPU 1 online\n");
		return -ENODEV;
	}
	thread = kthread_create(smi_fn, NULL, "waitpkg_smi");
	if (IS_ERR(thread))
		return PTR_ERR(thread);
	kthread_bind(thread, 1);
	wake_up_process(thread);
	pr_info("waitpkg_smi: raising SMIs from CPU 1 every %u us for %u ms at most\n",
		period_us, duration_ms);
	return 0;
}

module_init(waitpkg_smi_init);
MODULE_DESCRIPTION("SMIs on CPU 0 for the lab's WAITPKG model tests");
MODULE_LICENSE("GPL");
