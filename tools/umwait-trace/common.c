// SPDX-License-Identifier: GPL-2.0
/* umwait-trace: messages, checks and small helpers every subcommand uses. */
#include <argp.h>
#include <cpuid.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "ut.h"

struct env env;
volatile sig_atomic_t exiting;
volatile sig_atomic_t dump_requested;

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", UT_NAME, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void warn_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* libbpf's messages: debug ones only with -v */
void setup_libbpf(void)
{
	libbpf_set_print(libbpf_print_fn);
}

int need_root(void)
{
	if (geteuid() == 0)
		return 0;
	die_msg("must run as root (BPF, perf events, debugfs and the MSR device need it)");
	return EXIT_TROUBLE;
}

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

int need_btf(void)
{
	if (!access(VMLINUX_BTF, R_OK))
		return 0;
	die_msg("kernel has no BTF (%s: %s): build it with CONFIG_DEBUG_INFO_BTF=y",
		VMLINUX_BTF, strerror(errno));
	return EXIT_TROUBLE;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_requested = 1;
	else
		exiting = 1;
}

/* No SA_RESTART: a signal ends the main loop's sleep at once. */
void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
}

void format_time(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* PART as a percentage of WHOLE; 0 when WHOLE is 0 */
double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

bool cpu_has_waitpkg(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
		return false;
	return ecx & (1u << 5);
}

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
