// SPDX-License-Identifier: GPL-2.0
/* umwait-trace: what the CPUs are: WAITPKG, vendor, the lists in sysfs. */
#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ut.h"

bool cpu_has_waitpkg(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
		return false;
	return ecx & (1u << 5);
}

/* A sysfs CPU list file ("0-3,8,10-11") -> its CPUs; their number, or -1 */
int parse_cpulist(const char *path, int **cpus)
{
	char buf[4096], *p, *tok, *save;
	int n = 0, lo, hi, c;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	*cpus = NULL;
	for (p = buf; (tok = strtok_r(p, ",\n", &save)); p = NULL) {
		if (sscanf(tok, "%d-%d", &lo, &hi) != 2) {
			if (sscanf(tok, "%d", &lo) != 1)
				continue;
			hi = lo;
		}
		for (c = lo; c <= hi; c++) {
			int *v = realloc(*cpus, (n + 1) * sizeof(int));

			if (!v)
				return -1;
			*cpus = v;
			(*cpus)[n++] = c;
		}
	}
	return n;
}

/* A file holding one unsigned number (sysfs): 0, or a negative errno */
int read_u64_file(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "re");
	unsigned long long x;
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	if (!ok)
		return -EINVAL;
	*v = x;
	return 0;
}
