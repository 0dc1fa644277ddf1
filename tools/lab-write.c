// SPDX-License-Identifier: GPL-2.0
/*
 * lab-write: write DATA to FILE with a single write(2), exactly as given
 * (no newline added), and report the result the way tests want it:
 * prints "OK" and exits 0, or prints the errno name (EINVAL, ERANGE, ...)
 * and exits 1. With -x, DATA is hex ("41 00 ff" or "4100ff") for binary input.
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

int main(int argc, char **argv)
{
	const char *file, *data;
	size_t len;
	char *buf;
	int fd, hex = 0;
	ssize_t n;

	if (argc == 4 && !strcmp(argv[1], "-x")) {
		hex = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: lab-write [-x] FILE DATA\n");
		return 2;
	}
	file = argv[1];
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
	fd = open(file, O_WRONLY);
	if (fd < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	n = write(fd, buf, len);
	if (n < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	if (close(fd)) {
		printf("%s\n", errname(errno));
		return 1;
	}
	printf("OK\n");
	return 0;
}
