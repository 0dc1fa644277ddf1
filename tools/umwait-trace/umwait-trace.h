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
#define MAX_THREADS	10240	/* threads inside a wait at once (--hist-perturbing), or jumping */

/* Bit 0 of RFLAGS: what TPAUSE/UMWAIT leave there says the OS limit hit. */
#define X86_EFLAGS_CF_BIT	0x1
/* the other flags a Jcc reads */
#define X86_EFLAGS_PF_BIT	0x4
#define X86_EFLAGS_ZF_BIT	0x40
#define X86_EFLAGS_SF_BIT	0x80
#define X86_EFLAGS_OF_BIT	0x800

/* caps: one counter per (process, site); the site is the uprobe's cookie */
struct site_key {
	__u32 tgid;
	__u32 site;
};

#define EXE_NAME_LEN	32	/* the executable's file name, cut there */

struct site_val {
	__u64 waits;
	__u64 capped;		/* outcome capped: CF=1 */
	__u64 deadline;		/* outcome deadline: ran to it */
	__u64 early;		/* outcome early: ended before it, CF=0 */
	__u64 past;		/* outcome past: the deadline was behind already */
	__u64 cgroup;		/* the cgroup v2 ID of its first counted wait's thread */
	char comm[TASK_COMM_LEN];	/* the process's (its thread-group leader's) */
	char exe[EXE_NAME_LEN];		/* its executable's file name */
};

/*
 * How caps tells a wait from another arrival at the instruction after it.
 * The probe there counts every arrival; TPAUSE and UMWAIT clear OF, SF, ZF,
 * AF and PF, so an arrival with one of them set is never a wait.  Where
 * direct branches elsewhere jump to that instruction with flags that could
 * be a wait's, a probe on the branch works out from the saved flags and RCX
 * whether it is about to be taken and, if so, marks the thread for that
 * site.  The next arrival of a marked thread at that site is the jump's:
 * discounted as "unpaired", not a wait.  No probe goes on a wait's own path
 * unless the user asks (caps --exact); the scanner says which sites that
 * leaves inexact (scan.h).
 *
 * One probe per instruction, whatever it is for: its cookie holds the site
 * it counts (if it is one's next instruction) and the site it jumps to (if
 * it is a branch there), each plus one (0: none), and what kind of branch.
 */
#define COOKIE_EXIT(c)		((__u32)((c) & 0xffffff))		/* site + 1, or 0 */
#define COOKIE_JUMP(c)		((__u32)(((c) >> 24) & 0xffffff))	/* site + 1, or 0 */
#define COOKIE_BRANCH(c)	((__u32)((c) >> 48) & 0x7)	/* enum branch_kind */
#define COOKIE_CC(c)		((__u32)((c) >> 51) & 0xf)	/* Jcc: its condition */
#define COOKIE_ECX		(1ULL << 55)	/* JECXZ/LOOPcc with 0x67: ECX, not RCX */
#define COOKIE_SITES_MAX	0xfffffe
#define COOKIE_EXIT_MAKE(site)	((__u64)(site) + 1)
#define COOKIE_JUMP_MAKE(site, kind, cc) \
	(((__u64)(site) + 1) << 24 | (__u64)(kind) << 48 | (__u64)(cc) << 51)

/* the flags TPAUSE and UMWAIT clear: one set on arrival proves it no wait */
#define X86_EFLAGS_NOT_WAIT	0x8d4	/* OF SF ZF AF PF */

enum branch_kind {
	BRANCH_JMP = 1,		/* always taken */
	BRANCH_CALL,		/* always taken; pushes its return address */
	BRANCH_JCC,		/* taken when condition COOKIE_CC holds (tttn of 7x/0F 8x) */
	BRANCH_JRCXZ,		/* taken when RCX (ECX) is 0 */
	BRANCH_LOOP,		/* taken when RCX - 1 != 0 */
	BRANCH_LOOPE,		/* ... and ZF */
	BRANCH_LOOPNE,		/* ... and !ZF */
};

/* a branch probe's mark for the probe after the site, per thread and site */
struct jump_key {
	__u32 tid;
	__u32 site;
};

struct jump_val {
	__u64 sp;		/* RSP on arrival */
};

/* caps --hist-perturbing: the site probe's note for the probe after it, per thread */
struct start_val {
	__u64 ts;
	__u32 site;
	__u32 pad;
};

/*
 * caps --hist-perturbing: one log2 histogram of wait time per (site, CF), in the hists
 * map; and always, per site, how much each capped wait was denied (its
 * deadline minus the TSC at the probe) and how late each wait that ran to
 * its deadline was seen (the TSC at the probe minus the deadline), in TSC
 * cycles, in the ohists map.
 */
enum hist_kind {
	HIST_TIME = 0,		/* --hist-perturbing: wait time, CF=0 */
	HIST_TIME_CAPPED = 1,	/* --hist-perturbing: wait time, CF=1 */
	HIST_DENIED = 2,
	HIST_LATE = 3,
};

