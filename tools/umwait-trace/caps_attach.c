// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: find the sites (scan.c, scan_proc.c) and put the uprobes
 * on them, a file at a time, through the descriptor the scan read it by.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umwait-trace.h"
#include "umwait-trace.skel.h"
#include "caps.h"
#include "scan_int.h"
#include "ut.h"

/* the probes placed on each file (scan.files), so that a file's can go alone */
struct file_links {
	struct bpf_link **v;
	int n, cap;
};

static struct file_links *flinks;
static int cap_flinks;

/* room in flinks for FILE, the new entries empty */
static bool flinks_room(int file)
{
	struct file_links *v;
	int cap = cap_flinks ? cap_flinks : 64;

	if (file < cap_flinks)
		return true;
	while (cap <= file)
		cap *= 2;
	v = realloc(flinks, cap * sizeof(*v));
	if (!v)
		return false;
	memset(v + cap_flinks, 0, (cap - cap_flinks) * sizeof(*v));
	flinks = v;
	cap_flinks = cap;
	return true;
}

/* -p TID of a thread that is not the leader: its process; -t TID: that thread's */
static int resolve_target(void)
{
	pid_t tgid;

	if (env.tid) {
		tgid = scan_tgid(env.tid);
		if (tgid < 0) {
			die_msg("no thread with TID %d", env.tid);
			return EXIT_TROUBLE;
		}
		env.pid = tgid;
		fprintf(stderr, "%s: counting thread %d of process %d alone\n", UT_NAME, env.tid, tgid);
		return 0;
	}
	if (!env.pid)
		return 0;
	tgid = scan_tgid(env.pid);
	if (tgid > 0 && tgid != env.pid) {
		fprintf(stderr, "%s: %d is a thread of process %d: tracing the process, all its threads "
			"(-t %d counts that thread alone)\n", UT_NAME, env.pid, tgid, env.pid);
		env.pid = tgid;
	}
	return 0;
}

int caps_scan_targets(struct scan *scan)
{
	int i, n, rc = 0;

	scan->exact_mode = env.exact;
	/* --all: whatever runs; a host with no site yet is fine, more may come */
	if (env.all) {
		scan->quiet = true;
		n = look_run(scan, 0, env.cgroup);
		scan->quiet = false;
		if (n < 0)
			die_msg("cannot read the processes' mappings (BPF task_vma iterator): %s",
				strerror(-n));
		return n < 0 ? EXIT_TROUBLE : 0;
	}
	if (resolve_target())
		return EXIT_TROUBLE;
	if (env.pid && kill(env.pid, 0) && errno == ESRCH) {
		die_msg("no process with PID %d", env.pid);
		return EXIT_TROUBLE;
	}
	if (!env.nr_files) {
		/* a process with no site yet may load one (dlopen): caps looks again each second */
		n = look_run(scan, env.pid, NULL);
		if (n < 0) {
			die_msg("cannot read the mappings of process %d (BPF task_vma iterator): %s",
				env.pid, strerror(-n));
			return EXIT_TROUBLE;
		}
		if (!scan->nr_sites)
			fprintf(stderr, "%s: process %d maps no TPAUSE/UMWAIT site yet: its new mappings "
				"are looked at each second\n", UT_NAME, env.pid);
		return 0;
	}
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

/*
 * One probe, through the scan's own descriptor of the file: the kernel
 * binds the inode /proc/self/fd/N names, the very one scanned, whatever its
 * paths name by now.  0, or a negative errno (not said).
 */
static int attach_one(struct bpf_program *prog, const struct scan *scan, int file,
		      uint64_t cookie, uint64_t offset)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	struct file_links *fl = &flinks[file];
	struct bpf_link *link;
	char path[32];
	int err;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", scan->files[file].fd);
	link = bpf_program__attach_uprobe_opts(prog, env.pid ? env.pid : -1, path, offset, &uo);
	if (!link)
		return -errno;
	if (!scan_grow((void **)&fl->v, &fl->cap, fl->n, sizeof(*fl->v))) {
		err = -ENOMEM;
		bpf_link__destroy(link);
		return err;
	}
	fl->v[fl->n++] = link;
	return 0;
}

/* The -p target has exited: there is nothing left to probe */
static bool target_gone(void)
{
	return env.pid && kill(env.pid, 0) && errno == ESRCH;
}

