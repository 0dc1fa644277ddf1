// SPDX-License-Identifier: GPL-2.0
/* umwait-trace: command lines: one struct env, and the argp pieces subcommands share. */
#include <argp.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ut.h"

struct env env;

/* A decimal number >= min; 0 on success, -1 if ARG is not one. */
int parse_long(const char *arg, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

/* -o FILE: its directory must exist and take new files (the rename's temp file) */
static int check_output(void)
{
	char *dir, *slash;
	int rc = 0;

	if (!env.output)
		return 0;
	if (!FORMAT_METRICS(env.format)) {
		die_msg("--output needs --format prometheus or openmetrics");
		return EXIT_TROUBLE;
	}
	dir = strdup(env.output);
	if (!dir)
		return EXIT_TROUBLE;
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	if (access(slash ? dir : ".", W_OK | X_OK)) {
		die_msg("cannot write into the directory of %s: %s", env.output, strerror(errno));
		rc = EXIT_TROUBLE;
	}
	free(dir);
	return rc;
}

/*
 * usage_error: bad usage is one line on stderr, what is wrong and where to
 * look, and EXIT_TROUBLE; never argp's two (argp_error prints a second line).
 */
void usage_error(const struct argp_state *state, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", state->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see '%s --help')\n", state->name);
	exit(EXIT_TROUBLE);
}

/*
 * --help, --usage and --version, as argp's own, but exiting: argp's exit
 * after them is off with ARGP_NO_ERRS (it implies ARGP_NO_EXIT).
 */
enum { OPT_USAGE = 0x200 };

static const struct argp_option help_opts[] = {
	{ "help", '?', NULL, 0, "Give this help list", -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print program version", -1 },
	{},
};

static error_t help_parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	switch (key) {
	case '?':
		/* not argp_state_help(): it prints nothing under ARGP_NO_ERRS */
		argp_help(state->root_argp, stdout, ARGP_HELP_STD_HELP & ~ARGP_HELP_EXIT_OK, state->name);
		exit(0);
	case OPT_USAGE:
		argp_help(state->root_argp, stdout, ARGP_HELP_USAGE, state->name);
		exit(0);
	case 'V':
		printf("%s\n", argp_program_version);
		exit(0);
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp help_argp = { .options = help_opts, .parser = help_parse };

/*
 * parse_cmdline: a subcommand's argp parse; bad usage exits EXIT_TROUBLE.
 * argp's own errors (an unknown option, one without its value) are off, so
 * that getopt prints nothing; parse_common_opt() says them in one line.
 */
int parse_cmdline(const struct argp *argp, int argc, char **argv)
{
	const struct argp_child kids[] = { { &help_argp, 0, NULL, -1 }, {} };
	struct argp a = *argp;

	a.children = kids;
	argp_err_exit_status = EXIT_TROUBLE;
	if (argp_parse(&a, argc, argv, ARGP_NO_ERRS | ARGP_NO_HELP, NULL, NULL)) {
		fprintf(stderr, "%s: invalid arguments (see '%s --help')\n", argv[0], argv[0]);
		return EXIT_TROUBLE;
	}
	return check_output();
}

static void set_format(enum format f)
{
	env.format = f;
	env.json = f == FORMAT_JSON;
}

/*
 * parse_common_opt: the options that mean the same in every subcommand that
 * offers them (-p PID, -T, --json, --format, -o, -v), and no argument; a
 * subcommand's parser hands it every key it does not handle itself.
 */
error_t parse_common_opt(int key, char *arg, struct argp_state *state)
{
	long v;

	switch (key) {
	case 'p':
		/* PID_MAX_LIMIT: no PID is larger; never truncated into another PID */
		if (parse_long(arg, 1, &v) || v > 4194304)
			usage_error(state, "invalid PID '%s' (a number from 1 to 4194304)", arg);
		env.pid = v;
		break;
	case 'T':
		env.timestamp = true;
		break;
	case OPT_JSON:
		set_format(FORMAT_JSON);
		break;
	case OPT_FORMAT:
		if (!strcmp(arg, "text"))
			set_format(FORMAT_TEXT);
		else if (!strcmp(arg, "json"))
			set_format(FORMAT_JSON);
		else if (!strcmp(arg, "prometheus"))
			set_format(FORMAT_PROMETHEUS);
		else if (!strcmp(arg, "openmetrics"))
			set_format(FORMAT_OPENMETRICS);
		else
			usage_error(state, "invalid format '%s' (text, json, prometheus or openmetrics)", arg);
		break;
	case 'o':
		if (!*arg)
			usage_error(state, "empty output file name");
		env.output = arg;
		break;
	case 'v':
		env.verbose = true;
		break;
	case ARGP_KEY_ARG:
		usage_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_ERROR:
		/* getopt stopped at it: an unknown option, or one without its value */
		usage_error(state, "unknown option, or an option without its value: '%s'",
			    state->argv[state->next > 1 ? state->next - 1 : 1]);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* add_file_arg: argp ARGP_KEY_ARG for subcommands that take FILEs */
void add_file_arg(struct argp_state *state, char *arg)
{
	env.files = realloc(env.files, (env.nr_files + 1) * sizeof(*env.files));
	if (!env.files)
		usage_error(state, "out of memory");
	env.files[env.nr_files++] = arg;
}

/* need_target: argp ARGP_KEY_END for subcommands that scan FILEs or -p PID */
void need_target(struct argp_state *state)
{
	if (!env.pid && !env.nr_files)
		usage_error(state, "give FILEs or -p PID");
}
