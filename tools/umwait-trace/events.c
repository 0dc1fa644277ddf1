// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace events: who changed IA32_UMWAIT_CONTROL, and when.  Streams
 * the kernel series' umwait:* tracepoints, one line (or JSON object) per
 * event, the control value decoded (max_time, C0.2) and raw.
 *
 * On a kernel without the series (every stock kernel), the same events from
 * what every kernel has: msr:write_msr, filtered to the MSR (0xE1) in BPF,
 * each write marked with the umwait.c path it came from by kprobes on its
 * functions (sysfs update, hotplug online and offline, resume), and the
 * sysfs stores of max_time and enable_c02 for who wrote: a store's writes
 * run on every CPU, in IPIs where the current task is whichever they
 * interrupted, so the writer is the store's current task.  A store that
 * wrote is one control_update; its old value is the one before, followed
 * from sysfs's at start.  A JSON object's "source" says which.
 *
 * tp_btf where the kernel takes it (no tracefs needed), raw_tp otherwise;
 * the choice is made per tracepoint by a probe load.  Events the ring buffer
 * had no room for are counted by the BPF side and reported.
 */
#include <argp.h>
#include <errno.h>
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "umwait-trace.h"
#include "umwait-trace.skel.h"
#include "ut.h"


static const char doc[] =
"Trace changes of IA32_UMWAIT_CONTROL: the kernel's umwait:* tracepoints.\n"
"\n"
"USAGE: umwait-trace events [-T] [--json] [-d SECONDS] [--source auto|umwait|msr]\n"
"\n"
"One line per event: EVENT target=all|cpuN max_time=N c02=on|off raw=0x...\n"
"[old_max_time=N old_c02=on|off old_raw=0x...] cpu=N pid=N comm=NAME, where\n"
"cpu/pid/comm say where the tracepoint fired (for control_update: the process\n"
"that wrote to sysfs).  On a kernel without the umwait tracepoints, the same\n"
"events from msr:write_msr (MSR 0xE1) and the sysfs store path.\n"
"\n"
"EXAMPLES:\n"
"    umwait-trace events          # until Ctrl-C\n"
"    umwait-trace events -T -d 60 # with timestamps, for a minute\n";

static const struct argp_option opts[] = {
	{ "timestamp", 'T', NULL, 0, "Include a timestamp on each line", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per event", 0 },
	{ "duration", 'd', "SECONDS", 0, "Trace for SECONDS, then exit", 0 },
	{ "source", OPT_SOURCE, "SOURCE", 0,
	  "auto (default: the umwait tracepoints where the kernel has them, else msr), "
	  "umwait, or msr (msr:write_msr and the sysfs store path)", 0 },
	{ "verbose", 'v', NULL, 0, "Verbose debug output (libbpf)", 0 },
	{},
};

/* --source */
enum event_source { SOURCE_AUTO, SOURCE_UMWAIT, SOURCE_MSR };

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	if (key == OPT_SOURCE) {
		if (!strcmp(arg, "auto"))
			env.source = SOURCE_AUTO;
		else if (!strcmp(arg, "umwait"))
			env.source = SOURCE_UMWAIT;
		else if (!strcmp(arg, "msr"))
			env.source = SOURCE_MSR;
		else
			usage_error(state, "invalid --source '%s' (auto, umwait or msr)", arg);
		return 0;
	}
	if (key != 'd')
		return parse_common_opt(key, arg, state);
	if (parse_long(arg, 1, &env.duration))
		usage_error(state, "invalid duration '%s'", arg);
	return 0;
}

static const struct {
	const char *tp;		/* tracepoint */
	const char *name;	/* as printed */
	const char *tp_btf;	/* program names in the BPF object */
	const char *raw_tp;
	bool optional;
} tps[] = {
	{ "umwait_control_update", "control_update", "tp_btf_control_update",
	  "raw_tp_control_update", false },
	{ "umwait_cpu_online", "cpu_online", "tp_btf_cpu_online", "raw_tp_cpu_online", false },
	{ "umwait_cpu_offline", "cpu_offline", "tp_btf_cpu_offline", "raw_tp_cpu_offline", false },
	{ "umwait_resume", "resume", "tp_btf_resume", "raw_tp_resume", true },
};
#define NR_TPS (int)(sizeof(tps) / sizeof(tps[0]))

