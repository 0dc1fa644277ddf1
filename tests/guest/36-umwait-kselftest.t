# The series' own kselftest (tools/testing/selftests/umwait/umwait_control),
# as vm/build-kernel installed it from the kernel tree with the kselftest
# install target, run by the kselftest runner (run_kselftest.sh): sysfs writes
# against the MSR of every CPU through the debugfs dump, the update, offline
# and online events, rejected and unchanged writes. It must run every one of
# its checks here (the guest has WAITPKG, debugfs, tracefs and a CPU that can
# go offline): a skip of any of them is a failure. Its SKIP paths: without
# debugfs, below (unmounted for the run), and without WAITPKG on the stock
# QEMU (tests/guest-stock/30-umwait-absent.t).
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

ks=/lab/kselftest
check "the kernel's kselftest tree is installed at $ks" test -x $ks/run_kselftest.sh
is "$(cat $ks/kselftest-list.txt)" "umwait:umwait_control" "it lists the one test of the series"
out=$(cd $ks && ./run_kselftest.sh 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
is "$rc" 0 "run_kselftest.sh exits 0"
is "$(echo "$out" | grep -E '^(not )?ok [0-9]+ selftests: ')" "ok 1 selftests: umwait: umwait_control" \
	"the runner's verdict: umwait_control ok"
# the test's own TAP, which the runner prefixes with "# "
is "$(echo "$out" | grep -cE '^# ok [0-9]+ ')" 24 "umwait_control: 24 checks ok"
is "$(echo "$out" | grep -cE '^# not ok |^# ok [0-9]+ .*# SKIP')" 0 "umwait_control: none failed or skipped"
is "$(echo "$out" | grep -c '^# # Totals: pass:24 fail:0 xfail:0 xpass:0 skip:0 error:0$')" 1 \
	"umwait_control's own totals: pass:24, nothing else"

# without debugfs: the kselftest SKIP code (4), saying what is missing
umount -l /sys/kernel/debug
check "debugfs unmounted for the run" test ! -e /sys/kernel/debug/x86
out=$(cd $ks/umwait && ./umwait_control 2>&1)
rc=$?
mount -t debugfs debugfs /sys/kernel/debug
echo "$out" | sed 's/^/# /'
is "$rc $(echo "$out" | grep -c '^1\.\.0 # SKIP no /sys/kernel/debug/x86/umwait/control: no debugfs, or no umwait dump in it$')" "4 1" \
	"debugfs unmounted: umwait_control exits with the SKIP code 4 and names the missing file"
check "debugfs mounted again" test -r /sys/kernel/debug/x86/umwait/control
done_testing
