// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-fuzz: write random byte strings to the umwait_control sysfs files,
 * one write(2) each, and check every result against a model of what Linux
 * 6.1 does with them: kernfs hands at most one page to the store (a zero
 * length write never reaches it), the string ends at the first NUL,
 * enable_c02 takes kstrtobool(), max_time kstrtou32() in base 0 with bits
 * 1:0 clear.
 *
 * Sequential (-n COUNT): after each write both files must read what the
 * model says, so a rejected write must leave the state exactly as it was.
 * Concurrent (-d SECONDS): other writers change the state meanwhile, so
 * only each write's own result is checked; half of the writes are valid
 * values, and every accepted write is logged (-l) for the caller to match
 * against the trace events.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errname.h"

#define PAGE	4096			/* kernfs passes at most this much to a store */
#define BUF_MAX	(3 * PAGE)		/* the largest string written */
#define TIME_MASK	0xfffffffcU
#define MAX_REPORTS	20		/* disagreements printed in full */

enum kind { C02, MAX_TIME };

struct target {
	const char *path;
	const char *name;	/* basename: enable_c02 or max_time */
	enum kind kind;
	unsigned long writes, accepted, einval, erange, other, bad;
};

static struct env {
	unsigned long count;
	long seconds;
	uint64_t seed;
	bool seeded;
	const char *log;
	struct target t[2];
	int nr;
} env = { .count = 1000 };

const char *argp_program_version = "umwait-fuzz 1.0";
error_t argp_err_exit_status = 2;
static const char doc[] =
"Write random byte strings to /sys/devices/system/cpu/umwait_control/{enable_c02,\n"
"max_time}, one write(2) each, and check each result (and, sequentially, the\n"
"state after it) against a model of Linux 6.1's parsing.\n"
"\n"
"USAGE: umwait-fuzz [-n COUNT] [-s SEED] FILE...\n"
"       umwait-fuzz -d SECONDS [-s SEED] [-l LOG] FILE...\n"
"\n"
"Prints one summary line per FILE; exits 1 if any write disagreed with the model.\n";

static const struct argp_option opts[] = {
	{ "count", 'n', "COUNT", 0, "Writes per FILE, one after the other (default 1000)", 0 },
	{ "duration", 'd', "SECONDS", 0,
	  "Write to random FILEs for SECONDS, alongside other writers", 0 },
	{ "seed", 's', "SEED", 0, "Seed of the random strings (default: time and PID)", 0 },
	{ "log", 'l', "LOG", 0, "With -d: append 'NAME VALUE' per accepted write to LOG", 0 },
	{},
};

