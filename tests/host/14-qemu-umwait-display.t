#!/bin/bash
# UMWAIT woken by another CPU's store to a line of the frame buffer while
# the display is refreshed (the series' QEMU, vm/qemu patches 0002-0003).
# A display refresh reads and clears the frame buffer's dirty bits for the
# display; a store detection that relied on those bits would miss stores,
# and a UMWAIT would sleep to its deadline.  tests/fixtures/umwait-display.c,
# built with QEMU's tests/tcg harness, runs rounds of UMWAIT on a line of the
# standard VGA's frame buffer (VBE 640x480x32, the window at 0xA0000) that
# the AP stores to, while this test dumps the screen over QMP in a loop: the
# refreshes that clear those bits.  Every UMWAIT must end by the store,
# before its deadline; the screen dumps, read here, must show the VBE mode
# and must have run all through the rounds.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/tcg.sh"

tcg_fixture umwait-display
out=$tmp/out

# two QMP monitors: the screen dumps' loop holds one
# shellcheck disable=SC2086 # tcg_qemu is the binary and its options
timeout 900 $tcg_qemu -smp 2 -cpu max,vendor=GenuineIntel -vga std -display none -monitor none \
	-chardev "file,path=$out,id=output" -device isa-debugcon,chardev=output \
	-device isa-debug-exit,iobase=0xf4,iosize=0x4 \
	-qmp "unix:$tmp/dump.qmp,server=on,wait=off" -qmp "unix:$tmp/nmi.qmp,server=on,wait=off" \
	-kernel "$prog" >"$tmp/qemu.log" 2>&1 &
pid=$!
# until the program says so, or its QEMU ends
until grep -qx 'ready for screendumps' "$out" 2>/dev/null; do
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
if grep -qx 'ready for screendumps' "$out" 2>/dev/null; then
	"$qmp" --until "$out" 'rounds done' "$tmp/dump.qmp" \
		"screendump {\"filename\": \"$tmp/screen.ppm\"}" >"$tmp/dumps" 2>&1 &
	dumper=$!
	# the first dump is written: the loop runs
	until [ -s "$tmp/screen.ppm" ]; do
		kill -0 $dumper 2>/dev/null || break
		sleep 0.05
	done
	said=$("$qmp" "$tmp/nmi.qmp" inject-nmi 2>&1)
	is "$said" '{}' "QMP inject-nmi starts the rounds"
fi
wait $pid
rc=$?
wait "${dumper:-}" 2>/dev/null
tcg_checks umwait-display "$out"
if [ $rc -ne 0 ] || ! grep -qx 'PASS: 0 failed' "$out"; then
	fail "the program ran to 'PASS: 0 failed' (exit $rc, $tcg_n checks)" \
		"$(tail -n 3 "$out" "$tmp/qemu.log" 2>&1)"
else
	pass "the program ran to 'PASS: 0 failed' ($tcg_n checks)"
fi
grep -E '^[0-9]+ rounds|^store to wake' "$out" | sed 's/^/# /'
# the VGA's own rendering of the frame: a binary PPM of the VBE mode
is "$(head -c 15 "$tmp/screen.ppm" 2>/dev/null | tr '\n' ' ')" "P6 640 480 255 " \
	"the screen dumps are of the VBE mode 640x480"
dumps=$(cat "$tmp/dumps" 2>/dev/null)
diag "screen dumps until 'rounds done': $dumps"
check "the screen was dumped 20 times or more while the rounds ran ($dumps)" \
	[ "${dumps:-0}" -ge 20 ] 2>/dev/null
done_testing
