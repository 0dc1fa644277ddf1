// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: how many TPAUSE/UMWAIT waits ran, and how many of them
 * the kernel's limit (IA32_UMWAIT_CONTROL max_time) cut short, per process
 * and per instruction, in unmodified binaries.
 *
 * The scanner (scan.c) finds the instructions; a uprobe on the instruction
 * right after each one reads CF from the saved flags (CF=1: the OS limit
 * ended the wait).  Where direct branches elsewhere jump to that next
 * instruction, a uprobe on each branch tells from the saved flags and RCX
 * whether it is taken, and that arrival is discounted (umwait-trace.h).
 * Only --hist-perturbing probes the TPAUSE/UMWAIT itself, to time the wait.
 *
 * This file is the command: options, the main loop and its reports.
 * caps_attach.c scans and attaches, caps_maps.c reads the maps, caps_print.c
 * prints.
 */
#include <argp.h>
#include <errno.h>
#include <linux/types.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umwait-trace.h"
#include "umwait-trace.skel.h"
#include "caps.h"
#include "cgroup.h"
#include "openmetrics.h"
#include "residency.h"
#include "scan.h"
#include "ut.h"

static const char doc[] =
"Count TPAUSE/UMWAIT waits and those the OS time limit cut short (CF=1).\n"
"\n"
"USAGE: umwait-trace caps [-p PID | -t TID] [FILE...] [--all] [--cgroup PATH]\n"
"                         [--hist] [--exact] [-T] [--format FMT] [--json]\n"
"                         [--hist-perturbing] [-o FILE] [--max-entries N]\n"
"                         [--residency MODE] [interval [count]]\n"
"\n"
"With FILEs, every process that runs them is traced, also those that start\n"
"later; with -p PID alone, every executable mapping of that process, looked\n"
"at again each second (a library loaded with dlopen joins); -t TID counts\n"
"one thread of it; with --all, every executable file any process maps,\n"
"found again each interval (new processes, new libraries); --cgroup counts\n"
"only the tasks of a cgroup v2 directory and below.  The\n"
"totals since attach are printed at the end (Ctrl-C) and on SIGUSR1; with an\n"
"interval, each interval's counts too.  Where the CPU model has them (Golden\n"
"Cove and later P-cores), C0.1/C0.2 residency of every CPU follows, from the\n"
"core PMU: system-wide, not only the traced processes.\n"
"\n"
"EXAMPLES:\n"
"    umwait-trace caps /usr/lib/x86_64-linux-gnu/libtbb.so.12   # Ctrl-C to end\n"
"    umwait-trace caps -p 1234 1 10    # PID 1234, 1 s intervals, 10 times\n"
"    umwait-trace caps --hist ./app    # and log2 histograms of cycles denied and late\n"
"    umwait-trace caps --json ./app 5  # one JSON object per 5 s interval\n"
"    umwait-trace caps --format prometheus -o umwait.prom ./app 15   # node exporter\n";

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0,
	  "Trace this process only (its mappings if no FILE, followed as it loads libraries); "
	  "a thread's ID means its process", 0 },
	{ "tid", 't', "TID", 0, "Count this thread only (its process's mappings if no FILE)", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0,
	  "Count only the tasks of this cgroup v2 directory and its descendants", 0 },
	{ "hist", OPT_HIST, NULL, 0,
	  "Also log2 histograms per site: cycles each capped wait was denied, and how late each "
	  "wait that ran to its deadline was seen (from the probe after it: nothing on its path)", 0 },
	{ "hist-perturbing", OPT_HIST_PERTURBING, NULL, 0,
	  "Also time each wait by probing the TPAUSE/UMWAIT itself: log2 histograms of ns, "
	  "capped and not (each wait starts later than the program meant: it perturbs)", 0 },
	{ "exact", OPT_EXACT, NULL, 0,
	  "Also probe branches on a wait's own path, to count exactly where only they can "
	  "tell (such waits start later: it perturbs)", 0 },
	{ "max-entries", OPT_MAX_ENTRIES, "N", 0,
	  "Room for N (process, site) counts and N threads mid-wait at once (default 10240)", 0 },
	{ "residency", OPT_RESIDENCY, "MODE", 0,
	  "C0.x residency: auto (CPU models known to count it; default), force (any Intel core PMU), off", 0 },
	{ "timestamp", 'T', NULL, 0, "Include a timestamp with each interval", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per interval and for the totals", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0,
	  "text (default), json, prometheus (text 0.0.4) or openmetrics (1.0): metrics count since attach", 0 },
	{ "output", 'o', "FILE", 0, "Metrics into FILE, replaced each interval, removed at exit", 0 },
	{ "all", OPT_ALL, NULL, 0,
	  "Every executable file any process maps (each file scanned once), looked for "
	  "again each interval: for a service", 0 },
	{ "per-pid", OPT_PER_PID, NULL, 0,
	  "Metrics: a series per process and site, not per site and executable (one per process "
	  "ever seen: costly on a host with many short-lived processes)", 0 },
	{ "verbose", 'v', NULL, 0, "Verbose debug output (libbpf)", 0 },
	{},
};

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	long v;

	switch (key) {
	case OPT_HIST:
		env.ohist = true;
		break;
	case OPT_HIST_PERTURBING:
		env.hist = true;
		break;
	case OPT_EXACT:
		env.exact = true;
		break;
	case OPT_PER_PID:
		env.per_pid = true;
		break;
	case OPT_ALL:
		env.all = true;
		break;
	case 't':
		if (parse_long(arg, 1, &v) || v > 4194304)
			usage_error(state, "invalid TID '%s' (a number from 1 to 4194304)", arg);
		env.tid = v;
		break;
	case OPT_CGROUP:
		if (!*arg)
			usage_error(state, "empty cgroup path");
		env.cgroup = arg;
		break;
	case OPT_MAX_ENTRIES:
		if (parse_long(arg, 1, &env.max_entries) || env.max_entries > 1 << 24)
			usage_error(state, "invalid number of entries '%s' (1 to %d)", arg, 1 << 24);
		break;
	case OPT_RESIDENCY:
		if (!strcmp(arg, "auto"))
			env.residency = RESIDENCY_AUTO;
		else if (!strcmp(arg, "force"))
			env.residency = RESIDENCY_FORCE;
		else if (!strcmp(arg, "off"))
			env.residency = RESIDENCY_OFF;
		else
			usage_error(state, "invalid --residency '%s' (auto, force or off)", arg);
		break;
	case ARGP_KEY_ARG:
		if (all_digits(arg)) {
			if (parse_long(arg, 1, &v))
				usage_error(state, "invalid number '%s'", arg);
			if (!env.interval)
				env.interval = v;
			else if (!env.count)
				env.count = v;
			else
				usage_error(state, "unexpected argument '%s'", arg);
			break;
		}
		add_file_arg(state, arg);
		break;
	case ARGP_KEY_END:
		if (env.pid && env.tid)
			usage_error(state, "-p PID or -t TID, not both (-t counts a thread of its process)");
		if (env.all && (env.pid || env.tid || env.nr_files))
			usage_error(state, "--all traces every process's files: no FILE, -p or -t with it");
		if (env.all && !env.interval)
			usage_error(state, "--all needs an interval (it looks for new files each interval)");
		if (!env.all && !env.tid)
			need_target(state);
		break;
	default:
		return parse_common_opt(key, arg, state);
	}
	return 0;
}