static const char *type_name(__u32 type)
{
	if (type >= UMWAIT_EV_CONTROL_UPDATE && type <= UMWAIT_EV_RESUME)
		return tps[type - UMWAIT_EV_CONTROL_UPDATE].name;
	/* msr source: a write from none of umwait.c's paths (the msr driver, say) */
	if (type == UMWAIT_EV_MSR_WRITE)
		return "write";
	return "unknown";
}

/* The tracepoint is in the kernel: in its BTF, or at least in tracefs. */
static bool tp_exists(const char *tp)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events/umwait",
		"/sys/kernel/debug/tracing/events/umwait",
	};
	char path[128];
	size_t i;

	snprintf(path, sizeof(path), "btf_trace_%s", tp);
	if (btf_has_type(path, BTF_KIND_TYPEDEF))
		return true;
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", roots[i], tp);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

static const char *c02(__u32 v)
{
	return v & UMWAIT_C02_DISABLE ? "off" : "on";
}

static unsigned long long nr_events;
static bool from_msr;		/* the events come from msr:write_msr and kprobes */

/* One event as the series' tracepoints give it; HAS_PREV: old_* known; CPUS: a store's writes */
static void print_event(const struct umwait_event *e, bool has_prev, int cpus)
{
	char ts[32], target[16];

	nr_events++;
	format_time(ts, sizeof(ts));
	if (e->target_cpu == UMWAIT_ALL_CPUS)
		snprintf(target, sizeof(target), "all");
	else
		snprintf(target, sizeof(target), "cpu%u", e->target_cpu);

	if (env.json) {
		printf("{\"time\": \"%s\", \"ts_ns\": %llu, \"event\": \"%s\", \"target\": \"%s\", "
		       "\"control\": %u, \"max_time\": %u, \"c02\": %s",
		       ts, (unsigned long long)e->ts_ns, type_name(e->type), target, e->control,
		       e->control & UMWAIT_TIME_MASK,
		       e->control & UMWAIT_C02_DISABLE ? "false" : "true");
		if (has_prev)
			printf(", \"old_control\": %u, \"old_max_time\": %u, \"old_c02\": %s",
			       e->prev, e->prev & UMWAIT_TIME_MASK,
			       e->prev & UMWAIT_C02_DISABLE ? "false" : "true");
		printf(", \"cpu\": %u, \"pid\": %u, \"comm\": ", e->cpu, e->pid);
		json_str(stdout, e->comm);
		printf(", \"source\": \"%s\"", from_msr ? "msr" : "umwait");
		if (cpus >= 0)
			printf(", \"cpus_written\": %d", cpus);
		printf("}\n");
	} else {
		if (env.timestamp)
			printf("%s ", ts);
		printf("%s target=%s max_time=%u c02=%s raw=0x%08x", type_name(e->type), target,
		       e->control & UMWAIT_TIME_MASK, c02(e->control), e->control);
		if (has_prev)
			printf(" old_max_time=%u old_c02=%s old_raw=0x%08x",
			       e->prev & UMWAIT_TIME_MASK, c02(e->prev), e->prev);
		printf(" cpu=%u pid=%u comm=%s\n", e->cpu, e->pid, e->comm);
	}
	fflush(stdout);
}

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct umwait_event *e = data;

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
	print_event(e, e->type != UMWAIT_EV_CPU_OFFLINE, -1);
	return 0;
}

/*
 * msr source: what the kernel last wrote, as followed from the events: the
 * cached value (from sysfs at start) and each CPU's (unknown until written
 * while events runs)
 */
#define MAX_CPUS	8192
static int64_t cached = -1, cpu_val[MAX_CPUS];

/* the sysfs stores under way, oldest first: a store's writes are its own */
static struct store {
	struct umwait_event begin;
	uint32_t value;
	int writes;
	bool several;		/* another store ran at the same time: the writer is uncertain */
} stores[8];
static int nr_stores;

static void store_begin(const struct umwait_event *e)
{
	if (nr_stores == (int)(sizeof(stores) / sizeof(stores[0])))
		return;
	stores[nr_stores] = (struct store){ .begin = *e, .several = nr_stores > 0 };
	if (nr_stores)
		stores[0].several = true;
	nr_stores++;
}