struct hist_key {
	__u32 site;
	__u32 kind;		/* enum hist_kind */
};

struct hist {
	__u64 slots[MAX_SLOTS];
};

/*
 * The outcome histograms are log-linear: OHIST_SUB slots per power of two
 * (a slot's width is a quarter of its lower bound), so that a percentile
 * read from one is within 25% above the truth.  Slot of V: V below
 * OHIST_SUB is its own slot; otherwise (log2(V) - 1) * OHIST_SUB plus the
 * two bits after the leading one, plus OHIST_SUB.
 */
#define OHIST_SUB_BITS	2
#define OHIST_SUB	(1 << OHIST_SUB_BITS)
/* every u64: 64 powers of two; a power of two, so that BPF masks the index */
#define OHIST_SLOTS	(64 * OHIST_SUB)

struct ohist {
	__u64 slots[OHIST_SLOTS];
};

/*
 * The TSC at a probe, from bpf_ktime_get_ns(): user space reads RDTSC and
 * CLOCK_MONOTONIC together and writes the inactive one of two slots, then
 * flips tsc_cal_idx; TSC = tsc + (ns_now - ns) * mult / 2^TSC_CAL_SHIFT.
 */
#define TSC_CAL_SHIFT	24

struct tsc_cal {
	__u64 ns;
	__u64 tsc;
	__u64 mult;		/* TSC cycles per ns, << TSC_CAL_SHIFT; 0: none yet */
	__u64 past_slack;	/* TSC cycles: a probe later than this after the deadline says past */
};

/*
 * caps' looks at the processes' mappings (bpf/umwait-files.bpf.c): one
 * record per executable mapping, with the inode its file really is (the
 * mapping's file's f_inode: what uprobes bind, on overlayfs the layer's,
 * which /proc/PID/maps shows in Linux 6.1 but not in 6.12).
 */
struct file_vma {
	__u32 tgid;
	__u32 dev;		/* the kernel's encoding: major << 20 | minor; 0: anonymous memory */
	__u64 ino;		/* 0: anonymous memory */
	__u64 start;
	__u64 end;
};

#define KDEV_MAJOR(d)	((d) >> 20)
#define KDEV_MINOR(d)	((d) & 0xfffff)

/*
 * events: one record per firing of an umwait:* tracepoint of the series; or,
 * on a kernel without them, per write of IA32_UMWAIT_CONTROL (msr:write_msr,
 * MSR 0xE1 only) and per sysfs store of max_time or enable_c02, which user
 * space (events.c) turns into the same events.
 */
enum umwait_event_type {
	UMWAIT_EV_CONTROL_UPDATE = 1,	/* sysfs write changed the cached value */
	UMWAIT_EV_CPU_ONLINE,		/* hotplug online (and boot) wrote it */
	UMWAIT_EV_CPU_OFFLINE,		/* hotplug offline restored the boot value */
	UMWAIT_EV_RESUME,		/* syscore resume rewrote it */
	UMWAIT_EV_MSR_WRITE,		/* msr:write_msr of 0xE1, on the CPU written; ctx says where from */
	UMWAIT_EV_STORE_BEGIN,		/* a sysfs store of max_time or enable_c02 began (current: the writer) */
	UMWAIT_EV_STORE_END,		/* ... and returned */
};

/*
 * Which of umwait.c's paths a write of the MSR came from, known by kprobes
 * on its functions: the sysfs update's per-CPU function (it runs on every
 * CPU, in an IPI on all but the writer's, where the current task is
 * whichever was interrupted), the hotplug callbacks, or syscore resume.
 */
enum umwait_ctx {
	UMWAIT_CTX_NONE = 0,		/* none of them: another writer (the msr driver, say) */
	UMWAIT_CTX_SYSFS,		/* umwait_update_control_msr */
	UMWAIT_CTX_ONLINE,		/* umwait_cpu_online */
	UMWAIT_CTX_OFFLINE,		/* umwait_cpu_offline */
	UMWAIT_CTX_RESUME,		/* umwait_syscore_resume */
};

struct umwait_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns() */
	__u32 type;		/* enum umwait_event_type */
	__u32 cpu;		/* CPU the tracepoint fired on */
	__u32 pid;		/* current task (tgid) */
	__u32 target_cpu;	/* CPU whose MSR it is about; ~0 for all */
	__u32 prev;		/* IA32_UMWAIT_CONTROL before (not for offline) */
	__u32 control;		/* ... after; MSR_WRITE: the value written */
	char comm[TASK_COMM_LEN];
	__u32 ctx;		/* MSR_WRITE: enum umwait_ctx */
	__u32 failed;		/* MSR_WRITE: the write faulted */
};

#define UMWAIT_ALL_CPUS	0xffffffffU

#endif /* UMWAIT_TRACE_H */
