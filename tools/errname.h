/* SPDX-License-Identifier: GPL-2.0 */
/* errname: the symbolic name of an errno value, for test output. */
#ifndef LAB_ERRNAME_H
#define LAB_ERRNAME_H

#include <errno.h>
#include <stdio.h>

static inline const char *errname(int e)
{
	static char buf[16];

	switch (e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case ENXIO: return "ENXIO";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case EROFS: return "EROFS";
	case ERANGE: return "ERANGE";
	case ENODEV: return "ENODEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

#endif
