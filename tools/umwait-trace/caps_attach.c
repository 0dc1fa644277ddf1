// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: find the sites (scan.c) and put the uprobes on them.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "umwait-trace.skel.h"
#include "caps.h"
#include "scan.h"
#include "ut.h"

static struct bpf_link **links;
static int nr_links;

int caps_scan_targets(struct scan *scan)
{
	int i, n, rc = 0;

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

static int attach_one(struct bpf_program *prog, const struct scan *scan, const struct site *s,
		      uint64_t cookie, uint64_t offset)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	struct bpf_link *link;

	link = bpf_program__attach_uprobe_opts(prog, env.pid ? env.pid : -1,
					       scan->files[s->file].attach, offset, &uo);
	if (!link) {
		warn_msg("cannot attach to %s offset 0x%llx: %s", scan->files[s->file].path,
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

/*
 * The branches that jump to the instruction after site I, each with a probe
 * that tells whether it is taken; the number that could not be probed.
 */
static int attach_branches(struct umwait_trace_bpf *obj, const struct scan *scan, int i)
{
	const struct site *s = &scan->sites[i];
	int b, failed = 0;

	for (b = s->branch; b < s->branch + s->nr_branches; b++) {
		const struct branch *br = &scan->branches[b];
		uint64_t cookie = COOKIE_MAKE(i, br->kind, br->cc) | (br->ecx ? COOKIE_ECX : 0);

		failed += attach_one(obj->progs.jump_to_next, scan, s, cookie, br->offset) < 0;
	}
	return failed;
}

/*
 * Attach every site; the number attached, -ESRCH if the -p target exited,
 * -ESTALE if a file changed since it was scanned (said on stderr).
 *
 * Per site, in this order: the probes on the branches that jump to the
 * instruction after it, so that no jump is ever counted as a wait; the
 * probe on that instruction, which counts (if it fails, the branch probes
 * go again); with --hist, the probe on the site itself, which only times.
 */
int caps_attach(struct umwait_trace_bpf *obj, struct scan *scan, int *nr_files)
{
	int i, attached = 0, timed = 0, first;
	bool *file_used;

	if (check_unchanged(scan))
		return -ESTALE;
	links = calloc(2 * scan->nr_sites + scan->nr_branches, sizeof(*links));
	file_used = calloc(scan->nr_files, sizeof(*file_used));
	if (!links || !file_used) {
		free(file_used);
		return -ENOMEM;
	}
	for (i = 0; i < scan->nr_sites; i++) {
		struct site *s = &scan->sites[i];
		const char *path = scan->files[s->file].path, *insn = insn_name(s->insn);
		int blind;

		/* checked first: libbpf's own warnings would precede ours */
		if (target_gone()) {
			attached = -ESRCH;
			break;
		}
		if (!s->next_ok) {
			warn_msg("%s 0x%llx (%s): the kernel cannot uprobe the instruction after "
				 "this %s: not counted", path, (unsigned long long)s->offset,
				 s->symbol, insn);
			continue;
		}
		first = nr_links;
		blind = s->nr_blind + attach_branches(obj, scan, i);
		if (attach_one(obj->progs.wait_exit, scan, s, i, s->next_offset)) {
			while (nr_links > first)
				bpf_link__destroy(links[--nr_links]);
			continue;
		}
		s->exact = !blind && !s->next_addr_taken;
		if (blind)
			warn_msg("%s 0x%llx (%s): %d jump%s to the instruction after this %s cannot "
				 "be told apart from its waits: its counts include them", path,
				 (unsigned long long)s->offset, s->symbol, blind,
				 blind == 1 ? "" : "s", insn);
		if (s->next_addr_taken)
			warn_msg("%s 0x%llx (%s): code loads the address of the instruction after "
				 "this %s: an indirect jump there would count as a wait", path,
				 (unsigned long long)s->offset, s->symbol, insn);
		if (env.hist) {
			if (s->site_ok && !attach_one(obj->progs.wait_enter, scan, s, i, s->offset))
				timed++;
			else
				warn_msg("%s 0x%llx: waits counted but not timed", path,
					 (unsigned long long)s->offset);
		}
		attached++;
		file_used[s->file] = true;
	}
	if (timed)
		warn_msg("--hist probes each TPAUSE/UMWAIT itself to time it: a wait starts "
			 "later than the program meant, short ones after their deadline");
	*nr_files = 0;
	for (i = 0; i < scan->nr_files; i++)
		*nr_files += file_used[i];
	free(file_used);
	return attached;
}

void caps_detach(void)
{
	while (nr_links)
		bpf_link__destroy(links[--nr_links]);
	free(links);
	links = NULL;
}
