// SPDX-License-Identifier: GPL-2.0
/*
 * waitpkg_nmi: a test module for the lab's QEMU model. An NMI that arrives
 * while NMIs are blocked (inside an NMI handler, until its IRET) is held
 * pending; it must not end a TPAUSE, and it must be delivered once the
 * handler returns.
 *
 * The second NMI is made pending before the wait starts, by construction,
 * never by luck of timing: an NMI sent to another CPU enters this module's
 * handler there, which says it is ready and holds until this CPU has sent
 * the second NMI (the APIC write that sends it has completed when this CPU
 * says so), and only then starts a TPAUSE of WAIT_CYCLES. The whole wait
 * thus runs with a blocked NMI pending, however late the host runs either
 * vCPU. Loading the module runs rounds until CLEAN_WANTED are clean, or
 * ROUNDS. A round is:
 *   - clean: the wait ran to its deadline (CF=0) and the second NMI was
 *     delivered after it;
 *   - cut: the wait ended early while an interrupt was pending in the local
 *     APIC's IRR (interrupts end TPAUSE even when EFLAGS.IF masks them): a
 *     timer tick, not the NMI; the round says nothing;
 *   - bad: the wait ended early with no interrupt pending: the blocked NMI
 *     ended it;
 *   - capped: the OS time limit ended it (CF=1): max_time was not 0;
 *   - lost: the other CPU did not answer within 2 s (the rounds stop).
 * The test wants no bad round and CLEAN_WANTED clean ones. It logs the
 * counts and then refuses to load (-EAGAIN): nothing stays. The test sets
 * the OS time limit (max_time) to 0 first, so that only the deadline ends
 * a wait.
 */
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/cpufeature.h>
#include <asm/msr.h>
#include <asm/nmi.h>

#include "waitpkg.h"

#define ROUNDS		200
#define CLEAN_WANTED	5
/* well under 1 ms, over which Linux reports an NMI handler as too long */
#define WAIT_CYCLES	500000ULL
/* How long either CPU waits for the other, in polls of 1 us */
#define POLL_US		(2 * USEC_PER_SEC)

/*
 * IDLE -> ARMED (this CPU, before the first NMI) -> READY (the handler took
 * it) -> SENT (this CPU sent the second NMI) -> WAITING -> DONE (handler);
 * GAVE_UP: the handler saw no SENT in time and returned without waiting.
 */
enum { IDLE, ARMED, READY, SENT, WAITING, DONE, GAVE_UP };

static struct {
	int state;
	int target;
	unsigned int nmis;	/* NMIs the target took while armed or after */
	u64 deadline, t1;
	bool cf, irr;
} w;

/* Whether the local APIC holds an interrupt it has not delivered */
static bool irr_pending(void)
{
	int i;

	/* apic->read: apic_read() is a static call modules cannot use in 6.12 */
	for (i = 0; i < APIC_ISR_NR; i++)
		if (apic->read(APIC_IRR + i * 0x10))
			return true;
	return false;
}

/* Poll @cond every microsecond for up to POLL_US; false on a timeout */
static bool poll_for(bool (*cond)(void))
{
	unsigned int n;

	for (n = 0; n < POLL_US; n++) {
		if (cond())
			return true;
		udelay(1);
	}
	return false;
}

static bool sent(void)
{
	/* pairs with the release of SENT after the second NMI's APIC write */
	return smp_load_acquire(&w.state) == SENT;
}

static int waitpkg_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (smp_processor_id() != READ_ONCE(w.target))
		return NMI_DONE;

	switch (READ_ONCE(w.state)) {
	case ARMED:
		w.nmis++;
		smp_store_release(&w.state, READY);
		/* NMIs stay blocked until this handler's IRET */
		if (!poll_for(sent)) {
			smp_store_release(&w.state, GAVE_UP);
			return NMI_HANDLED;
		}
		/* the second NMI is pending: the whole wait runs with it */
		WRITE_ONCE(w.state, WAITING);
		w.deadline = rdtsc() + WAIT_CYCLES;
		w.cf = tpause(w.deadline);
		w.t1 = rdtsc();
		w.irr = irr_pending();
		/* the results are visible before DONE */
		smp_store_release(&w.state, DONE);
		return NMI_HANDLED;
	case READY:
	case SENT:
	case WAITING:
	case DONE:
	case GAVE_UP:
		/* The second NMI: delivered after the first handler's IRET */
		w.nmis++;
		return NMI_HANDLED;
	}
	return NMI_DONE;
}

/* The handler took the first NMI and holds for the second */
static bool ready(void)
{
	return smp_load_acquire(&w.state) == READY;
}

/* The wait is over and the second NMI came */
static bool finished(void)
{
	/* pairs with the handler's release of DONE: its results are visible */
	return smp_load_acquire(&w.state) == DONE && READ_ONCE(w.nmis) == 2;
}

static int __init waitpkg_nmi_init(void)
{
	unsigned int clean = 0, cut = 0, bad = 0, capped = 0, lost = 0, i;
	unsigned int this, target;
	int ret;

	if (!boot_cpu_has(X86_FEATURE_WAITPKG)) {
		pr_info("waitpkg_nmi: no WAITPKG\n");
		return -ENODEV;
	}
	/* no target yet (-1): the handler ignores every NMI */
	WRITE_ONCE(w.target, -1);
	ret = register_nmi_handler(NMI_LOCAL, waitpkg_nmi_handler, 0, "waitpkg_nmi");
	if (ret)
		return ret;
	for (i = 0; i < ROUNDS && clean < CLEAN_WANTED; i++) {
		/*
		 * A pause between rounds lets the target take what interrupts
		 * it has pending, so that one does not cut round after round.
		 */
		if (i)
			usleep_range(1000, 2000);
		this = get_cpu();
		target = cpumask_any_but(cpu_online_mask, this);
		if (target >= nr_cpu_ids) {
			put_cpu();
			unregister_nmi_handler(NMI_LOCAL, "waitpkg_nmi");
			pr_info("waitpkg_nmi: needs two online CPUs\n");
			return -ENODEV;
		}
		WRITE_ONCE(w.target, target);
		w.nmis = 0;
		/* nmis is 0 before the handler sees ARMED */
		smp_store_release(&w.state, ARMED);
		apic->send_IPI(target, NMI_VECTOR);
		if (!poll_for(ready)) {
			put_cpu();
			lost++;
			break;
		}
		apic->send_IPI(target, NMI_VECTOR);
		/* the APIC write is done: the NMI is pending at the target */
		smp_store_release(&w.state, SENT);
		if (!poll_for(finished)) {
			put_cpu();
			lost++;
			break;
		}
		put_cpu();
		if (w.cf)
			capped++;
		else if (w.t1 < w.deadline && w.irr)
			cut++;
		else if (w.t1 < w.deadline)
			bad++;
		else
			clean++;
		WRITE_ONCE(w.state, IDLE);
	}
	/* After a timeout the handler may still run: leave it nothing to do */
	WRITE_ONCE(w.state, IDLE);
	unregister_nmi_handler(NMI_LOCAL, "waitpkg_nmi");

	pr_info("waitpkg_nmi: clean %u cut %u bad %u capped %u lost %u of %u\n",
		clean, cut, bad, capped, lost, i);
	return -EAGAIN;
}
module_init(waitpkg_nmi_init);

MODULE_DESCRIPTION("lab test: a blocked NMI does not end TPAUSE");
MODULE_LICENSE("GPL");
