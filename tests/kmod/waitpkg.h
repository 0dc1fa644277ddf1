/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UMWAIT and TPAUSE for the lab's test modules, as bytes (assemblers older
 * than the instructions take them too): wait in C0.2 until @deadline, and
 * return CF (1 when the OS time limit ended the wait).
 */
#ifndef WAITPKG_TEST_H
#define WAITPKG_TEST_H

#include <linux/types.h>

/* The instruction's prefix byte: 0xf2 UMWAIT, 0x66 TPAUSE; the operand is %edi */
#define WAITPKG_WAIT(prefix, deadline) ({				\
	u64 __d = (deadline);						\
	bool __cf;							\
	asm volatile(".byte " prefix ", 0x0f, 0xae, 0xf7\n\t"		\
		     "setc %0"						\
		     : "=qm"(__cf)					\
		     : "D"(0), "a"((u32)__d), "d"((u32)(__d >> 32))	\
		     : "cc", "memory");					\
	__cf;								\
})

static inline bool umwait(u64 deadline)
{
	return WAITPKG_WAIT("0xf2", deadline);
}

static inline bool tpause(u64 deadline)
{
	return WAITPKG_WAIT("0x66", deadline);
}

#endif