static int parse_num(const char *arg, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 0);
	return errno || end == arg || *end || arg[0] == '-' ? -1 : 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	struct target *t;
	uint64_t v;

	switch (key) {
	case 'n':
		if (parse_num(arg, &v) || !v)
			argp_error(state, "COUNT must be a number >= 1, not '%s'", arg);
		env.count = v;
		break;
	case 'd':
		if (parse_num(arg, &v) || !v || v > 86400)
			argp_error(state, "SECONDS must be 1 to 86400, not '%s'", arg);
		env.seconds = v;
		break;
	case 's':
		if (parse_num(arg, &env.seed))
			argp_error(state, "SEED must be a number, not '%s'", arg);
		env.seeded = true;
		break;
	case 'l':
		env.log = arg;
		break;
	case ARGP_KEY_ARG:
		if (env.nr == 2)
			argp_error(state, "at most two FILEs (enable_c02 and max_time)");
		t = &env.t[env.nr++];
		t->path = arg;
		t->name = basename(arg);
		if (!strcmp(t->name, "enable_c02"))
			t->kind = C02;
		else if (!strcmp(t->name, "max_time"))
			t->kind = MAX_TIME;
		else
			argp_error(state, "'%s' is neither enable_c02 nor max_time", arg);
		break;
	case ARGP_KEY_END:
		if (!env.nr)
			argp_error(state, "give enable_c02 and/or max_time");
		if (env.log && !env.seconds)
			argp_error(state, "-l needs -d");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed, no libc state */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static unsigned int below(unsigned int n)
{
	return rnd() % n;
}

static const char *pick(const char *const *list, unsigned int n)
{
	return list[below(n)];
}

#define PICK(list) pick(list, sizeof(list) / sizeof(list[0]))

/* The model: errno the store returns, or 0 with the field's new value. */
static bool is_digit_in(unsigned char c, unsigned int base, unsigned int *val)
{
	unsigned int lc = c | 0x20;

	if (c >= '0' && c <= '9')
		*val = c - '0';
	else if (lc >= 'a' && lc <= 'f')
		*val = lc - 'a' + 10;
	else
		return false;
	return *val < base;
}

static int model_u32(const char *s, uint32_t *out)
{
	unsigned int base, val, n = 0;
	unsigned __int128 res = 0;
	bool overflow = false;

	if (*s == '+')
		s++;
	if (s[0] == '0')
		base = (s[1] | 0x20) == 'x' && is_digit_in(s[2], 16, &val) ? 16 : 8;
	else
		base = 10;
	if (base == 16)
		s += 2;
	for (; is_digit_in(*s, base, &val); s++, n++) {
		res = res * base + val;
		overflow |= res > UINT64_MAX;
	}
	if (overflow)
		return ERANGE;
	if (!n)
		return EINVAL;
	if (*s == '\n')
		s++;
	if (*s)
		return EINVAL;
	if (res > UINT32_MAX)
		return ERANGE;
	*out = (uint32_t)res;
	return 0;
}

static int model_bool(const char *s, uint32_t *out)
{
	switch (s[0]) {
	case 'y': case 'Y': case 't': case 'T': case '1':
		*out = 1;
		return 0;
	case 'n': case 'N': case 'f': case 'F': case '0':
		*out = 0;
		return 0;
	case 'o': case 'O':
		if (s[1] == 'n' || s[1] == 'N') {
			*out = 1;
			return 0;
		}
		if (s[1] == 'f' || s[1] == 'F') {
			*out = 0;
			return 0;
		}
		break;
	}
	return EINVAL;
}

/* What a write of BUF[0..LEN) should do: errno, or 0 and the new value. */
static int model(enum kind kind, const char *buf, size_t len, uint32_t *val)
{
	static char s[PAGE + 1];
	int err;

	len = len < PAGE ? len : PAGE;
	memcpy(s, buf, len);
	s[len] = '\0';
	if (kind == C02)
		return model_bool(s, val);
	err = model_u32(s, val);
	if (!err && (*val & ~TIME_MASK))
		err = EINVAL;
	return err;
}

/* Random strings: each generator stresses one corner of the parsers. */
static const char *const bools[] = {
	"y", "Y", "n", "N", "1", "0", "t", "T", "f", "F", "on", "ON", "oN", "off", "OFF",
	"yes", "no", "true", "false", "o", "O", "of", "ox", "2", "-1", "x", "maybe",
};
/* what may follow a value: lengths given, as some carry a NUL */
static const struct {
	const char *s;
	size_t len;
} pads[] = {
	{ "", 0 }, { "\n", 1 }, { "\n\n", 2 }, { " ", 1 }, { "\t", 1 }, { "\r\n", 2 },
	{ "\0", 1 }, { "\n\0x", 3 },
};

static size_t put(char *buf, size_t at, const char *s, size_t n)
{
	if (at + n > BUF_MAX)
		n = BUF_MAX - at;
	memcpy(buf + at, s, n);
	return at + n;
}

static size_t puts_(char *buf, size_t at, const char *s)
{
	return put(buf, at, s, strlen(s));
}

static size_t pad(char *buf, size_t at)
{
	unsigned int i = below(sizeof(pads) / sizeof(pads[0]));

	return put(buf, at, pads[i].s, pads[i].len);
}

/* A number in decimal, hex (0x/0X, any case) or octal. */
static size_t number(char *buf, size_t at, uint64_t v)
{
	char s[64];

	switch (below(4)) {
	case 0:
		snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
		break;
	case 1:
		snprintf(s, sizeof(s), "0x%llx", (unsigned long long)v);
		break;
	case 2:
		snprintf(s, sizeof(s), "0X%llX", (unsigned long long)v);
		break;
	default:
		snprintf(s, sizeof(s), "0%llo", (unsigned long long)v);
		break;
	}
	return puts_(buf, at, s);
}

static size_t gen_valid(enum kind kind, char *buf)
{
	size_t n;

	if (kind == C02)
		n = puts_(buf, 0, bools[below(17)]);	/* the accepted spellings */
	else
		n = number(buf, 0, below(3) ? below(500000) & TIME_MASK : rnd() & TIME_MASK);
	return below(2) ? put(buf, n, "\n", 1) : n;
}

static size_t gen_fuzz(enum kind kind, char *buf)
{
	static const char *const signs[] = { "+", "-", "++", "+-", "-+", "--" };
	static const char *const prefixes[] = { "0x", "0X", "0", "00", "0x0x", "x", "0b", "0o" };
	static const char *const junk = "0123456789abcdefABCDEFxXgG+- \t\n\r.,eE";
	size_t n = 0, i, len;

	switch (below(11)) {
	case 0:		/* empty, or only a newline */
		return below(2) ? 0 : put(buf, 0, "\n", 1);
	case 1:		/* huge: about a page and up to three, zeros or any digits */
		len = PAGE - 2 + below(2 * PAGE);
		memset(buf, '0', len);
		if (below(2))
			for (i = 0; i < len; i++)
				buf[i] = '0' + below(10);
		return len;
	case 2:		/* binary bytes, NULs included */
		len = 1 + below(64);
		for (i = 0; i < len; i++)
			buf[i] = (char)rnd();
		return len;
	case 3:		/* signs */
		n = puts_(buf, 0, PICK(signs));
		n = number(buf, n, rnd() >> below(64));
		return pad(buf, n);
	case 4:		/* whitespace around a valid value */
		n = pad(buf, 0);
		n += gen_valid(kind, buf + n);
		return pad(buf, n);
	case 5:		/* 0x / 0 prefixes and stray digits */
		n = puts_(buf, 0, PICK(prefixes));
		len = below(12);
		for (i = 0; i < len; i++)
			buf[n++] = "0123456789abcdefgxX"[below(19)];
		return pad(buf, n);
	case 6:		/* 2^32 and up, up to well past 2^64 */
		if (below(4)) {
			n = number(buf, 0, (1ULL << 32) + (rnd() >> below(33)));
		} else {
			len = 20 + below(30);
			for (i = 0; i < len; i++)
				buf[n++] = '1' + below(9);
		}
		return pad(buf, n);
	case 7:		/* values with bits 1:0 set, and u32 limits */
		return number(buf, 0, below(2) ? (rnd() & 0xffffffff) | (1 + below(3)) :
			      0xffffffffULL - below(8));
	case 8:		/* the boolean words, right and wrong */
		n = puts_(buf, 0, PICK(bools));
		return pad(buf, n);
	case 9:		/* a valid value with one byte changed, inserted or removed */
		n = gen_valid(kind, buf);
		i = below(n + 1);
		switch (below(3)) {
		case 0:
			if (i < n)
				buf[i] = junk[below(strlen(junk))];
			break;
		case 1:
			memmove(buf + i + 1, buf + i, n - i);
			buf[i] = junk[below(strlen(junk))];
			n++;
			break;
		default:
			if (i < n) {
				memmove(buf + i, buf + i + 1, n - i - 1);
				n--;
			}
		}
		return n;
	default:	/* random junk characters */
		len = 1 + below(24);
		for (i = 0; i < len; i++)
			buf[i] = junk[below(strlen(junk))];
		return len;
	}
}

struct state {
	uint32_t max_time, c02;
};

static int read_u32(const char *dir, const char *name, uint32_t *v)
{
	char path[4096];
	unsigned int x;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	ok = fscanf(f, "%u", &x) == 1;
	fclose(f);
	*v = x;
	return ok ? 0 : -1;
}

static int read_state(const char *dir, struct state *s)
{
	return read_u32(dir, "max_time", &s->max_time) || read_u32(dir, "enable_c02", &s->c02);
}

/* One write(2) of BUF; errno, or 0 with the byte count in *ret. */
static int write_once(const char *path, const char *buf, size_t len, ssize_t *ret)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	*ret = write(fd, buf, len);
	if (*ret < 0)
		err = errno;
	close(fd);
	return err;
}