static struct scan scan;
static time_t attach_time;	/* metrics: the counters' start */
static struct umwait_trace_bpf *obj;
static struct ring_buffer *exit_rb;	/* exit notices (see report()) */

static uint64_t dropped_reported, lost_exits_swept;

static void report_drops(void)
{
	uint64_t d = obj->bss->dropped_counts + obj->bss->dropped_starts +
		     obj->bss->dropped_jumps;

	if (d == dropped_reported)
		return;
	warn_msg("%llu waits not counted, not timed or not told from a jump: BPF map full "
		 "(%u entries; see --max-entries)", (unsigned long long)(d - dropped_reported),
		 bpf_map__max_entries(obj->maps.sites));
	dropped_reported = d;
}

/*
 * A metrics file that could not be written (ENOSPC, say) is said once and
 * written again next interval: the counters count since attach, nothing is
 * lost meanwhile, and caps goes on.
 */
static void metrics_written(int err)
{
	static bool failing;

	if (err && !failing)
		warn_msg("%s: trying again each interval", om_error());
	else if (!err && failing)
		warn_msg("the metrics are written again");
	failing = err;
}

/* Does caps look at the processes' mappings again as it runs: --all, and -p or -t without FILEs */
static bool looking(void)
{
	return env.all || (env.pid && !env.nr_files);
}

/* what the last look found that caps does not trace, for the reports */
int anon_exec_regions;

