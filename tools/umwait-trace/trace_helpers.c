// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: histogram printers and kernel feature probes, in the manner
 * of libbpf-tools' trace_helpers.c.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ut.h"

static void print_stars(unsigned long long val, unsigned long long max, int width)
{
	int stars = max ? (int)(val * width / max) : 0;
	int i;

	for (i = 0; i < width; i++)
		putchar(i < stars ? '*' : ' ');
	if (val > max)
		putchar('+');
}

/* Bucket i holds values v with floor(log2(v)) == i, i.e. [2^i, 2^(i+1)). */
static uint64_t bucket_lo(int i)
{
	return i ? 1ULL << i : 0;
}

static uint64_t bucket_hi(int i)
{
	return (1ULL << (i + 1)) - 1;
}

void print_log2_hist(const unsigned long long *slots, int nr, const char *unit)
{
	int i, first = -1, last = -1;
	unsigned long long max = 0;

	for (i = 0; i < nr; i++) {
		if (!slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	if (last < 0)
		return;
	printf("%12s%17s: count     distribution\n", unit, "");
	for (i = first; i <= last; i++) {
		printf("%12llu -> %-12llu : %-8llu |", (unsigned long long)bucket_lo(i),
		       (unsigned long long)bucket_hi(i), (unsigned long long)slots[i]);
		print_stars(slots[i], max, 40);
		printf("|\n");
	}
}

/* [[lo, hi, count], ...] for the non-empty buckets */
void json_log2_hist(FILE *f, const unsigned long long *slots, int nr)
{
	bool first = true;
	int i;

	fputc('[', f);
	for (i = 0; i < nr; i++) {
		if (!slots[i])
			continue;
		fprintf(f, "%s[%llu, %llu, %llu]", first ? "" : ", ",
			(unsigned long long)bucket_lo(i), (unsigned long long)bucket_hi(i),
			(unsigned long long)slots[i]);
		first = false;
	}
	fputc(']', f);
}

/* Does the running kernel's BTF have a type NAME of KIND? */
bool btf_has_type(const char *name, int kind)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found;

	if (!btf)
		return false;
	found = btf__find_by_name_kind(btf, name, kind) >= 0;
	btf__free(btf);
	return found;
}

/*
 * Can a tp_btf program attach to raw tracepoint NAME?  Load the smallest
 * tracing program ("return 0") against it and see whether the kernel takes it.
 */
bool probe_tp_btf(const char *name)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd, id;

	id = libbpf_find_vmlinux_btf_id(name, BPF_TRACE_RAW_TP);
	if (id < 0)
		return false;
	opts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}
