// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: how many TPAUSE/UMWAIT waits ran, and how many of them
 * the kernel's limit (IA32_UMWAIT_CONTROL max_time) cut short, per process
 * and per instruction, in unmodified binaries.
 *
 * The scanner (scan.c) finds the instructions; a uprobe on the instruction
 * right after each one reads CF from the saved flags (CF=1: the OS limit
 * ended the wait).  A uprobe on the instruction itself pairs with it where
 * another path leads to that next instruction (a wait is counted only if
 * the thread passed the site) and, with --hist, times each wait.  The BPF counters only ever grow: intervals are differences of
 * two reads, so no count is lost between a read and a reset.
 */
#include <argp.h>
#include <errno.h>
#include <linux/types.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umwait-trace.h"
#include "umwait-trace.skel.h"
#include "openmetrics.h"
#include "residency.h"
#include "scan.h"
#include "ut.h"

static const char doc[] =
"Count TPAUSE/UMWAIT waits and those the OS time limit cut short (CF=1).\n"
"\n"
"USAGE: umwait-trace caps [-p PID] [FILE...] [--hist] [-T] [--format FMT]\n"
"                         [--json] [-o FILE] [interval [count]]\n"
"\n"
"With FILEs, every process that runs them is traced, also those that start\n"
"later; with -p PID alone, every executable mapping of that process.  The\n"
"totals since attach are printed at the end (Ctrl-C) and on SIGUSR1; with an\n"
"interval, each interval's counts too.\n"
"\n"
"EXAMPLES:\n"
"    umwait-trace caps /usr/lib/x86_64-linux-gnu/libtbb.so.12   # Ctrl-C to end\n"
"    umwait-trace caps -p 1234 1 10    # PID 1234, 1 s intervals, 10 times\n"
"    umwait-trace caps --hist ./app    # and log2 histograms of wait time\n"
"    umwait-trace caps --json ./app 5  # one JSON object per 5 s interval\n"
"    umwait-trace caps --format openmetrics -o umwait.prom ./app 15\n";

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0, "Trace this process only (its mappings if no FILE)", 0 },
	{ "hist", OPT_HIST, NULL, 0, "Also time each wait: log2 histograms, capped and not", 0 },
	{ "timestamp", 'T', NULL, 0, "Include a timestamp with each interval", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per interval and for the totals", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0, "text (default), json or openmetrics (counts since attach)", 0 },
	{ "output", 'o', "FILE", 0, "Metrics into FILE, replaced each interval (openmetrics)", 0 },
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
		env.hist = true;
		break;
	case ARGP_KEY_ARG:
		if (all_digits(arg)) {
			if (parse_long(arg, 1, &v))
				argp_error(state, "invalid number '%s'", arg);
			if (!env.interval)
				env.interval = v;
			else if (!env.count)
				env.count = v;
			else
				argp_error(state, "unexpected argument '%s'", arg);
			break;
		}
		add_file_arg(state, arg);
		break;
	case ARGP_KEY_END:
		need_target(state);
		break;
	default:
		return parse_common_opt(key, arg, state);
	}
	return 0;
}

struct row {
	struct site_key key;
	struct site_val val;
};

struct hrow {
	struct hist_key key;
	struct hist val;
};

static struct scan scan;
static struct umwait_trace_bpf *obj;
static time_t attach_time;

static int row_cmp(const void *a, const void *b)
{
	const struct site_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

static int hrow_cmp(const void *a, const void *b)
{
	const struct hist_key *x = a, *y = b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->capped < y->capped ? -1 : x->capped > y->capped;
}

/* Every entry of MAP, sorted by key; KSZ/VSZ are the map's sizes. */
static int read_map(int fd, size_t ksz, size_t vsz, void **out, int (*cmp)(const void *, const void *))
{
	size_t rsz = ksz + vsz, n = 0, cap = 64;
	char key[64], next[64];
	char *rows = malloc(cap * rsz);
	void *prev = NULL;

	if (!rows)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (n == cap) {
			char *v = realloc(rows, (cap *= 2) * rsz);

			if (!v) {
				free(rows);
				return -ENOMEM;
			}
			rows = v;
		}
		memcpy(key, next, ksz);
		prev = key;
		memcpy(rows + n * rsz, key, ksz);
		if (bpf_map_lookup_elem(fd, key, rows + n * rsz + ksz))
			continue;	/* deleted meanwhile: cannot happen, entries stay */
		n++;
	}
	qsort(rows, n, rsz, cmp);
	*out = rows;
	return n;
}

