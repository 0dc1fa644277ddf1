// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: the BPF half.  Kept small on purpose: the programs only count
 * and copy, every decision about what to print is made in user space
 * (tools/umwait-trace/).
 *
 * caps:   a uprobe on the instruction right after each TPAUSE/UMWAIT sees the
 *         instruction's CF in pt_regs->flags (CF=1: the OS time limit,
 *         IA32_UMWAIT_CONTROL[31:2], ended the wait).  An arrival there with
 *         one of the flags the instructions clear set is no wait.  A direct
 *         branch there that the flags cannot tell apart gets a uprobe that
 *         marks the thread, for that site, when the branch is about to be
 *         taken: that arrival is not a wait either.  One program serves
 *         every probe; its cookie says what the instruction is to which site
 *         (umwait-trace.h).  With --hist a uprobe on the site itself notes
 *         when the thread started to wait.  A thread's notes go when it
 *         exits, and a process's counts are handed to user space then.
 * events: the umwait:* tracepoints of the kernel series, through tp_btf or,
 *         where tp_btf is not available, raw_tp, into a ring buffer.  On a
 *         kernel without them, msr:write_msr filtered to IA32_UMWAIT_CONTROL,
 *         each write marked with the umwait.c path it came from (kprobes on
 *         its functions), and the sysfs stores that name the writer.
 *
 * Nothing is ever dropped silently: a full map or ring buffer bumps one of
 * the counters in .bss, which user space reports.  No map is allocated
 * while a program runs (no BPF_F_NO_PREALLOC, no local storage): 5.7 to
 * 6.0 warn of it in tracing programs, and PREEMPT_RT refuses it; the build
 * checks the object (tools/umwait-trace/check-bpf-maps).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "umwait-trace.h"

const volatile pid_t targ_tgid = 0;	/* 0: every process */
const volatile pid_t targ_tid = 0;	/* -t: this thread alone; 0: every thread */
const volatile bool targ_cgroup = false;	/* --cgroup: only tasks under cgroup_map[0] */
const volatile bool targ_hist = false;	/* --hist: time the waits */
const volatile __u32 exit_batch = 1;	/* exits per wake-up of user space */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PIDS_SITES);
	__type(key, struct site_key);
	__type(value, struct site_val);
} sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, u32);
	__type(value, struct start_val);
} start SEC(".maps");

/* threads about to arrive after a site by a jump: (thread, site) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, struct jump_key);
	__type(value, struct jump_val);
} jumped SEC(".maps");

/*
 * how many marks each thread holds in jumped: a thread's exit walks jumped
 * (every bucket, thousands) only when it has some, not at every exit
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, u32);
	__type(value, u32);
} marks SEC(".maps");

/* processes with counts in sites: user space takes them over when they exit */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PIDS_SITES);
	__type(key, u32);
	__type(value, u8);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} exits SEC(".maps");

/* an exit notice in the ring buffer: its 8-byte header and the tgid, rounded to 8 */
#define EXIT_REC_SIZE	16

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PIDS_SITES);
	__type(key, struct hist_key);
	__type(value, struct hist);
} hists SEC(".maps");

/*
 * per (site, HIST_DENIED or HIST_LATE); preallocated, sized by user space
 * for the sites it may probe (two entries each)
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PIDS_SITES);
	__type(key, struct hist_key);
	__type(value, struct ohist);
} ohists SEC(".maps");

/* --cgroup: the cgroup v2 directory whose tasks (and its descendants') count */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} cgroup_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* the TSC calibration user space keeps current (umwait-trace.h) */
struct tsc_cal tsc_cal[2];
__u32 tsc_cal_idx;

/*
 * Set by user space once every probe is in place: until then the probes do
 * nothing, so that no jump is marked whose arrival nothing would see.
 */
bool armed;

/* Read (never reset) by user space through the skeleton's bss. */
__u64 lost_events;	/* ring buffer full */
__u64 dropped_counts;	/* sites map full: a wait not counted */
__u64 dropped_starts;	/* start map full: a wait not seen starting */
__u64 dropped_jumps;	/* jumped map full: a jump counted as a wait */
__u64 lost_exits;	/* exits ring buffer full: user space sweeps instead */
__u64 unpaired;		/* arrivals after a site that were not its wait: not counted */
__u64 unended;		/* --hist: waits whose end never came (site passed again, or the thread died) */
__u64 inflight;		/* --hist: waits under way (start entries) */

