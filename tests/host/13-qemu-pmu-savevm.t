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

# start MODE N ARGS...: QEMU number N of MODE on the program, in the
# background (at most 600 s); its debug console in $tmp/MODE-N.out
start() {
	local mode=$1 n=$2
	shift 2
	# shellcheck disable=SC2086 # tcg_qemu is the binary and its options
	timeout 600 $tcg_qemu -cpu max,vendor=GenuineIntel,pmu=on -display none -monitor none \
		-drive "if=none,id=snap,format=qcow2,file=$tmp/$mode.qcow2" \
		-chardev "file,path=$tmp/$mode-$n.out,id=output" -device isa-debugcon,chardev=output \
		-device isa-debug-exit,iobase=0xf4,iosize=0x4 \
		-qmp "unix:$tmp/$mode-$n.qmp,server=on,wait=off" "$@" -kernel "$prog" \
		>"$tmp/$mode-$n.log" 2>&1 &
}

for mode in plain icount; do
	opts=()
	[ $mode = icount ] && opts=(-icount shift=auto)
	qemu-img create -q -f qcow2 "$tmp/$mode.qcow2" 16M

	start $mode 1 "${opts[@]}"
	pid=$!
	# until the program says so, or its QEMU ends
	until grep -qx 'ready for savevm' "$tmp/$mode-1.out" 2>/dev/null; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	tcg_checks "$mode" "$tmp/$mode-1.out"
	if ! grep -qx 'ready for savevm' "$tmp/$mode-1.out" 2>/dev/null; then
		fail "$mode: the program reached 'ready for savevm'" \
			"$(tail -n 3 "$tmp/$mode-1.out" "$tmp/$mode-1.log" 2>&1)"
		continue
	fi
	said=$("$qmp" "$tmp/$mode-1.qmp" 'human-monitor-command {"command-line": "savevm pmi"}' 2>&1)
	is "$said" '""' "$mode: HMP savevm took the snapshot without a word"
	"$qmp" "$tmp/$mode-1.qmp" quit >/dev/null 2>&1
	wait $pid

	start $mode 2 "${opts[@]}" -loadvm pmi
	pid=$!
	said=$("$qmp" "$tmp/$mode-2.qmp" inject-nmi 2>&1)
	is "$said" '{}' "$mode: QMP inject-nmi into the QEMU started from the snapshot"
	wait $pid
	rc=$?
	tcg_checks "$mode" "$tmp/$mode-2.out"
	if [ $rc -ne 0 ] || ! grep -qx 'PASS: 0 failed' "$tmp/$mode-2.out" 2>/dev/null; then
		fail "$mode: the program ran to 'PASS: 0 failed' in the new QEMU (exit $rc, $tcg_n checks)" \
			"$(tail -n 3 "$tmp/$mode-2.out" "$tmp/$mode-2.log" 2>&1)"
	else
		pass "$mode: the program ran to 'PASS: 0 failed' in the new QEMU ($tcg_n checks)"
	fi
done
done_testing
