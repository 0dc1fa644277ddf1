#!/bin/bash
# UMWAIT woken by another CPU's store to a line of the frame buffer while
# the display is refreshed (the series' QEMU, vm/qemu patches 0002-0003).
# A display refresh reads and clears the frame buffer's dirty bits for the
# display; a store detection that relied on those bits would miss stores,
# and a UMWAIT would sleep to its deadline.  tests/fixtures/umwait-display.c,
# built with QEMU's tests/tcg harness, runs rounds of UMWAIT on a line of the
# standard VGA's frame buffer (VBE 640x480x32, the window at 0xA0000) that
# the AP stores to, from an NMI (QMP inject-nmi) to a press of the power
# button (QMP system_powerdown, which the program polls for); between the
# two, this test dumps the screen over QMP 1000 times: the refreshes that
# clear those bits, every one of them within the rounds by construction.
# Every UMWAIT must end by the store, before its deadline; the screen dumps,
# read here, must show the VBE mode.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/tcg.sh"

dumps=1000
tcg_fixture umwait-display
tcg_start umwait-display -smp 2 -cpu max,vendor=GenuineIntel -vga std
if tcg_said umwait-display 'ready for screendumps'; then
	cmds=(inject-nmi)
	for _ in $(seq $dumps); do
		cmds+=("screendump {\"filename\": \"$tmp/screen.ppm\"}")
	done
	cmds+=(system_powerdown)
	# each command's return, "{}", in turn: the NMI, the dumps, the button
	is "$("$qmp" "$tmp/umwait-display.qmp" "${cmds[@]}" 2>&1 | grep -cx '{}')" $((dumps + 2)) \
		"QMP: an NMI, $dumps screen dumps, the power button, in turn: the dumps within the rounds"
else
	fail "QMP: an NMI, $dumps screen dumps, the power button, in turn: the dumps within the rounds" \
		"the program never got to them"
fi
tcg_passed umwait-display
grep -E '^[0-9]+ rounds|^store to wake' "$tmp/umwait-display.out" | sed 's/^/# /'
# the VGA's own rendering of the frame: a binary PPM of the VBE mode
is "$(head -c 15 "$tmp/screen.ppm" 2>/dev/null | tr '\n' ' ')" "P6 640 480 255 " \
	"the screen dumps are of the VBE mode 640x480"
done_testing