static struct site_val zero_site;
static u32 zero_u32;
static struct hist zero_hist;
static struct ohist zero_ohist;

static __always_inline void *lookup_or_init(void *map, const void *key, const void *init)
{
	void *val = bpf_map_lookup_elem(map, key);

	if (val)
		return val;
	bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* Is the current thread one caps counts: -p, -t and --cgroup */
static __always_inline bool traced(u64 id)
{
	if (targ_tgid && (id >> 32) != targ_tgid)
		return false;
	if (targ_tid && (u32)id != targ_tid)
		return false;
	return !targ_cgroup || bpf_current_task_under_cgroup(&cgroup_map, 0) == 1;
}

static __always_inline u32 log2_u64(u64 v)
{
	u32 r = 0;

	/* bounded loop: the verifier sees at most 64 iterations */
	for (int i = 0; i < 64 && v > 1; i++) {
		v >>= 1;
		r++;
	}
	return r;
}

SEC("uprobe")
int BPF_KPROBE(wait_enter)
{
	u64 id = bpf_get_current_pid_tgid();
	struct start_val sv = {
		.ts = bpf_ktime_get_ns(),
		.site = (u32)bpf_get_attach_cookie(ctx),
	};
	struct start_val *old;
	u32 tid = (u32)id;

	if (!armed || !traced(id))
		return 0;
	old = bpf_map_lookup_elem(&start, &tid);
	if (old) {
		/* the last wait's end went unseen: never lose it silently */
		__sync_fetch_and_add(&unended, 1);
		*old = sv;
		return 0;
	}
	if (bpf_map_update_elem(&start, &tid, &sv, BPF_NOEXIST))
		__sync_fetch_and_add(&dropped_starts, 1);
	else
		__sync_fetch_and_add(&inflight, 1);
	return 0;
}

/* The TSC now, from the monotonic clock; 0 before user space calibrated it */
static __always_inline u64 tsc_now(u64 *slack)
{
	struct tsc_cal *c = &tsc_cal[tsc_cal_idx & 1];
	u64 ns = bpf_ktime_get_ns(), d, cyc;

	*slack = c->past_slack;
	if (!c->mult)
		return 0;
	/* the anchor can be a little ahead: read on another CPU meanwhile */
	d = ns >= c->ns ? ns - c->ns : c->ns - ns;
	/* in two parts: d * mult alone overflows after a few seconds */
	cyc = (d >> TSC_CAL_SHIFT) * c->mult +
	      (((d & ((1ULL << TSC_CAL_SHIFT) - 1)) * c->mult) >> TSC_CAL_SHIFT);
	return ns >= c->ns ? c->tsc + cyc : c->tsc - cyc;
}

/* the log-linear slot of V (umwait-trace.h) */
static __always_inline u64 ohist_slot(u64 v)
{
	u64 l, slot;

	if (v < OHIST_SUB)
		return v;
	l = log2_u64(v);
	slot = (l - OHIST_SUB_BITS + 1) * OHIST_SUB + ((v >> (l - OHIST_SUB_BITS)) & (OHIST_SUB - 1));
	return slot;
}

static __always_inline void ohist_add(u32 site, u32 kind, u64 v)
{
	struct hist_key k = { .site = site, .kind = kind };
	struct ohist *h = lookup_or_init(&ohists, &k, &zero_ohist);
	u64 slot = ohist_slot(v);

	if (!h) {
		__sync_fetch_and_add(&dropped_counts, 1);
		return;
	}
	/* a no-op (slot < OHIST_SLOTS) that the verifier needs */
	__sync_fetch_and_add(&h->slots[slot & (OHIST_SLOTS - 1)], 1);
}

/*
 * How the wait ended, from CF, its deadline (EDX:EAX, which TPAUSE and
 * UMWAIT leave as they were, and the probe sits on the next instruction)
 * and the TSC now, a little after it ended: capped (CF=1); early (the TSC is
 * still before the deadline); deadline (the TSC is past it by no more than
 * a probe can be late); past (by more: the deadline was behind when the
 * wait began, or is no TSC value at all).
 */
static __always_inline void outcome(struct pt_regs *ctx, struct site_val *val, u32 site, bool capped)
{
	u64 dl = (u64)(u32)ctx->dx << 32 | (u32)ctx->ax, slack, now = tsc_now(&slack);

	if (capped) {
		ohist_add(site, HIST_DENIED, dl > now ? dl - now : 0);
	} else if (!now) {
		return;		/* not calibrated: counted, no outcome */
	} else if (now < dl) {
		__sync_fetch_and_add(&val->early, 1);
	} else if (now - dl <= slack) {
		__sync_fetch_and_add(&val->deadline, 1);
		ohist_add(site, HIST_LATE, now - dl);
	} else {
		__sync_fetch_and_add(&val->past, 1);
	}
}

/* Would the Jcc with condition CC (tttn) jump, given these flags? */
static __always_inline bool cc_holds(u32 cc, u64 fl)
{
	bool cf = fl & X86_EFLAGS_CF_BIT, pf = fl & X86_EFLAGS_PF_BIT;
	bool zf = fl & X86_EFLAGS_ZF_BIT, sf = fl & X86_EFLAGS_SF_BIT;
	bool of = fl & X86_EFLAGS_OF_BIT, r;

	switch (cc >> 1) {
	case 0: r = of; break;			/* JO */
	case 1: r = cf; break;			/* JB */
	case 2: r = zf; break;			/* JE */
	case 3: r = cf || zf; break;		/* JBE */
	case 4: r = sf; break;			/* JS */
	case 5: r = pf; break;			/* JP */
	case 6: r = sf != of; break;		/* JL */
	default: r = zf || sf != of; break;	/* JLE */
	}
	return cc & 1 ? !r : r;			/* odd: the negation (JNO, JAE, ...) */
}

/* Is the branch this probe sits on about to be taken?  Before it executes. */
static __always_inline bool branch_taken(struct pt_regs *regs, u64 cookie)
{
	u64 rcx = cookie & COOKIE_ECX ? (u32)regs->cx : regs->cx;
	bool zf = regs->flags & X86_EFLAGS_ZF_BIT;

	switch (COOKIE_BRANCH(cookie)) {
	case BRANCH_JMP:
	case BRANCH_CALL:
		return true;
	case BRANCH_JCC:
		return cc_holds(COOKIE_CC(cookie), regs->flags);
	case BRANCH_JRCXZ:
		return rcx == 0;
	case BRANCH_LOOP:
		return rcx != 1;
	case BRANCH_LOOPE:
		return rcx != 1 && zf;
	case BRANCH_LOOPNE:
		return rcx != 1 && !zf;
	}
	return false;
}

/* A taken jump's mark for its arrival after a site, counted for its thread */
static __always_inline void mark(struct jump_key *jk, struct jump_val *j)
{
	u32 *n;

	if (bpf_map_lookup_elem(&jumped, jk)) {
		/* an earlier mark of the thread's for that site, never used */
		bpf_map_update_elem(&jumped, jk, j, BPF_EXIST);
		return;
	}
	n = lookup_or_init(&marks, &jk->tid, &zero_u32);
	if (!n || bpf_map_update_elem(&jumped, jk, j, BPF_NOEXIST)) {
		__sync_fetch_and_add(&dropped_jumps, 1);
		return;
	}
	*n += 1;
}

static __always_inline void unmark(u32 tid)
{
	u32 *n = bpf_map_lookup_elem(&marks, &tid);

	if (n && *n > 1)
		*n -= 1;
	else if (n)
		bpf_map_delete_elem(&marks, &tid);
}

/* The probe after site SITE: count the arrival, unless it was no wait */
static __always_inline void count_exit(struct pt_regs *ctx, u64 id, u32 site)
{
	bool capped = ctx->flags & X86_EFLAGS_CF_BIT;
	struct site_key key = { .tgid = id >> 32, .site = site };
	struct jump_key jk = { .tid = (u32)id, .site = site };
	struct jump_val *jump;
	struct start_val *sv;
	struct hist_key hkey;
	struct site_val *val;
	struct hist *hist;
	u32 tid = (u32)id;
	bool marked = false;
	u8 one = 1;
	u64 slot;

	jump = bpf_map_lookup_elem(&jumped, &jk);
	if (jump) {
		/* the jump's own arrival, or a mark it never used (a signal handler left) */
		marked = jump->sp == ctx->sp;
		if (!bpf_map_delete_elem(&jumped, &jk))
			unmark(tid);
	}
	if (marked || (ctx->flags & X86_EFLAGS_NOT_WAIT)) {
		__sync_fetch_and_add(&unpaired, 1);
		return;
	}

	val = bpf_map_lookup_elem(&sites, &key);
	if (!val) {
		/* first count of this process: note it for its exit */
		bpf_map_update_elem(&procs, &key.tgid, &one, BPF_ANY);
		val = lookup_or_init(&sites, &key, &zero_site);
	}
	if (!val) {
		__sync_fetch_and_add(&dropped_counts, 1);
		goto hist;
	}
	if (!val->comm[0]) {
		/* the process's name, not the thread's; and its executable's */
		struct task_struct *t = (void *)bpf_get_current_task();

		val->cgroup = bpf_get_current_cgroup_id();
		BPF_CORE_READ_STR_INTO(&val->comm, t, group_leader, comm);
		bpf_probe_read_kernel_str(val->exe, sizeof(val->exe),
					  BPF_CORE_READ(t, mm, exe_file, f_path.dentry, d_name.name));
	}
	__sync_fetch_and_add(&val->waits, 1);
	if (capped)
		__sync_fetch_and_add(&val->capped, 1);
	outcome(ctx, val, site, capped);

hist:
	if (!targ_hist)
		return;
	sv = bpf_map_lookup_elem(&start, &tid);
	if (!sv)
		return;	/* under way at attach, or not noted (start map full) */
	if (sv->site != site) {
		/* another site's start: that wait's end went unseen */
		__sync_fetch_and_add(&unended, 1);
		goto out;
	}
	slot = log2_u64(bpf_ktime_get_ns() - sv->ts);
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	hkey.site = site;
	hkey.kind = capped ? HIST_TIME_CAPPED : HIST_TIME;
	hist = lookup_or_init(&hists, &hkey, &zero_hist);
	if (!hist)
		__sync_fetch_and_add(&dropped_counts, 1);
	else
		__sync_fetch_and_add(&hist->slots[slot], 1);
out:
	if (!bpf_map_delete_elem(&start, &tid))
		__sync_fetch_and_sub(&inflight, 1);
}

/*
 * Every probe caps places: the instruction after a site (count), a branch
 * to one (mark a taken jump), or both (an instruction after one wait that
 * jumps to the instruction after another): the count first, so that the
 * mark it leaves is the jump's own.
 */
SEC("uprobe")
int BPF_KPROBE(on_probe)
{
	u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	u32 exit_site = COOKIE_EXIT(cookie), jump_site = COOKIE_JUMP(cookie);
	struct jump_key jk = { .tid = (u32)id, .site = jump_site - 1 };
	struct jump_val j = {
		/* where the stack will be on arrival: a CALL pushes its return */
		.sp = ctx->sp - (COOKIE_BRANCH(cookie) == BRANCH_CALL ? 8 : 0),
	};

	if (!armed || !traced(id))
		return 0;
	if (exit_site)
		count_exit(ctx, id, exit_site - 1);
	if (jump_site && branch_taken(ctx, cookie))
		mark(&jk, &j);
	return 0;
}

/* task_exit: a thread's marks go with it */
static long drop_marks(void *map, struct jump_key *key, struct jump_val *val, u32 *tid)
{
	if (key->tid == *tid)
		bpf_map_delete_elem(map, key);
	return 0;
}

/*
 * Every thread's exit: its notes go (a thread killed inside a wait leaves
 * one: that wait is unended), and when the process is gone user space takes
 * its counts over and frees their entries.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(task_exit, struct task_struct *p)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tid = (u32)id, tgid = id >> 32, *rec, *n;

	if (targ_tgid && tgid != targ_tgid)
		return 0;
	if (!bpf_map_delete_elem(&start, &tid)) {
		__sync_fetch_and_add(&unended, 1);
		__sync_fetch_and_sub(&inflight, 1);
	}
	n = bpf_map_lookup_elem(&marks, &tid);
	if (n) {
		if (*n)
			bpf_for_each_map_elem(&jumped, drop_marks, &tid, 0);
		bpf_map_delete_elem(&marks, &tid);
	}
	/* the last thread of the process (do_exit() counted it out of signal->live) */
	if (BPF_CORE_READ(p, signal, live.counter) || bpf_map_delete_elem(&procs, &tgid))
		return 0;
	rec = bpf_ringbuf_reserve(&exits, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&lost_exits, 1);
		return 0;
	}
	*rec = tgid;
	/*
	 * User space woken every exit_batch exits, not at each: a host that
	 * runs short processes by the thousand would have it up for every one.
	 * It reads the rest when it wakes anyway (each interval, each report).
	 */
	bpf_ringbuf_submit(rec, bpf_ringbuf_query(&exits, BPF_RB_AVAIL_DATA) >=
			   exit_batch * EXIT_REC_SIZE ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

/* events: one ring buffer record per tracepoint hit */
static __always_inline int emit_ctx(u32 type, u32 target_cpu, u32 prev, u32 control, u32 ctx,
				    u32 failed)
{
	struct umwait_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost_events, 1);
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->type = type;
	e->cpu = bpf_get_smp_processor_id();
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->target_cpu = target_cpu;
	e->prev = prev;
	e->control = control;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->ctx = ctx;
	e->failed = failed;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

static __always_inline int emit(u32 type, u32 target_cpu, u32 prev, u32 control)
{
	return emit_ctx(type, target_cpu, prev, control, UMWAIT_CTX_NONE, 0);
}

/*
 * Each tracepoint twice: tp_btf (arguments typed by the kernel's BTF) and
 * raw_tp (the same arguments as u64s).  User space loads one of each pair.
 * Arguments are the TP_PROTO of arch/x86/include/asm/trace/umwait.h: the
 * value replaced and the value written.  The per-CPU events fire on the CPU
 * whose MSR was written, so that CPU is the one running the program.
 */
SEC("tp_btf/umwait_control_update")
int BPF_PROG(tp_btf_control_update, u32 old_control, u32 new_control)
{
	return emit(UMWAIT_EV_CONTROL_UPDATE, UMWAIT_ALL_CPUS, old_control, new_control);
}

SEC("raw_tp/umwait_control_update")
int BPF_PROG(raw_tp_control_update, u32 old_control, u32 new_control)
{
	return emit(UMWAIT_EV_CONTROL_UPDATE, UMWAIT_ALL_CPUS, old_control, new_control);
}

SEC("tp_btf/umwait_cpu_online")
int BPF_PROG(tp_btf_cpu_online, u32 old_control, u32 new_control)
{
	return emit(UMWAIT_EV_CPU_ONLINE, bpf_get_smp_processor_id(), old_control, new_control);
}

SEC("raw_tp/umwait_cpu_online")
int BPF_PROG(raw_tp_cpu_online, u32 old_control, u32 new_control)
{
	return emit(UMWAIT_EV_CPU_ONLINE, bpf_get_smp_processor_id(), old_control, new_control);
}

SEC("tp_btf/umwait_cpu_offline")
int BPF_PROG(tp_btf_cpu_offline, u32 old_control, u32 new_control)
{
	return emit(UMWAIT_EV_CPU_OFFLINE, bpf_get_smp_processor_id(), old_control, new_control);
}

SEC("raw_tp/umwait_cpu_offline")
int BPF_PROG(raw_tp_cpu_offline, u32 old_control, u32 new_control)
{
	return emit(UMWAIT_EV_CPU_OFFLINE, bpf_get_smp_processor_id(), old_control, new_control);
}

SEC("tp_btf/umwait_resume")
int BPF_PROG(tp_btf_resume, u32 old_control, u32 new_control)
{
	return emit(UMWAIT_EV_RESUME, bpf_get_smp_processor_id(), old_control, new_control);
}

SEC("raw_tp/umwait_resume")
int BPF_PROG(raw_tp_resume, u32 old_control, u32 new_control)
{
	return emit(UMWAIT_EV_RESUME, bpf_get_smp_processor_id(), old_control, new_control);
}

/*
 * events on a kernel without the series.  Each write of the MSR is
 * msr:write_msr on the CPU written; which umwait.c path made it is noted
 * per CPU by kprobes on its functions: the hotplug and resume callbacks
 * (outer: they may call the per-CPU update function, or have it inlined),
 * and the sysfs update's per-CPU function (inner), which runs on every CPU,
 * in an IPI where the current task is whichever it interrupted.  Who wrote
 * to sysfs is what the stores' own kprobes see as current.
 */
#define MSR_IA32_UMWAIT_CONTROL	0xe1

struct msr_ctx {
	u32 outer;		/* UMWAIT_CTX_ONLINE, _OFFLINE or _RESUME, or 0 */
	u32 inner;		/* UMWAIT_CTX_SYSFS, or 0 */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct msr_ctx);
} msr_ctx SEC(".maps");