/* What a look found that is not traced: each kind said once */
static void say_look(void)
{
	const struct scan_look *l = &scan.look;
	static bool anon_said, remote_said, unreadable_said;

	anon_exec_regions = l->anon;
	if (l->anon && !anon_said) {
		if (env.all)
			warn_msg("%d processes have anonymous executable mappings (%d: JIT code, say): "
				 "TPAUSE/UMWAIT there is not traced", l->anon_procs, l->anon);
		else
			warn_msg("process %d has %d anonymous executable mapping%s (JIT code, say): "
				 "TPAUSE/UMWAIT there is not traced", env.pid, l->anon,
				 l->anon == 1 ? "" : "s");
		anon_said = true;
	}
	if (l->remote && !remote_said) {
		warn_msg("%d executable mapping%s on %s (a network or FUSE filesystem) not opened: "
			 "an open there can hang; TPAUSE/UMWAIT there is not traced", l->remote,
			 l->remote == 1 ? "" : "s", l->remote_fs);
		remote_said = true;
	}
	if (l->unreadable && !unreadable_said) {
		warn_msg("cannot read the mappings of %d processes (other users': that takes "
			 "CAP_SYS_PTRACE): their files are not traced", l->unreadable);
		unreadable_said = true;
	}
}

/*
 * One more look at the processes' mappings (--all: every process, each
 * interval; -p, -t: the target, each second).  New files are scanned and
 * their probes placed (their waits count from then), files whose probes
 * failed are tried again, and a file no process maps any more is
 * forgotten: one without sites at once, one with sites, with its probes
 * and series, after FORGET_LOOKS looks, so that its last counts are still
 * served a while.
 */
static void look(void)
{
	int nfiles = scan.nr_files, first = scan.nr_sites, i, files;
	double t = now_seconds();
	bool quiet = scan.quiet;

	scan.quiet = true;
	look_run(&scan, env.all ? 0 : env.pid, env.cgroup);
	scan.quiet = quiet;
	for (i = 0; i < scan.nr_files; i++) {
		const struct scan_file *f = &scan.files[i];

		if (!f->mapped || f->state == FILE_GONE || f->seen)
			continue;
		if (!f->nr_sites) {
			scan_forget(&scan, i);
		} else if (f->unseen >= FORGET_LOOKS) {
			if (env.verbose || !env.all)
				warn_msg("%s: mapped by no process for %d looks: its probes and series "
					 "are removed", f->path, f->unseen);
			caps_forget(obj, &scan, i);
		}
	}
	caps_attach(obj, &scan, false, &files);
	for (i = nfiles; i < scan.nr_files; i++) {
		const struct scan_file *f = &scan.files[i];
		int k, n = 0;

		for (k = f->first_site; k < f->first_site + f->nr_sites; k++)
			n += scan.sites[k].probed;
		if (f->nr_sites && f->state == FILE_ATTACHED)
			fprintf(stderr, "%s: %s mapped since caps attached: %d site%s probed\n", UT_NAME,
				f->path, n, n == 1 ? "" : "s");
	}
	say_look();
	if (env.verbose)
		warn_msg("look: %d processes, %d files known, %d new, %d new sites, %.3f s",
			 scan.look.procs, scan.nr_files, scan.look.new_files, scan.nr_sites - first,
			 now_seconds() - t);
}

/* A process exited: its counts leave the BPF map for user space's table */
static int on_exit_notice(void *ctx, void *data, size_t len)
{
	(void)ctx;
	if (len < sizeof(__u32))
		return 0;
	return caps_fold(obj, scan.nr_sites, *(__u32 *)data);
}

/* Print the interval since PREV (or the totals if PREV is NULL); CUR becomes PREV. */
static int report(enum block kind, double secs, struct snapshot *prev, struct residency *res)
{
	struct caps_extra x;
	struct snapshot cur;
	int err;

	/* the exits the BPF side has not woken us for yet (it batches them) */
	err = ring_buffer__consume(exit_rb);
	if (err < 0)
		return err;
	/* exit notices lost (ring buffer full): look for the dead processes */
	if (obj->bss->lost_exits != lost_exits_swept) {
		lost_exits_swept = obj->bss->lost_exits;
		err = caps_sweep(obj, scan.nr_sites);
		if (err)
			return err;
	}
	caps_maps_forget_cgroups();
	err = snapshot_take(obj, env.hist, &cur);
	/* metrics are counters: every report has the counts since attach */
	if (!err && kind == BLOCK_INTERVAL && !FORMAT_METRICS(env.format))
		err = snapshot_interval(&cur, prev);
	else if (!err)
		snapshot_total(&cur);
	if (err) {
		snapshot_drop(&cur);
		return err;
	}
	residency_read(res);
	caps_extra_read(obj, &x);
	if (FORMAT_METRICS(env.format))
		metrics_written(caps_openmetrics(&scan, &cur, &x, res, attach_time));
	else
		caps_print(kind, secs, &scan, &cur, &x, res);
	if (kind == BLOCK_INTERVAL)
		residency_mark(res);
	report_drops();
	snapshot_drop(&cur);
	return err;
}

