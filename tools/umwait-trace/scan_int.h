/* SPDX-License-Identifier: GPL-2.0 */
/* umwait-trace: what scan.c (files) and scan_code.c (their code) share. */
#ifndef UT_SCAN_INT_H
#define UT_SCAN_INT_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

#include "scan.h"

/*
 * The whole of a file that has a candidate site, read into memory (never
 * mapped: another tracer's uprobes would show as int3s in a mapping).
 */
struct image {
	const uint8_t *data;
	size_t size;
	Elf *elf;
	GElf_Ehdr eh;
};

/*
 * Decode the file's code and add its sites, with how each one's other
 * arrivals are told apart, to S (sites of FILE).  Returns the number of
 * sites added or a negative errno (a message printed).
 */
int scan_code(struct scan *s, int file, const struct image *im);

/*
 * Scan the file open as FD, whose real device and inode are DEV and INO
 * (scan_identity()), shown as SHOWN: scan.c.  FD becomes the file's.
 */
int scan_fd(struct scan *s, const char *shown, int fd, dev_t dev, ino_t ino);

/* a device's filesystem type, from mountinfo (scan_proc.c) */
struct fs_type {
	dev_t dev;
	bool remote;		/* a network or FUSE filesystem: its files are never opened */
	char type[24];
};

/*
 * scan_proc.c, for caps' looks: DEV's filesystem (ours first, then PID's
 * mount namespace's; NULL if neither has it); the path PID's mapping at
 * START has in its maps, and whether it is " (deleted)" (0 or a negative
 * errno: -EACCES, another user's process without CAP_SYS_PTRACE); a descriptor of
 * the file of PID's mapping [START, END) (map_files, else PATH in PID's
 * root: not checked to be the very inode mapped), or a negative errno; and
 * a new file mapped by PID, open as FD and checked to be the real DEV, INO,
 * scanned and known as mapped (its sites, or a negative errno).
 */
const struct fs_type *scan_fs_of(struct scan *s, dev_t dev, pid_t pid);
int scan_maps_path(pid_t pid, unsigned long start, char *path, size_t len, bool *deleted);
int scan_open_mapping(pid_t pid, unsigned long start, unsigned long end, const char *path,
		      bool deleted);
int scan_new_mapped(struct scan *s, pid_t pid, const char *path, bool deleted, unsigned long start,
		    unsigned long end, int fd, dev_t dev, ino_t ino);

/* grow *V (of *CAP elements of SIZE) to hold NR + 1; false without memory */
bool scan_grow(void **v, int *cap, int nr, size_t size);

#endif /* UT_SCAN_INT_H */
