/* SPDX-License-Identifier: GPL-2.0 */
/* umwait-trace: find TPAUSE and UMWAIT instructions in ELF files (Zydis). */
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

struct site {
	int file;		/* index into scan.files */
	uint64_t offset;	/* file offset of the TPAUSE/UMWAIT */
	uint64_t vaddr;		/* its address in the ELF file's own layout */
	uint64_t next_offset;	/* file offset of the instruction after it */
	uint8_t len;
	enum wait_insn insn;
	bool next_ok;		/* the kernel can uprobe that next instruction */
	bool site_ok;		/* ... and the TPAUSE/UMWAIT itself (for --hist) */
	/* other paths to that next instruction: */
	int branch;		/* first of its direct branches in scan.branches */
	int nr_branches;	/* ... how many, each one caps can probe and evaluate */
	int nr_blind;		/* direct branches it cannot (the kernel refuses, XBEGIN) */
	bool next_addr_taken;	/* code loads its address: an indirect branch may use it */
	bool exact;		/* caps: every other path there is probed and discounted */
	char symbol[160];	/* "name+0xoff" of the symbol holding it, or "" */
};

/* a direct branch to the instruction after a site */
struct branch {
	uint64_t offset;	/* file offset of the branch */
	uint64_t target;	/* the address it jumps to */
	enum branch_kind kind;	/* how to tell whether it is taken; 0: cannot */
	uint8_t cc;		/* Jcc: its condition */
	bool ecx;		/* JECXZ/LOOPcc with a 0x67 prefix: ECX counts */
	bool ok;		/* the kernel can uprobe it and caps can evaluate it */
};

struct scan_file {
	char *path;		/* as the user or /proc/PID/maps named it */
	char *attach;		/* the path to open (e.g. through /proc/PID/root) */
	dev_t dev;		/* the file that was scanned */
	ino_t ino;
	int nr_sites;
};

struct scan {
	struct site *sites;
	int nr_sites, cap_sites;
	struct scan_file *files;
	int nr_files, cap_files;
	struct branch *branches;
	int nr_branches, cap_branches;
};

/*
 * Decode the executable sections of PATH (its PT_LOAD segments when it has
 * no section headers) and add every TPAUSE/UMWAIT to S.  ATTACH is the name
 * to open, SHOWN the one to print.  Returns the number of sites found, or a
 * negative errno with a message already printed.
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

/* The executable file mappings of PID, each scanned once. */
int scan_pid(struct scan *s, pid_t pid);

void scan_free(struct scan *s);

const char *insn_name(enum wait_insn insn);

#endif /* UT_SCAN_H */
