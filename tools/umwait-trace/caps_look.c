// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: its looks at the processes' mappings (--all, -p, -t),
 * and the identity of every file it scans.
 *
 * A file is the inode the kernel probes.  The kernel's own VMAs say which
 * that is for every executable mapping (bpf/umwait-files.bpf.c, an iterator
 * over every task's VMAs, or one process's): the mapping's file's inode, on
 * overlayfs the layer's, the same in every container that shares the
 * image, whatever /proc/PID/maps prints (6.12 prints the overlay's).  A
 * file known by it is skipped without being opened.  A new one is opened
 * through /proc/PID/map_files/ (or its path in the process's root, where
 * that is refused), and scanned only if what was opened is that very
 * inode: caps maps a page of each descriptor and asks the iterator about
 * its own mappings (identify()), a look's new files all at once.  caps
 * attaches through that descriptor (/proc/self/fd/N).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umwait-trace.h"
#include "umwait-files.skel.h"
#include "caps.h"
#include "scan_int.h"
#include "ut.h"

static struct umwait_files_bpf *files_obj;

int look_open(void)
{
	int err;

	files_obj = umwait_files_bpf__open();
	if (!files_obj) {
		die_msg("cannot open the BPF iterator over the processes' mappings: %s", strerror(errno));
		return -1;
	}
	err = umwait_files_bpf__load(files_obj);
	if (err) {
		die_msg("cannot load the BPF iterator over the processes' mappings (task_vma, Linux "
			"5.13): %s", strerror(-err));
		umwait_files_bpf__destroy(files_obj);
		files_obj = NULL;
		return -1;
	}
	return 0;
}

void look_close(void)
{
	umwait_files_bpf__destroy(files_obj);
	files_obj = NULL;
}

/*
 * The executable mappings of TGID (0: of every process; ANY: not only the
 * executable ones), as the kernel has them: an array in *OUT (free it) and
 * its length, or a negative errno
 */
static int vmas(pid_t tgid, bool any, struct file_vma **out)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = { .task.pid = tgid };
	struct bpf_link *link = NULL;
	struct file_vma *v = NULL;
	size_t have = 0, cap = 0;
	ssize_t n;
	int fd, err = 0;

	files_obj->bss->iter_tgid = tgid;
	files_obj->bss->iter_any = any;
	/* one process's VMAs alone where the kernel can (6.1); else all, filtered */
	if (tgid) {
		opts.link_info = &linfo;
		opts.link_info_len = sizeof(linfo);
		link = bpf_program__attach_iter(files_obj->progs.file_vmas, &opts);
	}
	if (!link)
		link = bpf_program__attach_iter(files_obj->progs.file_vmas, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		bpf_link__destroy(link);
		return err;
	}
	for (;;) {
		if (cap - have < 64 * sizeof(*v)) {
			void *p = realloc(v, cap ? cap * 2 : 64 * 1024);

			if (!p) {
				err = -ENOMEM;
				break;
			}
			v = p;
			cap = cap ? cap * 2 : 64 * 1024;
		}
		n = read(fd, (char *)v + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		have += n;
	}
	close(fd);
	bpf_link__destroy(link);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	return have / sizeof(*v);
}

static dev_t kdev(uint32_t d)
{
	return makedev(KDEV_MAJOR(d), KDEV_MINOR(d));
}

/* a descriptor whose real file is asked about: mapped at ADDR */
struct asked {
	int fd;
	void *addr;
	dev_t dev;
	ino_t ino;
	bool known;
};

/*
 * The real files of N descriptors, at once: map a page of each, ask the
 * kernel's VMAs of ours.  0, or a negative errno (none is known).
 */
static int identify_all(struct asked *a, int n)
{
	struct file_vma *v = NULL;
	int i, k, nv;

	for (i = 0; i < n; i++) {
		a[i].known = false;
		a[i].addr = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, a[i].fd, 0);
	}
	nv = vmas(getpid(), true, &v);
	for (i = 0; i < n; i++) {
		for (k = 0; k < nv; k++)
			if (a[i].addr != MAP_FAILED && v[k].start == (uintptr_t)a[i].addr && v[k].ino) {
				a[i].dev = kdev(v[k].dev);
				a[i].ino = v[k].ino;
				a[i].known = true;
			}
		if (a[i].addr != MAP_FAILED)
			munmap(a[i].addr, 4096);
	}
	free(v);
	return nv < 0 ? nv : 0;
}

/*
 * scan.identify: the real file of FD (mapped, never read through the
 * mapping: another tracer's uprobes would show there); what fstat() says
 * where it cannot be mapped.
 */
int look_identify(int fd, dev_t *dev, ino_t *ino)
{
	struct asked a = { .fd = fd };
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	*dev = st.st_dev;
	*ino = st.st_ino;
	if (!S_ISREG(st.st_mode))
		return 0;
	identify_all(&a, 1);
	if (a.known) {
		*dev = a.dev;
		*ino = a.ino;
	}
	return 0;
}

/* a file a look opened: to check and scan, or to attach again */
struct pending {
	struct asked a;
	pid_t pid;
	unsigned long start, end;
	dev_t dev;		/* what the mapping is */
	ino_t ino;
	int file;		/* a known file to try again, or -1 */
	bool deleted;
	char path[PATH_MAX];
};

static bool pending_has(const struct pending *p, int n, dev_t dev, ino_t ino)
{
	for (int i = 0; i < n; i++)
		if (p[i].dev == dev && p[i].ino == ino)
			return true;
	return false;
}

