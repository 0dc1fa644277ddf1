# The series' own kselftest (tools/testing/selftests/x86/umwait_control.c,
# installed as x86/umwait_control_64 by vm/build-kernel with the x86 selftests'
# install target), run by the kselftest runner (run_kselftest.sh): sysfs
# writes against every online CPU's MSR through /dev/cpu/N/msr, the update,
# offline and online events in a tracefs instance of its own, rejected and
# unchanged writes, the debugfs dump. It must run every one of its checks
# here (the guest has WAITPKG, the msr driver, debugfs, tracefs and a CPU
# that can go offline): a skip of any of them is a failure. Then three ways
# it can end early: a CPU that does not hold the value (it must fail and
# name the CPU), SIGTERM in the middle (it must put back everything it
# changed), and no msr driver (the kselftest SKIP code). Without WAITPKG, on
# the stock QEMU: tests/guest-stock/30-umwait-absent.t.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

ks=/lab/kselftest
test=$ks/x86/umwait_control_64
d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
last=$(($(grep -c ^processor /proc/cpuinfo) - 1))
check "the kernel's kselftest tree is installed at $ks" test -x $ks/run_kselftest.sh
is "$(grep -c '^x86:umwait_control_64$' $ks/kselftest-list.txt 2>&1)" 1 "the x86 selftests list umwait_control_64"
out=$(cd $ks && ./run_kselftest.sh -t x86:umwait_control_64 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
is "$rc" 0 "run_kselftest.sh exits 0"
is "$(echo "$out" | grep -E '^(not )?ok [0-9]+ selftests: ')" "ok 1 selftests: x86: umwait_control_64" \
	"the runner's verdict: umwait_control_64 ok"
# the test's own TAP, which the runner prefixes with "# "
is "$(echo "$out" | grep -cE '^# ok [0-9]+ ')" 25 "umwait_control_64: 25 checks ok"
is "$(echo "$out" | grep -cE '^# not ok |^# ok [0-9]+ .*# SKIP')" 0 "umwait_control_64: none failed or skipped"
is "$(echo "$out" | grep -c '^# # Totals: pass:25 fail:0 xfail:0 xpass:0 skip:0 error:0$')" 1 \
	"umwait_control_64's own totals: pass:25, nothing else"
is "$(ls $t/instances | grep -c '^umwait_control\.')" 0 "its tracefs instance is gone"

# state PFX: the controls, the online CPUs and every MSR, one line
state() {
	_s="max_time=$(cat $d/max_time) enable_c02=$(cat $d/enable_c02) online=$(cat /sys/devices/system/cpu/online)"
	for _c in $(seq 0 $last); do
		_s="$_s cpu$_c=$(msr read $_c 0xe1 2>&1)"
	done
	echo "$_s"
}
before=$(state)

# a CPU that does not hold the system-wide value: cpu1's MSR changed behind
# the kernel's back. The first check must fail and name it; every later write
# puts the value on all CPUs again, and the test puts the controls back.
msr write 1 0xe1 0x61a80
out=$($test 2>&1)
rc=$?
echo "$out" | sed 's/^/# cpu1 off: /'
is "$rc $(echo "$out" | grep -c '^not ok ') $(echo "$out" | grep -c '^not ok 1 ')" "1 1 1" \
	"cpu1 holding another value: exit 1, one check failed, the first"
is "$(echo "$out" | grep -c '^# cpu1 holds 0x00061a80, expected 0x000186a0$')" 1 "it names cpu1, what it holds and what it should"
is "$(state)" "$before" "after the failure: the controls, the CPUs and every MSR as before"

# SIGTERM in the middle: stop it once it has changed max_time, end it there
tmp=$(mktemp -d)
$test >$tmp/ks.out 2>&1 &
pid=$!
i=0
while [ "$(cat $d/max_time)" = 100000 ] && [ $i -lt 100000 ] && kill -0 $pid 2>/dev/null; do
	i=$((i + 1))
done
kill -STOP $pid 2>/dev/null
during=$(state)
diag "stopped at: $during"
isnt "$during" "$before" "stopped in the middle of its run, with something changed"
kill -TERM $pid
kill -CONT $pid
wait $pid
rc=$?
sed "s/^/# sigterm: /" $tmp/ks.out
rm -rf $tmp
is "$rc" 143 "SIGTERM ends it (exit status 128 + 15)"
is "$(state)" "$before" "after SIGTERM: the controls, the CPUs and every MSR as before"
is "$(ls $t/instances | grep -c '^umwait_control\.')" 0 "after SIGTERM: its tracefs instance is gone"

# without the msr driver's files: the kselftest SKIP code (4), saying why
mount -t tmpfs none /dev/cpu
out=$($test 2>&1)
rc=$?
umount /dev/cpu
echo "$out" | sed 's/^/# /'
is "$rc $(echo "$out" | grep -c '^1\.\.0 # SKIP cannot read /dev/cpu/0/msr: no msr driver (CONFIG_X86_MSR)$')" "4 1" \
	"no /dev/cpu/N/msr: umwait_control_64 exits with the SKIP code 4 and says why"
check "/dev/cpu/0/msr back" test -e /dev/cpu/0/msr
done_testing
