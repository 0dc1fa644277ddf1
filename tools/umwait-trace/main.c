// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: for TPAUSE and UMWAIT, the user-wait instructions of Intel's
 * WAITPKG, answer in one command on unmodified binaries:
 *
 *   caps    are the waits cut short by the kernel's limit (CF=1), how often,
 *           and for how long did they wait; C0.1/C0.2 residency per interval
 *   events  who changed IA32_UMWAIT_CONTROL (max_time, C0.2) and when
 *   status  does every CPU hold the value the kernel caches
 *   sites   where the TPAUSE/UMWAIT instructions of a binary are (no BPF)
 *
 * Style of BCC's libbpf-tools: argp, one struct env, const volatile filters
 * set between open and load, feature probes that decide what autoloads.
 */
#include <stdio.h>
#include <string.h>

#include "ut.h"

const char *argp_program_version = UT_NAME " 1.0";
const char *argp_program_bug_address = "the umwait lab's maintainers";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "status", cmd_status, "IA32_UMWAIT_CONTROL: the cached value and every CPU's" },
	{ "events", cmd_events, "stream the kernel's umwait:* tracepoints" },
	{ "caps", cmd_caps, "count TPAUSE/UMWAIT waits and those the OS limit capped" },
	{ "sites", cmd_sites, "list the TPAUSE/UMWAIT instructions in ELF files" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: %s COMMAND [OPTION...] [ARG...]\n\n"
		"Trace Intel's user-wait instructions TPAUSE and UMWAIT.\n\nCommands:\n",
		UT_NAME);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'%s COMMAND --help' describes each command.\n", UT_NAME);
}

int main(int argc, char **argv)
{
	static char name[64];
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return EXIT_TROUBLE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("%s\n", argp_program_version);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		/* argp names the program after argv[0]: "umwait-trace caps" */
		snprintf(name, sizeof(name), "%s %s", UT_NAME, cmds[i].name);
		argv[1] = name;
		return cmds[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "%s: unknown command '%s' (status, events, caps or sites; see '%s --help')\n",
		UT_NAME, argv[1], UT_NAME);
	return EXIT_TROUBLE;
}