/* A file replaced since it was scanned: its path now names another inode */
static int check_unchanged(const struct scan *scan)
{
	int i, fd;

	for (i = 0; i < scan->nr_files; i++) {
		const struct scan_file *f = &scan->files[i];
		dev_t dev;
		ino_t ino;

		if (!f->nr_sites || f->mapped)
			continue;
		fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			die_msg("cannot open %s: %s: raise the open-file limit (ulimit -n)",
				f->path, strerror(errno));
			return -errno;
		}
		if (fd < 0) {
			die_msg("%s: gone since it was scanned (%s): nothing probed", f->path,
				strerror(errno));
			return -ESTALE;
		}
		if (scan_identity(fd, &dev, &ino) || dev != f->dev || ino != f->ino) {
			close(fd);
			die_msg("%s: not the file that was scanned (device or inode changed): "
				"nothing probed", f->path);
			return -ESTALE;
		}
		close(fd);
	}
	return 0;
}
/* One place caps probes: its cookie holds every role it has there */
struct probe {
	uint64_t offset;
	uint64_t cookie;
};

static int probe_cmp(const void *a, const void *b)
{
	const struct probe *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The probes FILE's sites need, one per instruction, roles merged; their number */
static int plan_probes(const struct scan *scan, int file, struct probe **out)
{
	const struct scan_file *f = &scan->files[file];
	struct probe *v = calloc(scan->nr_sites + scan->nr_arrivals + 1, sizeof(*v));
	int i, a, n = 0, m = 0;

	if (!v)
		return -ENOMEM;
	for (i = f->first_site; i < f->first_site + f->nr_sites; i++) {
		const struct site *s = &scan->sites[i];

		if (!s->probed)
			continue;
		v[n++] = (struct probe){ s->next_offset, COOKIE_EXIT_MAKE(i) };
		for (a = s->arrival; a < s->arrival + s->nr_arrivals; a++) {
			const struct arrival *ar = &scan->arrivals[a];

			if (ar->how == ARRIVAL_PROBED)
				v[n++] = (struct probe){ ar->offset,
							 COOKIE_JUMP_MAKE(i, ar->kind, ar->cc) |
							 (ar->ecx ? COOKIE_ECX : 0) };
		}
	}
	qsort(v, n, sizeof(*v), probe_cmp);
	for (i = 0; i < n; i++) {
		if (m && v[m - 1].offset == v[i].offset)
			v[m - 1].cookie |= v[i].cookie;
		else
			v[m++] = v[i];
	}
	*out = v;
	return m;
}

/* A probe that could not be placed: what its sites lose */
static void probe_failed(struct scan *scan, int file, const struct probe *p, int err)
{
	uint32_t e = COOKIE_EXIT(p->cookie), j = COOKIE_JUMP(p->cookie);

	warn_msg("cannot attach to %s offset 0x%llx: %s", scan->files[file].path,
		 (unsigned long long)p->offset, strerror(-err));
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

/* the kernel refuses to probe that instruction: trying again would not help */
static bool refused(int err)
{
	return err == -EINVAL || err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */;
}

static void detach_file(int file)
{
	struct file_links *fl = &flinks[file];

	while (fl->n)
		bpf_link__destroy(fl->v[--fl->n]);
	free(fl->v);
	*fl = (struct file_links){};
}

/* What a file's sites are counted as, said once per site when its probes are first placed */
static void say_sites(struct scan *scan, int file)
{
	const struct scan_file *f = &scan->files[file];
	int i;

	for (i = f->first_site; i < f->first_site + f->nr_sites; i++) {
		const struct site *s = &scan->sites[i];
		const char *sym = s->symbol[0] ? s->symbol : "-";

		if (!s->probed) {
			warn_msg("%s 0x%llx (%s): %s", f->path, (unsigned long long)s->offset, sym,
				 s->why[0] ? s->why : "not counted: its probe could not be placed");
			continue;
		}
		if (!s->exact)
			warn_msg("%s 0x%llx (%s): %s%s", f->path, (unsigned long long)s->offset, sym,
				 s->exact_capped ? "waits inexact, capped exact: " : "inexact: ",
				 s->why);
		if (s->perturbs)
			warn_msg("%s 0x%llx (%s): --exact probes a branch on this %s's own path: "
				 "each such wait starts later than the program meant", f->path,
				 (unsigned long long)s->offset, sym, insn_name(s->insn));
	}
}

/*
 * Place FILE's probes through its descriptor; the number of its sites
 * counted, -ESRCH if the -p target exited (FIRST: caps is starting), or
 * -EAGAIN if a file found in the mappings must be tried again.  A probe
 * the kernel refuses, or any probe of a FILE argument, costs only its site
 * (said).  Any other failure of a mapped file's probe (a descriptor limit,
 * the memory for it) removes all its probes: a file is counted whole or
 * not at all, and tried again at the next look.
 */
static int attach_file(struct umwait_trace_bpf *obj, struct scan *scan, int file, bool first)
{
	struct scan_file *f = &scan->files[file];
	struct probe *probes = NULL;
	static bool timed_said;
	int i, n, err, attached = 0;

	if (!flinks_room(file))
		return -ENOMEM;
	n = plan_probes(scan, file, &probes);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		/* checked first: libbpf's own warnings would precede ours */
		if (first && target_gone()) {
			free(probes);
			return -ESRCH;
		}
		err = attach_one(obj->progs.on_probe, scan, file, probes[i].cookie, probes[i].offset);
		if (!err)
			continue;
		if (f->mapped && !refused(err)) {
			detach_file(file);
			free(probes);
			if (f->state != FILE_RETRY)
				warn_msg("%s: its probes could not be placed (%s): tried again at each look",
					 f->path, strerror(-err));
			f->state = FILE_RETRY;
			scan_close(scan, file);
			return -EAGAIN;
		}
		probe_failed(scan, file, &probes[i], err);
	}
	free(probes);
	if (f->state == FILE_RETRY)
		warn_msg("%s: its probes are placed now", f->path);
	else
		say_sites(scan, file);
	for (i = f->first_site; i < f->first_site + f->nr_sites; i++) {
		const struct site *s = &scan->sites[i];

		if (!s->probed)
			continue;
		attached++;
		if (!env.hist)
			continue;
		if (s->site_ok && !attach_one(obj->progs.wait_enter, scan, file, i, s->offset)) {
			if (!timed_said)
				warn_msg("--hist-perturbing probes each TPAUSE/UMWAIT itself to time it: a "
					 "wait starts later than the program meant, short ones after "
					 "their deadline");
			timed_said = true;
		} else {
			warn_msg("%s 0x%llx: waits counted but not timed", f->path,
				 (unsigned long long)s->offset);
		}
	}
	f->state = FILE_ATTACHED;
	scan_close(scan, file);
	return attached;
}

/*
 * Place the probes of every file whose descriptor is open and whose probes
 * are not placed yet: new files, and files to try again that a look found
 * mapped.  The number of sites counted among them (and in *NR_FILES the
 * files that have one), -ESRCH if the -p target exited while caps started
 * (FIRST), -ESTALE if a FILE argument was replaced since it was scanned
 * (said on stderr).  Each site that is not counted, or not exactly, is said
 * once, with why.  Nothing counts before the first probes are in place
 * (armed, caps.c); later ones join as files come.
 */
int caps_attach(struct umwait_trace_bpf *obj, struct scan *scan, bool first, int *nr_files)
{
	int i, n, attached = 0;

	*nr_files = 0;
	if (first && check_unchanged(scan))
		return -ESTALE;
	if (scan->nr_sites > COOKIE_SITES_MAX) {
		die_msg("%d sites: more than caps can tell apart (%d)", scan->nr_sites,
			COOKIE_SITES_MAX);
		return -E2BIG;
	}
	for (i = 0; i < scan->nr_files; i++) {
		const struct scan_file *f = &scan->files[i];

		if (f->fd < 0 || (f->state != FILE_SCANNED && f->state != FILE_RETRY))
			continue;
		n = attach_file(obj, scan, i, first);
		if (n == -ESRCH || n == -ENOMEM)
			return n;
		if (n > 0) {
			attached += n;
			(*nr_files)++;
		}
	}
	return attached;
}

/*
 * FILE is mapped by no process any more: its probes go, and what the BPF
 * maps and user space keep of its sites (its series)
 */
void caps_forget(struct umwait_trace_bpf *obj, struct scan *scan, int file)
{
	const struct scan_file *f = &scan->files[file];
	int i, k;

	if (file < cap_flinks)
		detach_file(file);
	for (i = f->first_site; i < f->first_site + f->nr_sites; i++)
		for (k = HIST_TIME; k <= HIST_LATE; k++) {
			struct hist_key key = { .site = i, .kind = k };

			bpf_map_delete_elem(bpf_map__fd(obj->maps.ohists), &key);
			bpf_map_delete_elem(bpf_map__fd(obj->maps.hists), &key);
		}
	caps_maps_forget(f->first_site, f->nr_sites);
	scan_forget(scan, file);
}

void caps_detach(void)
{
	int i;

	for (i = 0; i < cap_flinks; i++)
		detach_file(i);
	free(flinks);
	flinks = NULL;
	cap_flinks = 0;
}
