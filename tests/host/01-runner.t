#!/bin/bash
# The test runner itself (tests/run, tests/lib/runner.sh) must not report a
# pass for what did not run: a filter that matches no file, a TAP file that
# stops before its plan or runs other than it planned, a boot without a
# console log.
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$top/tests/run" -k no-such-test-file 2>&1)
rc=$?
is "$rc:$out" "2:tests/run: no test file matches 'no-such-test-file'" \
	"tests/run -k matching no file: exit 2 and one line"
# and it finds files where there are some: the check above is not vacuous
out=$("$top/tests/run" -k no-such-test-file -k 01-runner --list 2>&1)
is "$?:$out" "0:tests/host/01-runner.t" "tests/run -k ... --list: the files a run would take, one filter of two matching"

# counts NAME < TAP: "passed failed skipped" after runner.sh's tally
counts() {
	(
		passed=0 failed=0 skipped=0 out=$tmp top=$top
		. "$top/tests/lib/runner.sh"
		tally "$1" >"$tmp/tally.out"
		echo "$passed $failed $skipped"
	)
}

is "$(printf 'ok 1 - a\nok 2 - b\n1..2\n# exit: 0\n' | counts planned)" "2 0 0" \
	"tally: two passes and their plan: 2 passed"
is "$(printf 'ok 1 - a\nok 2 - b\n# exit: 0\n' | counts no-plan)" "2 1 0" \
	"tally: no plan line: one failure more"
is "$(printf 'ok 1 - a\n1..3\n# exit: 0\n' | counts short)" "1 1 0" \
	"tally: planned 3, ran 1: one failure more"
# held to tests/counts: a file that runs another number of checks than the
# list says fails, whatever it printed; so does one the list lacks
printf 'c/two.t\t2\nc/three.t\t3\n' >"$tmp/counts"
held() {
	(
		passed=0 failed=0 skipped=0 out=$tmp top=$top counts_file=$tmp/counts
		. "$top/tests/lib/runner.sh"
		tally "$1" >"$tmp/tally.out"
		echo "$passed $failed $skipped"
	)
}
is "$(printf 'ok 1 - a\nok 2 - b\n1..2\n# exit: 0\n' | held c/two.t)" "2 0 0" \
	"tally: a file that runs the checks tests/counts lists passes"
is "$(printf 'ok 1 - a\nok 2 - b\n1..2\n# exit: 0\n' | held c/three.t)" "2 1 0" \
	"tally: a file that runs fewer than tests/counts lists fails once more, though its plan held"
is "$(grep -c 'c/three.t ran 2 checks, tests/counts lists 3' "$tmp/failures")" 1 "and the failure names both counts"
is "$(printf 'ok 1 - a\n1..1\n# exit: 0\n' | held c/unlisted.t)" "1 1 0" \
	"tally: a file tests/counts does not list fails"
# no list at all holds nothing: every file fails, and says what to run
mv "$tmp/counts" "$tmp/counts.away"
is "$(printf 'ok 1 - a\nok 2 - b\n1..2\n# exit: 0\n' | held c/two.t)" "2 1 0" \
	"tally: without tests/counts a file fails (a missing list holds no count)"
is "$(grep -c 'c/two.t ran 2 checks and there is no tests/counts to hold it to (tests/lib/counts-update writes it)' "$tmp/failures")" 1 \
	"and the failure says which list is missing and what writes it"
mv "$tmp/counts.away" "$tmp/counts"
printf '# comment\n*/x.t\tthe host has no such thing\n' >"$tmp/allow"
export SKIPS_ALLOW=$tmp/allow
is "$(printf 'ok 1 - a # SKIP the host has no such thing\n1..1\n# exit: 0\n' | counts s/x.t)" "0 0 1" \
	"tally: a skip that tests/skips.allow lists for that file and reason: 1 skipped"
is "$(cat "$tmp/allowed-skips")" "s/x.t: the host has no such thing" \
	"tally: an allowed skip is noted with its reason for the summary"
is "$(printf 'ok 1 - a # SKIP another reason\n1..1\n# exit: 0\n' | counts s/x.t)" "0 1 0" \
	"tally: a skip whose reason the list does not give fails"
is "$(printf 'ok 1 - a # SKIP the host has no such thing\n1..1\n# exit: 0\n' | counts s/y.t)" "0 1 0" \
	"tally: a skip the list allows only for another file fails"
unset SKIPS_ALLOW

