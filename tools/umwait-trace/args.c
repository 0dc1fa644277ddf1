// SPDX-License-Identifier: GPL-2.0
/* umwait-trace: command lines: one struct env, and the argp pieces subcommands share. */
#include <argp.h>
#include <errno.h>
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
	if (env.format != FORMAT_OPENMETRICS) {
		die_msg("--output needs --format openmetrics");
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

/* parse_cmdline: a subcommand's argp parse; bad usage exits EXIT_TROUBLE */
int parse_cmdline(const struct argp *argp, int argc, char **argv)
{
	argp_err_exit_status = EXIT_TROUBLE;
	if (argp_parse(argp, argc, argv, 0, NULL, NULL))
		return EXIT_TROUBLE;
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
		if (parse_long(arg, 1, &v))
			argp_error(state, "invalid PID '%s'", arg);
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
		else if (!strcmp(arg, "openmetrics"))
			set_format(FORMAT_OPENMETRICS);
		else
			argp_error(state, "invalid format '%s' (text, json or openmetrics)", arg);
		break;
	case 'o':
		if (!*arg)
			argp_error(state, "empty output file name");
		env.output = arg;
		break;
	case 'v':
		env.verbose = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
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
		argp_failure(state, EXIT_TROUBLE, 0, "out of memory");
	env.files[env.nr_files++] = arg;
}

/* need_target: argp ARGP_KEY_END for subcommands that scan FILEs or -p PID */
void need_target(struct argp_state *state)
{
	if (!env.pid && !env.nr_files)
		argp_error(state, "give FILEs or -p PID");
}
