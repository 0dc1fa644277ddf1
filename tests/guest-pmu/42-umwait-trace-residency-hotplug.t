# umwait-trace caps' residency across CPU hotplug: a CPU offline when caps
# starts is skipped and said so (the others are counted); a CPU taken offline
# during the run is reported, never shown as 0%, and left out of the sum.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/residency.sh

res_need_pmu
tmp=$(mktemp -d)
cpu_dir=/sys/devices/system/cpu

echo 0 >$cpu_dir/cpu3/online
umwait-trace caps $RES_SITES 1 1 >$tmp/start.out 2>$tmp/start.err
is "$?" 0 "caps runs with CPU 3 offline"
echo 1 >$cpu_dir/cpu3/online
is "$(grep -c '^C0.x residency: unavailable' $tmp/start.out)" 0 \
	"one offline CPU does not make residency unavailable (bug: every CPU dropped)"
is "$(res_row $tmp/start.out 3)" "$(printf '%-8s %14s %8s %8s %8s  %s' 3 - - - - 'not counted: offline at start')" \
	"CPU 3: 'not counted: offline at start', no percentage"
for c in 0 1 2; do
	is "$(res_row $tmp/start.out $c | grep -c '%')" 1 "CPU $c is counted"
done
check "the sum is of CPUs 0-2, and says so" grep -q '^0-2 .*%.* sum$' $tmp/start.out

# CPU 2 goes offline after the first interval
ut_start $tmp/mid.out caps $RES_SITES 1
res_until $tmp/mid.out '^C0.x residency, system-wide' 1 || fail "caps prints its first residency block"
is "$(res_row $tmp/mid.out 2 | grep -c '%')" 1 "CPU 2 is counted while online"
echo 0 >$cpu_dir/cpu2/online
n=$(grep -c '^C0.x residency, system-wide' $tmp/mid.out)
res_until $tmp/mid.out '^C0.x residency, system-wide' $((n + 2)) || fail "caps goes on printing intervals"
ut_stop
echo 1 >$cpu_dir/cpu2/online
is "$ut_rc" 0 "caps exits 0 after a CPU went offline under it"
row=$(res_row $tmp/mid.out 2)
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
case "$(res_row $tmp/tot.out 2)" in
*"read failed: offline since"*) pass "the totals report CPU 2 the same way" ;;
*) fail "the totals report CPU 2 the same way" "got: $(res_row $tmp/tot.out 2)" ;;
esac
is "$(grep -c '^0-1,3 .*%.* sum$' $tmp/tot.out)" 1 "the totals' sum is of CPUs 0-1,3"
for c in 0 1 3; do
	is "$(res_row $tmp/tot.out $c | grep -c '%')" 1 "CPU $c is still counted"
done

rm -rf $tmp
done_testing
