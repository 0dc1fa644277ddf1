#!/bin/bash
# The wait's timer against the wait's end (vm/qemu patch 0003): a halted
# UMWAIT or TPAUSE has a timer that the main loop runs, while the vCPU's
# own thread ends the wait when an interrupt wakes it.  A timer callback
# that reads or writes the wait's state while the vCPU ends the wait, or
# begins the next, races with it.  tests/fixtures/umwait-timer-race.c,
# built with QEMU's tests/tcg harness, ends 40000 waits by a masked APIC
# timer interrupt at every distance from the moment the wait's own timer
# runs, on the series' QEMU built with ThreadSanitizer (vm/ensure
# qemu-tsan), which reports any two accesses of the two threads that no
# lock or atomic orders.  A race on the wait's own state, between two
# accesses in target/i386's code, fails the test; the races ThreadSanitizer
# finds elsewhere in QEMU (its dirty bitmaps, its RAM block list) are
# counted, not judged.  LAB_QEMU_TSAN runs another such binary.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/tcg.sh"

if [ -n "${LAB_QEMU_TSAN:-}" ]; then
	export LAB_QEMU=$LAB_QEMU_TSAN
elif mkdir -p "$top/build" &&
	tsan_dir=$("$top/vm/ensure" qemu-tsan 2>"$top/build/qemu-tsan.log"); then
	export LAB_QEMU=$tsan_dir/bin/qemu-system-x86_64
else
	fail "the series' QEMU builds with ThreadSanitizer" "$(tail -n 5 "$top/build/qemu-tsan.log")"
	done_testing
	exit
fi
# a binary without it would report nothing, and pass
if grep -aq __tsan_init "$LAB_QEMU" 2>/dev/null; then
	pass "the QEMU under test is built with ThreadSanitizer"
else
	fail "the QEMU under test is built with ThreadSanitizer" "no __tsan_init in $LAB_QEMU"
	done_testing
	exit
fi
tcg_fixture umwait-timer-race
mkdir "$tmp/tsan"
export TSAN_OPTIONS="log_path=$tmp/tsan/report halt_on_error=0 exitcode=0 history_size=4"
tcg_start umwait-timer-race -cpu max,vendor=GenuineIntel
tcg_passed umwait-timer-race
grep -E '^[0-9]+ rounds' "$tmp/umwait-timer-race.out" | sed 's/^/# /'
# ThreadSanitizer's reports: those whose two accesses are both in target/i386
awk -v out="$tmp/target-races" '
	/^==================$/ { if (acc == 2 && tgt == 2) { print rep >>out; n++ } rep = ""; acc = 0; tgt = 0; next }
	{ rep = rep $0 "\n" }
	/^  (Write|Read|Atomic|Previous)/ { top = 1; next }
	top && /^    #0 / { acc++; if ($0 ~ /target\/i386\//) tgt++; top = 0 }
	END { print n + 0 }' "$tmp"/tsan/report.* 2>/dev/null >"$tmp/target-count"
all=$(cat "$tmp"/tsan/report.* 2>/dev/null | grep -c '^WARNING: ThreadSanitizer')
desc="ThreadSanitizer: no race on the wait's state between the main loop and the vCPU ($all reports elsewhere in QEMU)"
if [ "$(cat "$tmp/target-count")" = 0 ]; then
	pass "$desc"
else
	fail "$desc" "$(cat "$tmp/target-count") in target/i386: $(grep -E '^  [A-Z]|^    #[0-2] ' "$tmp/target-races" 2>/dev/null | sed 's/ (qemu-system.*//' | head -n 24)"
fi
done_testing
