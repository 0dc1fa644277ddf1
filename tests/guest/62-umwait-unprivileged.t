# What an unprivileged user (lab, uid 1000) can do with user waits: run them
# (tpause-loop), but not change the limits (sysfs), nor touch the MSR.
# debugfs and umwait-trace refusing it: 33-umwait-debugfs.t, 42-umwait-trace-errors.t.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control

state() {
	echo "$(cat $d/max_time) $(cat $d/enable_c02) $(sed -n 1p /sys/kernel/debug/x86/umwait/control)"
}

is "$(as_lab id -u)" 1000 "(as_lab runs as uid 1000)"
before=$(state)
for v in 0 400000 100000; do
	is "$(as_lab lab-write $d/max_time $v)" EACCES "uid 1000: max_time <- $v refused (EACCES)"
done
for v in 0 1 n; do
	is "$(as_lab lab-write $d/enable_c02 $v)" EACCES "uid 1000: enable_c02 <- $v refused (EACCES)"
done
is "$(as_lab umwait-fuzz -n 5 $d/max_time | sed -n 's/.* accepted=\([0-9]*\) EINVAL=\([0-9]*\) ERANGE=\([0-9]*\) other=\([0-9]*\) .*/\1 \2 \3 \4/p')" \
	"0 0 0 5" "uid 1000: 5 random strings, all refused before any parsing"
is "$(state)" "$before" "nothing changed"
is "$(as_lab msr read 1 0xe1 2>&1 | sed -n 's/.*(\(E[A-Z]*\))$/\1/p')" EACCES "uid 1000 cannot read /dev/cpu/1/msr"
is "$(as_lab msr write 1 0xe1 0 2>&1 | sed -n 's/.*(\(E[A-Z]*\))$/\1/p')" EACCES "uid 1000 cannot write /dev/cpu/1/msr"

# the user's own waits work, and the kernel's limit applies to them
echo 100000 >$d/max_time
out=$(as_lab tpause-loop -n 50 -c 1000000)
is "$?" 0 "uid 1000: tpause-loop exits 0"
echo "# $out"
is "$(echo "$out" | sed -n 's/.* waits=\([0-9]*\) .*/\1/p')" 50 "uid 1000: 50 TPAUSEs of 1M cycles ran"
cmp_ok "$(echo "$out" | sed -n 's/.* capped=\([0-9]*\) .*/\1/p')" -ge 45 \
	"uid 1000: max_time=100000 caps them (CF=1) as it does root's"
is "$(state)" "$before" "state as before"
done_testing
