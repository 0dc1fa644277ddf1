// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: find the sites (scan.c) and put the uprobes on them.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "umwait-trace.h"
#include "umwait-trace.skel.h"
#include "caps.h"
#include "scan_int.h"
#include "ut.h"

static struct bpf_link **links;
static int nr_links, cap_links;

int caps_scan_targets(struct scan *scan)
{
	int i, n, rc = 0;

	scan->exact_mode = env.exact;
	/* --all: whatever runs; a host with no site yet is fine, more may come */
	if (env.all)
		return scan_all(scan) < 0 ? EXIT_TROUBLE : 0;
	if (env.pid && kill(env.pid, 0) && errno == ESRCH) {
		die_msg("no process with PID %d", env.pid);
		return EXIT_TROUBLE;
	}
	if (!env.nr_files && scan_pid(scan, env.pid) < 0)
		return EXIT_TROUBLE;
	for (i = 0; i < env.nr_files; i++) {
		n = scan_file_arg(scan, env.files[i]);
		if (n < 0)
			rc = EXIT_TROUBLE;
	}
	if (rc)
		return rc;
	if (!scan->nr_sites) {
		fprintf(stderr, "%s: no TPAUSE/UMWAIT site in:", UT_NAME);
		for (i = 0; i < scan->nr_files; i++)
			fprintf(stderr, " %s", scan->files[i].path);
		fputc('\n', stderr);
		return EXIT_TROUBLE;
	}
	return 0;
}

