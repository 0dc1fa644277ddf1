# The PMU model's MSRs (vm/qemu patch 0008) as the SDM defines them for an
# architectural PMU version 2 with 4 general and 3 fixed 48-bit counters and
# no full-width writes, seen through /dev/cpu/3/msr (CPU 3: no perf event
# runs there now; every value is put back).
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

errno() { # the errno of a failed msr write, or "ok"
	msr write "$@" >/dev/null 2>&1 && echo ok && return
	msr write "$@" 2>&1 | sed -n 's/.*(\(E[A-Z]*\))$/\1/p'
}

ctrl=$(msr read 3 0x38f)
sel=$(msr read 3 0x189)
pmc=$(msr read 3 0xc4)
fixed=$(msr read 3 0x38d)
# put back by the state guard too, if this file ends before it does
state_also="msr write 3 0x189 $sel; msr write 3 0xc4 $pmc; msr write 3 0x38f $ctrl; msr write 3 0x38d $fixed"

# reserved bits #GP (EIO): a model that accepts them lets a guest believe in
# counters, AnyThread or status bits it does not have
is "$(errno 3 0x189 0x100000000)" EIO "IA32_PERFEVTSEL3: bit 32 is reserved (#GP)"
is "$(errno 3 0x189 0x200000)" EIO "IA32_PERFEVTSEL3: AnyThread (bit 21) is reserved in version 2 (#GP)"
is "$(errno 3 0x38d 0x4)" EIO "IA32_FIXED_CTR_CTRL: AnyThread (bit 2) is reserved in version 2 (#GP)"
is "$(errno 3 0x38d 0x1000)" EIO "IA32_FIXED_CTR_CTRL: bit 12 (a fourth fixed counter) is reserved (#GP)"
is "$(errno 3 0x38f 0x10)" EIO "IA32_PERF_GLOBAL_CTRL: bit 4 (a fifth counter) is reserved (#GP)"
is "$(errno 3 0x38f 0x800000000)" EIO "IA32_PERF_GLOBAL_CTRL: bit 35 (a fourth fixed counter) is reserved (#GP)"
is "$(errno 3 0x38e 0x0)" EIO "IA32_PERF_GLOBAL_STATUS is read-only (#GP)"
is "$(errno 3 0x390 0x10)" EIO "IA32_PERF_GLOBAL_OVF_CTRL: bit 4 is reserved (#GP)"
is "$(msr read 3 0x38f)" "$ctrl" "rejected writes leave IA32_PERF_GLOBAL_CTRL unchanged"
is "$(msr read 3 0x38d)" "$fixed" "rejected writes leave IA32_FIXED_CTR_CTRL unchanged"

# Without full-width writes, bit 31 of a write to IA32_PMCx fills bits 47:32
# (Linux writes -period that way); a 48-bit counter reads back 48 bits
check "IA32_PMC3 takes a write of 0x80000000" msr write 3 0xc4 0x80000000
is "$(msr read 3 0xc4)" 0x0000ffff80000000 "IA32_PMC3: bit 31 sign-extends to bit 47"
check "IA32_PMC3 takes a write of 0x7fffffff" msr write 3 0xc4 0x7fffffff
is "$(msr read 3 0xc4)" 0x000000007fffffff "IA32_PMC3: a clear bit 31 leaves bits 47:32 clear"

# Programmed by hand, PMC3 counts unhalted cycles (event 0x3C, OS and USR,
# EN): each read of it runs on CPU 3 (an IPI wakes it), so it grows
check "program IA32_PERFEVTSEL3 for unhalted core cycles" msr write 3 0x189 0x43003c
check "IA32_PMC3 starts at 0" msr write 3 0xc4 0
check "enable counter 3 in IA32_PERF_GLOBAL_CTRL" msr write 3 0x38f $((ctrl | 8))
a=$(msr read 3 0xc4)
b=$(msr read 3 0xc4)
diag "IA32_PMC3: $a then $b"
cmp_ok $((b)) -gt $((a)) "IA32_PMC3 counts unhalted cycles between two reads"
check "disable it in IA32_PERF_GLOBAL_CTRL" msr write 3 0x38f $((ctrl & ~8))
a=$(msr read 3 0xc4)
b=$(msr read 3 0xc4)
is "$b" "$a" "IA32_PERF_GLOBAL_CTRL bit 3 clear: IA32_PMC3 stands still"

# The PMU MSRs an architectural PMU may have and this one does not raise #GP
# (EIO) like those of any MSR the CPU lacks; reading 0 would tell Linux and
# other guests that the counter exists
for m in 0xc5:IA32_PMC4 0xc8:IA32_PMC7 0x18a:IA32_PERFEVTSEL4 0x30c:IA32_FIXED_CTR3 \
	0x345:"IA32_PERF_CAPABILITIES (no PDCM)" 0x4c1:"IA32_A_PMC0 (no full-width writes)" \
	0x391:"IA32_PERF_GLOBAL_STATUS_SET (version 4)"; do
	is "$(msr read 3 "${m%%:*}" 2>&1 | sed -n 's/.*(\(E[A-Z]*\))$/\1/p')" EIO \
		"${m#*:} (${m%%:*}): a read raises #GP"
	is "$(errno 3 "${m%%:*}" 0)" EIO "${m#*:} (${m%%:*}): a write raises #GP"
done

check "restore IA32_PERFEVTSEL3" msr write 3 0x189 $sel
check "restore IA32_PMC3" msr write 3 0xc4 $pmc
check "restore IA32_PERF_GLOBAL_CTRL" msr write 3 0x38f $ctrl
done_testing
