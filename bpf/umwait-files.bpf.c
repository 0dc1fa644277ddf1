// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace caps: which file each executable mapping of a process really
 * is.  A uprobe binds the real inode of the path it is given (on overlayfs
 * the layer's, d_real_inode()), and a mapping's file is that inode too
 * (overlayfs maps the layer's file); /proc/PID/maps shows it in Linux 6.1,
 * and the overlay's own inode in 6.12.  So caps reads it where the
 * kernel keeps it: an iterator over every task's VMAs (Linux 5.13), one
 * record (struct file_vma) per executable mapping, anonymous ones (JIT
 * code) included; the kernel's own special mappings ([vdso], [uprobes])
 * left out.  caps also asks it about the mappings it makes itself of a file
 * it opened, to know which inode that is.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "umwait-trace.h"

#define VM_EXEC	0x4

/* set by user space before each run: 0, every process; else this one's */
pid_t iter_tgid;
/* and whether mappings that are not executable count too (caps' own, to identify a file) */
bool iter_any;

SEC("iter/task_vma")
int file_vmas(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;
	struct task_struct *task = ctx->task;
	struct file_vma r = {};
	struct file *f;

	if (!vma || !task)
		return 0;
	r.tgid = task->tgid;
	if ((iter_tgid && r.tgid != iter_tgid) || (!iter_any && !(vma->vm_flags & VM_EXEC)))
		return 0;
	f = vma->vm_file;
	if (!f && vma->vm_ops)
		return 0;	/* a special mapping: [vdso], [uprobes] */
	if (f) {
		r.dev = f->f_inode->i_sb->s_dev;
		r.ino = f->f_inode->i_ino;
	}
	r.start = vma->vm_start;
	r.end = vma->vm_end;
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