static __always_inline struct msr_ctx *this_ctx(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&msr_ctx, &zero);
}

static __always_inline int set_outer(u32 v)
{
	struct msr_ctx *c = this_ctx();

	if (c)
		c->outer = v;
	return 0;
}

SEC("kprobe/umwait_cpu_online")
int BPF_KPROBE(ctx_online)
{
	return set_outer(UMWAIT_CTX_ONLINE);
}

SEC("kprobe/umwait_cpu_offline")
int BPF_KPROBE(ctx_offline)
{
	return set_outer(UMWAIT_CTX_OFFLINE);
}

SEC("kprobe/umwait_syscore_resume")
int BPF_KPROBE(ctx_resume)
{
	return set_outer(UMWAIT_CTX_RESUME);
}

/* attached to the return of each of the three above */
SEC("kretprobe")
int BPF_KRETPROBE(ctx_outer_end)
{
	return set_outer(UMWAIT_CTX_NONE);
}

SEC("kprobe/umwait_update_control_msr")
int BPF_KPROBE(ctx_sysfs)
{
	struct msr_ctx *c = this_ctx();

	if (c)
		c->inner = UMWAIT_CTX_SYSFS;
	return 0;
}

SEC("kretprobe/umwait_update_control_msr")
int BPF_KRETPROBE(ctx_sysfs_end)
{
	struct msr_ctx *c = this_ctx();

	if (c)
		c->inner = UMWAIT_CTX_NONE;
	return 0;
}

