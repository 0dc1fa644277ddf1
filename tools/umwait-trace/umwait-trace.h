/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by bpf/umwait-trace.bpf.c and the user-space side of
 * umwait-trace.  Plain fixed-size integers only: the BPF side sees these
 * through vmlinux.h, user space through <linux/types.h>.
 */
#ifndef UMWAIT_TRACE_H
#define UMWAIT_TRACE_H

#define TASK_COMM_LEN	16
#define MAX_SLOTS	32	/* log2 buckets of wait time in ns: up to ~4 s */
#define MAX_PIDS_SITES	10240	/* (process, site) pairs counted at once */
#define MAX_THREADS	10240	/* threads inside a wait at once (--hist) */

/* Bit 0 of RFLAGS: what TPAUSE/UMWAIT leave there says the OS limit hit. */
#define X86_EFLAGS_CF_BIT	0x1

/* caps: one counter per (process, site); the site is the uprobe's cookie */
struct site_key {
	__u32 tgid;
	__u32 site;
};

struct site_val {
	__u64 waits;
	__u64 capped;
	char comm[TASK_COMM_LEN];
};

/*
 * The uprobe cookie: the site's index, and whether the site itself is
 * probed too.  Then the probe after it counts a wait only when the same
 * thread passed the site just before: the instruction after a TPAUSE can be
 * a branch target (libtbb, DPDK), reached without waiting.
 */
#define COOKIE_SITE(c)	((__u32)(c))
#define COOKIE_PAIRED	(1ULL << 32)

/* the site probe's note for the probe after it, per thread */
struct start_val {
	__u64 ts;
	__u32 site;
	__u32 pad;
};

/* caps --hist: one log2 histogram of wait time per (site, CF) */
struct hist_key {
	__u32 site;
	__u32 capped;
};

struct hist {
	__u64 slots[MAX_SLOTS];
};

/* events: one record per firing of an umwait:* tracepoint */
enum umwait_event_type {
	UMWAIT_EV_CONTROL_UPDATE = 1,	/* sysfs write changed the cached value */
	UMWAIT_EV_CPU_ONLINE,		/* hotplug online (and boot) wrote it */
	UMWAIT_EV_CPU_OFFLINE,		/* hotplug offline restored the boot value */
	UMWAIT_EV_RESUME,		/* syscore resume rewrote it */
};

struct umwait_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns() */
	__u32 type;		/* enum umwait_event_type */
	__u32 cpu;		/* CPU the tracepoint fired on */
	__u32 pid;		/* current task (tgid) */
	__u32 target_cpu;	/* CPU whose MSR it is about; ~0 for all */
	__u32 prev;		/* IA32_UMWAIT_CONTROL before (not for offline) */
	__u32 control;		/* ... after */
	char comm[TASK_COMM_LEN];
};

#define UMWAIT_ALL_CPUS	0xffffffffU

#endif /* UMWAIT_TRACE_H */
