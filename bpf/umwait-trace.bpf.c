// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: the BPF half.  Kept small on purpose: the programs only count
 * and copy, every decision about what to print is made in user space
 * (tools/umwait-trace/).
 *
 * caps:   a uprobe on the instruction right after each TPAUSE/UMWAIT sees the
 *         instruction's CF in pt_regs->flags (CF=1: the OS time limit,
 *         IA32_UMWAIT_CONTROL[31:2], ended the wait).  The attach cookie is the
 *         site's index in user space's table.  With --hist, or where another
 *         path also leads to that next instruction, a second uprobe on the
 *         site itself notes that (and when) the thread started to wait.
 * events: the umwait:* tracepoints of the kernel series, through tp_btf or,
 *         where tp_btf is not available, raw_tp, into a ring buffer.
 *
 * Nothing is ever dropped silently: a full map or ring buffer bumps one of
 * the counters in .bss, which user space reports.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "umwait-trace.h"

const volatile pid_t targ_tgid = 0;	/* 0: every process */
const volatile bool targ_hist = false;	/* time the paired waits */

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PIDS_SITES);
	__type(key, struct hist_key);
	__type(value, struct hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Read (never reset) by user space through the skeleton's bss. */
__u64 lost_events;	/* ring buffer full */
__u64 dropped_counts;	/* sites map full: a wait not counted */
__u64 dropped_starts;	/* start map full: a wait not seen starting */
__u64 unpaired;		/* after a paired site, but the thread did not pass it */
__u64 unended;		/* passed a paired site twice without the probe after it */

static struct site_val zero_site;
static struct hist zero_hist;

static __always_inline void *lookup_or_init(void *map, const void *key, const void *init)
{
	void *val = bpf_map_lookup_elem(map, key);

	if (val)
		return val;
	bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
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
		.site = COOKIE_SITE(bpf_get_attach_cookie(ctx)),
	};
	u32 tid = (u32)id;

	if (targ_tgid && (id >> 32) != targ_tgid)
		return 0;
	/* the last wait's end went unseen: never lose it silently */
	if (bpf_map_lookup_elem(&start, &tid))
		__sync_fetch_and_add(&unended, 1);
	if (bpf_map_update_elem(&start, &tid, &sv, BPF_ANY))
		__sync_fetch_and_add(&dropped_starts, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(wait_exit)
{
	u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	bool capped = ctx->flags & X86_EFLAGS_CF_BIT;
	struct site_key key = {
		.tgid = id >> 32,
		.site = COOKIE_SITE(cookie),
	};
	struct start_val *sv = NULL;
	struct hist_key hkey;
	struct site_val *val;
	struct hist *hist;
	u32 tid = (u32)id;
	u64 slot;

	if (targ_tgid && key.tgid != targ_tgid)
		return 0;
	if (cookie & COOKIE_PAIRED) {
		sv = bpf_map_lookup_elem(&start, &tid);
		if (!sv || sv->site != key.site) {
			__sync_fetch_and_add(&unpaired, 1);
			return 0;
		}
	}

	val = lookup_or_init(&sites, &key, &zero_site);
	if (!val) {
		__sync_fetch_and_add(&dropped_counts, 1);
		goto out;
	}
	if (!val->comm[0])
		bpf_get_current_comm(val->comm, sizeof(val->comm));
	__sync_fetch_and_add(&val->waits, 1);
	if (capped)
		__sync_fetch_and_add(&val->capped, 1);

	if (!sv || !targ_hist)
		goto out;
	slot = log2_u64(bpf_ktime_get_ns() - sv->ts);
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	hkey.site = key.site;
	hkey.capped = capped;
	hist = lookup_or_init(&hists, &hkey, &zero_hist);
	if (!hist)
		__sync_fetch_and_add(&dropped_counts, 1);
	else
		__sync_fetch_and_add(&hist->slots[slot], 1);
out:
	if (sv)
		bpf_map_delete_elem(&start, &tid);
	return 0;
}

/* events: one ring buffer record per tracepoint hit */
static __always_inline int emit(u32 type, u32 target_cpu, u32 prev, u32 control)
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
	bpf_ringbuf_submit(e, 0);
	return 0;
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

char LICENSE[] SEC("license") = "GPL";