/* a store returned: one control_update if it wrote the MSR (a no-op or a bad value writes none) */
static void store_end(const struct umwait_event *e)
{
	struct umwait_event u;
	int i;

	for (i = 0; i < nr_stores && stores[i].begin.pid != e->pid; i++)
		;
	if (i == nr_stores)
		return;
	if (stores[i].writes) {
		u = stores[i].begin;
		u.type = UMWAIT_EV_CONTROL_UPDATE;
		u.target_cpu = UMWAIT_ALL_CPUS;
		u.control = stores[i].value;
		u.prev = cached < 0 ? 0 : (uint32_t)cached;
		if (stores[i].several)
			snprintf(u.comm, sizeof(u.comm), "?");
		print_event(&u, cached >= 0, stores[i].writes);
		cached = stores[i].value;
	}
	memmove(&stores[i], &stores[i + 1], (nr_stores - i - 1) * sizeof(stores[0]));
	nr_stores--;
}

static int handle_msr(void *ctx, void *data, size_t len)
{
	const struct umwait_event *e = data;
	struct umwait_event u;
	bool known;
	static bool failed_said;

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
	if (e->type == UMWAIT_EV_STORE_BEGIN) {
		store_begin(e);
		return 0;
	}
	if (e->type == UMWAIT_EV_STORE_END) {
		store_end(e);
		return 0;
	}
	if (e->type != UMWAIT_EV_MSR_WRITE || e->cpu >= MAX_CPUS)
		return 0;
	if (e->failed) {
		if (!failed_said)
			warn_msg("a write of IA32_UMWAIT_CONTROL on cpu%u faulted: not an event", e->cpu);
		failed_said = true;
		return 0;
	}
	known = cpu_val[e->cpu] >= 0;
	u = *e;
	u.target_cpu = e->cpu;
	u.prev = known ? (uint32_t)cpu_val[e->cpu] : 0;
	cpu_val[e->cpu] = e->control;
	switch (e->ctx) {
	case UMWAIT_CTX_SYSFS:
		if (nr_stores) {
			stores[0].value = e->control;
			stores[0].writes++;
			return 0;
		}
		/* the sysfs update without its store seen: a write like any other */
		u.type = UMWAIT_EV_MSR_WRITE;
		break;
	case UMWAIT_CTX_ONLINE:
		u.type = UMWAIT_EV_CPU_ONLINE;
		break;
	case UMWAIT_CTX_OFFLINE:
		u.type = UMWAIT_EV_CPU_OFFLINE;
		known = false;		/* the boot value: no old_* (as the series) */
		break;
	case UMWAIT_CTX_RESUME:
		u.type = UMWAIT_EV_RESUME;
		known = false;		/* what firmware left there is not known */
		break;
	default:
		u.type = UMWAIT_EV_MSR_WRITE;
		break;
	}
	print_event(&u, known, -1);
	return 0;
}

static unsigned long long lost_reported;

static void report_lost(struct umwait_trace_bpf *obj)
{
	unsigned long long lost = obj->bss->lost_events;

	if (lost == lost_reported)
		return;
	warn_msg("lost %llu events: ring buffer full", lost - lost_reported);
	lost_reported = lost;
}

/* caps' maps in the shared object: created with everything, never used here */
static void shrink_caps_maps(struct umwait_trace_bpf *obj)
{
	struct bpf_map *maps[] = { obj->maps.sites, obj->maps.start, obj->maps.jumped,
				   obj->maps.marks, obj->maps.procs, obj->maps.hists,
				   obj->maps.ohists };
	size_t i;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		bpf_map__set_max_entries(maps[i], 1);
}

/* the umwait.c functions whose kprobes say which path wrote the MSR, and their programs */
static const struct {
	const char *func;
	const char *enter, *leave;	/* program names; leave: a kretprobe */
	const char *what;		/* what is lost without it */
} msr_probes[] = {
	{ "umwait_update_control_msr", "ctx_sysfs", "ctx_sysfs_end", "sysfs updates" },
	{ "umwait_cpu_online", "ctx_online", "ctx_outer_end", "hotplug online" },
	{ "umwait_cpu_offline", "ctx_offline", "ctx_outer_end", "hotplug offline" },
	{ "umwait_syscore_resume", "ctx_resume", "ctx_outer_end", "resume" },
	{ "max_time_store", "store_begin", "store_end", "the writer of max_time" },
	{ "enable_c02_store", "store_begin", "store_end", "the writer of enable_c02" },
};
#define NR_MSR_PROBES	(int)(sizeof(msr_probes) / sizeof(msr_probes[0]))
#define MAX_LINKS	(NR_TPS + 2 * NR_MSR_PROBES)

