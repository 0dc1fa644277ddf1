/* SPDX-License-Identifier: GPL-2.0 */
/*
 * umwait-trace: find TPAUSE and UMWAIT instructions in ELF files (Zydis), and
 * work out for each how caps can count its waits exactly.
 *
 * caps counts at the instruction after a wait.  Other paths may arrive there
 * too: direct branches, and indirect ones (a jump table, a label whose
 * address is taken, a landing pad, a call).  The scanner finds them all and
 * says, for each direct branch, how its arrivals are told from waits:
 *   - by the flags: TPAUSE and UMWAIT clear OF, SF, ZF, AF and PF, so an
 *     arrival whose path proves one of them set is never a wait (no probe);
 *   - by a probe on the branch that marks a taken jump (one caps places);
 *   - not at all: the branch lies on a wait's own path (a probe there would
 *     run between the deadline's computation, or UMONITOR, and the wait), or
 *     the kernel cannot probe it.  The site is then inexact; its capped count
 *     stays exact if every such arrival provably has CF=0.
 */
#ifndef UT_SCAN_H
#define UT_SCAN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "umwait-trace.h"

enum wait_insn {
	INSN_TPAUSE,
	INSN_UMWAIT,
};

/* How the arrivals of one direct branch at a site's next instruction are told apart */
enum arrival_how {
	ARRIVAL_FLAGS,		/* its path leaves one of OF SF ZF AF PF set: never a wait */
	ARRIVAL_NEVER,		/* its path contradicts its condition: never taken */
	ARRIVAL_PROBED,		/* a probe on the branch marks each taken jump */
	ARRIVAL_ON_PATH,	/* unprobed: the branch is on a wait's own path */
	ARRIVAL_BLIND,		/* unprobed: the kernel cannot probe it, or its code is not trusted */
};

/* a direct branch to the instruction after a site */
struct arrival {
	uint64_t offset;	/* file offset of the branch */
	uint64_t vaddr;		/* its address in the file's own layout */
	enum branch_kind kind;	/* how to tell whether it is taken */
	uint8_t cc;		/* Jcc: its condition */
	bool ecx;		/* JECXZ/LOOPcc with a 0x67 prefix: ECX counts */
	bool cf0;		/* CF is 0 on every arrival by it */
	enum arrival_how how;
	int path_site;		/* ARRIVAL_ON_PATH: the site whose path it is on */
	char mnem[12];
};

struct site {
	int file;		/* index into scan.files */
	uint64_t offset;	/* file offset of the TPAUSE/UMWAIT */
	uint64_t vaddr;		/* its address in the ELF file's own layout */
	uint64_t next_offset;	/* file offset of the instruction after it */
	uint8_t len;
	enum wait_insn insn;
	bool site_ok;		/* the kernel can uprobe the TPAUSE/UMWAIT itself (--hist-perturbing) */
	bool probed;		/* caps puts its counting probe on the next instruction */
	bool exact;		/* waits and capped both count exactly what ran */
	bool exact_capped;	/* capped does (waits may include other arrivals) */
	bool perturbs;		/* --exact put a probe on a wait's own path for it */
	int arrival;		/* first of its direct branches in scan.arrivals */
	int nr_arrivals;
	char why[240];		/* why it is not probed, or not exact; "" when exact */
	char symbol[160];	/* "name+0xoff", "func@0xSTART+0xoff" (unwind info), or "" */
};

/*
 * What became of a file's probes (caps_attach.c); the scanner leaves a file
 * FILE_SCANNED with its descriptor open.
 */
enum file_state {
	FILE_SCANNED,		/* scanned, probes not placed yet: its descriptor is open */
	FILE_ATTACHED,		/* its probes are placed (or it has no site): descriptor closed */
	FILE_RETRY,		/* its probes could not all be placed: tried again at the next look */
	FILE_GONE,		/* no process maps it any more: forgotten, probes and series */
};

/*
 * A file is the inode the kernel probes: a uprobe binds the real inode a
 * path resolves to (on overlayfs the lower or upper layer's, d_real_inode()),
 * which /proc/PID/maps prints as "dev inode" while stat() through each
 * overlay mount gives another st_dev.  One file, one set of sites and
 * probes, however many paths, mounts or containers it is seen through.
 */
struct scan_file {
	char *path;		/* as the user or /proc/PID/maps named it (the first seen) */
	int fd;			/* the scan's descriptor, kept until the probes are placed
				 * through /proc/self/fd/N (the very inode scanned); -1 after */
	dev_t dev;		/* the real file: /proc/PID/maps' dev and inode */
	ino_t ino;
	int first_site;		/* its sites: scan.sites[first_site, first_site + nr_sites) */
	int nr_sites;
	enum file_state state;
	bool mapped;		/* found in a process's mappings: forgotten when none maps it */
	bool seen;		/* mapped by some process at the current look */
	int unseen;		/* looks in a row that found no process mapping it */
	bool no_symbols;	/* decoded by program headers: no symbol table */
};

