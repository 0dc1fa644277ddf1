/* SPDX-License-Identifier: GPL-2.0 */
/*
 * umwait-trace caps: cgroup v2, for --cgroup PATH (libbpf-tools' convention:
 * a cgroup v2 directory, its tasks and its descendants') and for the label
 * that tells containers apart: the path of a series' cgroup under the
 * cgroup v2 mount, from the ID the BPF side notes (bpf_get_current_cgroup_id).
 */
#ifndef UT_CGROUP_H
#define UT_CGROUP_H

#include <stdbool.h>
#include <stdint.h>

/* A descriptor of the cgroup v2 directory PATH, or -1 (said) */
int cgroup_open(const char *path);

/*
 * The label of cgroup ID: its path under the cgroup v2 mount ("/a/b"), or
 * NULL for the root cgroup (no label: a host without containers keeps its
 * series as they were).  A cgroup removed before caps could see it is
 * "id:ID".  Once found, a cgroup's label stays what it was.
 */
const char *cgroup_label(uint64_t id);

/*
 * At each report: the cgroups that exist are looked up again (one walk of
 * the mount, only when a label was asked for an ID not seen yet or GONE
 * needs it), and each known cgroup counts the reports it has been gone.
 */
void cgroup_round(bool gone);

/* Reports in a row that found cgroup ID removed (0: it exists, or never known) */
int cgroup_gone(uint64_t id);

/* ID's label is no longer needed (its series are forgotten) */
void cgroup_forget(uint64_t id);

void cgroup_free(void);

#endif /* UT_CGROUP_H */