/* cur - prev, entry by entry (both sorted); drops entries that did not move */
static int diff_rows(struct row *cur, int ncur, const struct row *prev, int nprev)
{
	int i, j = 0, n = 0;

	for (i = 0; i < ncur; i++) {
		while (j < nprev && row_cmp(&prev[j].key, &cur[i].key) < 0)
			j++;
		if (j < nprev && !row_cmp(&prev[j].key, &cur[i].key)) {
			cur[i].val.waits -= prev[j].val.waits;
			cur[i].val.capped -= prev[j].val.capped;
		}
		if (cur[i].val.waits)
			cur[n++] = cur[i];
	}
	return n;
}

static int diff_hrows(struct hrow *cur, int ncur, const struct hrow *prev, int nprev)
{
	int i, j = 0, n = 0, s;

	for (i = 0; i < ncur; i++) {
		uint64_t sum = 0;

		while (j < nprev && hrow_cmp(&prev[j].key, &cur[i].key) < 0)
			j++;
		for (s = 0; s < MAX_SLOTS; s++) {
			if (j < nprev && !hrow_cmp(&prev[j].key, &cur[i].key))
				cur[i].val.slots[s] -= prev[j].val.slots[s];
			sum += cur[i].val.slots[s];
		}
		if (sum)
			cur[n++] = cur[i];
	}
	return n;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

static const struct site *site_of(uint32_t idx)
{
	return idx < (uint32_t)scan.nr_sites ? &scan.sites[idx] : NULL;
}

static void print_site(FILE *f, uint32_t idx)
{
	const struct site *s = site_of(idx);

	if (!s) {
		fprintf(f, "site#%u", idx);
		return;
	}
	fprintf(f, "%s 0x%llx %s", scan.files[s->file].path, (unsigned long long)s->offset,
		s->symbol[0] ? s->symbol : "-");
}

static void json_site(FILE *f, uint32_t idx)
{
	const struct site *s = site_of(idx);

	if (!s) {
		fprintf(f, "\"site\": %u", idx);
		return;
	}
	fprintf(f, "\"file\": ");
	json_str(f, scan.files[s->file].path);
	fprintf(f, ", \"offset\": %llu, \"vaddr\": %llu, \"insn\": \"%s\", \"symbol\": ",
		(unsigned long long)s->offset, (unsigned long long)s->vaddr, insn_name(s->insn));
	json_str(f, s->symbol);
}

/* waits whose start a site probe saw and whose end no probe did */
static unsigned long long unended(void)
{
	int fd = bpf_map__fd(obj->maps.start);
	unsigned long long n = obj->bss->unended;
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

enum block { BLOCK_INTERVAL, BLOCK_TOTAL };

static void print_block(enum block kind, double secs, const struct row *rows, int n,
			const struct hrow *hrows, int nh, const struct residency *res)
{
	uint64_t waits = 0, capped = 0;
	char ts[32];
	int i;

	for (i = 0; i < n; i++) {
		waits += rows[i].val.waits;
		capped += rows[i].val.capped;
	}
	format_time(ts, sizeof(ts));

	if (env.json) {
		printf("{\"type\": \"%s\", \"time\": \"%s\", \"seconds\": %.3f, "
		       "\"waits\": %llu, \"capped\": %llu, \"sites\": [",
		       kind == BLOCK_TOTAL ? "total" : "interval", ts, secs,
		       (unsigned long long)waits, (unsigned long long)capped);
		for (i = 0; i < n; i++) {
			printf("%s{\"pid\": %u, \"comm\": ", i ? ", " : "", rows[i].key.tgid);
			json_str(stdout, rows[i].val.comm);
			printf(", ");
			json_site(stdout, rows[i].key.site);
			printf(", \"waits\": %llu, \"capped\": %llu}",
			       (unsigned long long)rows[i].val.waits,
			       (unsigned long long)rows[i].val.capped);
		}
		printf("]");
		if (env.hist) {
			printf(", \"hist_unit\": \"nsecs\", \"hists\": [");
			for (i = 0; i < nh; i++) {
				printf("%s{", i ? ", " : "");
				json_site(stdout, hrows[i].key.site);
				printf(", \"capped\": %s, \"buckets\": ",
				       hrows[i].key.capped ? "true" : "false");
				json_log2_hist(stdout, hrows[i].val.slots, MAX_SLOTS);
				printf("}");
			}
			printf("]");
		}
		printf(", \"unpaired\": %llu, \"unended\": %llu",
		       (unsigned long long)obj->bss->unpaired, unended());
		printf(", \"residency\": ");
		residency_json(stdout, res, kind == BLOCK_TOTAL);
		printf(", \"dropped\": %llu}\n", (unsigned long long)(obj->bss->dropped_counts +
								 obj->bss->dropped_starts));
		fflush(stdout);
		return;
	}

	printf("\n");
	if (kind == BLOCK_TOTAL)
		printf("Totals since attach (%.1f s):\n", secs);
	else if (env.timestamp)
		printf("%-8s\n", ts);
	if (n)
		printf("%-7s %-16s %-6s %10s %10s %7s  %s\n", "PID", "COMM", "INSN", "WAITS",
		       "CAPPED", "CAPPED%", "SITE");
	for (i = 0; i < n; i++) {
		const struct site *s = site_of(rows[i].key.site);

		printf("%-7u %-16s %-6s %10llu %10llu %6.1f%%  ", rows[i].key.tgid,
		       rows[i].val.comm, s ? insn_name(s->insn) : "?",
		       (unsigned long long)rows[i].val.waits, (unsigned long long)rows[i].val.capped,
		       pct(rows[i].val.capped, rows[i].val.waits));
		print_site(stdout, rows[i].key.site);
		printf("\n");
	}
	printf("total: waits=%llu capped=%llu capped%%=%.1f\n", (unsigned long long)waits,
	       (unsigned long long)capped, pct(capped, waits));
	for (i = 0; env.hist && i < nh; i++) {
		printf("\nwait time at ");
		print_site(stdout, hrows[i].key.site);
		printf(", %s:\n", hrows[i].key.capped ? "capped (CF=1)" : "not capped (CF=0)");
		print_log2_hist(hrows[i].val.slots, MAX_SLOTS, "nsecs");
	}
	if (kind == BLOCK_TOTAL && unended())
		printf("unended: %llu waits seen starting but not ending (still under way, or the "
		       "probe after the site was skipped): not counted\n", unended());
	if (kind == BLOCK_TOTAL && obj->bss->unpaired)
		printf("unpaired: %llu hits after a probed site by threads that did not pass it "
		       "(another path, or a wait already under way at attach): not counted\n",
		       (unsigned long long)obj->bss->unpaired);
	if (residency_available(res)) {
		printf("\n");
		residency_print(res, kind == BLOCK_TOTAL);
	}
	fflush(stdout);
}

static uint64_t dropped_reported;

static void report_drops(void)
{
	uint64_t d = obj->bss->dropped_counts + obj->bss->dropped_starts;

	if (d == dropped_reported)
		return;
	warn_msg("%llu waits not counted or not timed: BPF map full (%d entries)",
		 (unsigned long long)(d - dropped_reported), MAX_PIDS_SITES);
	dropped_reported = d;
}

struct snapshot {
	struct row *rows;
	int n;
	struct hrow *hrows;
	int nh;
};

static int take(struct snapshot *s)
{
	void *p;

	s->n = read_map(bpf_map__fd(obj->maps.sites), sizeof(struct site_key),
			sizeof(struct site_val), &p, row_cmp);
	if (s->n < 0)
		return s->n;
	s->rows = p;
	s->nh = 0;
	s->hrows = NULL;
	if (env.hist) {
		s->nh = read_map(bpf_map__fd(obj->maps.hists), sizeof(struct hist_key),
				 sizeof(struct hist), &p, hrow_cmp);
		if (s->nh < 0)
			return s->nh;
		s->hrows = p;
	}
	return 0;
}

static void drop(struct snapshot *s)
{
	free(s->rows);
	free(s->hrows);
	*s = (struct snapshot){};
}

/* --format openmetrics: every counter since attach, through om_caps() */
static int report_openmetrics(const struct snapshot *cur, const struct residency *res)
{
	struct om_site *sites = calloc(cur->n + 1, sizeof(*sites));
	struct om_caps c = {
		.sites = sites, .nr_sites = cur->n, .res = res, .start_time = attach_time,
		.unpaired = obj->bss->unpaired, .unended = unended(),
		.dropped = obj->bss->dropped_counts + obj->bss->dropped_starts,
	};
	int i, err;

	if (!sites)
		return -ENOMEM;
	for (i = 0; i < cur->n; i++) {
		const struct site *s = site_of(cur->rows[i].key.site);

		sites[i] = (struct om_site){
			.pid = cur->rows[i].key.tgid, .comm = cur->rows[i].val.comm,
			.file = s ? scan.files[s->file].path : "?", .offset = s ? s->offset : 0,
			.symbol = s && s->symbol[0] ? s->symbol : "-", .insn = s ? insn_name(s->insn) : "?",
			.waits = cur->rows[i].val.waits, .capped = cur->rows[i].val.capped,
		};
	}
	err = om_caps(&c);
	free(sites);
	return err ? -EIO : 0;
}

/* Print the interval since PREV (or the totals if PREV is NULL); CUR becomes PREV. */
static int report(enum block kind, double secs, struct snapshot *prev, struct residency *res)
{
	struct snapshot cur;
	int n, nh, err;

	err = take(&cur);
	if (err)
		return err;
	residency_read(res);
	if (env.format == FORMAT_OPENMETRICS) {
		err = report_openmetrics(&cur, res);
		report_drops();
		drop(&cur);
		return err;
	}
	n = cur.n;
	nh = cur.nh;
	if (kind == BLOCK_INTERVAL) {
		struct snapshot keep;

		/* keep the raw counts for the next interval */
		keep.n = cur.n;
		keep.nh = cur.nh;
		keep.rows = malloc(cur.n * sizeof(*cur.rows) + 1);
		keep.hrows = malloc(cur.nh * sizeof(*cur.hrows) + 1);
		if (!keep.rows || !keep.hrows)
			return -ENOMEM;
		memcpy(keep.rows, cur.rows, cur.n * sizeof(*cur.rows));
		memcpy(keep.hrows, cur.hrows, cur.nh * sizeof(*cur.hrows));
		n = diff_rows(cur.rows, cur.n, prev->rows, prev->n);
		nh = diff_hrows(cur.hrows, cur.nh, prev->hrows, prev->nh);
		drop(prev);
		*prev = keep;
	} else {
		n = diff_rows(cur.rows, cur.n, NULL, 0);
		nh = diff_hrows(cur.hrows, cur.nh, NULL, 0);
	}
	print_block(kind, secs, cur.rows, n, cur.hrows, nh, res);
	if (kind == BLOCK_INTERVAL)
		residency_mark(res);
	report_drops();
	drop(&cur);
	return 0;
}

static int scan_targets(void)
{
	int i, n, rc = 0;

	if (env.pid && kill(env.pid, 0) && errno == ESRCH) {
		die_msg("no process with PID %d", env.pid);
		return EXIT_TROUBLE;
	}
	if (!env.nr_files && scan_pid(&scan, env.pid) < 0)
		return EXIT_TROUBLE;
	for (i = 0; i < env.nr_files; i++) {
		n = scan_elf(&scan, env.files[i], env.files[i]);
		if (n < 0)
			rc = EXIT_TROUBLE;
	}
	if (rc)
		return rc;
	if (!scan.nr_sites) {
		fprintf(stderr, "%s: no TPAUSE/UMWAIT site in:", UT_NAME);
		for (i = 0; i < scan.nr_files; i++)
			fprintf(stderr, " %s", scan.files[i].path);
		fputc('\n', stderr);
		return EXIT_TROUBLE;
	}
	return 0;
}

static struct bpf_link **links;
static int nr_links;

static int attach_one(struct bpf_program *prog, const struct site *s, uint64_t cookie,
		      uint64_t offset)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	struct bpf_link *link;

	link = bpf_program__attach_uprobe_opts(prog, env.pid ? env.pid : -1,
					       scan.files[s->file].attach, offset, &uo);
	if (!link) {
		warn_msg("cannot attach to %s offset 0x%llx: %s", scan.files[s->file].path,
			 (unsigned long long)offset, strerror(errno));
		return -1;
	}
	links[nr_links++] = link;
	return 0;
}

/* The -p target has exited: there is nothing left to probe */
static bool target_gone(void)
{
	return env.pid && kill(env.pid, 0) && errno == ESRCH;
}

/* Attach every site; the number attached, or -ESRCH if the -p target exited */
static int attach_sites(int *nr_files)
{
	int i, attached = 0;
	bool *file_used, paired;

	links = calloc(2 * scan.nr_sites, sizeof(*links));
	file_used = calloc(scan.nr_files, sizeof(*file_used));
	if (!links || !file_used)
		return -ENOMEM;
	for (i = 0; i < scan.nr_sites; i++) {
		const struct site *s = &scan.sites[i];

		/* checked first: libbpf's own warnings would precede ours */
		if (target_gone()) {
			attached = -ESRCH;
			break;
		}
		if (!s->next_ok) {
			warn_msg("%s 0x%llx (%s): the kernel cannot uprobe the instruction after "
				 "this %s: not counted", scan.files[s->file].path,
				 (unsigned long long)s->offset, s->symbol, insn_name(s->insn));
			continue;
		}
		/* pair the two probes where needed and possible */
		paired = (env.hist || s->next_shared) && s->site_ok &&
			 !attach_one(obj->progs.wait_enter, s, i | COOKIE_PAIRED, s->offset);
		if (attach_one(obj->progs.wait_exit, s, paired ? i | COOKIE_PAIRED : (uint64_t)i,
			       s->next_offset))
			continue;
		if (s->next_shared && !paired)
			warn_msg("%s 0x%llx (%s): another path leads to the instruction after this "
				 "%s and the %s itself cannot be probed: its counts include that path",
				 scan.files[s->file].path, (unsigned long long)s->offset, s->symbol,
				 insn_name(s->insn), insn_name(s->insn));
		else if (env.hist && !paired)
			warn_msg("%s 0x%llx: waits counted but not timed", scan.files[s->file].path,
				 (unsigned long long)s->offset);
		attached++;
		file_used[s->file] = true;
	}
	*nr_files = 0;
	for (i = 0; i < scan.nr_files; i++)
		*nr_files += file_used[i];
	free(file_used);
	return attached;
}

/* Sleep until DEADLINE (monotonic seconds) or a signal; true at the deadline. */
static bool sleep_until(double deadline)
{
	for (;;) {
		double left = deadline - now_seconds();
		struct timespec ts;

		if (exiting || dump_requested)
			return false;
		if (left <= 0)
			return true;
		/* short slices: a signal that lands between the check and the sleep waits < 0.2 s */
		if (left > 0.2)
			left = 0.2;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
}

int cmd_caps(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	struct snapshot prev = {};
	struct residency *res = NULL;
	struct bpf_program *prog;
	double start, tick;
	int i, err, rc = EXIT_TROUBLE, attached, nr_files, intervals = 0;
	bool need_enter;

	if (parse_cmdline(&argp, argc, argv))
		return EXIT_TROUBLE;
	if (need_root() || need_btf())
		return EXIT_TROUBLE;
	err = scan_targets();
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
	obj->rodata->targ_hist = env.hist;
	need_enter = env.hist;
	for (i = 0; i < scan.nr_sites; i++)
		need_enter |= scan.sites[i].next_shared && scan.sites[i].site_ok;
	bpf_object__for_each_program(prog, obj->obj)
		bpf_program__set_autoload(prog, prog == obj->progs.wait_exit ||
					  (need_enter && prog == obj->progs.wait_enter));
	err = umwait_trace_bpf__load(obj);
	if (err) {
		die_msg("cannot load the BPF programs: %s (-v shows libbpf's log)", strerror(-err));
		goto out;
	}

	attached = attach_sites(&nr_files);
	if (attached == -ESRCH) {
		die_msg("process %d exited before its sites were probed", env.pid);
		goto out;
	}
	if (attached <= 0) {
		die_msg("no site could be probed");
		goto out;
	}
	install_signals();
	res = residency_open();
	if (env.format == FORMAT_TEXT && !residency_available(res)) {
		printf("C0.x residency: unavailable (%s)\n", residency_reason(res));
		fflush(stdout);
	}
	if (env.interval) {
		err = take(&prev);
		if (err)
			goto out;
	}
	fprintf(stderr, "Attached %d site%s in %d file%s%s. Hit Ctrl-C to end.\n", attached,
		attached == 1 ? "" : "s", nr_files, nr_files == 1 ? "" : "s",
		env.pid ? "" : " (all processes)");
	fflush(stderr);

	start = tick = now_seconds();
	attach_time = time(NULL);
	while (!exiting) {
		bool due = sleep_until(env.interval ? tick + env.interval : start + 1e9);

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
		tick += env.interval;
		if (env.count && ++intervals >= env.count)
			break;
	}
	if (report(BLOCK_TOTAL, now_seconds() - start, NULL, res))
		goto out;
	rc = 0;
out:
	drop(&prev);
	while (nr_links)
		bpf_link__destroy(links[--nr_links]);
	free(links);
	umwait_trace_bpf__destroy(obj);
	residency_close(res);
	scan_free(&scan);
	return rc;
}
