# umwait-trace caps' residency when other perf users take the counters
# (tools/pmu-hog: one event per general-purpose counter on one CPU).  A
# flexible group that does not fit next to caps' makes perf time-share the
# two: caps' row for that CPU is scaled and says so, and pmu-hog's own
# enabled/running times (the kernel's account) agree that it was shared.  A
# pinned one keeps caps' group off that CPU for good: "not counted", never 0%.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/residency.sh
. /lab/tests/lib/state.sh
state_guard

res_need_pmu
tmp=$(mktemp -d)

# hog_start [--pinned] CPU: pmu-hog in the background, back once it counts
# (one check)
hog_start() {
	pmu-hog "$@" >$tmp/hog.out 2>$tmp/hog.err &
	hog_pid=$!
	check "pmu-hog $* starts" res_until $tmp/hog.out '^pmu-hog: ready' 1
	diag "$(cat $tmp/hog.out $tmp/hog.err)"
}

hog_stop() {
	kill -TERM $hog_pid
	wait $hog_pid
	hog_rc=$?
}

# More events than counters: caps' group and a flexible group on CPU 1.
hog_start 1
ut_begin $tmp/caps.json caps --json $RES_SITES 1
ut_check "caps --json prints two intervals" res_until $tmp/caps.json '"type": "interval"' 2
ut_end "caps --json exits 0 on Ctrl-C"
hog_stop
is "$hog_rc" 0 "pmu-hog (flexible) ends on SIGTERM"
set -- $(sed -n 's/^pmu-hog: cpu=1 events=[0-9]* enabled=\([0-9]*\) running=\([0-9]*\)$/\1 \2/p' $tmp/hog.out)
cmp_ok "${2:-x}" -lt "${1:-x}" "the kernel time-shared the counters: pmu-hog ran ${2:-?} of ${1:-?} ns enabled"
j=$(grep '"type": "interval"' $tmp/caps.json | sed -n 2p)
set -- $(caps_res_cpu "$j" 1)
diag "cpu 1: $*"
is "$5" true "shared CPU 1: the interval is marked scaled (bug: read without TOTAL_TIME_ENABLED/RUNNING)"
fcmp_ok "$6" "<" 100 "shared CPU 1: running is below 100% ($6%)"
fcmp_ok "$6" ">" 0 "shared CPU 1: but above 0: it did count"
set -- $(caps_res_cpu "$j" 0)
is "$5 $6" "false 100.00" "CPU 0, not shared: not scaled, counted all the time"
j=$(tail -n 1 $tmp/caps.json)
case "$j" in
'{"type": "total"'*) pass "--json ends with the totals" ;;
*) fail "--json ends with the totals" "$j" ;;
esac
set -- $(caps_res_cpu "$j" 1)
is "$5" true "shared CPU 1: the totals are scaled too"

hog_start 1
ut_begin $tmp/caps.out caps $RES_SITES 1
ut_check "caps prints two residency blocks" res_until $tmp/caps.out '^C0.x residency, system-wide' 2
ut_end "caps exits 0 on Ctrl-C"
hog_stop
row=$(caps_res_row $tmp/caps.out 1)
diag "text row: $row"
case "$row" in
*"scaled: counted "*"% of the time (counters shared)") pass "text: CPU 1's row says it is scaled and how much was counted" ;;
*) fail "text: CPU 1's row says it is scaled and how much was counted" "got: $row" ;;
esac

# A pinned group takes every general-purpose counter of CPU 2 first.
hog_start --pinned 2
ut_begin $tmp/pinned.out caps $RES_SITES 1
ut_check "pinned: caps prints two residency blocks" res_until $tmp/pinned.out '^C0.x residency, system-wide' 2
ut_end "pinned: caps exits 0 on Ctrl-C"
hog_stop
set -- $(sed -n 's/^pmu-hog: cpu=2 events=[0-9]* enabled=\([0-9]*\) running=\([0-9]*\)$/\1 \2/p' $tmp/hog.out)
is "${1:-x}" "${2:-y}" "pinned pmu-hog counted all the time it was enabled (the kernel put it first)"
row=$(caps_res_row $tmp/pinned.out 2)
diag "text row: $row"
case "$row" in
"2 "*"not counted: the group never got the counters (other perf users)") pass "CPU 2 without counters: 'not counted', and why" ;;
*) fail "CPU 2 without counters: 'not counted', and why" "got: $row" ;;
esac
case "$row" in
*%*) fail "CPU 2's row shows no percentage (bug: a group that never ran read as 0%)" "got: $row" ;;
*) pass "CPU 2's row shows no percentage (bug: a group that never ran read as 0%)" ;;
esac
check "the sum leaves CPU 2 out and says so (0-1,3)" grep -q '^0-1,3 .*%.* sum$' $tmp/pinned.out
is "$(caps_res_row $tmp/pinned.out 1 | grep -c '%')" 1 "the other CPUs are counted as usual"

rm -rf $tmp
done_testing
