# Corner cases of the QEMU WAITPKG model against the SDM, each proven by what
# the guest CPU itself reports: the instruction a SIGSEGV points at, the RIP
# of a single-step trap.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control

# CR4.TSD: prctl(PR_SET_TSC, PR_TSC_SIGSEGV) makes the kernel set CR4.TSD while
# the task runs. TPAUSE and UMWAIT read the TSC for their deadline and raise
# #GP(0) at CPL 3 then, like RDTSC (the kernel turns it into SIGSEGV).
is "$(waitpkg-check tsd rdtsc)" "rdtsc: SIGSEGV at rdtsc" \
	"PR_TSC_SIGSEGV: RDTSC faults (the kernel sets CR4.TSD)"
for insn in tpause umwait; do
	is "$(waitpkg-check tsd --no-prctl $insn)" "$insn: completed" \
		"$insn with a past deadline completes without PR_TSC_SIGSEGV"
	is "$(waitpkg-check tsd $insn)" "$insn: SIGSEGV at $insn" \
		"PR_TSC_SIGSEGV: $insn raises #GP (SIGSEGV on the $insn itself)"
done

# EFLAGS.TF across a wait an interrupt ends: the single-step trap of TPAUSE
# comes before the interrupt, so the trap's RIP is right after TPAUSE. With
# max_time=0 and a 2^40-cycle deadline, only an interrupt (the tick) ends it.
old=$(cat $d/max_time)
echo 0 >$d/max_time
out=$(waitpkg-check step 10)
echo "$old" >$d/max_time
diag "$out"
is "$(echo "$out" | sed 's/ trapped=.*//')" "step: waits=10 early=10" \
	"every single-stepped TPAUSE ended early (an interrupt) with CF=0"
is "$(echo "$out" | sed -n 's/.* trapped=\([0-9]*\).*/\1/p')" 10 \
	"every one trapped right after TPAUSE (the single-step trap was not lost to the interrupt)"
is "$(cat $d/max_time)" "$old" "max_time restored"

# The same with SMIs: a machine check or an SMI comes before the trap of the
# previous instruction, which is then discarded (SDM Vol. 3A, 6.9, Table
# 6-2). tests/kmod/waitpkg_smi.ko raises an SMI on CPU 0 (the APM port)
# every 200 us from CPU 1 once loaded, until told to stop; CPU 0
# single-steps TPAUSEs that only an interrupt or an SMI can end. A wait an
# SMI ends has no trap right after TPAUSE: the first is after the next
# instruction ("late"). A model that delivers the trap first shows late=0.
# How many SMIs land inside a wait, not in the trap handling between, is
# the host's: the steps go on, 60 at a time (10 times at most), until one
# has.  Without the module (tests/run builds it against the guest kernel),
# the same checks run and fail: its load, its SMIs.
ko=/lab/kmod/waitpkg_smi.ko
[ -e $ko ] || diag "no $ko in this boot (tests/run builds it against the guest kernel)"
smi0=$(msr read 0 0x34)
check "waitpkg_smi.ko loads (SMIs on CPU 0 from CPU 1)" insmod $ko
echo 0 >$d/max_time
steps=0 trapped=0 late=0
while [ "$late" = 0 ] && [ $steps -lt 600 ]; do
	out=$(taskset -c 0 waitpkg-check step 60)
	diag "$out"
	steps=$((steps + 60))
	trapped=$(calc "$trapped + $(echo "$out" | sed -n 's/.* trapped=\([0-9]*\).*/\1/p')")
	late=$(calc "$late + $(echo "$out" | sed -n 's/.* late=\([0-9]*\)$/\1/p')")