struct fs_type;

/* What one look at the processes' mappings found (scan_look_begin() clears it) */
struct scan_look {
	int procs;		/* processes whose mappings were read */
	int unreadable;		/* processes whose mappings could not be read (EACCES) */
	int new_files;		/* files scanned for the first time */
	int anon;		/* anonymous executable mappings (JIT code): not traced */
	int anon_procs;		/* processes with one or more */
	int remote;		/* file mappings on a network or FUSE filesystem: not opened */
	const char *remote_fs;	/* the type of one of them */
	int replaced;		/* opened a file that is not the one mapped (renamed over): not scanned */
};

struct scan {
	struct site *sites;
	int nr_sites, cap_sites;
	struct scan_file *files;
	int nr_files, cap_files;
	struct arrival *arrivals;
	int nr_arrivals, cap_arrivals;
	bool exact_mode;	/* --exact: probe branches on a wait's path too */
	bool quiet;		/* caps' looks at every process: nothing to say of one that fails */
	int *ids;		/* (dev, inode) -> file index + 1: open addressing, 0 free, -1 removed */
	int cap_ids, used_ids;
	struct scan_look look;
	struct fs_type *fs;	/* device -> filesystem type, for the current look */
	int nr_fs, cap_fs;
	/* the real device and inode of an open file; NULL: scan_identity() */
	int (*identify)(int fd, dev_t *dev, ino_t *ino);
};

/* How many looks in a row may find a file with sites unmapped before it is forgotten */
#define FORGET_LOOKS	4

/*
 * Decode the executable sections of PATH (its executable PT_LOAD segments
 * when it has no section headers) and add every TPAUSE/UMWAIT to S, with
 * how its arrivals are told apart.  SHOWN is the name to print.  A file
 * already known (the same real device and inode) is said once and not
 * scanned again.  The file's descriptor stays open in S while it has sites
 * (caps attaches through it).  Returns the number of sites found, or a
 * negative errno with a message already printed.
 */
int scan_elf(struct scan *s, const char *shown, const char *path);

/*
 * A FILE argument: a path is taken as it is; a bare name is the file of that
 * name in the current directory, or else the one libbpf would find for it
 * ($PATH, or the library directories for a .so).  Returns as scan_elf().
 */
int scan_file_arg(struct scan *s, const char *arg);

/*
 * The real device and inode of the file open as FD: what a uprobe through
 * /proc/self/fd/FD binds (on overlayfs, not what fstat() says), from what
 * /proc/self/maps prints for a mapping of it: the layer's inode in Linux
 * 6.1, the overlay's in 6.12 (caps asks the kernel's VMAs instead:
 * scan.identify).
 * 0, or a negative errno.
 */
int scan_identity(int fd, dev_t *dev, ino_t *ino);

/* The index of the known file (DEV, INO), or -1 */
int scan_lookup(const struct scan *s, dev_t dev, ino_t ino);

/* FILE's descriptor is no longer needed (its probes are placed) */
void scan_close(struct scan *s, int file);

/*
 * Forget FILE: no process maps it any more. Its sites stay (their indexes
 * are probes' cookies) but are no longer probed; the same device and inode
 * seen again is a new file.
 */
void scan_forget(struct scan *s, int file);

/*
 * One look at processes' mappings: scan_look_begin(), scan_pid() for each
 * process, scan_look_end().  A file mapped by none of them since the last
 * look counts one more unseen look (scan_file.unseen).
 */
void scan_look_begin(struct scan *s);
void scan_look_end(struct scan *s);

/*
 * The executable file mappings of PID, each new file scanned once.  A file
 * is known by the device and inode maps prints, and skipped without being
 * opened when known; a new one is opened through /proc/PID/map_files/ (or,
 * where that is refused, /proc/PID/root/PATH) and scanned only if what was
 * opened is the very inode mapped.  Files on network or FUSE filesystems are
 * never opened (an open of a dead server's file hangs).  A known file whose
 * probes are to be tried again (FILE_RETRY) is opened the same way.  The
 * number of sites added, or a negative errno (the process is gone, or its
 * mappings cannot be read; said unless quiet).
 */
int scan_pid(struct scan *s, pid_t pid);

/* The process a thread (or process) ID belongs to: its Tgid; -1 if there is none */
pid_t scan_tgid(pid_t tid);

void scan_free(struct scan *s);

const char *insn_name(enum wait_insn insn);

/* how: "flags", "never", "probed", "on-path" or "blind" */
const char *arrival_how_name(enum arrival_how how);

#endif /* UT_SCAN_H */
