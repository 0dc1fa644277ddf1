// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: snapshots of the BPF maps.  The BPF counters only ever
 * grow: an interval is the difference of two snapshots, so no count is lost
 * between a read and a reset.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umwait-trace.h"
#include "umwait-trace.skel.h"
#include "caps.h"
#include "cgroup.h"
#include "scan.h"
#include "ut.h"

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
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

/* D += S (SIGN 1) or D -= S (SIGN -1), every count */
void site_val_add(struct site_val *d, const struct site_val *s, int sign)
{
	d->waits += sign * s->waits;
	d->capped += sign * s->capped;
	d->deadline += sign * s->deadline;
	d->early += sign * s->early;
	d->past += sign * s->past;
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
			continue;	/* folded meanwhile: in the retired rows */
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
		if (j < nprev && !row_cmp(&prev[j].key, &cur[i].key))
			site_val_add(&cur[i].val, &prev[j].val, -1);
		if (cur[i].val.waits)
			cur[n++] = cur[i];
	}
	return n;
}

/*
 * cur - prev for rows of a hist_key and NSLOTS counts (struct hrow, struct
 * orow), both sorted by key, each SIZE bytes; keeps the rows left non-zero
 */
_Static_assert(offsetof(struct hrow, val) == sizeof(struct hist_key) &&
	       sizeof(struct hrow) == sizeof(struct hist_key) + MAX_SLOTS * sizeof(__u64),
	       "struct hrow: a key, then its slots");
_Static_assert(offsetof(struct orow, val) == sizeof(struct hist_key) &&
	       sizeof(struct orow) == sizeof(struct hist_key) + OHIST_SLOTS * sizeof(__u64),
	       "struct orow: a key, then its slots");

static int diff_slot_rows(void *cur, int ncur, const void *prev, int nprev, size_t size,
			  int nslots)
{
	int i, j = 0, n = 0, s;

	for (i = 0; i < ncur; i++) {
		struct hist_key *ck = (void *)((char *)cur + i * size);
		__u64 *cs = (__u64 *)(ck + 1), sum = 0;
		const struct hist_key *pk = NULL;

		while (j < nprev && hrow_cmp((const char *)prev + j * size, ck) < 0)
			j++;
		if (j < nprev && !hrow_cmp((const char *)prev + j * size, ck))
			pk = (const void *)((const char *)prev + j * size);
		for (s = 0; s < nslots; s++) {
			if (pk)
				cs[s] -= ((const __u64 *)(pk + 1))[s];
			sum += cs[s];
		}
		if (sum)
			memmove((char *)cur + n++ * size, ck, size);
	}
	return n;
}

/*
 * The counts of processes that have exited: taken out of the sites map (so
 * that it holds only live processes and never fills with dead ones), kept
 * here, sorted by key, and added to every snapshot.
 */
static struct row *retired;
static int nr_retired, cap_retired;