/* The msr source's programs: write_msr (tp_btf, else raw_tp) and the kprobes */
static void msr_autoload(struct umwait_trace_bpf *obj, bool btf)
{
	int i;

	bpf_program__set_autoload(btf ? obj->progs.tp_btf_write_msr : obj->progs.raw_tp_write_msr, true);
	for (i = 0; i < NR_MSR_PROBES; i++) {
		bpf_program__set_autoload(bpf_object__find_program_by_name(obj->obj, msr_probes[i].enter),
					  true);
		bpf_program__set_autoload(bpf_object__find_program_by_name(obj->obj, msr_probes[i].leave),
					  true);
	}
}

/*
 * Attach the msr source: write_msr must; each kprobe may fail (a kernel
 * whose umwait.c has other function names): said once, and the writes it
 * would have told apart are "write" events.  The number of links, or -1.
 */
static int msr_attach(struct umwait_trace_bpf *obj, bool btf, struct bpf_link **links)
{
	int i, n = 0;

	links[n] = bpf_program__attach(btf ? obj->progs.tp_btf_write_msr : obj->progs.raw_tp_write_msr);
	if (!links[n]) {
		die_msg("cannot attach to msr:write_msr: %s", strerror(errno));
		return -1;
	}
	n++;
	for (i = 0; i < NR_MSR_PROBES; i++) {
		const char *names[2] = { msr_probes[i].enter, msr_probes[i].leave };
		int k;

		for (k = 0; k < 2; k++) {
			struct bpf_program *prog = bpf_object__find_program_by_name(obj->obj, names[k]);

			links[n] = bpf_program__attach_kprobe(prog, k == 1, msr_probes[i].func);
			if (links[n]) {
				n++;
				continue;
			}
			warn_msg("no kprobe on %s (%s): %s are not told apart from other writes",
				 msr_probes[i].func, strerror(errno), msr_probes[i].what);
			if (k == 0)
				break;
		}
	}
	return n;
}

/* the cached value at start, from sysfs: the old value of the first control_update */
static void msr_start(void)
{
	uint64_t max_time, c02;
	int i;

	for (i = 0; i < MAX_CPUS; i++)
		cpu_val[i] = -1;
	if (!read_u64_file(SYSFS_DIR "/max_time", &max_time) &&
	    !read_u64_file(SYSFS_DIR "/enable_c02", &c02))
		cached = (max_time & UMWAIT_TIME_MASK) | (c02 ? 0 : UMWAIT_C02_DISABLE);
}