static int attach_one(struct bpf_program *prog, const struct scan *scan, int file,
		      uint64_t cookie, uint64_t offset)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	struct bpf_link *link;

	link = bpf_program__attach_uprobe_opts(prog, env.pid ? env.pid : -1,
					       scan->files[file].attach, offset, &uo);
	if (!link) {
		warn_msg("cannot attach to %s offset 0x%llx: %s", scan->files[file].path,
			 (unsigned long long)offset, strerror(errno));
		return -1;
	}
	if (!scan_grow((void **)&links, &cap_links, nr_links, sizeof(*links))) {
		bpf_link__destroy(link);
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

/* A file replaced since it was scanned would get probes at offsets meant for another */
static int check_unchanged(const struct scan *scan)
{
	int i, err;

	for (i = 0; i < scan->nr_files; i++) {
		if (!scan->files[i].nr_sites)
			continue;
		err = scan_changed(scan, i);
		if (!err)
			continue;
		if (err < 0)
			die_msg("%s: gone since it was scanned (%s): nothing probed",
				scan->files[i].path, strerror(-err));
		else
			die_msg("%s: not the file that was scanned (device or inode changed): "
				"nothing probed", scan->files[i].path);
		return -ESTALE;
	}
	return 0;
}

/* One place caps probes: its cookie holds every role it has there */
struct probe {
	int file;
	uint64_t offset;
	uint64_t cookie;
};

static int probe_cmp(const void *a, const void *b)
{
	const struct probe *x = a, *y = b;

	if (x->file != y->file)
		return x->file - y->file;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The probes the sites from FIRST on need, one per instruction, roles merged; their number */
static int plan_probes(const struct scan *scan, int first, struct probe **out)
{
	struct probe *v = calloc(scan->nr_sites + scan->nr_arrivals + 1, sizeof(*v));
	int i, a, n = 0, m = 0;

	if (!v)
		return -ENOMEM;
	for (i = first; i < scan->nr_sites; i++) {
		const struct site *s = &scan->sites[i];

		if (!s->probed)
			continue;
		v[n++] = (struct probe){ s->file, s->next_offset, COOKIE_EXIT_MAKE(i) };
		for (a = s->arrival; a < s->arrival + s->nr_arrivals; a++) {
			const struct arrival *ar = &scan->arrivals[a];

			if (ar->how == ARRIVAL_PROBED)
				v[n++] = (struct probe){ s->file, ar->offset,
							 COOKIE_JUMP_MAKE(i, ar->kind, ar->cc) |
							 (ar->ecx ? COOKIE_ECX : 0) };
		}
	}
	qsort(v, n, sizeof(*v), probe_cmp);
	for (i = 0; i < n; i++) {
		if (m && v[m - 1].file == v[i].file && v[m - 1].offset == v[i].offset)
			v[m - 1].cookie |= v[i].cookie;
		else
			v[m++] = v[i];
	}
	*out = v;
	return m;
}

/* A probe that could not be placed: what its sites lose */
static void probe_failed(struct scan *scan, const struct probe *p)
{
	uint32_t e = COOKIE_EXIT(p->cookie), j = COOKIE_JUMP(p->cookie);

	if (e) {
		scan->sites[e - 1].probed = false;
		scan->sites[e - 1].exact = scan->sites[e - 1].exact_capped = false;
	}
	if (j) {
		struct site *s = &scan->sites[j - 1];

		s->exact = s->exact_capped = false;
		warn_msg("%s 0x%llx (%s): a jump to the instruction after this %s could not be "
			 "probed: its counts include that jump's arrivals",
			 scan->files[s->file].path, (unsigned long long)s->offset,
			 s->symbol[0] ? s->symbol : "-", insn_name(s->insn));
	}
}

/*
 * Attach every probe of the sites from FIRST on; the number of sites
 * counted, -ESRCH if the -p target exited, -ESTALE if a file changed since
 * it was scanned (said on stderr). Each site that is not counted, or not
 * exactly, is said once, with why. Nothing counts before the first probes
 * are in place (armed, caps.c); with --all, later ones join as files come.
 */
int caps_attach(struct umwait_trace_bpf *obj, struct scan *scan, int first, int *nr_files)
{
	struct probe *probes = NULL;
	int i, n, attached = 0, timed = 0;
	bool *file_used;

	/* --all: a file replaced since the scan is no longer mapped as scanned */
	if (!env.all && check_unchanged(scan))
		return -ESTALE;
	if (scan->nr_sites > COOKIE_SITES_MAX) {
		die_msg("%d sites: more than caps can tell apart (%d)", scan->nr_sites,
			COOKIE_SITES_MAX);
		return -E2BIG;
	}
	n = plan_probes(scan, first, &probes);
	file_used = calloc(scan->nr_files + 1, sizeof(*file_used));
	if (n < 0 || !file_used) {
		free(probes);
		free(file_used);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		/* checked first: libbpf's own warnings would precede ours */
		if (target_gone()) {
			attached = -ESRCH;
			goto out;
		}
		if (attach_one(obj->progs.on_probe, scan, probes[i].file, probes[i].cookie,
			       probes[i].offset))
			probe_failed(scan, &probes[i]);
	}
	for (i = first; i < scan->nr_sites; i++) {
		struct site *s = &scan->sites[i];
		const char *path = scan->files[s->file].path, *sym = s->symbol[0] ? s->symbol : "-";

		if (!s->probed) {
			warn_msg("%s 0x%llx (%s): %s", path, (unsigned long long)s->offset, sym,
				 s->why[0] ? s->why : "not counted: its probe could not be placed");
			continue;
		}
		if (!s->exact)
			warn_msg("%s 0x%llx (%s): %s%s", path, (unsigned long long)s->offset, sym,
				 s->exact_capped ? "waits inexact, capped exact: " : "inexact: ",
				 s->why);
		if (s->perturbs)
			warn_msg("%s 0x%llx (%s): --exact probes a branch on this %s's own path: "
				 "each such wait starts later than the program meant", path,
				 (unsigned long long)s->offset, sym, insn_name(s->insn));
		if (env.hist) {
			if (s->site_ok && !attach_one(obj->progs.wait_enter, scan, s->file, i, s->offset))
				timed++;
			else
				warn_msg("%s 0x%llx: waits counted but not timed", path,
					 (unsigned long long)s->offset);
		}
		attached++;
		file_used[s->file] = true;
	}
	if (timed)
		warn_msg("--hist-perturbing probes each TPAUSE/UMWAIT itself to time it: a wait starts "
			 "later than the program meant, short ones after their deadline");
out:
	*nr_files = 0;
	for (i = 0; i < scan->nr_files; i++)
		*nr_files += file_used[i];
	free(file_used);
	free(probes);
	return attached;
}
void caps_detach(void)
{
	while (nr_links)
		bpf_link__destroy(links[--nr_links]);
	free(links);
	links = NULL;
	cap_links = 0;
}
