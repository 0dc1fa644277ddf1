// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of what a uprobe costs: a BPF program that does nothing.  Put at
 * the instruction a tracer probes, it measures the trap, the single-step and
 * the BPF dispatch that any tracer there pays before doing any work.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("uprobe")
int floor_probe(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
