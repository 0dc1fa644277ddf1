// SPDX-License-Identifier: GPL-2.0
/*
 * bench-floor: attach a BPF program that does nothing as a uprobe at FILE
 * OFFSET and keep it there until SIGINT or SIGTERM.  The cost it adds to each
 * hit is the floor any uprobe-based tracer at that instruction starts from.
 * Says "Attached" on stderr once the probe is live.
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include "bench-floor.skel.h"

static struct env {
	const char *file;
	unsigned long offset;
} env;

const char *argp_program_version = "bench-floor 1.0";
error_t argp_err_exit_status = 2;
static const char doc[] =
"Attach an empty BPF program as a uprobe at FILE OFFSET until Ctrl-C.\n"
"\n"
"USAGE: bench-floor FILE OFFSET\n"
"\n"
"OFFSET is a file offset (0x.. for hex), as umwait-trace sites prints it.\n";

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case ARGP_KEY_ARG:
		if (state->arg_num == 0) {
			env.file = arg;
		} else if (state->arg_num == 1) {
			errno = 0;
			env.offset = strtoul(arg, &end, 0);
			if (errno || end == arg || *end || arg[0] == '-')
				argp_error(state, "invalid offset: '%s'", arg);
		} else {
			argp_error(state, "unexpected argument '%s'", arg);
		}
		break;
	case ARGP_KEY_END:
		if (state->arg_num != 2)
			argp_error(state, "give FILE and OFFSET");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .parser = parse_arg, .doc = doc };
	struct bench_floor_bpf *skel;
	struct bpf_link *link;
	int err;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	libbpf_set_print(NULL);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	skel = bench_floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "bench-floor: cannot load the BPF program: %s (root? BPF enabled?)\n",
			strerror(errno));
		return 2;
	}
	link = bpf_program__attach_uprobe(skel->progs.floor_probe, false, -1, env.file,
					  env.offset);
	if (!link) {
		err = errno;
		fprintf(stderr, "bench-floor: cannot attach to %s offset 0x%lx: %s\n", env.file,
			env.offset, strerror(err));
		bench_floor_bpf__destroy(skel);
		return 2;
	}
	fprintf(stderr, "Attached 1 uprobe at %s 0x%lx. Hit Ctrl-C to end.\n", env.file,
		env.offset);
	/* a signal ends the sleep early; checking once a second avoids a lost wake-up */
	while (!exiting)
		sleep(1);
	bpf_link__destroy(link);
	bench_floor_bpf__destroy(skel);
	return 0;
}