done
echo "$old" >$d/max_time
smi1=$(msr read 0 0x34)
# its SMIs go on until the steps are done, however slow the guest (the
# kernel cannot unload it; its thread ends once told to)
echo 1 >/sys/module/waitpkg_smi/parameters/stop 2>/dev/null
smi_done() { dmesg | grep -q 'waitpkg_smi: done: '; }
smi_end() { [ -d /sys/module/waitpkg_smi ] && until_true 60 smi_done; }
check "waitpkg_smi.ko's SMIs end" smi_end
diag "MSR_SMI_COUNT of CPU 0: $smi0 then $smi1; $(dmesg | grep 'waitpkg_smi: done' | tail -n 1)"
cmp_ok "$((smi1))" -gt "$((smi0))" "CPU 0 took SMIs meanwhile (MSR_SMI_COUNT)"
is "$(calc "$trapped + $late")" "$steps" "each of the $steps TPAUSEs trapped right after it or, its trap discarded, after the next instruction ($trapped + $late)"
cmp_ok "$late" -ge 1 "an SMI that ended a wait came before its single-step trap, which was discarded ($late of $steps)"

# kmod NAME MAX_TIME: load /lab/kmod/NAME.ko with max_time at MAX_TIME and
# set line to the last line it logged; 1 (and line empty) without the
# module (tests/run builds it against the guest kernel)
kmod() {
	ko=/lab/kmod/$1.ko
	line=
	if [ ! -e $ko ]; then
		diag "no $ko in this boot (tests/run builds it against the guest kernel)"
		return 1
	fi
	echo "$2" >$d/max_time
	insmod $ko 2>/dev/null
	line=$(dmesg | grep "$1: " | tail -n 1)
	echo "$old" >$d/max_time
	diag "$line"
}

# MONITOR disarms UMONITOR (they share the monitoring hardware): a UMWAIT after
# UMONITOR then MONITOR returns at once (CF=0) instead of waiting for the OS
# limit (CF=1). MONITOR is a CPL 0 instruction: tests/kmod/waitpkg_monitor.ko
# runs both sequences with interrupts off, logs the counts, and refuses to load.
# Two lines whatever the module says: without MONITOR, two allowed skips.
# max_time 4: the OS limit ends every wait that waits at all (the model
# checks it before an interrupt, masked or not, could end it).
kmod waitpkg_monitor 4
if echo "$line" | grep -q 'no WAITPKG or no MONITOR'; then
	skip "kernel UMONITOR; UMWAIT: the OS limit ends the waits" "this guest CPU has no MONITOR (CPUID.1:ECX[3])"
	skip "kernel UMONITOR; MONITOR; UMWAIT: no wait is capped" "this guest CPU has no MONITOR (CPUID.1:ECX[3])"
else
	plain=$(echo "$line" | sed -n 's/.*capped \([0-9]*\)\/20 after UMONITOR,.*/\1/p')
	is "${plain:-none}" 20 "kernel UMONITOR; UMWAIT: max_time=4 ends every wait (CF=1): ${plain:-?}/20"
	is "$(echo "$line" | sed -n 's/.*, \([0-9]*\)\/20 after UMONITOR+MONITOR$/\1/p')" 0 \
		"kernel UMONITOR; MONITOR; UMWAIT: no wait is capped (MONITOR disarmed the monitor: UMWAIT returns at once)"
fi

# A blocked NMI stays pending and does not end a wait: inside an NMI handler
# (NMIs blocked until its IRET) tests/kmod/waitpkg_nmi.ko holds until another
# CPU has sent a second NMI, then runs a TPAUSE of 500k cycles with that NMI
# pending from its first cycle to its last, until 5 rounds are clean. With
# max_time=0 the wait must run to its deadline (a "bad" round ends early with
# no interrupt pending), and the second NMI must come after it (a "lost"
# round waited 2 s for it). A timer tick in the IRR ends a round early
# ("cut"): such a round proves nothing either way.
kmod waitpkg_nmi 0
nmi() { echo "$line" | sed -n "s/.* $1 \([0-9]*\) .*/\1/p"; }
is "$(nmi bad)/$(nmi capped)/$(nmi lost)" 0/0/0 \
	"no TPAUSE in an NMI handler ended early for the blocked NMI, none was capped, no NMI was lost (bad/capped/lost)"
is "$(nmi clean)" 5 \
	"5 waits ran to their deadline with a blocked NMI pending throughout, and the NMI was delivered after each"
done_testing
