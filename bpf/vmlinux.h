/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types the lab's BPF programs use, in the shape
 * "bpftool btf dump file /sys/kernel/btf/vmlinux format c" gives them, so
 * that umwait-trace builds on any machine without a kernel build or the
 * build machine's BTF.
 *
 * Structs carry preserve_access_index: every field access becomes a CO-RE
 * relocation that libbpf resolves against the running kernel's BTF at load
 * time, so the layout below need not match any one kernel.  The tp_btf
 * programs take their arguments' types from the kernel's BTF as well.
 * Enum values and typedefs are UAPI or the C ABI and never change.
 */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

#pragma clang attribute push (__attribute__((preserve_access_index)), apply_to = record)

typedef signed char __s8;
typedef unsigned char __u8;
typedef short int __s16;
typedef short unsigned int __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long int __s64;
typedef long long unsigned int __u64;

typedef __s8 s8;
typedef __u8 u8;
typedef __s16 s16;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;

typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

typedef _Bool bool;
enum {
	false = 0,
	true = 1,
};

typedef int __kernel_pid_t;
typedef __kernel_pid_t pid_t;

/* include/uapi/linux/bpf.h */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_CGROUP_ARRAY = 8,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
	BPF_F_LOCK = 4,
};

enum {
	BPF_RB_NO_WAKEUP = 1,
	BPF_RB_FORCE_WAKEUP = 2,
};

enum {
	BPF_RB_AVAIL_DATA = 0,
	BPF_RB_RING_SIZE = 1,
	BPF_RB_CONS_POS = 2,
	BPF_RB_PROD_POS = 3,
};

/* arch/x86/include/asm/ptrace.h (x86-64): what a uprobe sees of the task */
struct pt_regs {
	long unsigned int r15;
	long unsigned int r14;
	long unsigned int r13;
	long unsigned int r12;
	long unsigned int bp;
	long unsigned int bx;
	long unsigned int r11;
	long unsigned int r10;
	long unsigned int r9;
	long unsigned int r8;
	long unsigned int ax;
	long unsigned int cx;
	long unsigned int dx;
	long unsigned int si;
	long unsigned int di;
	long unsigned int orig_ax;
	long unsigned int ip;
	long unsigned int cs;
	long unsigned int flags;
	long unsigned int sp;
	long unsigned int ss;
};

/* sched_process_exit: is this the process's last thread (signal->live) */
typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live;
};

/* caps: a process's name (its thread-group leader's) and its executable's */
struct qstr {
	const unsigned char *name;
};

struct dentry {
	struct qstr d_name;
};

struct path {
	struct dentry *dentry;
};

/* caps' file identity: the inode a mapping's file is, as uprobes see it */
typedef u32 dev_t;

struct super_block {
	dev_t s_dev;
};

struct inode {
	long unsigned int i_ino;
	struct super_block *i_sb;
};

struct file {
	struct path f_path;
	struct inode *f_inode;
};

struct mm_struct {
	struct file *exe_file;
};

struct task_struct {
	pid_t tgid;
	struct signal_struct *signal;
	struct task_struct *group_leader;
	char comm[16];
	struct mm_struct *mm;
};

struct vm_operations_struct;

/* vm_flags is in an anonymous union since 6.3: CO-RE finds it there */
struct vm_area_struct {
	long unsigned int vm_start;
	long unsigned int vm_end;
	long unsigned int vm_flags;
	const struct vm_operations_struct *vm_ops;
	struct file *vm_file;
};

/* include/linux/bpf.h, kernel/bpf/task_iter.c: the task_vma iterator's context */
struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	u64 session_id;
	u64 seq_num;
};

struct bpf_iter__task_vma {
	union {
		struct bpf_iter_meta *meta;
	};
	union {
		struct task_struct *task;
	};
	union {
		struct vm_area_struct *vma;
	};
};

#pragma clang attribute pop

#endif /* __VMLINUX_H__ */
