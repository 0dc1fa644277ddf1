// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: cgroup v2 (cgroup.h).  A cgroup's ID is its directory's
 * inode number on the cgroup v2 mount (kernfs), which the BPF side reads as
 * bpf_get_current_cgroup_id(): a label is the directory's path under the
 * mount, found by one walk of the mount when an ID is new, and kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "ut.h"

#define CGROUP2_SUPER_MAGIC	0x63677270

int cgroup_open(const char *path)
{
	struct statfs sf;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		die_msg("cannot open cgroup %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstatfs(fd, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		die_msg("%s: not a cgroup v2 directory (mount -t cgroup2 puts one on /sys/fs/cgroup)",
			path);
		close(fd);
		return -1;
	}
	return fd;
}

/* a cgroup a label was asked for */
struct known {
	uint64_t id;
	char *label;
	bool found;		/* label is its path: found by a walk */
	int gone;		/* walks in a row that did not find it */
};

static struct known *known;
static int nr_known, cap_known;

/* the last walk of the mount: ID -> path, sorted by ID */
struct walked {
	uint64_t id;
	char *path;
};

static struct walked *walked;
static int nr_walked, cap_walked;
static bool walked_now;		/* in this round */

static char mnt[PATH_MAX];
static size_t mnt_len;
static uint64_t root_id = 1;	/* the root cgroup's: without a mount, every task's */
static bool mnt_tried;

/* The cgroup v2 mount, from our mountinfo (octal escapes of its path undone) */
static void find_mount(void)
{
	char line[PATH_MAX * 2], point[PATH_MAX], *sep;
	struct stat st;
	FILE *f;

	mnt_tried = true;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		size_t i, j;

		sep = strstr(line, " - cgroup2 ");
		if (!sep || sscanf(line, "%*d %*d %*s %*s %4095s", point) != 1)
			continue;
		for (i = j = 0; point[i]; i++, j++) {
			unsigned int c;

			if (point[i] == '\\' && sscanf(point + i + 1, "%3o", &c) == 1) {
				mnt[j] = c;
				i += 3;
			} else {
				mnt[j] = point[i];
			}
		}
		mnt[j] = '\0';
		if (!stat(mnt, &st)) {
			mnt_len = j;
			root_id = st.st_ino;
			break;
		}
		mnt[0] = '\0';
	}
	fclose(f);
}

static int walked_cmp(const void *a, const void *b)
{
	const struct walked *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_D)
		return 0;
	if (nr_walked == cap_walked) {
		int cap = cap_walked ? cap_walked * 2 : 256;
		struct walked *v = realloc(walked, cap * sizeof(*v));

		if (!v)
			return 1;
		walked = v;
		cap_walked = cap;
	}
	walked[nr_walked].id = st->st_ino;
	walked[nr_walked].path = strdup(path[mnt_len] ? path + mnt_len : "/");
	if (walked[nr_walked].path)
		nr_walked++;
	return 0;
}

static void walk(void)
{
	int i;

	for (i = 0; i < nr_walked; i++)
		free(walked[i].path);
	nr_walked = 0;
	walked_now = true;
	if (!mnt[0])
		return;
	nftw(mnt, walk_one, 16, FTW_PHYS | FTW_MOUNT);
	qsort(walked, nr_walked, sizeof(*walked), walked_cmp);
}

static const char *walked_path(uint64_t id)
{
	struct walked key = { .id = id }, *w;

	w = nr_walked ? bsearch(&key, walked, nr_walked, sizeof(*walked), walked_cmp) : NULL;
	return w ? w->path : NULL;
}

static struct known *known_find(uint64_t id)
{
	int i;

	for (i = 0; i < nr_known; i++)
		if (known[i].id == id)
			return &known[i];
	return NULL;
}

/* K's label from the last walk, if it found it; the ID's for now if not */
static void resolve(struct known *k)
{
	const char *p = walked_path(k->id);
	char buf[32], *label;

	if (p) {
		label = strdup(p);
		if (!label)
			return;
		free(k->label);
		k->label = label;
		k->found = true;
		return;
	}
	if (!k->label) {
		snprintf(buf, sizeof(buf), "id:%llu", (unsigned long long)k->id);
		k->label = strdup(buf);
	}
}

const char *cgroup_label(uint64_t id)
{
	struct known *k;

	if (!mnt_tried)
		find_mount();
	if (!id || id == root_id)
		return NULL;
	k = known_find(id);
	if (k)
		return k->label ? k->label : "?";
	if (nr_known == cap_known) {
		int cap = cap_known ? cap_known * 2 : 64;
		struct known *v = realloc(known, cap * sizeof(*v));

		if (!v)
			return "?";
		known = v;
		cap_known = cap;
	}
	k = &known[nr_known++];
	*k = (struct known){ .id = id };
	if (!walked_now)
		walk();
	resolve(k);
	return k->label ? k->label : "?";
}

void cgroup_round(bool gone)
{
	int i;
	bool need = false;

	walked_now = false;
	for (i = 0; i < nr_known; i++)
		need |= gone || !known[i].found;
	if (!need)
		return;
	walk();
	for (i = 0; i < nr_known; i++) {
		struct known *k = &known[i];

		if (walked_path(k->id))
			k->gone = 0;
		else
			k->gone++;
		if (!k->found)
			resolve(k);
	}
}

int cgroup_gone(uint64_t id)
{
	const struct known *k = known_find(id);

	return k ? k->gone : 0;
}

void cgroup_forget(uint64_t id)
{
	struct known *k = known_find(id);

	if (!k)
		return;
	free(k->label);
	*k = known[--nr_known];
}

void cgroup_free(void)
{
	int i;

	for (i = 0; i < nr_known; i++)
		free(known[i].label);
	for (i = 0; i < nr_walked; i++)
		free(walked[i].path);
	free(known);
	free(walked);
	known = NULL;
	walked = NULL;
	nr_known = cap_known = nr_walked = cap_walked = 0;
	walked_now = false;
}
