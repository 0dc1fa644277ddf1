// SPDX-License-Identifier: GPL-2.0
/*
 * write-rate: write VALUEs to FILE in turn, one write(2) each, for a while and
 * report how many writes per second went through.  The file stays open, so
 * what is timed is the write path itself (for a sysfs control: its store
 * handler and whatever tracing hangs off it), not open/close.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct env {
	double seconds;
	const char *file;
	char **values;
	int nr_values;
} env = {
	.seconds = 2,
};

const char *argp_program_version = "write-rate 1.0";
error_t argp_err_exit_status = 2;
static const char doc[] =
"Write VALUEs to FILE in turn for SECONDS and report writes per second.\n"
"\n"
"USAGE: write-rate [-d SECONDS] FILE VALUE...\n"
"\n"
"EXAMPLE:\n"
"    write-rate /sys/devices/system/cpu/umwait_control/max_time 100000 200000\n";

static const struct argp_option opts[] = {
	{ "duration", 'd', "SECONDS", 0, "How long to write (default 2)", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case 'd':
		errno = 0;
		env.seconds = strtod(arg, &end);
		if (errno || end == arg || *end || env.seconds <= 0)
			argp_error(state, "invalid duration: '%s'", arg);
		break;
	case ARGP_KEY_ARG:
		if (!env.file) {
			env.file = arg;
			break;
		}
		env.values = &state->argv[state->next - 1];
		env.nr_values = state->argc - state->next + 1;
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (!env.nr_values)
			argp_error(state, "give FILE and at least one VALUE");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	unsigned long writes = 0;
	double begin, elapsed;
	int fd;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;

	fd = open(env.file, O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "write-rate: cannot open %s: %s\n", env.file, strerror(errno));
		return 1;
	}
	begin = now();
	do {
		const char *v = env.values[writes % env.nr_values];

		if (pwrite(fd, v, strlen(v), 0) < 0) {
			fprintf(stderr, "write-rate: writing '%s' to %s: %s\n", v, env.file,
				strerror(errno));
			return 1;
		}
		writes++;
		elapsed = now() - begin;
	} while (elapsed < env.seconds);
	close(fd);

	printf("write-rate: writes=%lu seconds=%.3f rate=%.0f\n", writes, elapsed, writes / elapsed);
	return 0;
}