/*
 * Until DEADLINE (monotonic seconds) or a signal, handing exited processes
 * to user space as they go; true at the deadline.  No signal is lost: each
 * ends the wait at once (signals.c).  -p and -t look at their process's
 * mappings each second meanwhile.
 */
static bool sleep_until(struct loop *l, double deadline)
{
	static double calibrated, looked;

	for (;;) {
		double now = now_seconds(), left = deadline - now;

		/* the BPF side's TSC: re-anchored every second */
		if (now - calibrated >= 1) {
			tsc_cal_update(obj);
			calibrated = now;
		}
		if (!env.all && looking() && now - looked >= 1) {
			if (looked)
				look();
			looked = now;
		}
		if (exiting || dump_requested)
			return false;
		if (left <= 0)
			return true;
		if (left > 1)
			left = 1;
		loop_wait(l, (int)(left * 1000) + 1);
	}
}

int cmd_caps(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	struct snapshot prev = {};
	struct residency *res = NULL;
	struct loop loop = { .epfd = -1, .sfd = -1 };
	struct bpf_program *prog;
	struct rlimit rl;
	double start, tick;
	int err, rc = EXIT_TROUBLE, attached, nr_files, intervals = 0, cg_fd = -1;
	__u32 batch, room, zero = 0;

	if (parse_cmdline(&argp, argc, argv))
		return EXIT_TROUBLE;
	/* a signal while it loads and attaches ends it once attached */
	install_signals(true);
	if (need_uprobe_caps() || need_btf() || need_kernel(true))
		return EXIT_TROUBLE;
	if (env.cgroup) {
		cg_fd = cgroup_open(env.cgroup);
		if (cg_fd < 0)
			return EXIT_TROUBLE;
	}
	/* which inode each file really is: the kernel's VMAs say */
	if (look_open()) {
		if (cg_fd >= 0)
			close(cg_fd);
		return EXIT_TROUBLE;
	}
	scan.identify = look_identify;
	/*
	 * A probe is a file descriptor, and residency takes four per CPU: the
	 * soft limit (1024) runs out at 256 CPUs. Up to the hard limit, which
	 * is the administrator's.
	 */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	err = caps_scan_targets(&scan);
	if (err)
		goto out;
	if (!cpu_has_waitpkg())
		warn_msg("this CPU lacks WAITPKG (CPUID.7.0:ECX[5]): no TPAUSE/UMWAIT site can execute here");

	setup_libbpf();
	obj = umwait_trace_bpf__open();
	if (!obj) {
		die_msg("cannot open the BPF object: %s", strerror(errno));
		goto out;
	}
	obj->rodata->targ_tgid = env.pid;
	obj->rodata->targ_tid = env.tid;
	obj->rodata->targ_cgroup = cg_fd >= 0;
	obj->rodata->targ_hist = env.hist;
	/*
	 * Preallocated: the histograms of the sites caps may probe, two each,
	 * and room for the sites of files found later (--all, -p, -t)
	 */
	room = scan.nr_sites + (looking() ? 512 : 0);
	bpf_map__set_max_entries(obj->maps.ohists, 2 * (room ? room : 1));
	bpf_map__set_max_entries(obj->maps.hists, env.hist ? 2 * (room ? room : 1) : 1);
	if (env.max_entries) {
		/* the maps that grow with processes or threads; hists grow with sites */
		bpf_map__set_max_entries(obj->maps.sites, env.max_entries);
		bpf_map__set_max_entries(obj->maps.procs, env.max_entries);
		bpf_map__set_max_entries(obj->maps.start, env.max_entries);
		bpf_map__set_max_entries(obj->maps.jumped, env.max_entries);
		bpf_map__set_max_entries(obj->maps.marks, env.max_entries);
	}
	/*
	 * The counts of the processes whose exits wait to be folded stay in the
	 * maps: a batch of at most an eighth of them, up to 64.
	 */
	batch = bpf_map__max_entries(obj->maps.sites) / 8;
	obj->rodata->exit_batch = batch < 1 ? 1 : batch > 64 ? 64 : batch;
	bpf_object__for_each_program(prog, obj->obj)
		bpf_program__set_autoload(prog, prog == obj->progs.on_probe ||
					  prog == obj->progs.task_exit ||
					  (env.hist && prog == obj->progs.wait_enter));
	err = umwait_trace_bpf__load(obj);
	if (err) {
		die_msg("cannot load the BPF programs: %s (-v shows libbpf's log)", strerror(-err));
		goto out;
	}
	if (cg_fd >= 0 && bpf_map_update_elem(bpf_map__fd(obj->maps.cgroup_map), &zero, &cg_fd, BPF_ANY)) {
		die_msg("%s: cannot filter on this cgroup: %s", env.cgroup, strerror(errno));
		goto out;
	}

	/* before the sites: a process must not exit unseen while it has counts */
	obj->links.task_exit = bpf_program__attach(obj->progs.task_exit);
	exit_rb = ring_buffer__new(bpf_map__fd(obj->maps.exits), on_exit_notice, NULL, NULL);
	if (!obj->links.task_exit || !exit_rb) {
		die_msg("cannot trace process exits (sched_process_exit): %s", strerror(errno));
		goto out;
	}
	/*
	 * Before the probes: a descriptor limit that cuts the probes short
	 * leaves a tracer that runs with the sites it has, not one that fails
	 * at the end for want of the two descriptors its loop needs.
	 */
	if (loop_open(&loop, exit_rb)) {
		die_msg("cannot wait for signals and exits (signalfd, epoll): %s", strerror(errno));
		goto out;
	}
	attached = caps_attach(obj, &scan, true, &nr_files);
	if (attached == -ESRCH) {
		die_msg("process %d exited before its sites were probed", env.pid);
		goto out;
	}
	if (attached == -ESTALE)
		goto out;
	/* --all, -p and -t look again: files whose probes failed are tried again */
	if (attached < 0 || (!attached && !looking())) {
		die_msg("no site could be probed");
		goto out;
	}
	say_look();
	/* the TSC for the waits' outcomes, then every probe in place: they count */
	if (tsc_cal_update(obj)) {
		die_msg("cannot calibrate the TSC against CLOCK_MONOTONIC: they do not advance together");
		goto out;
	}
	obj->bss->armed = true;
	res = residency_open(env.residency);
	if (env.format == FORMAT_TEXT && !residency_available(res)) {
		printf("C0.x residency: unavailable (%s)\n", residency_reason(res));
		fflush(stdout);
	}
	if (env.interval) {
		err = snapshot_take(obj, env.hist, &prev);
		if (err)
			goto out;
	}
	fprintf(stderr, "Attached %d site%s in %d file%s%s%s%s. Hit Ctrl-C to end.\n", attached,
		attached == 1 ? "" : "s", nr_files, nr_files == 1 ? "" : "s",
		env.all ? " (every file any process maps, looked for each interval)" :
		env.tid ? " (one thread)" : env.pid ? "" : " (all processes)",
		env.cgroup ? " in cgroup " : "", env.cgroup ? env.cgroup : "");
	fflush(stderr);

	start = tick = now_seconds();
	attach_time = time(NULL);
	while (!exiting) {
		bool due = sleep_until(&loop, env.interval ? tick + env.interval : start + 1e9);

		if (dump_requested) {
			dump_requested = 0;
			if (report(BLOCK_TOTAL, now_seconds() - start, NULL, res))
				goto out;
			continue;
		}
		if (!due)
			continue;
		if (report(BLOCK_INTERVAL, now_seconds() - tick, &prev, res))
			goto out;
		if (env.all)
			look();
		tick += env.interval;
		if (env.count && ++intervals >= env.count)
			break;
	}
	if (report(BLOCK_TOTAL, now_seconds() - start, NULL, res))
		goto out;
	rc = 0;
out:
	/* a stale file would serve the last counts as if caps still ran */
	if (env.output && FORMAT_METRICS(env.format))
		unlink(env.output);
	loop_close(&loop);
	snapshot_drop(&prev);
	caps_detach();
	ring_buffer__free(exit_rb);
	exit_rb = NULL;
	umwait_trace_bpf__destroy(obj);
	caps_maps_free();
	residency_close(res);
	scan_free(&scan);
	if (cg_fd >= 0)
		close(cg_fd);
	cgroup_free();
	look_close();
	return rc;
}