static void hexdump(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < 40; i++)
		printf("%02x", (unsigned char)buf[i]);
	printf("%s (%zu bytes)", len > 40 ? "..." : "", len);
}

/* Count a write's result; print it in full when it disagrees. */
static void account(struct target *t, const char *buf, size_t len, int want, int got,
		    ssize_t ret, const char *why)
{
	size_t want_ret = len < PAGE ? len : PAGE;

	t->writes++;
	if (!got)
		t->accepted++;
	else if (got == EINVAL)
		t->einval++;
	else if (got == ERANGE)
		t->erange++;
	else
		t->other++;
	if (!why && want == got && (got || (size_t)ret == want_ret))
		return;
	if (t->bad++ >= MAX_REPORTS)
		return;
	printf("umwait-fuzz: MISMATCH %s <- ", t->name);
	hexdump(buf, len);
	printf(": want %s", want ? errname(want) : "OK");
	if (!want)
		printf(" (%zu)", want_ret);
	printf(", got %s", got ? errname(got) : "OK");
	if (!got)
		printf(" (%zd)", ret);
	if (why)
		printf(", %s", why);
	printf("\n");
}

static int sequential(void)
{
	static char buf[BUF_MAX + 1];
	char dir[4096], why[160], *slash;
	struct state before, after, want;
	unsigned long i;
	int k;

	for (k = 0; k < env.nr; k++) {
		struct target *t = &env.t[k];

		/* the other file of the pair sits next to this one */
		snprintf(dir, sizeof(dir), "%s", t->path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
		for (i = 0; i < env.count; i++) {
			size_t len = gen_fuzz(t->kind, buf);
			int want_err, got;
			uint32_t val = 0;
			ssize_t ret = 0;

			if (read_state(dir, &before)) {
				fprintf(stderr, "umwait-fuzz: cannot read %s/max_time and enable_c02\n",
					dir);
				return 2;
			}
			want_err = len ? model(t->kind, buf, len, &val) : 0;
			got = write_once(t->path, buf, len, &ret);
			want = before;
			if (len && !want_err && t->kind == C02)
				want.c02 = val;
			else if (len && !want_err)
				want.max_time = val;
			why[0] = '\0';
			if (read_state(dir, &after))
				snprintf(why, sizeof(why), "state unreadable after the write");
			else if (after.max_time != want.max_time || after.c02 != want.c02)
				snprintf(why, sizeof(why),
					 "state max_time=%u enable_c02=%u -> %u %u, want %u %u",
					 before.max_time, before.c02, after.max_time, after.c02,
					 want.max_time, want.c02);
			account(t, buf, len, want_err, got, ret, why[0] ? why : NULL);
		}
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int concurrent(void)
{
	static char buf[BUF_MAX + 1];
	double end = now() + env.seconds;
	FILE *log = NULL;

	if (env.log) {
		log = fopen(env.log, "ae");
		if (!log) {
			fprintf(stderr, "umwait-fuzz: cannot open %s: %s\n", env.log, strerror(errno));
			return 2;
		}
		setvbuf(log, NULL, _IOLBF, 0);
	}
	while (now() < end) {
		struct target *t = &env.t[below(env.nr)];
		size_t len = below(2) ? gen_valid(t->kind, buf) : gen_fuzz(t->kind, buf);
		int want_err, got;
		uint32_t val = 0;
		ssize_t ret = 0;

		want_err = len ? model(t->kind, buf, len, &val) : 0;
		got = write_once(t->path, buf, len, &ret);
		account(t, buf, len, want_err, got, ret, NULL);
		/* a zero-length write never reaches the store: nothing to log */
		if (log && !got && len)
			fprintf(log, "%s %u\n", t->name, val);
	}
	if (log)
		fclose(log);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	int k, rc, bad = 0;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	if (!env.seeded)
		env.seed = (uint64_t)time(NULL) << 16 ^ (uint64_t)getpid();
	rng_state = env.seed | 1;
	printf("umwait-fuzz: seed=%llu\n", (unsigned long long)env.seed);
	rc = env.seconds ? concurrent() : sequential();
	if (rc)
		return rc;
	for (k = 0; k < env.nr; k++) {
		struct target *t = &env.t[k];

		printf("umwait-fuzz: file=%s writes=%lu accepted=%lu EINVAL=%lu ERANGE=%lu "
		       "other=%lu mismatches=%lu\n", t->name, t->writes, t->accepted, t->einval,
		       t->erange, t->other, t->bad);
		bad += t->bad > 0;
	}
	return bad ? 1 : 0;
}
