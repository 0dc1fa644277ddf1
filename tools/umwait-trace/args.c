// SPDX-License-Identifier: GPL-2.0
/* umwait-trace: command lines: one struct env, and the argp pieces subcommands share. */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>

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

/* parse_cmdline: a subcommand's argp parse; bad usage exits EXIT_TROUBLE */
int parse_cmdline(const struct argp *argp, int argc, char **argv)
{
	argp_err_exit_status = EXIT_TROUBLE;
	return argp_parse(argp, argc, argv, 0, NULL, NULL) ? EXIT_TROUBLE : 0;
}

/*
 * parse_common_opt: the options that mean the same in every subcommand that
 * offers them (-p PID, -T, --json, -v), and no argument; a subcommand's
 * parser hands it every key it does not handle itself.
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
		env.json = true;
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
