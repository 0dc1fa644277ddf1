// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: the files processes map, as /proc/PID/maps names them (sites
 * -p), and what caps' looks (caps_look.c) share with it.
 *
 * A mapping names its file by a device and inode: in Linux 6.1 the real
 * file's, the inode a uprobe binds (on overlayfs the layer's), in 6.12 the
 * overlay's (caps asks the kernel's VMAs instead).  A file known by them is
 * skipped without being opened.  A new one
 * is opened through /proc/PID/map_files/START-END, the mapping's own file
 * whatever its path names now, with no path to walk; where that is refused
 * (it takes CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), through
 * /proc/PID/root/PATH, which may name another file by now (a package
 * upgrade renames over it): either way it is scanned only if the inode
 * opened is the one mapped, and caps attaches through that very descriptor.
 *
 * Files on a network or FUSE filesystem (nfs, nfs4, cifs, smb3, smbfs, 9p,
 * ceph, afs, coda, lustre, glusterfs, virtiofs, fuse, fuseblk, fuse.*) are
 * never opened: an open of a file whose server is gone hangs in the kernel,
 * and the look with it.  Which filesystem a device is comes from mountinfo,
 * read once per look (ours, then the process's own mount namespace's).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "scan_int.h"
#include "ut.h"

#define say(...)	do { if (!s->quiet) die_msg(__VA_ARGS__); } while (0)
#define note(...)	do { if (!s->quiet) warn_msg(__VA_ARGS__); } while (0)

static bool remote_type(const char *t)
{
	static const char *const types[] = {
		"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "afs", "coda", "ncpfs",
		"lustre", "glusterfs", "virtiofs", "fuse", "fuseblk",
	};
	size_t i;

	if (!strncmp(t, "fuse.", 5))
		return true;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i]))
			return true;
	return false;
}

static const struct fs_type *fs_find(const struct scan *s, dev_t dev)
{
	int i;

	for (i = 0; i < s->nr_fs; i++)
		if (s->fs[i].dev == dev)
			return &s->fs[i];
	return NULL;
}

/* The devices of a mountinfo file, with their filesystem types */
static void fs_load(struct scan *s, const char *path)
{
	char line[PATH_MAX * 2];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		char type[24], *sep = strstr(line, " - ");
		dev_t dev;

		if (!sep || sscanf(line, "%*d %*d %u:%u", &maj, &min) != 2 ||
		    sscanf(sep + 3, "%23s", type) != 1)
			continue;
		dev = makedev(maj, min);
		if (fs_find(s, dev) ||
		    !scan_grow((void **)&s->fs, &s->cap_fs, s->nr_fs, sizeof(*s->fs)))
			continue;
		s->fs[s->nr_fs] = (struct fs_type){ .dev = dev, .remote = remote_type(type) };
		snprintf(s->fs[s->nr_fs].type, sizeof(s->fs[0].type), "%s", type);
		s->nr_fs++;
	}
	fclose(f);
}

const struct fs_type *scan_fs_of(struct scan *s, dev_t dev, pid_t pid)
{
	const struct fs_type *fs = fs_find(s, dev);
	char path[64];

	if (fs)
		return fs;
	if (!s->nr_fs)
		fs_load(s, "/proc/self/mountinfo");
	fs = fs_find(s, dev);
	if (fs)
		return fs;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	fs_load(s, path);
	return fs_find(s, dev);
}

/* one line of /proc/PID/maps */
struct mapping {
	unsigned long start, end;
	char perms[5];
	dev_t dev;
	ino_t ino;
	char *path;		/* "" for anonymous memory */
	bool deleted;		/* " (deleted)": replaced or removed since it was mapped */
};

static bool parse_mapping(char *line, struct mapping *m)
{
	unsigned int maj, min;
	unsigned long long ino;
	size_t len;
	int n = -1;

	if (sscanf(line, "%lx-%lx %4s %*x %x:%x %llu %n", &m->start, &m->end, m->perms, &maj, &min,
		   &ino, &n) < 6 || n < 0)
		return false;
	m->dev = makedev(maj, min);
	m->ino = ino;
	m->path = line + n;
	len = strlen(m->path);
	if (len && m->path[len - 1] == '\n')
		m->path[--len] = '\0';
	m->deleted = len > 10 && !strcmp(m->path + len - 10, " (deleted)");
	return true;
}

/* Whether FD is the file M maps: its real device and inode */
static bool is_mapped_file(int fd, const struct mapping *m)
{
	struct stat st;
	dev_t dev;
	ino_t ino;

	if (!fstat(fd, &st) && st.st_dev == m->dev && st.st_ino == m->ino)
		return true;
	/* overlayfs: fstat() gives the overlay's device; the mapping shows the layer's */
	return !scan_identity(fd, &dev, &ino) && dev == m->dev && ino == m->ino;
}

