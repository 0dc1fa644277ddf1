// SPDX-License-Identifier: GPL-2.0
/* umwait-trace: small formatting helpers shared by the text and JSON printers. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "ut.h"

void format_time(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

/*
 * The length of the valid UTF-8 sequence at S (1 to 4), or 0 if the bytes
 * there are not one: a stray continuation byte, a sequence cut short (comm
 * is cut at 15 bytes, whatever it splits), an overlong form, a surrogate, a
 * code point past U+10FFFF.
 */
size_t utf8_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, i;
	uint32_t cp;

	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		n = 2, cp = u[0] & 0x1f;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		n = 3, cp = u[0] & 0x0f;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		n = 4, cp = u[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * S with every byte that is not part of valid UTF-8 written as U+FFFD (the
 * replacement character), each byte that ESCAPE says so written by it: one
 * place that decides what a label value or a JSON string may hold.
 */
void utf8_write(FILE *f, const char *s, void (*escape)(FILE *f, unsigned char c))
{
	while (s && *s) {
		size_t n = utf8_len(s);

		if (!n) {
			fputs("\xef\xbf\xbd", f);
			s++;
		} else if (n == 1) {
			escape(f, *s++);
		} else {
			fwrite(s, 1, n, f);
			s += n;
		}
	}
}

static void json_escape(FILE *f, unsigned char c)
{
	if (c == '"' || c == '\\')
		fprintf(f, "\\%c", c);
	else if (c < 0x20 || c == 0x7f)
		fprintf(f, "\\u%04x", c);
	else
		fputc(c, f);
}

/* a JSON string: valid UTF-8 whatever S holds (invalid bytes as U+FFFD) */
void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	utf8_write(f, s, json_escape);
	fputc('"', f);
}

/* PART as a percentage of WHOLE; 0 when WHOLE is 0 */
double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}