/* A record of the kernel's VMAs, to open: false if it need not be (known, remote, gone) */
static bool to_open(struct scan *s, const struct file_vma *r, struct pending *p, int *file)
{
	static pid_t unreadable;
	dev_t dev = kdev(r->dev);
	const struct fs_type *fs;
	int err;

	*file = scan_lookup(s, dev, r->ino);
	if (*file >= 0) {
		s->files[*file].seen = true;
		if (s->files[*file].state != FILE_RETRY || s->files[*file].fd >= 0)
			return false;
	}
	fs = scan_fs_of(s, dev, r->tgid);
	if (fs && fs->remote) {
		s->look.remote++;
		s->look.remote_fs = fs->type;
		return false;
	}
	*p = (struct pending){ .pid = r->tgid, .start = r->start, .end = r->end, .dev = dev,
			       .ino = r->ino, .file = *file };
	err = scan_maps_path(r->tgid, r->start, p->path, sizeof(p->path), &p->deleted);
	if (err == -EACCES && (pid_t)r->tgid != unreadable) {
		/* said once per process and look */
		s->look.unreadable++;
		unreadable = r->tgid;
		if (!s->quiet)
			die_msg("cannot read /proc/%d/maps: %s (another user's process: that takes "
				"CAP_SYS_PTRACE)", r->tgid, strerror(-err));
	}
	if (err)
		return false;	/* gone meanwhile, or not ours to read */
	p->a.fd = scan_open_mapping(r->tgid, r->start, r->end, p->path, p->deleted);
	if (p->a.fd < 0 && !s->quiet)
		die_msg("cannot open %s (mapped by %d): %s", p->path, r->tgid, strerror(-p->a.fd));
	return p->a.fd >= 0;
}

/* the PIDs of a cgroup's tasks and its descendants', sorted; their number */
static int cgroup_pids(const char *cgroup, pid_t **out);

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int look_run(struct scan *s, pid_t tgid, const char *cgroup)
{
	struct file_vma *v = NULL;
	struct pending *p = NULL;
	struct asked *a;
	pid_t *cg = NULL, last = 0;
	int i, nv, np = 0, cap_p = 0, ncg = 0, file, anon = 0, found = 0, err;

	nv = vmas(tgid, false, &v);
	if (nv < 0)
		return nv;
	if (cgroup)
		ncg = cgroup_pids(cgroup, &cg);
	scan_look_begin(s);
	for (i = 0; i < nv; i++) {
		const struct file_vma *r = &v[i];

		if (cgroup && !bsearch(&r->tgid, cg, ncg, sizeof(*cg), pid_cmp))
			continue;
		if ((pid_t)r->tgid != last) {
			/* a process's VMAs come together */
			s->look.procs++;
			if (anon)
				s->look.anon_procs++;
			anon = 0;
			last = r->tgid;
		}
		if (!r->ino) {
			anon++;
			s->look.anon++;
			continue;
		}
		if (pending_has(p, np, kdev(r->dev), r->ino))
			continue;
		/* the files to open are few: the new ones */
		if (!scan_grow((void **)&p, &cap_p, np, sizeof(*p)))
			break;
		if (to_open(s, r, &p[np], &file))
			np++;
	}
	if (anon)
		s->look.anon_procs++;
	/*
	 * What was opened must be what is mapped: a path may name another file
	 * by now.  Where that cannot be told (no descriptor left for the
	 * iterator, say), none is scanned: the next look tries again.
	 */
	a = calloc(np + 1, sizeof(*a));
	for (i = 0; a && i < np; i++)
		a[i] = p[i].a;
	err = a ? identify_all(a, np) : -ENOMEM;
	for (i = 0; i < np; i++) {
		struct pending *q = &p[i];

		if (err) {
			close(q->a.fd);
			continue;
		}
		q->a = a[i];
		if (!q->a.known || q->a.dev != q->dev || q->a.ino != q->ino) {
			close(q->a.fd);
			s->look.replaced++;
			if (!s->quiet)
				warn_msg("%s: the path names another file than the one %d maps (replaced "
					 "since): not scanned through it", q->path, q->pid);
			continue;
		}
		if (q->file >= 0) {
			s->files[q->file].fd = q->a.fd;
			continue;
		}
		file = scan_new_mapped(s, q->pid, q->path, q->deleted, q->start, q->end, q->a.fd,
				       q->dev, q->ino);
		if (file > 0)
			found += file;	/* its sites */
	}
	scan_look_end(s);
	free(a);
	free(p);
	free(v);
	free(cg);
	return found;
}

/* the cgroup's tasks: each directory's cgroup.procs, the tree walked */
static pid_t *cg_pids;
static int nr_cg_pids, cap_cg_pids;

static int cg_dir(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char procs[PATH_MAX + 16];
	long pid;
	FILE *f;

	(void)st;
	(void)ftw;
	if (type != FTW_D)
		return 0;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	f = fopen(procs, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1) {
		if (nr_cg_pids == cap_cg_pids) {
			int cap = cap_cg_pids ? cap_cg_pids * 2 : 256;
			pid_t *v = realloc(cg_pids, cap * sizeof(*v));

			if (!v)
				break;
			cg_pids = v;
			cap_cg_pids = cap;
		}
		cg_pids[nr_cg_pids++] = pid;
	}
	fclose(f);
	return 0;
}

static int cgroup_pids(const char *cgroup, pid_t **out)
{
	nr_cg_pids = cap_cg_pids = 0;
	cg_pids = NULL;
	nftw(cgroup, cg_dir, 16, FTW_PHYS | FTW_MOUNT);
	if (nr_cg_pids)
		qsort(cg_pids, nr_cg_pids, sizeof(*cg_pids), pid_cmp);
	*out = cg_pids;
	return nr_cg_pids;
}