int scan_open_mapping(pid_t pid, unsigned long start, unsigned long end, const char *path,
		      bool deleted)
{
	char p[PATH_MAX + 64];
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/map_files/%lx-%lx", pid, start, end);
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && !deleted && path[0] == '/') {
		snprintf(p, sizeof(p), "/proc/%d/root%s", pid, path);
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	}
	return fd < 0 ? -errno : fd;
}

/* Open the file M maps in PID: the descriptor if it is the very inode mapped, -ESTALE if not */
static int open_mapped(pid_t pid, const struct mapping *m)
{
	int fd = scan_open_mapping(pid, m->start, m->end, m->path, m->deleted);

	if (fd < 0)
		return fd;
	if (!is_mapped_file(fd, m)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int scan_new_mapped(struct scan *s, pid_t pid, const char *path, bool deleted, unsigned long start,
		    unsigned long end, int fd, dev_t dev, ino_t ino)
{
	int n = scan_fd(s, path, fd, dev, ino), file = scan_lookup(s, dev, ino);

	if (file < 0)
		return n;
	s->files[file].mapped = s->files[file].seen = true;
	s->look.new_files++;
	if (n >= 0 && deleted)
		note("%s: deleted since %d mapped it: traced through /proc/%d/map_files/%lx-%lx",
		     path, pid, pid, start, end);
	return n;
}

/* A new file M of PID: open, check and scan it; its sites, or a negative errno */
static int scan_mapping(struct scan *s, pid_t pid, const struct mapping *m)
{
	const struct fs_type *fs = scan_fs_of(s, m->dev, pid);
	int fd;

	if (fs && fs->remote) {
		s->look.remote++;
		s->look.remote_fs = fs->type;
		return 0;
	}
	fd = open_mapped(pid, m);
	if (fd == -ESTALE) {
		s->look.replaced++;
		note("%s: the path names another file than the one %d maps (replaced since): "
		     "not scanned through it", m->path, pid);
		return fd;
	}
	if (fd < 0) {
		say("cannot open %s (mapped by %d): %s", m->path, pid, strerror(-fd));
		return fd;
	}
	return scan_new_mapped(s, pid, m->path, m->deleted, m->start, m->end, fd, m->dev, m->ino);
}

int scan_maps_path(pid_t pid, unsigned long start, char *path, size_t len, bool *deleted)
{
	char maps[64], line[PATH_MAX + 256];
	struct mapping m;
	int err = -ENOENT;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		if (!parse_mapping(line, &m) || m.start != start)
			continue;
		snprintf(path, len, "%s", m.path);
		*deleted = m.deleted;
		err = 0;
	}
	fclose(f);
	return err;
}

int scan_pid(struct scan *s, pid_t pid)
{
	char maps[64], line[PATH_MAX + 256];
	int found = 0, anon = 0, n;
	struct mapping m;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f) {
		n = errno;
		if (n == ENOENT || n == ESRCH)
			say("no process with PID %d", pid);
		else if (n == EACCES)
			say("cannot read %s: %s (another user's process: that takes CAP_SYS_PTRACE)",
			    maps, strerror(n));
		else
			say("cannot read %s: %s", maps, strerror(n));
		if (n == EACCES)
			s->look.unreadable++;
		return n == ENOENT ? -ESRCH : -n;
	}
	s->look.procs++;
	while (fgets(line, sizeof(line), f)) {
		int file;

		if (!parse_mapping(line, &m) || m.perms[2] != 'x')
			continue;
		if (!m.path[0]) {
			anon++;		/* JIT code, say: no file to probe */
			continue;
		}
		if (m.path[0] != '/')
			continue;	/* [vdso], [vsyscall], [uprobes] */
		file = scan_lookup(s, m.dev, m.ino);
		if (file < 0) {
			n = scan_mapping(s, pid, &m);
			if (n > 0)
				found += n;
			continue;
		}
		s->files[file].seen = true;
		/* probes to place again: a descriptor of the very inode, as for a new file */
		if (s->files[file].state == FILE_RETRY && s->files[file].fd < 0) {
			int fd = open_mapped(pid, &m);

			if (fd >= 0)
				s->files[file].fd = fd;
		}
	}
	fclose(f);
	if (anon) {
		s->look.anon += anon;
		s->look.anon_procs++;
	}
	return found;
}

void scan_look_begin(struct scan *s)
{
	int i;

	for (i = 0; i < s->nr_files; i++)
		s->files[i].seen = false;
	s->look = (struct scan_look){};
	/* a device number is reused once its filesystem is unmounted: read again */
	s->nr_fs = 0;
}

void scan_look_end(struct scan *s)
{
	int i;

	for (i = 0; i < s->nr_files; i++) {
		struct scan_file *f = &s->files[i];

		if (!f->mapped || f->state == FILE_GONE)
			continue;
		f->unseen = f->seen ? 0 : f->unseen + 1;
	}
}

pid_t scan_tgid(pid_t tid)
{
	char path[64], line[128];
	long tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 ? tgid : -1;
}
