#!/bin/bash
# Resume from suspend to RAM with the kernel's msr:write_msr event on: the
# reproducer of the bug that the kernel series' first patch fixes (x86/power:
# __restore_processor_state() wrote MSR_IA32_MISC_ENABLE and EFER with the
# traced wrmsrl() before the GS base, and with it per-CPU data, was back).
# The same guest command runs on five kernels:
#  - base, Debian's 6.1 without the series, and distro-7.2, Debian unstable's
#    own packaged 7.2 kernel: the positive controls. Each must fail the way
#    the bug fails: the first resume never returns and the machine resets
#    (QEMU reports SHUTDOWN guest-reset after its WAKEUP, as -no-reboot turns
#    the triple fault into one), with no panic on the console. If this ever
#    passes, the reproducer no longer reproduces there, and the check of the
#    fixed kernels below proves nothing: it fails.
#  - 6.1, 6.12 and 7.2 with the series: three cycles resume, every CPU comes
#    back, and each cycle's trace holds the restore's own traced write of
#    MSR_GS_BASE on cpu0 (the first write after the GS base is back).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/console.sh"
top=$(cd "$(dirname "$0")/.." && pwd)/..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2016
cmd='t=/sys/kernel/tracing
echo 0 >$t/events/msr/write_msr/filter
echo 1 >$t/events/msr/write_msr/enable
echo "s3: write_msr $(cat $t/events/msr/write_msr/enable) cpus $(cat /sys/devices/system/cpu/online)"
for i in 1 2 3; do
	echo >$t/trace
	echo "s3: cycle $i suspending"
	echo mem >/sys/power/state || exit 1
	echo "s3: cycle $i resumed: cpus $(cat /sys/devices/system/cpu/online) gs_base $(grep -F "[000]" $t/trace | grep -c " write_msr: c0000101,")"
done'

# s3 KERNEL [BOOTS]: run the reproducer on KERNEL; its stdout in $out, stderr
# in $err, status in $rc. With BOOTS (the positive controls), a guest that
# crashed before the command's first line is booted again, BOOTS times at
# most, and said: Debian's 7.2 under TCG sometimes faults in its own boot on
# a busy host (an int3 of its text patching, at about 1.6 s), which is not
# the resume these kernels are judged on. The kernels with the series get one
# boot: a crash in theirs fails.
s3() {
	for try in $(seq "${2:-1}"); do
		out=$("$top/vm/run" --no-build --kernel "$1" --smp 4 --timeout 300 --append no_console_suspend \
			-- "$cmd" 2>"$tmp/err")
		rc=$?
		err=$(cat "$tmp/err")
		[ -n "$out" ] && break
		diag "$1: boot $try of ${2:-1} crashed before the command: $(echo "$err" | crash_where)"
	done
	echo "$out" | sed "s/^/# $1: /"
}

for k in base distro-7.2; do
	s3 $k 3
	diag "$k: expected to fail: a kernel without the fix resets on the first resume"
	is "$rc" 125 "$k: vm/run reports that the guest stopped without finishing (exit 125)"
	is "$(echo "$out" | sed -n 1p)" "s3: write_msr 1 cpus 0-3" "$k: msr:write_msr is on before the suspend"
	is "$(echo "$out" | grep -c '^s3: cycle 1 suspending$') $(echo "$out" | grep -c 'resumed')" "1 0" \
		"$k: the first suspend started, and no resume came back"
	is "$(echo "$err" | grep '^vm/run: QEMU.s power events: ')" \
		"vm/run: QEMU's power events: SUSPEND, WAKEUP, SHUTDOWN guest-reset" \
		"$k: QEMU woke the guest, which then reset itself (a triple fault under -no-reboot)"
	is "$(echo "$err" | grep -c 'Kernel panic\|BUG:\|Oops')" 0 "$k: no panic or oops on the console: the CPU faulted before the kernel could say anything"
done

for k in 6.1 6.12 7.2; do
	s3 $k
	is "$rc" 0 "$k: the command finished (exit 0)"
	want="s3: write_msr 1 cpus 0-3"
	for i in 1 2 3; do
		want="$want|s3: cycle $i suspending|s3: cycle $i resumed: cpus 0-3 gs_base 1"
	done
	is "$(echo "$out" | tr '\n' '|' | sed 's/|$//')" "$want" \
		"$k: three resumes with msr:write_msr on, all 4 CPUs back, each trace holds cpu0's MSR_GS_BASE restore"
	if [ "$rc" != 0 ]; then
		echo "$err" | tail -n 12 | sed 's/^/#   /'
	fi
done
done_testing