static __always_inline int msr_written(u32 msr, u64 val, int failed)
{
	struct msr_ctx *c;
	u32 ctx = UMWAIT_CTX_NONE;

	if (msr != MSR_IA32_UMWAIT_CONTROL)
		return 0;
	c = this_ctx();
	if (c)
		ctx = c->outer ? c->outer : c->inner;
	return emit_ctx(UMWAIT_EV_MSR_WRITE, bpf_get_smp_processor_id(), 0, (u32)val, ctx, failed != 0);
}

SEC("tp_btf/write_msr")
int BPF_PROG(tp_btf_write_msr, unsigned int msr, u64 val, int failed)
{
	return msr_written(msr, val, failed);
}

SEC("raw_tp/write_msr")
int BPF_PROG(raw_tp_write_msr, unsigned int msr, u64 val, int failed)
{
	return msr_written(msr, val, failed);
}

/* attached to max_time_store and enable_c02_store: current is the writer */
SEC("kprobe")
int BPF_KPROBE(store_begin)
{
	return emit(UMWAIT_EV_STORE_BEGIN, UMWAIT_ALL_CPUS, 0, 0);
}

SEC("kretprobe")
int BPF_KRETPROBE(store_end, long ret)
{
	return emit(UMWAIT_EV_STORE_END, UMWAIT_ALL_CPUS, 0, (u32)ret);
}

char LICENSE[] SEC("license") = "GPL";
