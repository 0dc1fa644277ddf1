// SPDX-License-Identifier: GPL-2.0
/*
 * lab-write: write DATA to FILE with a single write(2), exactly as given
 * (no newline added), and report the result the way tests want it:
 * prints "OK" and exits 0, or prints the errno name (EINVAL, ERANGE, ...)
 * and exits 1. With -x, DATA is hex ("41 00 ff" or "4100ff") for binary input.
 * With -n COUNT, COUNT writes (each its own open and write) take the DATA
 * arguments in turn, as fast as the kernel takes them: a burst; it stops at
 * the first failure.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errname.h"

static int unhex(const char *s, char *out, size_t *len)
{
	size_t n = 0;

	while (*s) {
		unsigned int b;

		if (isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) ||
		    sscanf(s, "%2x", &b) != 1)
			return -1;
		out[n++] = (char)b;
		s += 2;
	}
	*len = n;
	return 0;
}

/* One open, write(2) and close of BUF; 0, or the errno of the step that failed. */
static int write_once(const char *file, const char *buf, size_t len)
{
	int fd = open(file, O_WRONLY);

	if (fd < 0)
		return errno;
	if (write(fd, buf, len) < 0) {
		int err = errno;

		close(fd);
		return err;
	}
	return close(fd) ? errno : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: lab-write [-x] FILE DATA | lab-write -n COUNT FILE DATA...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long count = 0, i;
	const char *file, *data;
	char *buf, *end;
	int err, hex = 0;
	size_t len;

	if (argc == 4 && !strcmp(argv[1], "-x")) {
		hex = 1;
		argv++;
		argc--;
	} else if (argc >= 5 && !strcmp(argv[1], "-n")) {
		errno = 0;
		count = strtoul(argv[2], &end, 10);
		if (errno || end == argv[2] || *end || !count || argv[2][0] == '-') {
			fprintf(stderr, "lab-write: -n COUNT must be a number >= 1, not '%s'\n",
				argv[2]);
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc != 3 && !count)
		usage();
	file = argv[1];
	if (count) {
		for (i = 0; i < count; i++) {
			data = argv[2 + i % (argc - 2)];
			err = write_once(file, data, strlen(data));
			if (err) {
				printf("%s after %lu writes\n", errname(err), i);
				return 1;
			}
		}
		printf("OK\n");
		return 0;
	}
	data = argv[2];
	len = strlen(data);
	buf = malloc(len + 1);
	if (!buf)
		return 2;
	if (hex) {
		if (unhex(data, buf, &len)) {
			fprintf(stderr, "lab-write: -x DATA must be hex byte pairs\n");
			return 2;
		}
	} else {
		memcpy(buf, data, len);
	}
	err = write_once(file, buf, len);
	printf("%s\n", err ? errname(err) : "OK");
	return err ? 1 : 0;
}