clean() {
	(
		passed=0 failed=0 skipped=0 out=$tmp top=$top
		. "$top/tests/lib/runner.sh"
		kernel_clean boot "$1" >"$tmp/clean.out"
		echo "$passed $failed"
	)
}
printf 'Linux version 6.1\nRun /init as init process\n' >"$tmp/console.log"
is "$(clean "$tmp/console.log")" "1 0" "kernel_clean: a clean console log passes"
printf 'WARNING: CPU: 0 PID: 1 at kernel/foo.c:1\n' >>"$tmp/console.log"
is "$(clean "$tmp/console.log")" "0 1" "kernel_clean: a WARNING fails"
is "$(clean "$tmp/missing.log")" "0 1" "kernel_clean: a missing console log fails"
: >"$tmp/empty.log"
is "$(clean "$tmp/empty.log")" "0 1" "kernel_clean: an empty console log fails"
# the guest's runner (busybox sh, as in the guest): a file that hangs is
# killed with what it started after LAB_TEST_TIMEOUT, fails, and the next runs
mkdir -p "$tmp/suite/s"
# the state run-guest holds each file to, in a tree of its own (not the host's)
export LAB_STATE_ROOT=$tmp/root
mkdir -p "$tmp/root/sys/devices/system/cpu/umwait_control"
echo 100000 >"$tmp/root/sys/devices/system/cpu/umwait_control/max_time"
echo 1 >"$tmp/root/sys/devices/system/cpu/umwait_control/enable_c02"
echo 0-3 >"$tmp/root/sys/devices/system/cpu/online"
printf 'echo 1..1\nsleep 300 &\necho $! >%s/child\nsleep 300\necho ok 1\n' "$tmp" >"$tmp/suite/s/a.t"
printf 'echo 1..1\necho ok 1 - b\n' >"$tmp/suite/s/b.t"
LAB_TESTS=$tmp/suite LAB_TEST_TIMEOUT=2 busybox sh "$top/tests/run-guest" s >"$tmp/rg.out" 2>/dev/null
# without the runner's sections after each file
is "$(awk '/^# file: s\/after-/ { t = 1; next } /^# file: / || /^# suite done/ { t = 0 } !t' "$tmp/rg.out" |
	grep -v -e '^1\.\.' -e '^# seconds: ' | tr '\n' '|')" \
	"# file: s/a.t|not ok - a.t was still running after 2 s: killed|# exit: 137|# file: s/b.t|ok 1 - b|# exit: 0|# suite done: s|" \
	"run-guest: a hung file is killed after LAB_TEST_TIMEOUT and fails; the next runs"
is "$(grep -A1 '^# file: s/after-' "$tmp/rg.out" | grep -c "^ok 1 - every online CPU's timer fired after [ab].t")" 2 \
	"run-guest: after each file, a test that every online CPU's timer fires, naming the file"
# a probe that outlives the bound stands for a dead timer: that test fails
LAB_TESTS=$tmp/suite LAB_TEST_TIMEOUT=2 LAB_TIMER_BOUND=1 LAB_TIMER_PROBE="sleep 10" \
	busybox sh "$top/tests/run-guest" s b.t >"$tmp/rg-dead.out" 2>/dev/null
is "$(grep -A1 '^# file: s/after-b.t' "$tmp/rg-dead.out" | sed -n 2p)" \
	"not ok 1 - every online CPU's timer fired after b.t" \
	"run-guest: a CPU whose pinned sleep outlives LAB_TIMER_BOUND fails the timer test after that file"
# a file that changes max_time and does not put it back fails the state
# check after it, and the next file finds it restored
printf 'echo 400000 >%s\necho 1..1\necho ok 1 - c\n' "$tmp/root/sys/devices/system/cpu/umwait_control/max_time" >"$tmp/suite/s/c.t"
printf 'echo "1..1"\necho "ok 1 - d sees max_time $(cat %s)"\n' "$tmp/root/sys/devices/system/cpu/umwait_control/max_time" >"$tmp/suite/s/d.t"
LAB_TESTS=$tmp/suite LAB_TEST_TIMEOUT=5 busybox sh "$top/tests/run-guest" s "c.t d.t" >"$tmp/rg-state.out" 2>/dev/null
what="umwait controls and MSRs, CPUs, sysctls, tracefs, mounts, the lab's programs"
is "$(grep -A4 '^# file: s/after-' "$tmp/rg-state.out" | grep -e '^ok 2' -e '^not ok 2' -e '^#   ' | tr '\n' '|')" \
	"not ok 2 - c.t left the guest's state as it found it ($what)|#   umwait/max_time: saved '100000', now '400000'|ok 2 - d.t left the guest's state as it found it ($what)|" \
	"run-guest: a file that leaves max_time changed fails the state check after it, which names the value"
