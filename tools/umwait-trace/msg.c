// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: one-line messages on stderr, libbpf's among them, and the
 * checks every BPF subcommand makes first (capabilities, BTF, the kernel's
 * BPF features).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
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

/* whether capability CAP is in the effective set */
static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

/*
 * events loads BPF programs and opens perf events (kprobes): CAP_BPF and
 * CAP_PERFMON (Linux 5.8 on), or CAP_SYS_ADMIN, which holds both; root need
 * not be. The message names what is missing.
 */
int need_bpf_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	bool bpf, perfmon;

	if (syscall(SYS_capget, &h, d)) {
		die_msg("cannot read this process's capabilities: %s", strerror(errno));
		return EXIT_TROUBLE;
	}
	bpf = has_cap(d, CAP_BPF);
	perfmon = has_cap(d, CAP_PERFMON);
	if (has_cap(d, CAP_SYS_ADMIN) || (bpf && perfmon))
		return 0;
	die_msg("needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN (root has them): missing %s",
		!bpf && !perfmon ? "CAP_BPF and CAP_PERFMON" : !bpf ? "CAP_BPF" : "CAP_PERFMON");
	return EXIT_TROUBLE;
}

/*
 * Can this process create a uprobe?  Linux (6.1, 6.12) creates a uprobe
 * perf event for CAP_SYS_ADMIN alone (perf_uprobe_event_init), where kprobes
 * and tracepoints take CAP_PERFMON: one on this program's own file, at its
 * ELF header (in no executable mapping: never hit), tells.
 */
static bool uprobe_allowed(void)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	uint64_t type;
	int fd;

	if (read_u64_file("/sys/bus/event_source/devices/uprobe/type", &type))
		return false;
	attr.type = type;
	attr.config1 = (uintptr_t)"/proc/self/exe";
	attr.config2 = 0;
	fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return errno != EACCES && errno != EPERM;
}

/*
 * caps puts uprobes on: CAP_SYS_ADMIN, root or not (CAP_BPF and CAP_PERFMON
 * where the kernel lets them create uprobes, none so far)
 */
int need_uprobe_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d)) {
		die_msg("cannot read this process's capabilities: %s", strerror(errno));
		return EXIT_TROUBLE;
	}
	if (has_cap(d, CAP_SYS_ADMIN) ||
	    (has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON) && uprobe_allowed()))
		return 0;
	die_msg("needs CAP_SYS_ADMIN (root has it): this kernel creates uprobes for it alone, "
		"CAP_BPF and CAP_PERFMON are not enough");
	return EXIT_TROUBLE;
}

/*
 * What the BPF side needs of the kernel, probed at start: the ring buffer
 * (5.8) for both subcommands, and for caps BPF cookies on uprobes (5.15),
 * with which one program serves every probe. One line when one is missing,
 * with the floor: Linux 5.15.
 */
int need_kernel(bool uprobes)
{
	const char *missing = NULL;
	struct utsname u;

	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1)
		missing = "the BPF ring buffer";
	else if (uprobes && libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
						   BPF_FUNC_get_attach_cookie, NULL) != 1)
		missing = "BPF cookies on uprobes";
	if (!missing)
		return 0;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	die_msg("needs Linux 5.15 or later: this kernel (%s) lacks %s", u.release, missing);
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

