#!/bin/bash
# A PMI pending across savevm and loadvm, and the PMU's state with it (the
# series' QEMU, vm/qemu patch 0008).  tests/fixtures/pmu-savevm.c, built with
# QEMU's tests/tcg harness as QEMU's own system tests are, halts in ring 0
# with interrupts off, an overflow's PMI pending in its local APIC's IRR and
# two counters running.  This test takes a snapshot of that QEMU (HMP
# savevm, on a scratch qcow2 image), quits it, starts a new QEMU from the
# snapshot (-loadvm) and ends the halt with an NMI (QMP inject-nmi).  The
# program then checks what the new QEMU holds: the status and the LVT entry,
# the pending PMI (taken once), a counter that goes on and counts exactly,
# and a counter armed before the snapshot that overflows after it, with its
# PMI.  Plain, and under -icount shift=auto, where a PMI raised mid-TB waits
# for the TB's end.  Each "ok:"/"FAIL:" line is a check.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/tcg.sh"

tcg_fixture pmu-savevm

for mode in plain icount; do
	opts=(-cpu max,vendor=GenuineIntel,pmu=on -drive "if=none,id=snap,format=qcow2,file=$tmp/$mode.qcow2")
	[ $mode = icount ] && opts+=(-icount shift=auto)
	qemu-img create -q -f qcow2 "$tmp/$mode.qcow2" 16M

	# before savevm
	tcg_start $mode-1 "${opts[@]}"
	if ! tcg_said $mode-1 'ready for savevm'; then
		# its checks, the snapshot and the second QEMU's: each fails
		for c in "checks before savevm" "HMP savevm" "QMP inject-nmi" "checks after loadvm" \
			"the program ran to 'PASS: 0 failed'"; do
			fail "$mode: $c" "the program never got to savevm"
		done
		continue
	fi
	tcg_checks "$mode" "$tmp/$mode-1.out"
	said=$("$qmp" "$tmp/$mode-1.qmp" 'human-monitor-command {"command-line": "savevm pmi"}' 2>&1)
	is "$said" '""' "$mode: HMP savevm took the snapshot without a word"
	"$qmp" "$tmp/$mode-1.qmp" quit >/dev/null 2>&1
	wait "$tcg_pid"

	# a new QEMU from the snapshot
	tcg_start $mode-2 "${opts[@]}" -loadvm pmi
	said=$("$qmp" "$tmp/$mode-2.qmp" inject-nmi 2>&1)
	is "$said" '{}' "$mode: QMP inject-nmi into the QEMU started from the snapshot"
	tcg_passed $mode-2
done
done_testing
