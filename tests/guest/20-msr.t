# IA32_UMWAIT_CONTROL (0xE1) as the QEMU model implements it, seen through /dev/cpu/N/msr.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

for n in 0 1 2 3; do
	is "$(msr read $n 0xe1 2>&1)" 0x00000000000186a0 "cpu$n MSR 0xE1 holds what the kernel programmed"
done

is "$(msr write 1 0xe1 0x186a2 2>&1 | sed -n 's/.*(\(E[A-Z]*\))$/\1/p')" EIO "setting reserved bit 1 raises #GP (EIO)"
is "$(msr write 1 0xe1 0x1000186a0 2>&1 | sed -n 's/.*(\(E[A-Z]*\))$/\1/p')" EIO "setting bit 32 raises #GP (EIO)"
is "$(msr write 1 0xe1 0x80000000000186a0 2>&1 | sed -n 's/.*(\(E[A-Z]*\))$/\1/p')" EIO "setting bit 63 raises #GP (EIO)"
is "$(msr read 1 0xe1)" 0x00000000000186a0 "rejected writes leave the MSR unchanged"

check "a valid value is accepted" msr write 2 0xe1 0x61a81
is "$(msr read 2 0xe1)" 0x0000000000061a81 "and reads back"
is "$(msr read 3 0xe1)" 0x00000000000186a0 "the MSR is per CPU: cpu3 unchanged"
check "restore cpu2" msr write 2 0xe1 0x186a0
is "$(msr read 2 0xe1)" 0x00000000000186a0 "cpu2 restored"
done_testing
