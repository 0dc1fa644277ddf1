// SPDX-License-Identifier: GPL-2.0
/*
 * msr: read or write a model-specific register through /dev/cpu/N/msr.
 *
 *   msr read CPU REG          prints 0x%016llx
 *   msr write CPU REG VALUE   exits 1 and names the errno when the write fails
 *                             (EIO: the CPU raised #GP)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errname.h"

static int parse(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || s[0] == '-' ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t cpu, reg, val;
	char path[64];
	int fd, wr;
	ssize_t n;

	wr = argc == 5 && !strcmp(argv[1], "write");
	if (!(argc == 4 && !strcmp(argv[1], "read")) && !wr) {
		fprintf(stderr, "usage: msr read CPU REG | msr write CPU REG VALUE\n");
		return 2;
	}
	if (parse(argv[2], &cpu) || parse(argv[3], &reg) || (wr && parse(argv[4], &val))) {
		fprintf(stderr, "msr: CPU, REG and VALUE must be numbers (0x.. for hex)\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/dev/cpu/%llu/msr", (unsigned long long)cpu);
	fd = open(path, wr ? O_WRONLY : O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "msr: %s: %s (%s)\n", path, strerror(errno), errname(errno));
		return 1;
	}
	if (wr)
		n = pwrite(fd, &val, sizeof(val), (off_t)reg);
	else
		n = pread(fd, &val, sizeof(val), (off_t)reg);
	if (n != sizeof(val)) {
		int e = n < 0 ? errno : EIO;

		fprintf(stderr, "msr: %s cpu%llu 0x%llx: %s (%s)\n", wr ? "write" : "read",
			(unsigned long long)cpu, (unsigned long long)reg, strerror(e), errname(e));
		return 1;
	}
	if (!wr)
		printf("0x%016llx\n", (unsigned long long)val);
	return 0;
}