is "$(grep '^ok 1 - d sees' "$tmp/rg-state.out")" "ok 1 - d sees max_time 100000" \
	"run-guest: and puts the value back before the next file"
# what the runner holds is what each file's guard puts back (tests/lib/state.sh):
# tracefs's buffer size too, which a file's guard restored and the runner's
# own copy of the state did not read
tr=$tmp/root/sys/kernel/tracing
mkdir -p "$tr/instances"
: >"$tr/trace"; : >"$tr/set_event"; : >"$tr/trace_options"
echo 1 >"$tr/tracing_on"; echo nop >"$tr/current_tracer"; echo "[local] global" >"$tr/trace_clock"
# as the kernel has it before the first use of tracing
echo "7 (expanded: 1408)" >"$tr/buffer_size_kb"
printf 'echo 4096 >%s\necho 1..1\necho ok 1 - e\n' "$tr/buffer_size_kb" >"$tmp/suite/s/e.t"
LAB_TESTS=$tmp/suite LAB_TEST_TIMEOUT=5 busybox sh "$top/tests/run-guest" s "e.t" >"$tmp/rg-trace.out" 2>/dev/null
is "$(grep -A6 '^# file: s/after-' "$tmp/rg-trace.out" | grep -e '^ok 2' -e '^not ok 2' -e '^#   ' | tr '\n' '|')$(cat "$tr/buffer_size_kb")" \
	"not ok 2 - e.t left the guest's state as it found it ($what)|#   tracefs/buffer_size_kb: saved '1408', now '4096'|1408" \
	"run-guest: a file that leaves tracefs's buffer size changed fails the state check, which puts it back"
# perf_event_max_sample_rate, which the kernel lowers by itself, is put back
# after a file and not held against it
sr=$tmp/root/proc/sys/kernel/perf_event_max_sample_rate
mkdir -p "${sr%/*}"
echo 100000 >"$sr"
printf 'echo 6250 >%s\necho 1..1\necho ok 1 - f\n' "$sr" >"$tmp/suite/s/f.t"
LAB_TESTS=$tmp/suite LAB_TEST_TIMEOUT=5 busybox sh "$top/tests/run-guest" s "f.t" >"$tmp/rg-rate.out" 2>/dev/null
is "$(grep -A6 '^# file: s/after-' "$tmp/rg-rate.out" | grep -e '^ok 2' -e '^not ok 2' -e '^#   ' | tr '\n' '|')$(cat "$sr")" \
	"ok 2 - f.t left the guest's state as it found it ($what)|100000" \
	"run-guest: perf_event_max_sample_rate lowered (as the kernel does) is put back, not held against the file"
rm "$tmp/suite/s/c.t" "$tmp/suite/s/d.t" "$tmp/suite/s/e.t" "$tmp/suite/s/f.t"
unset LAB_STATE_ROOT
child=$(cat "$tmp/child" 2>/dev/null)
check "run-guest: what the hung file started in the background is killed too" \
	bash -c '[ -n "$1" ] || exit 1
		# gone, or a zombie that its new parent has yet to reap
		s=$(cut -d" " -f3 "/proc/$1/stat" 2>/dev/null); [ -z "$s" ] || [ "$s" = Z ]' - "$child"
is "$(printf '%s\n' "1..1" "ok 1" | counts x; printf '1..1\nnot ok - a.t was still running\n# exit: 137\n' | counts hung)" "$(printf '1 0 0\n0 1 0')" \
	"tally: a killed file's line and its exit count as one failure"
# ut_start (tests/lib/guest.sh) is back once this run's tracer says it is
# attached, never on the last run's "Attached" left in a reused stderr file.
# That was the 6.12 "tracer hung in epoll_wait": ut_stop's SIGINT came
# before the tracer had started, a background job starts with SIGINT
# ignored, the kernel dropped it, and the tracer ran on until killed. The
# stand-in tracer leaves a mark before it says it is attached; its stdout
# is a FIFO nobody reads for a second, so the shell that starts it blocks
# in opening it, before it has truncated the stderr file: the race a
# loaded guest lost, made certain.
cat >"$tmp/fake-ut" <<'EOF'
#!/bin/sh
sleep 1
: >"$FAKE_MARK"
echo "Attached 1 probe (this run)" >&2
exec sleep 30
EOF
chmod +x "$tmp/fake-ut"
echo "Attached 1 probe (the last run)" >"$tmp/ut.err"
mkfifo "$tmp/ut"
(sleep 1 && cat "$tmp/ut" >/dev/null) 2>/dev/null &
reader=$!
got=$(
	fail() { echo "ut_start failed: $1"; }
	. "$top/tests/lib/guest.sh"
	export FAKE_MARK=$tmp/mark UT_BIN=$tmp/fake-ut
	ut_start "$tmp/ut" caps x
	if [ -e "$tmp/mark" ]; then echo "this run's line"; else echo "the last run's line"; fi
	kill "$ut_pid"
)
kill $reader 2>/dev/null
wait $reader 2>/dev/null
is "$got" "this run's line" "ut_start: back on this run's 'Attached', not on one a reused stderr file still holds"

