# Corner cases of the QEMU WAITPKG model against the SDM, each proven by what
# the guest CPU itself reports: the instruction a SIGSEGV points at, the RIP
# of a single-step trap.
. /lab/tests/lib/tap.sh

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
is "$(echo "$out" | sed -n 's/.* trapped=//p')" 10 \
	"every one trapped right after TPAUSE (the single-step trap was not lost to the interrupt)"
is "$(cat $d/max_time)" "$old" "max_time restored"

# kmod NAME MAX_TIME TEST: load /lab/kmod/NAME.ko with max_time at MAX_TIME
# and set line to the last line it logged; without the module TEST fails
# (tests/run builds it against the guest kernel) and it returns 1
kmod() {
	ko=/lab/kmod/$1.ko
	line=
	if [ ! -e $ko ]; then
		fail "$3" "no $ko in this boot (tests/run builds it against the guest kernel)"
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
if ! kmod waitpkg_monitor 100000 "MONITOR then UMWAIT"; then
	: # skipped: no module
elif echo "$line" | grep -q 'no WAITPKG or no MONITOR'; then
	skip "MONITOR then UMWAIT" "this guest CPU has no MONITOR (CPUID.1:ECX[3])"
else
	plain=$(echo "$line" | sed -n 's/.*capped \([0-9]*\)\/20 after UMONITOR,.*/\1/p')
	cmp_ok "${plain:-0}" -ge 15 "kernel UMONITOR; UMWAIT: the OS limit ends most waits (CF=1): ${plain:-?}/20"
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
if kmod waitpkg_nmi 0 "a blocked NMI during TPAUSE"; then
	nmi() { echo "$line" | sed -n "s/.* $1 \([0-9]*\) .*/\1/p"; }
	is "$(nmi bad)/$(nmi capped)/$(nmi lost)" 0/0/0 \
		"no TPAUSE in an NMI handler ended early for the blocked NMI, none was capped, no NMI was lost (bad/capped/lost)"
	is "$(nmi clean)" 5 \
		"5 waits ran to their deadline with a blocked NMI pending throughout, and the NMI was delivered after each"
fi
done_testing
