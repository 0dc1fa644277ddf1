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

struct scan_file {
	char *path;		/* as the user or /proc/PID/maps named it */
	char *attach;		/* the path to open (e.g. through /proc/PID/root) */
	dev_t dev;		/* the file that was scanned */
	ino_t ino;
	int nr_sites;
	bool no_symbols;	/* decoded by program headers: no symbol table */
};

struct scan {
	struct site *sites;
	int nr_sites, cap_sites;
	struct scan_file *files;
	int nr_files, cap_files;
	struct arrival *arrivals;
	int nr_arrivals, cap_arrivals;
	bool exact_mode;	/* --exact: probe branches on a wait's path too */
};

/*
 * Decode the executable sections of PATH (its executable PT_LOAD segments
 * when it has no section headers) and add every TPAUSE/UMWAIT to S, with
 * how its arrivals are told apart.  ATTACH is the name to open, SHOWN the one
 * to print.  A file already scanned (same device and inode) is said once and
 * not scanned again.  Returns the number of sites found, or a negative errno
 * with a message already printed.
 */
int scan_elf(struct scan *s, const char *shown, const char *attach);

/*
 * A FILE argument: a path is taken as it is; a bare name is the file of that
 * name in the current directory, or else the one libbpf would find for it
 * ($PATH, or the library directories for a .so), made absolute so that the
 * uprobe goes where the scanner looked.  Returns as scan_elf().
 */
int scan_file_arg(struct scan *s, const char *arg);

/*
 * 1 if FILE's attach path now names another file than the one scanned
 * (device or inode differ), 0 if the same, a negative errno if it is gone.
 */
int scan_changed(const struct scan *s, int file);

/*
 * The executable file mappings of PID, each file scanned once; a mapping
 * whose file was deleted (a library replaced under a running process) is
 * reached through /proc/PID/map_files/.
 */
int scan_pid(struct scan *s, pid_t pid);

/*
 * Every executable file every process maps (/proc/PID/maps), each file
 * scanned once however many map it (device and inode: a file scanned
 * before is not read again), quietly: a process that exits meanwhile, a
 * file that cannot be read, are skipped. The number of sites added.
 */
int scan_all(struct scan *s);

void scan_free(struct scan *s);

const char *insn_name(enum wait_insn insn);

/* how: "flags", "never", "probed", "on-path" or "blind" */
const char *arrival_how_name(enum arrival_how how);

#endif /* UT_SCAN_H */
