// SPDX-License-Identifier: GPL-2.0
/*
 * scan-fuzz: libFuzzer's entry into umwait-trace's ELF scanner and decoder
 * (tools/umwait-trace/scan.c, scan_code.c), built with AddressSanitizer and
 * UBSan (tests/fuzz/run).  Each input is a file's bytes, scanned as caps
 * and sites scan a file: through a memfd, by its /proc/self/fd path.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scan.h"
#include "ut.h"

struct env env;

/* the scanner's messages: nothing to see while fuzzing */
void die_msg(const char *fmt, ...)
{
	(void)fmt;
}

void warn_msg(const char *fmt, ...)
{
	(void)fmt;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scan s = { .exact_mode = size & 1 };
	char path[64];
	size_t done = 0;
	int fd, i;

	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0)
			break;
		done += n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	scan_elf(&s, "input", path);
	/* what sites -v and caps read of the result */
	for (i = 0; i < s.nr_sites; i++) {
		const struct site *site = &s.sites[i];
		int a;

		for (a = site->arrival; a < site->arrival + site->nr_arrivals; a++)
			(void)arrival_how_name(s.arrivals[a].how);
	}
	scan_free(&s);
	close(fd);
	return 0;
}
