// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: one interval's (or the run's) counts, as a table or as
 * one JSON object; or every count since attach as metrics (openmetrics.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "caps.h"
#include "cgroup.h"
#include "openmetrics.h"
#include "residency.h"
#include "scan.h"
#include "ut.h"

static const struct site *site_of(const struct scan *scan, uint32_t idx)
{
	return idx < (uint32_t)scan->nr_sites ? &scan->sites[idx] : NULL;
}

static void print_site(FILE *f, const struct scan *scan, uint32_t idx)
{
	const struct site *s = site_of(scan, idx);

	if (!s) {
		fprintf(f, "site#%u", idx);
		return;
	}
	fprintf(f, "%s 0x%llx %s", scan->files[s->file].path, (unsigned long long)s->offset,
		s->symbol[0] ? s->symbol : "-");
}

static void json_site(FILE *f, const struct scan *scan, uint32_t idx)
{
	const struct site *s = site_of(scan, idx);

	if (!s) {
		fprintf(f, "\"site\": %u", idx);
		return;
	}
	fprintf(f, "\"file\": ");
	json_str(f, scan->files[s->file].path);
	fprintf(f, ", \"offset\": %llu, \"vaddr\": %llu, \"insn\": \"%s\", \"symbol\": ",
		(unsigned long long)s->offset, (unsigned long long)s->vaddr, insn_name(s->insn));
	json_str(f, s->symbol);
	fprintf(f, ", \"exact\": %s, \"exact_capped\": %s, \"perturbs\": %s, \"why\": ",
		s->exact ? "true" : "false", s->exact_capped ? "true" : "false",
		s->perturbs ? "true" : "false");
	json_str(f, s->why);
	/* the file as /proc/PID/maps names it: one file however many paths reach it */
	fprintf(f, ", \"inode\": \"%02x:%02x %llu\"", major(scan->files[s->file].dev),
		minor(scan->files[s->file].dev), (unsigned long long)scan->files[s->file].ino);
}

/* a row's cgroup: its path under the cgroup v2 mount, null for the root cgroup */
static void json_cgroup(FILE *f, uint64_t id)
{
	const char *cg = cgroup_label(id);

	fprintf(f, ", \"cgroup\": ");
	if (cg)
		json_str(f, cg);
	else
		fprintf(f, "null");
}


/*
 * Outcomes per site, over its processes, and what max_time would serve the
 * site's capped waits.  A capped wait ran max_time cycles and was denied the
 * rest: it asked for denied + max_time, plus the probe's lateness (the TSC
 * is read at the probe, a little after the wait ended: the least lateness
 * of the waits that ran to their deadline, which is all probe; where none
 * did, a quarter more).  Where the probe came after a capped wait's
 * deadline (denied 0: its request was shorter than max_time plus the
 * probe's lateness), that sum is only an upper bound of what it asked,
 * and where no wait ran to its deadline (lateness unknown) not even that.
 */
struct advice {
	bool valid;		/* capped waits, and max_time known */
	uint64_t unresolved;	/* capped waits whose probe came after their deadline */
	bool bound[3];		/* serve[i] is an upper bound: from those waits */
	bool unknown[3];	/* serve[i] is unknown: from those, and lateness unknown */
	bool asked_bound;	/* asked is an upper bound (0: unknown) */
	uint64_t max_time;	/* in force now */
	uint64_t lateness;	/* the probe's, 0 if no wait ran to its deadline */
	uint64_t asked;		/* the capped waits' median request */
	uint64_t serve[3];	/* the max_time for 50, 90, 99% of them; 0: beyond range */
};

static const int serve_pct[3] = { 50, 90, 99 };

static const struct ohist *orow_of(const struct snapshot *s, uint32_t site, uint32_t kind)
{
	for (int i = 0; i < s->no; i++)
		if (s->orows[i].key.site == site && s->orows[i].key.kind == kind)
			return &s->orows[i].val;
	return NULL;
}

/* the slot holding the P-th percentile of H (N values) */
static int ohist_pct(const struct ohist *h, uint64_t n, int p)
{
	uint64_t want = (n * p + 99) / 100, sum = 0;
	int i;

	for (i = 0; i < OHIST_SLOTS - 1; i++) {
		sum += h->slots[i];
		if (sum >= want)
			break;
	}
	return i;
}

static uint64_t ohist_total(const struct ohist *h)
{
	uint64_t n = 0;

	for (int i = 0; h && i < OHIST_SLOTS; i++)
		n += h->slots[i];
	return n;
}

/*
 * The probe's lateness: the least seen over every site's on-deadline waits
 * (the top of its slot).  More is the thread kept off the CPU after its
 * wait; a capped wait that was only looks as if it asked for less, so the
 * high percentiles the advice gives come from the waits that were not.
 */
static uint64_t lateness(const struct snapshot *s)
{
	int i, j;

	for (j = 0; j < OHIST_SLOTS; j++)
		for (i = 0; i < s->no; i++)
			if (s->orows[i].key.kind == HIST_LATE && s->orows[i].val.slots[j])
				return ohist_upper(j);
	return 0;
}

static void advise(const struct snapshot *s, uint32_t site, struct advice *a)
{
	const struct ohist *h = orow_of(s, site, HIST_DENIED);
	uint64_t n = ohist_total(h), v;
	int i, slot;

	*a = (struct advice){};
	if (!n || read_u64_file(SYSFS_DIR "/max_time", &a->max_time))
		return;
	a->valid = true;
	a->lateness = lateness(s);
	slot = ohist_pct(h, n, 50);
	a->asked_bound = slot == 0;
	if (!a->asked_bound || a->lateness)
		a->asked = (ohist_lower(slot) + ohist_upper(slot)) / 2 + a->max_time + a->lateness;
	a->unresolved = h->slots[0];
	for (i = 0; i < 3; i++) {
		slot = ohist_pct(h, n, serve_pct[i]);
		a->bound[i] = slot == 0;
		a->unknown[i] = slot == 0 && !a->lateness;
		if (a->unknown[i])
			continue;
		/* lateness unknown (no wait ran to its deadline): a slot more, 25% */
		if (!a->lateness)
			slot++;
		if (slot >= OHIST_SLOTS - 1)
			continue;
		/* the slot's top, and a multiple of 4 (max_time's bits 31:2) */
		v = (ohist_upper(slot) + a->max_time + a->lateness + 3) & ~3ULL;
		a->serve[i] = v <= UMWAIT_TIME_MASK ? v : 0;
	}
}

/* most of the site's waits had a deadline already behind them */
static bool mostly_past(const struct site_val *v)
{
	return v->past * 2 > v->waits;
}

/* each site's counts over its processes: an array of scan->nr_sites */
static struct site_val *by_site(const struct scan *scan, const struct snapshot *s)
{
	struct site_val *v = calloc(scan->nr_sites + 1, sizeof(*v));

	for (int i = 0; v && i < s->n; i++)
		if (s->rows[i].key.site < (uint32_t)scan->nr_sites)
			site_val_add(&v[s->rows[i].key.site], &s->rows[i].val, 1);
	return v;
}

static void json_ohist(FILE *f, const struct ohist *h)
{
	bool first = true;

	fprintf(f, "[");
	for (int i = 0; h && i < OHIST_SLOTS; i++) {
		if (!h->slots[i])
			continue;
		fprintf(f, "%s{\"from\": %llu, \"to\": %llu, \"count\": %llu}", first ? "" : ", ",
			(unsigned long long)ohist_lower(i), (unsigned long long)ohist_upper(i),
			(unsigned long long)h->slots[i]);
		first = false;
	}
	fprintf(f, "]");
}

static void json_outcomes(FILE *f, const struct site_val *v)
{
	fprintf(f, "\"outcomes\": {\"capped\": %llu, \"deadline\": %llu, \"early\": %llu, "
		"\"past\": %llu}", (unsigned long long)v->capped, (unsigned long long)v->deadline,
		(unsigned long long)v->early, (unsigned long long)v->past);
}

static void json_sites_outcomes(const struct scan *scan, const struct snapshot *s)
{
	struct site_val *v = by_site(scan, s);
	struct advice a;
	bool first = true;
	int i, k;

	printf(", \"tsc_error_cycles\": %.0f, \"by_site\": [", tsc_cal_error());
	for (i = 0; v && i < scan->nr_sites; i++) {
		if (!v[i].waits)
			continue;
		printf("%s{", first ? "" : ", ");
		first = false;
		json_site(stdout, scan, i);
		printf(", \"waits\": %llu, ", (unsigned long long)v[i].waits);
		json_outcomes(stdout, &v[i]);
		printf(", \"denied\": ");
		json_ohist(stdout, orow_of(s, i, HIST_DENIED));
		printf(", \"late\": ");
		json_ohist(stdout, orow_of(s, i, HIST_LATE));
		advise(s, i, &a);
		if (a.valid) {
			printf(", \"advice\": {\"max_time\": %llu, \"lateness\": %llu, \"asked\": ",
			       (unsigned long long)a.max_time, (unsigned long long)a.lateness);
			if (a.asked)
				printf("%llu", (unsigned long long)a.asked);
			else
				printf("null");
			printf(", \"asked_upper_bound\": %s", a.asked_bound ? "true" : "false");
			for (k = 0; k < 3; k++)
				if (a.unknown[k])
					printf(", \"max_time_p%d\": null", serve_pct[k]);
				else
					printf(", \"max_time_p%d\": %llu", serve_pct[k],
					       (unsigned long long)a.serve[k]);
			printf(", \"unresolved\": %llu, \"upper_bounds\": [", (unsigned long long)a.unresolved);
			for (k = 0; k < 3; k++)
				printf("%s%s", k ? ", " : "", a.bound[k] ? "true" : "false");
			printf("]}");
		} else {
			printf(", \"advice\": null");
		}
		printf(", \"warning\": %s}", mostly_past(&v[i]) ?
		       "\"these waits do nothing: the deadline is already past when they start\"" :
		       "null");
	}
	printf("]");
	free(v);
}

/* --hist: an outcome histogram in log2 buckets of cycles */
static void print_ohist(const struct scan *scan, const struct orow *r)
{
	unsigned long long slots[64] = {};
	uint64_t lo;
	int i, b;

	for (i = 0; i < OHIST_SLOTS; i++) {
		lo = ohist_lower(i);
		/* a slot lies within one power of two: its lower bound's */
		for (b = 0; lo > 1; b++)
			lo >>= 1;
		slots[b] += r->val.slots[i];
	}
	printf("\n%s at ", r->key.kind == HIST_DENIED ? "denied" : "late");
	print_site(stdout, scan, r->key.site);
	printf(r->key.kind == HIST_DENIED ?
	       ", capped (CF=1): the deadline minus the TSC at the probe\n" :
	       ", ran to the deadline: the TSC at the probe minus the deadline\n");
	print_log2_hist(slots, 64, "cycles");
}

static void print_outcomes(const struct scan *scan, const struct snapshot *s)
{
	struct site_val *v = by_site(scan, s);
	struct advice a;
	int i;

	for (i = 0; v && i < scan->nr_sites; i++) {
		if (!v[i].waits)
			continue;
		printf("outcomes at ");
		print_site(stdout, scan, i);
		printf(": capped=%llu deadline=%llu early=%llu past=%llu\n",
		       (unsigned long long)v[i].capped, (unsigned long long)v[i].deadline,
		       (unsigned long long)v[i].early, (unsigned long long)v[i].past);
		advise(s, i, &a);
		if (a.valid) {
			printf("  advice: max_time=%llu cut %llu waits that asked for ",
			       (unsigned long long)a.max_time, (unsigned long long)v[i].capped);
			if (!a.asked)
				printf("an unknown number of cycles");
			else
				printf("%s %llu cycles", a.asked_bound ? "at most" : "about",
				       (unsigned long long)a.asked);
			printf("; max_time for 50/90/99%% of them to finish:");
			for (int k = 0; k < 3; k++) {
				if (a.unknown[k])
					printf(" unknown");
				else if (a.serve[k])
					printf(" %s%llu", a.bound[k] ? "<=" : "",
					       (unsigned long long)a.serve[k]);
				else
					printf(" beyond-range");
			}
			printf("\n");
			if (a.unresolved && a.lateness)
				printf("  note: %llu of them asked for less than max_time plus the probe's "
				       "lateness (%llu cycles): too short to size from their exit, so a "
				       "figure marked <= is an upper bound\n",
				       (unsigned long long)a.unresolved, (unsigned long long)a.lateness);
			else if (a.unresolved)
				printf("  note: %llu of them asked for less than max_time plus the probe's "
				       "lateness (unknown: no wait ran to its deadline): too short to size "
				       "from their exit, so a figure that rests on them is unknown\n",
				       (unsigned long long)a.unresolved);
		}
		if (mostly_past(&v[i]))
			printf("  warning: these waits do nothing: the deadline is already past when they start\n");
	}
	free(v);
}

static void print_json(enum block kind, double secs, const struct scan *scan,
		       const struct snapshot *s, const struct caps_extra *x,
		       const struct residency *res, uint64_t waits, uint64_t capped,
		       const char *ts)
{
	int i;

	printf("{\"type\": \"%s\", \"time\": \"%s\", \"seconds\": %.3f, "
	       "\"waits\": %llu, \"capped\": %llu, \"sites\": [",
	       kind == BLOCK_TOTAL ? "total" : "interval", ts, secs,
	       (unsigned long long)waits, (unsigned long long)capped);
	for (i = 0; i < s->n; i++) {
		printf("%s{\"pid\": %u, \"comm\": ", i ? ", " : "", s->rows[i].key.tgid);
		json_str(stdout, s->rows[i].val.comm);
		printf(", ");
		json_site(stdout, scan, s->rows[i].key.site);
		json_cgroup(stdout, s->rows[i].val.cgroup);
		printf(", \"waits\": %llu, \"capped\": %llu, ",
		       (unsigned long long)s->rows[i].val.waits,
		       (unsigned long long)s->rows[i].val.capped);
		json_outcomes(stdout, &s->rows[i].val);
		printf("}");
	}
	printf("]");
	json_sites_outcomes(scan, s);
	if (env.hist) {
		printf(", \"hist_unit\": \"nsecs\", \"hists\": [");
		for (i = 0; i < s->nh; i++) {
			printf("%s{", i ? ", " : "");
			json_site(stdout, scan, s->hrows[i].key.site);
			printf(", \"capped\": %s, \"buckets\": ",
			       s->hrows[i].key.kind == HIST_TIME_CAPPED ? "true" : "false");
			json_log2_hist(stdout, s->hrows[i].val.slots, MAX_SLOTS);
			printf("}");
		}
		printf("]");
	}
	printf(", \"unpaired\": %llu, \"unended\": %llu, \"anon_exec_mappings\": %d",
	       (unsigned long long)x->unpaired, (unsigned long long)(x->unended + x->inflight),
	       x->anon);
	printf(", \"residency\": ");
	residency_json(stdout, res, kind == BLOCK_TOTAL);
	printf(", \"dropped\": %llu}\n", (unsigned long long)x->dropped);
}

static void print_text(enum block kind, double secs, const struct scan *scan,
		       const struct snapshot *s, const struct caps_extra *x,
		       const struct residency *res, uint64_t waits, uint64_t capped,
		       const char *ts)
{
	int i;

	printf("\n");
	if (kind == BLOCK_TOTAL)
		printf("Totals since attach (%.1f s):\n", secs);
	else if (env.timestamp)
		printf("%-8s\n", ts);
	if (s->n)
		printf("%-7s %-16s %-6s %10s %10s %7s  %s\n", "PID", "COMM", "INSN", "WAITS",
		       "CAPPED", "CAPPED%", "SITE");
	for (i = 0; i < s->n; i++) {
		const struct row *r = &s->rows[i];
		const struct site *site = site_of(scan, r->key.site);

		printf("%-7u %-16s %-6s %10llu %10llu %6.1f%%  ", r->key.tgid, r->val.comm,
		       site ? insn_name(site->insn) : "?", (unsigned long long)r->val.waits,
		       (unsigned long long)r->val.capped, pct(r->val.capped, r->val.waits));
		print_site(stdout, scan, r->key.site);
		if (site && !site->exact)
			printf(" [%s]", site->exact_capped ? "waits inexact" : "inexact");
		printf("\n");
	}
	printf("total: waits=%llu capped=%llu capped%%=%.1f\n", (unsigned long long)waits,
	       (unsigned long long)capped, pct(capped, waits));
	print_outcomes(scan, s);
	for (i = 0; env.ohist && i < s->no; i++)
		print_ohist(scan, &s->orows[i]);
	for (i = 0; env.hist && i < s->nh; i++) {
		printf("\nwait time at ");
		print_site(stdout, scan, s->hrows[i].key.site);
		printf(", %s:\n", s->hrows[i].key.kind == HIST_TIME_CAPPED ? "capped (CF=1)" :
		       "not capped (CF=0)");
		print_log2_hist(s->hrows[i].val.slots, MAX_SLOTS, "nsecs");
	}
	if (kind == BLOCK_TOTAL && x->unended + x->inflight)
		printf("unended: %llu waits seen starting but not ending (still under way, the "
		       "thread died, or the probe after the site was skipped): not counted\n",
		       (unsigned long long)(x->unended + x->inflight));
	if (kind == BLOCK_TOTAL && x->unpaired)
		printf("unpaired: %llu arrivals at the instruction after a site that were not its "
		       "wait (a jump, told by its probe or by the flags): not counted\n",
		       (unsigned long long)x->unpaired);
	/* system-wide, not the traced processes': a block of its own */
	residency_print(res, kind == BLOCK_TOTAL);
}

void caps_print(enum block kind, double secs, const struct scan *scan,
		const struct snapshot *s, const struct caps_extra *x,
		const struct residency *res)
{
	uint64_t waits = 0, capped = 0;
	char ts[32];
	int i;

	for (i = 0; i < s->n; i++) {
		waits += s->rows[i].val.waits;
		capped += s->rows[i].val.capped;
	}
	format_time(ts, sizeof(ts));
	if (env.json)
		print_json(kind, secs, scan, s, x, res, waits, capped, ts);
	else
		print_text(kind, secs, scan, s, x, res, waits, capped, ts);
	fflush(stdout);
}

static struct om_site om_site_of(const struct scan *scan, uint32_t idx)
{
	const struct site *site = site_of(scan, idx);

	return (struct om_site){
		.file = site ? scan->files[site->file].path : "?",
		.offset = site ? site->offset : 0,
		.symbol = site && site->symbol[0] ? site->symbol : "-",
		.insn = site ? insn_name(site->insn) : "?",
	};
}

static int strcmp_null(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") ?: (!a) - (!b);
}

/* series by their label sets: equal ones are one series */
static int om_site_cmp(const void *a, const void *b)
{
	const struct om_site *x = a, *y = b;
	int c;

	if (env.per_pid && x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if ((c = strcmp_null(env.per_pid ? x->comm : NULL, env.per_pid ? y->comm : NULL)) ||
	    (c = strcmp(x->exe, y->exe)) || (c = strcmp(x->file, y->file)))
		return c;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if ((c = strcmp(x->symbol, y->symbol)) || (c = strcmp(x->insn, y->insn)))
		return c;
	return strcmp_null(x->cgroup, y->cgroup);
}

static void om_site_add(struct om_site *d, const struct om_site *s)
{
	d->waits += s->waits;
	d->capped += s->capped;
	d->deadline += s->deadline;
	d->early += s->early;
	d->past += s->past;
}

/* Is site IDX still probed, or counted before its file was forgotten */
static bool site_gone(const struct scan *scan, uint32_t idx)
{
	const struct site *site = site_of(scan, idx);

	return site && scan->files[site->file].state == FILE_GONE;
}

/*
 * Metrics: S holds every count since attach (START); a series per site,
 * executable and cgroup, summed over its processes (with --per-pid, per
 * process and site); 0 or EXIT_TROUBLE.  A counting site no process has
 * waited at yet has its series too, exe="" and 0: a rate() over it starts
 * from its first wait, and a site that never waits is told from one caps
 * does not count.  A file no process maps any more has no series left.
 * Series whose labels would be the same (two files, say two copies of one
 * library, seen at one path in two mount namespaces of one cgroup) are one
 * series, their sum: each label set is written once.
 */
int caps_openmetrics(const struct scan *scan, const struct snapshot *s,
		     const struct caps_extra *x, const struct residency *res, time_t start)
{
	struct om_site *sites = calloc(s->n + scan->nr_sites + 1, sizeof(*sites));
	bool *seen = calloc(scan->nr_sites + 1, sizeof(*seen));
	struct om_caps c = {
		.sites = sites, .res = res, .start_time = start, .unpaired = x->unpaired,
		.unended = x->unended, .inflight = x->inflight, .dropped = x->dropped,
		.anon = x->anon,
	};
	int i, n = 0, m = 0, err;

	if (!sites || !seen) {
		free(sites);
		free(seen);
		return EXIT_TROUBLE;
	}
	for (i = 0; i < s->n; i++) {
		const struct row *r = &s->rows[i];

		if (site_gone(scan, r->key.site))
			continue;
		if (r->key.site < (uint32_t)scan->nr_sites)
			seen[r->key.site] = true;
		sites[n] = om_site_of(scan, r->key.site);
		sites[n].pid = r->key.tgid;
		sites[n].comm = r->val.comm;
		sites[n].exe = r->val.exe;
		sites[n].cgroup = cgroup_label(r->val.cgroup);
		sites[n].waits = r->val.waits;
		sites[n].capped = r->val.capped;
		sites[n].deadline = r->val.deadline;
		sites[n].early = r->val.early;
		sites[n].past = r->val.past;
		n++;
	}
	for (i = 0; !env.per_pid && i < scan->nr_sites; i++) {
		if (seen[i] || !scan->sites[i].probed)
			continue;
		sites[n] = om_site_of(scan, i);
		sites[n++].exe = "";
	}
	/* one series per label set */
	if (n)
		qsort(sites, n, sizeof(*sites), om_site_cmp);
	for (i = 0; i < n; i++) {
		if (m && !om_site_cmp(&sites[m - 1], &sites[i]))
			om_site_add(&sites[m - 1], &sites[i]);
		else
			sites[m++] = sites[i];
	}
	c.nr_sites = m;
	err = om_caps(&c);
	free(sites);
	free(seen);
	return err;
}
