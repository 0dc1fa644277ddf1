# umwait-trace caps' residency across CPU hotplug: a CPU offline when caps
# starts is skipped and said so (the others are counted); a CPU taken offline
# during the run is reported, never shown as 0%, and left out of the sum; one
# that comes back online is counted again from the next interval, its totals
# carried across the gap. And caps reads every CPU's counters from where it
# runs: it never moves onto another CPU (which would preempt what runs there
# each interval, as a DPDK poll loop on an isolated core).
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/events.sh
. /lab/tests/lib/residency.sh
. /lab/tests/lib/state.sh
state_guard

res_need_pmu
tmp=$(mktemp -d)
cpu_dir=/sys/devices/system/cpu

echo 0 >$cpu_dir/cpu3/online
umwait-trace caps $RES_SITES 1 1 >$tmp/start.out 2>$tmp/start.err
is "$?" 0 "caps runs with CPU 3 offline"
echo 1 >$cpu_dir/cpu3/online
is "$(grep -c '^C0.x residency: unavailable' $tmp/start.out)" 0 \
	"one offline CPU does not make residency unavailable (bug: every CPU dropped)"
is "$(caps_res_row $tmp/start.out 3)" "$(printf '%-8s %14s %8s %8s %8s  %s' 3 - - - - 'not counted: offline at start')" \
	"CPU 3: 'not counted: offline at start', no percentage"
for c in 0 1 2; do
	is "$(caps_res_row $tmp/start.out $c | grep -c '%')" 1 "CPU $c is counted"
done
check "the sum is of CPUs 0-2, and says so" grep -q '^0-2 .*%.* sum$' $tmp/start.out

# CPU 2 goes offline after the first interval
ut_begin $tmp/mid.out caps $RES_SITES 1
ut_check "caps prints its first residency block" res_until $tmp/mid.out '^C0.x residency, system-wide' 1
is "$(caps_res_row $tmp/mid.out 2 | grep -c '%')" 1 "CPU 2 is counted while online"
echo 0 >$cpu_dir/cpu2/online
n=$(grep -c '^C0.x residency, system-wide' $tmp/mid.out)
ut_check "caps goes on printing intervals" res_until $tmp/mid.out '^C0.x residency, system-wide' $((n + 2))
ut_end "caps exits 0 after a CPU went offline under it"
echo 1 >$cpu_dir/cpu2/online
row=$(caps_res_row $tmp/mid.out 2)
diag "after: $row"
case "$row" in
"2 "*"not counted: read failed: offline since "[0-2][0-9]:[0-5][0-9]:[0-5][0-9]) pass "CPU 2 offlined mid-run: 'read failed: offline since TIME'" ;;
*) fail "CPU 2 offlined mid-run: 'read failed: offline since TIME'" "got: $row" ;;
esac
case "$row" in
*%*) fail "CPU 2's row shows no percentage (bug: a failed read shown as 0%)" "got: $row" ;;
*) pass "CPU 2's row shows no percentage (bug: a failed read shown as 0%)" ;;
esac
tot=$(sed -n '/^Totals since attach/,$p' $tmp/mid.out)
echo "$tot" >$tmp/tot.out
case "$(caps_res_row $tmp/tot.out 2)" in
*"read failed: offline since"*) pass "the totals report CPU 2 the same way" ;;
*) fail "the totals report CPU 2 the same way" "got: $(caps_res_row $tmp/tot.out 2)" ;;
esac
is "$(grep -c '^0-1,3 .*%.* sum$' $tmp/tot.out)" 1 "the totals' sum is of CPUs 0-1,3"
for c in 0 1 3; do
	is "$(caps_res_row $tmp/tot.out $c | grep -c '%')" 1 "CPU $c is still counted"
done

# CPU 2 goes offline after the first interval and comes back two later
ut_begin $tmp/back.out caps $RES_SITES 1
ut_check "back: caps prints its first residency block" res_until $tmp/back.out '^C0.x residency, system-wide' 1
echo 0 >$cpu_dir/cpu2/online
ut_check "back: caps reports CPU 2 offline" res_until $tmp/back.out '^2 .*not counted: read failed: offline since' 1
echo 1 >$cpu_dir/cpu2/online
ut_check "back: caps says CPU 2 is back" res_until $tmp/back.out '^2 .*back online at' 1
n=$(grep -c '^C0.x residency, system-wide' $tmp/back.out)
ut_check "back: caps prints the next interval" res_until $tmp/back.out '^C0.x residency, system-wide' $((n + 1))
ut_end "back: caps exits 0"
row=$(grep '^2 .*back online at' $tmp/back.out | head -n 1)
case "$row" in
"2 "*" - "*"not counted: back online at "[0-2][0-9]:[0-5][0-9]:[0-5][0-9]", counted from the next interval") pass "back: the interval CPU 2 came back in says so, with no percentage" ;;
*) fail "back: the interval CPU 2 came back in says so, with no percentage" "got: $row" ;;
esac
# the interval after: counted again, and in the sum
sed -n "/back online at/,\$p" $tmp/back.out | sed '/^Totals since attach/,$d' >$tmp/after.out
is "$(caps_res_row $tmp/after.out 2 | grep -c '%')" 1 "back: CPU 2 is counted again in the next interval"
cmp_ok "$(grep -c '^0-3 .*%.* sum$' $tmp/after.out)" -ge 1 "back: and in its sum (CPUs 0-3)"
sed -n '/^Totals since attach/,$p' $tmp/back.out >$tmp/tot.out
case "$(caps_res_row $tmp/tot.out 2)" in
*%*"back online at "*"(not counted while offline)") pass "back: the totals count CPU 2 before and after, and say it was not counted while offline" ;;
*) fail "back: the totals count CPU 2 before and after, and say it was not counted while offline" "got: $(caps_res_row $tmp/tot.out 2)" ;;
esac

# started on CPU 0 alone, caps never runs elsewhere: the kernel's own
# sched_migrate_task events of umwait-trace, to any CPU but 0, are none
# (recorded in a tracefs instance of this file's own)
ev_open g42 sched:sched_migrate_task
ev_filter sched:sched_migrate_task 'comm == "umwait-trace"'
taskset -c 0 umwait-trace caps $RES_SITES 1 >$tmp/pin.out 2>$tmp/pin.err &
pin=$!
check "caps on CPU 0 prints three residency blocks" res_until $tmp/pin.out '^C0.x residency, system-wide' 3
kill -INT $pin
wait $pin
echo 0 >$ev_dir/tracing_on
is "$(caps_res_row $tmp/pin.out 3 | grep -c '%')" 1 "caps on CPU 0 counts CPU 3 all the same"
is "$(grep -c 'sched_migrate_task:.*dest_cpu=[1-9]' $ev_dir/trace)" 0 \
	"caps on CPU 0 never moved to another CPU to read its counters (sched_migrate_task: $(grep -c 'sched_migrate_task:' $ev_dir/trace) events)"
ev_close

rm -rf $tmp
done_testing