static int retire(const struct row *r)
{
	int lo = 0, hi = nr_retired, c;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		c = row_cmp(&retired[mid].key, &r->key);
		if (!c) {
			/* the PID was reused: one row for both */
			site_val_add(&retired[mid].val, &r->val, 1);
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (nr_retired == cap_retired) {
		int cap = cap_retired ? cap_retired * 2 : 64;
		struct row *v = realloc(retired, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		retired = v;
		cap_retired = cap;
	}
	memmove(&retired[lo + 1], &retired[lo], (nr_retired - lo) * sizeof(*retired));
	retired[lo] = *r;
	nr_retired++;
	return 0;
}

/*
 * Metrics by site (not --per-pid): an exited process's counts join those of
 * the processes of the same executable that exited before it, under a key
 * no PID has (bit 31: PIDs stay below 2^22), so that what user space keeps
 * grows with the programs seen, not with the processes: a build or batch
 * host runs millions.  Two executables whose names hash the same share one
 * such row (their exe label is the first's); the counts stay exact.
 */
static uint32_t retired_key(const struct row *r)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	size_t i;

	if (!FORMAT_METRICS(env.format) || env.per_pid)
		return r->key.tgid;
	for (i = 0; i < sizeof(r->val.exe) && r->val.exe[i]; i++)
		h = (h ^ (unsigned char)r->val.exe[i]) * 16777619u;
	/* and its cgroup's: a series per container */
	for (i = 0; i < sizeof(r->val.cgroup); i++)
		h = (h ^ (unsigned char)(r->val.cgroup >> (8 * i))) * 16777619u;
	return 0x80000000u | (h & 0x7fffffffu);
}

/*
 * Process TGID has exited: move its counts here.  Lookup and delete are one
 * operation, so not a count is lost even if the PID is already reused.
 */
int caps_fold(struct umwait_trace_bpf *obj, int nr_sites, uint32_t tgid)
{
	int fd = bpf_map__fd(obj->maps.sites), i, err;
	struct row r;

	for (i = 0; i < nr_sites; i++) {
		r.key = (struct site_key){ .tgid = tgid, .site = i };
		if (bpf_map_lookup_and_delete_elem(fd, &r.key, &r.val))
			continue;
		r.key.tgid = retired_key(&r);
		err = retire(&r);
		if (err)
			return err;
	}
	return 0;
}

/* Exit notices were lost: fold every process of the map that is gone. */
int caps_sweep(struct umwait_trace_bpf *obj, int nr_sites)
{
	struct site_key key, next, *prev = NULL;
	int fd = bpf_map__fd(obj->maps.sites), err;
	uint32_t *gone = NULL, *v;
	size_t n = 0, i;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!kill(key.tgid, 0) || errno != ESRCH)
			continue;
		if (n && gone[n - 1] == key.tgid)
			continue;
		v = realloc(gone, (n + 1) * sizeof(*gone));
		if (!v) {
			free(gone);
			return -ENOMEM;
		}
		gone = v;
		gone[n++] = key.tgid;
	}
	for (i = 0, err = 0; i < n && !err; i++)
		err = caps_fold(obj, nr_sites, gone[i]);
	free(gone);
	return err;
}

/* keep the retired rows for which KEEP(row, ARG) holds */
static void retired_filter(bool (*keep)(const struct row *r, const void *arg), const void *arg)
{
	int i, n = 0;

	for (i = 0; i < nr_retired; i++)
		if (keep(&retired[i], arg))
			retired[n++] = retired[i];
	nr_retired = n;
}

static bool outside_sites(const struct row *r, const void *arg)
{
	const int *range = arg;

	return r->key.site < (uint32_t)range[0] || r->key.site >= (uint32_t)(range[0] + range[1]);
}

/*
 * The sites [FIRST, FIRST + N) of a file no process maps any more: their
 * series leave the metrics. Text and JSON keep their counts in the totals.
 */
void caps_maps_forget(int first, int n)
{
	int range[2] = { first, n };

	if (FORMAT_METRICS(env.format))
		retired_filter(outside_sites, range);
}

static bool cgroup_there(const struct row *r, const void *arg)
{
	(void)arg;
	return cgroup_gone(r->val.cgroup) < FORGET_LOOKS;
}

/*
 * At each report: the cgroups' labels looked up again, and in the metrics
 * the series of a cgroup removed FORGET_LOOKS reports ago forgotten (the
 * tasks of a cgroup that exists are in the live rows, never forgotten)
 */
void caps_maps_forget_cgroups(void)
{
	uint64_t *gone = NULL, *v;
	int i, n = 0;

	cgroup_round(FORMAT_METRICS(env.format) && nr_retired);
	if (!FORMAT_METRICS(env.format))
		return;
	for (i = 0; i < nr_retired; i++) {
		if (cgroup_gone(retired[i].val.cgroup) < FORGET_LOOKS)
			continue;
		v = realloc(gone, (n + 1) * sizeof(*gone));
		if (!v)
			break;
		gone = v;
		gone[n++] = retired[i].val.cgroup;
	}
	if (!n)
		return;
	retired_filter(cgroup_there, NULL);
	for (i = 0; i < n; i++)
		cgroup_forget(gone[i]);
	free(gone);
}

void caps_maps_free(void)
{
	free(retired);
	retired = NULL;
	nr_retired = cap_retired = 0;
}

