// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: snapshots of the BPF maps.  The BPF counters only ever
 * grow: an interval is the difference of two snapshots, so no count is lost
 * between a read and a reset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umwait-trace.skel.h"
#include "caps.h"

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

int snapshot_take(struct umwait_trace_bpf *obj, bool hist, struct snapshot *s)
{
	void *p;

	*s = (struct snapshot){};
	s->n = read_map(bpf_map__fd(obj->maps.sites), sizeof(struct site_key),
			sizeof(struct site_val), &p, row_cmp);
	if (s->n < 0)
		return s->n;
	s->rows = p;
	if (hist) {
		s->nh = read_map(bpf_map__fd(obj->maps.hists), sizeof(struct hist_key),
				 sizeof(struct hist), &p, hrow_cmp);
		if (s->nh < 0)
			return s->nh;
		s->hrows = p;
	}
	return 0;
}

void snapshot_drop(struct snapshot *s)
{
	free(s->rows);
	free(s->hrows);
	*s = (struct snapshot){};
}

/* CUR becomes CUR - PREV (rows that moved), PREV the raw CUR for the next interval */
int snapshot_interval(struct snapshot *cur, struct snapshot *prev)
{
	struct snapshot keep = { .n = cur->n, .nh = cur->nh };

	keep.rows = malloc(cur->n * sizeof(*cur->rows) + 1);
	keep.hrows = malloc(cur->nh * sizeof(*cur->hrows) + 1);
	if (!keep.rows || !keep.hrows) {
		snapshot_drop(&keep);
		return -ENOMEM;
	}
	memcpy(keep.rows, cur->rows, cur->n * sizeof(*cur->rows));
	memcpy(keep.hrows, cur->hrows, cur->nh * sizeof(*cur->hrows));
	cur->n = diff_rows(cur->rows, cur->n, prev->rows, prev->n);
	cur->nh = diff_hrows(cur->hrows, cur->nh, prev->hrows, prev->nh);
	snapshot_drop(prev);
	*prev = keep;
	return 0;
}

/* CUR keeps only the rows with something in them */
void snapshot_total(struct snapshot *cur)
{
	cur->n = diff_rows(cur->rows, cur->n, NULL, 0);
	cur->nh = diff_hrows(cur->hrows, cur->nh, NULL, 0);
}

/* waits whose start a site probe saw and whose end no probe did */
static uint64_t unended(struct umwait_trace_bpf *obj)
{
	int fd = bpf_map__fd(obj->maps.start);
	uint64_t n = obj->bss->unended;
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

void caps_extra_read(struct umwait_trace_bpf *obj, struct caps_extra *x)
{
	x->unpaired = obj->bss->unpaired;
	x->unended = unended(obj);
	x->dropped = obj->bss->dropped_counts + obj->bss->dropped_starts;
}
