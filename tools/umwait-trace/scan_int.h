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

/* grow *V (of *CAP elements of SIZE) to hold NR + 1; false without memory */
bool scan_grow(void **v, int *cap, int nr, size_t size);

#endif /* UT_SCAN_INT_H */