/* the live rows (sorted) plus the retired ones, a row per key */
static int add_retired(struct snapshot *s)
{
	struct row *v = realloc(s->rows, (s->n + nr_retired + 1) * sizeof(*v));
	int i, j, n = s->n;

	if (!v)
		return -ENOMEM;
	s->rows = v;
	for (i = 0, j = 0; i < nr_retired; i++) {
		while (j < n && row_cmp(&v[j].key, &retired[i].key) < 0)
			j++;
		if (j < n && !row_cmp(&v[j].key, &retired[i].key)) {
			site_val_add(&v[j].val, &retired[i].val, 1);
		} else {
			v[s->n++] = retired[i];
		}
	}
	qsort(v, s->n, sizeof(*v), row_cmp);
	return 0;
}

int snapshot_take(struct umwait_trace_bpf *obj, bool hist, struct snapshot *s)
{
	void *p;
	int err;

	*s = (struct snapshot){};
	s->n = read_map(bpf_map__fd(obj->maps.sites), sizeof(struct site_key),
			sizeof(struct site_val), &p, row_cmp);
	if (s->n < 0)
		return s->n;
	s->rows = p;
	err = add_retired(s);
	if (err)
		return err;
	if (hist) {
		s->nh = read_map(bpf_map__fd(obj->maps.hists), sizeof(struct hist_key),
				 sizeof(struct hist), &p, hrow_cmp);
		if (s->nh < 0)
			return s->nh;
		s->hrows = p;
	}
	s->no = read_map(bpf_map__fd(obj->maps.ohists), sizeof(struct hist_key),
			 sizeof(struct ohist), &p, hrow_cmp);
	if (s->no < 0)
		return s->no;
	s->orows = p;
	return 0;
}

void snapshot_drop(struct snapshot *s)
{
	free(s->rows);
	free(s->hrows);
	free(s->orows);
	*s = (struct snapshot){};
}

/* CUR becomes CUR - PREV (rows that moved), PREV the raw CUR for the next interval */
int snapshot_interval(struct snapshot *cur, struct snapshot *prev)
{
	struct snapshot keep = { .n = cur->n, .nh = cur->nh, .no = cur->no };

	keep.rows = malloc(cur->n * sizeof(*cur->rows) + 1);
	keep.hrows = malloc(cur->nh * sizeof(*cur->hrows) + 1);
	keep.orows = malloc(cur->no * sizeof(*cur->orows) + 1);
	if (!keep.rows || !keep.hrows || !keep.orows) {
		snapshot_drop(&keep);
		return -ENOMEM;
	}
	memcpy(keep.rows, cur->rows, cur->n * sizeof(*cur->rows));
	memcpy(keep.hrows, cur->hrows, cur->nh * sizeof(*cur->hrows));
	memcpy(keep.orows, cur->orows, cur->no * sizeof(*cur->orows));
	cur->n = diff_rows(cur->rows, cur->n, prev->rows, prev->n);
	cur->nh = diff_slot_rows(cur->hrows, cur->nh, prev->hrows, prev->nh, sizeof(struct hrow),
				 MAX_SLOTS);
	cur->no = diff_slot_rows(cur->orows, cur->no, prev->orows, prev->no, sizeof(struct orow),
				 OHIST_SLOTS);
	snapshot_drop(prev);
	*prev = keep;
	return 0;
}

/* CUR keeps only the rows with something in them */
void snapshot_total(struct snapshot *cur)
{
	cur->n = diff_rows(cur->rows, cur->n, NULL, 0);
	cur->nh = diff_slot_rows(cur->hrows, cur->nh, NULL, 0, sizeof(struct hrow), MAX_SLOTS);
	cur->no = diff_slot_rows(cur->orows, cur->no, NULL, 0, sizeof(struct orow), OHIST_SLOTS);
}

void caps_extra_read(struct umwait_trace_bpf *obj, struct caps_extra *x)
{
	x->unpaired = obj->bss->unpaired;
	/* ended never (unended) or not yet (inflight); both only with --hist-perturbing */
	x->unended = obj->bss->unended;
	x->inflight = obj->bss->inflight;
	x->dropped = obj->bss->dropped_counts + obj->bss->dropped_starts +
		     obj->bss->dropped_jumps;
	x->anon = anon_exec_regions;
}
