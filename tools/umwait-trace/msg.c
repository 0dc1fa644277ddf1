// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: one-line messages on stderr, libbpf's among them, and the
 * checks every BPF subcommand makes first (root, BTF).
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "ut.h"

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