# tr_stop (tests/lib/guest.sh: ut_stop, ut_stop_frozen and make bench's
# guest stop every tracer with it) sends SIGINT only once the tracer has a
# handler for it. A background job of a non-interactive shell starts with
# SIGINT ignored, and a tracer can say it is ready before it installs its
# handler (bpftrace does): a SIGINT sent in between is dropped, and a plain
# "kill -INT; wait" waits for ever (make bench hung so). The stand-in
# tracer says "Attached", then keeps SIGINT ignored until a SIGINT has been
# sent (the shell's kill, wrapped, leaves a mark) or 2 s have passed, and
# only then installs its handler: the race, made certain. The stop runs
# under timeout(1), so a lost SIGINT fails the check instead of hanging the
# file. Second: a tracer that never ends on SIGINT is killed after
# TR_BOUND s and reported, not waited for. Third: one that takes longer
# than TR_BOUND s to end, but closes a descriptor more often than that (as
# caps --all releasing hundreds of BPF links does), is waited for.
cat >"$tmp/late-int" <<'EOF'
#!/usr/bin/perl
# LATE_INT_DEAF=1: at once a handler that ignores the signal;
# LATE_INT_SLOW=1: at once a handler that closes 10 descriptors 0.3 s apart
my @fds;
open($fds[$_], "<", "/dev/null") for 0 .. 9;
print STDERR "Attached 1 probe (stand-in)\n";
for (my $i = 0; $i < 200 && !-e $ENV{LATE_INT_SENT} && !$ENV{LATE_INT_DEAF} && !$ENV{LATE_INT_SLOW}; $i++) {
	select(undef, undef, undef, 0.01);
}
$SIG{INT} = $ENV{LATE_INT_DEAF} ? sub { } : sub {
	if ($ENV{LATE_INT_SLOW}) { select(undef, undef, undef, 0.3), close($_) for @fds; }
	print "ended on SIGINT\n";
	exit 0;
};
sleep 1 for 1 .. 120;
exit 3;
EOF
chmod +x "$tmp/late-int"
# stop_race [TR_BOUND]: start the stand-in, stop it; "rc=STATUS OUTPUT" or why not
stop_race() {
	rm -f "$tmp/late-int.sent"
	TR_BOUND=${1:-300} LATE_INT_SENT=$tmp/late-int.sent timeout 60 busybox sh -c '
		fail() { :; }
		. "$1/tests/lib/guest.sh"
		kill() { command kill "$@" && { [ "$1" != -INT ] || : >"$LATE_INT_SENT"; }; }
		tr_start "$2/late" "grep -q ^Attached \"$2/late.err\"" "$2/late-int" ||
			{ echo "start: $tr_why"; exit; }
		tr_stop >/dev/null || echo "stop: $tr_why"
		echo "rc=$tr_rc $(cat "$2/late")"' - "$top" "$tmp" 2>/dev/null
	echo "exit $?"
}
is "$(stop_race | tr '\n' ' ')" "rc=0 ended on SIGINT exit 0 " \
	"tr_stop: a tracer that is ready before its SIGINT handler exists gets a SIGINT it does not lose"
is "$(LATE_INT_DEAF=1 stop_race 1 | sed 's/PID [0-9]*/PID N/; s/: state .*//' | tr '\n' ' ')" \
	"stop: PID N (late-int) still running 1 s after SIGINT (or after it last closed a descriptor) rc=137  exit 0 " \
	"tr_stop: a tracer that does not end on SIGINT is killed after TR_BOUND s, and says so"
is "$(LATE_INT_SLOW=1 stop_race 2 | tr '\n' ' ')" "rc=0 ended on SIGINT exit 0 " \
	"tr_stop: a tracer that ends in 3 s, closing a descriptor every 0.3 s, is waited for past a 2 s TR_BOUND"

done_testing