int cmd_events(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	struct umwait_trace_bpf *obj = NULL;
	struct bpf_link *links[MAX_LINKS] = {};
	struct bpf_program *prog, *use[NR_TPS] = {};
	struct ring_buffer *rb = NULL;
	struct loop loop = { .epfd = -1, .sfd = -1 };
	bool exists[NR_TPS], btf = false;
	int i, err, found = 0, nr_btf = 0, nr_used = 0, nr_links = 0, rc = EXIT_TROUBLE;
	double end;

	if (parse_cmdline(&argp, argc, argv))
		return EXIT_TROUBLE;
	/* a signal while it loads and attaches ends it once attached */
	install_signals(true);
	if (need_bpf_caps() || need_btf() || need_kernel(false))
		return EXIT_TROUBLE;
	for (i = 0; i < NR_TPS; i++) {
		exists[i] = tp_exists(tps[i].tp);
		found += exists[i] && !tps[i].optional;
	}
	if (env.source == SOURCE_UMWAIT && !found) {
		die_msg("kernel lacks umwait tracepoints (--source msr reads msr:write_msr instead)");
		return EXIT_TROUBLE;
	}
	from_msr = env.source == SOURCE_MSR || !found;
	if (from_msr && !btf_has_type("btf_trace_write_msr", BTF_KIND_TYPEDEF) &&
	    access("/sys/kernel/tracing/events/msr/write_msr", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/msr/write_msr", F_OK)) {
		die_msg("kernel lacks both the umwait tracepoints and msr:write_msr");
		return EXIT_TROUBLE;
	}

	setup_libbpf();
	obj = umwait_trace_bpf__open();
	if (!obj) {
		die_msg("cannot open the BPF object: %s", strerror(errno));
		return EXIT_TROUBLE;
	}
	shrink_caps_maps(obj);
	bpf_object__for_each_program(prog, obj->obj)
		bpf_program__set_autoload(prog, false);
	if (from_msr) {
		btf = probe_tp_btf("write_msr");
		msr_autoload(obj, btf);
		msr_start();
	}
	for (i = 0; i < NR_TPS && !from_msr; i++) {
		if (!exists[i]) {
			if (env.verbose)
				warn_msg("no tracepoint %s in this kernel", tps[i].tp);
			continue;
		}
		btf = probe_tp_btf(tps[i].tp);
		nr_btf += btf;
		use[i] = bpf_object__find_program_by_name(obj->obj, btf ? tps[i].tp_btf : tps[i].raw_tp);
		if (use[i])
			bpf_program__set_autoload(use[i], true);
	}
	err = umwait_trace_bpf__load(obj);
	if (err) {
		die_msg("cannot load the BPF programs: %s (-v shows libbpf's log)", strerror(-err));
		goto out;
	}
	if (from_msr) {
		nr_links = msr_attach(obj, btf, links);
		if (nr_links < 0)
			goto out;
	}
	for (i = 0; i < NR_TPS && !from_msr; i++) {
		if (!use[i])
			continue;
		links[nr_links] = bpf_program__attach(use[i]);
		if (!links[nr_links]) {
			die_msg("cannot attach to %s: %s", tps[i].tp, strerror(errno));
			goto out;
		}
		nr_links++;
		nr_used++;
	}
	rb = ring_buffer__new(bpf_map__fd(obj->maps.events), from_msr ? handle_msr : handle_event,
			      NULL, NULL);
	if (!rb) {
		die_msg("cannot open the ring buffer: %s", strerror(errno));
		goto out;
	}

	if (loop_open(&loop, rb)) {
		die_msg("cannot wait for signals and events (signalfd, epoll): %s", strerror(errno));
		goto out;
	}
	if (from_msr) {
		/*
		 * Without the series' first patch, a resume from suspend to RAM
		 * writes MSRs with the tracepoint on before it has restored the
		 * per-CPU base: it never comes back.
		 */
		warn_msg("msr:write_msr is on while events runs: on a kernel without the fix of "
			 "__restore_processor_state() (every stock kernel to 7.2), a suspend to RAM "
			 "now never resumes");
		fprintf(stderr, "Tracing umwait events (msr:write_msr of 0xE1 and the sysfs store path, "
			"%s: this kernel has no umwait tracepoints)... Hit Ctrl-C to end.\n",
			btf ? "tp_btf" : "raw_tp");
	} else {
		fprintf(stderr, "Tracing umwait events (%d tracepoints, %s)... Hit Ctrl-C to end.\n",
			nr_used, nr_btf == nr_used ? "tp_btf" : nr_btf ? "tp_btf and raw_tp" : "raw_tp");
	}
	fflush(stderr);

	end = env.duration ? now_seconds() + env.duration : 0;
	while (!exiting && (!end || now_seconds() < end)) {
		double left = end ? end - now_seconds() : 3600;

		err = loop_wait(&loop, left > 3600 ? 3600000 : (int)(left * 1000) + 1);
		if (err < 0) {
			die_msg("reading the ring buffer: %s", strerror(-err));
			goto out;
		}
		report_lost(obj);
		dump_requested = 0;
	}
	ring_buffer__consume(rb);
	report_lost(obj);
	fprintf(stderr, "%llu events, %llu lost\n", nr_events,
		(unsigned long long)obj->bss->lost_events);
	rc = 0;
out:
	loop_close(&loop);
	ring_buffer__free(rb);
	for (i = 0; i < nr_links; i++)
		bpf_link__destroy(links[i]);
	umwait_trace_bpf__destroy(obj);
	return rc;
}
