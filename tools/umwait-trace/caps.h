/* SPDX-License-Identifier: GPL-2.0 */
/*
 * umwait-trace caps: what its three parts share.  caps_maps.c reads the BPF
 * maps into snapshots, caps_print.c renders them (text, JSON or OpenMetrics), and
 * caps_attach.c scans the targets and puts the uprobes on them; caps.c is the
 * command that runs the three.
 */
#ifndef UT_CAPS_H
#define UT_CAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <linux/types.h>

#include "umwait-trace.h"

struct umwait_trace_bpf;
struct residency;
struct scan;

/* one (process, site) counter and one (site, CF) histogram, as the maps hold them */
struct row {
	struct site_key key;
	struct site_val val;
};

struct hrow {
	struct hist_key key;
	struct hist val;
};

/* one (site, HIST_DENIED or HIST_LATE) outcome histogram */
struct orow {
	struct hist_key key;
	struct ohist val;
};

/* every row of the maps at one moment, sorted by key */
struct snapshot {
	struct row *rows;
	int n;
	struct hrow *hrows;
	int nh;
	struct orow *orows;
	int no;
};

/* what the counts leave out, since attach */
struct caps_extra {
	uint64_t unpaired;
	uint64_t unended;	/* ended never */
	uint64_t inflight;	/* not ended yet */
	uint64_t dropped;
	int anon;		/* anonymous executable mappings at the last look: not traced */
};

/* caps.c: what the last look found in anonymous executable mappings */
extern int anon_exec_regions;

enum block { BLOCK_INTERVAL, BLOCK_TOTAL };

/* caps_maps.c */
void site_val_add(struct site_val *d, const struct site_val *s, int sign);
int snapshot_take(struct umwait_trace_bpf *obj, bool hist, struct snapshot *s);
void snapshot_drop(struct snapshot *s);
int snapshot_interval(struct snapshot *cur, struct snapshot *prev);
void snapshot_total(struct snapshot *cur);
void caps_extra_read(struct umwait_trace_bpf *obj, struct caps_extra *x);
int caps_fold(struct umwait_trace_bpf *obj, int nr_sites, uint32_t tgid);
int caps_sweep(struct umwait_trace_bpf *obj, int nr_sites);
void caps_maps_forget(int first_site, int nr_sites);
void caps_maps_forget_cgroups(void);
void caps_maps_free(void);

/* caps_tsc.c */
int tsc_cal_update(struct umwait_trace_bpf *obj);
double tsc_cal_error(void);
uint64_t ohist_lower(int slot);
uint64_t ohist_upper(int slot);

/* caps_print.c */
void caps_print(enum block kind, double secs, const struct scan *scan,
		const struct snapshot *s, const struct caps_extra *x,
		const struct residency *res);
int caps_openmetrics(const struct scan *scan, const struct snapshot *s,
		     const struct caps_extra *x, const struct residency *res, time_t start);

/* caps_look.c: the files processes map, as the kernel has them */
int look_open(void);
void look_close(void);
int look_identify(int fd, dev_t *dev, ino_t *ino);
int look_run(struct scan *s, pid_t tgid, const char *cgroup);

/* caps_attach.c */
int caps_scan_targets(struct scan *scan);
int caps_attach(struct umwait_trace_bpf *obj, struct scan *scan, bool first, int *nr_files);
void caps_forget(struct umwait_trace_bpf *obj, struct scan *scan, int file);
void caps_detach(void);

#endif /* UT_CAPS_H */
