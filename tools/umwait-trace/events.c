// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace events: who changed IA32_UMWAIT_CONTROL, and when.  Streams
 * the kernel series' umwait:* tracepoints, one line (or JSON object) per
 * event, the control value decoded (max_time, C0.2) and raw.
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
"USAGE: umwait-trace events [-T] [--json] [-d SECONDS]\n"
"\n"
"One line per event: EVENT target=all|cpuN max_time=N c02=on|off raw=0x...\n"
"[old_max_time=N old_c02=on|off old_raw=0x...] cpu=N pid=N comm=NAME, where\n"
"cpu/pid/comm say where the tracepoint fired (for control_update: the process\n"
"that wrote to sysfs).\n"
"\n"
"EXAMPLES:\n"
"    umwait-trace events          # until Ctrl-C\n"
"    umwait-trace events -T -d 60 # with timestamps, for a minute\n";

static const struct argp_option opts[] = {
	{ "timestamp", 'T', NULL, 0, "Include a timestamp on each line", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per event", 0 },
	{ "duration", 'd', "SECONDS", 0, "Trace for SECONDS, then exit", 0 },
	{ "verbose", 'v', NULL, 0, "Verbose debug output (libbpf)", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
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

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct umwait_event *e = data;
	bool has_prev = e->type != UMWAIT_EV_CPU_OFFLINE;
	char ts[32], target[16];

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
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

int cmd_events(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	struct umwait_trace_bpf *obj = NULL;
	struct bpf_link *links[NR_TPS] = {};
	struct bpf_program *prog, *use[NR_TPS] = {};
	struct ring_buffer *rb = NULL;
	struct loop loop = { .epfd = -1, .sfd = -1 };
	bool exists[NR_TPS];
	int i, err, found = 0, nr_btf = 0, nr_used = 0, rc = EXIT_TROUBLE;
	double end;

	if (parse_cmdline(&argp, argc, argv))
		return EXIT_TROUBLE;
	/* a signal while it loads and attaches ends it once attached */
	install_signals(true);
	if (need_root() || need_btf())
		return EXIT_TROUBLE;
	for (i = 0; i < NR_TPS; i++) {
		exists[i] = tp_exists(tps[i].tp);
		found += exists[i] && !tps[i].optional;
	}
	if (!found) {
		die_msg("kernel lacks umwait tracepoints");
		return EXIT_TROUBLE;
	}

	setup_libbpf();
	obj = umwait_trace_bpf__open();
	if (!obj) {
		die_msg("cannot open the BPF object: %s", strerror(errno));
		return EXIT_TROUBLE;
	}
	bpf_object__for_each_program(prog, obj->obj)
		bpf_program__set_autoload(prog, false);
	for (i = 0; i < NR_TPS; i++) {
		bool btf;

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
	for (i = 0; i < NR_TPS; i++) {
		if (!use[i])
			continue;
		links[i] = bpf_program__attach(use[i]);
		if (!links[i]) {
			die_msg("cannot attach to %s: %s", tps[i].tp, strerror(errno));
			goto out;
		}
	}
	rb = ring_buffer__new(bpf_map__fd(obj->maps.events), handle_event, NULL, NULL);
	if (!rb) {
		die_msg("cannot open the ring buffer: %s", strerror(errno));
		goto out;
	}

	if (loop_open(&loop, rb)) {
		die_msg("cannot wait for signals and events (signalfd, epoll): %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < NR_TPS; i++)
		nr_used += !!use[i];
	fprintf(stderr, "Tracing umwait events (%d tracepoints, %s)... Hit Ctrl-C to end.\n",
		nr_used, nr_btf == nr_used ? "tp_btf" : nr_btf ? "tp_btf and raw_tp" : "raw_tp");
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
	for (i = 0; i < NR_TPS; i++)
		bpf_link__destroy(links[i]);
	umwait_trace_bpf__destroy(obj);
	return rc;
}
