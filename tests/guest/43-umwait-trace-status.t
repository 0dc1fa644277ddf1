# umwait-trace status: the cached value (sysfs), every CPU's value (the series'
# debugfs file, or /dev/cpu/N/msr without it), one verdict line; exit 1 when a
# CPU holds something else.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
dbg=/sys/kernel/debug/x86/umwait/control
source=/dev/cpu/N/msr
[ -r $dbg ] && source=$dbg

# st [ARGS]: run status, output in out, exit status in rc
st() {
	out=$(umwait-trace status "$@" 2>&1)
	rc=$?
}

line() {
	echo "$out" | grep "$1"
}

st
is "$rc" 0 "defaults: exit 0"
is "$(line '^cached')" "cached (sysfs): 0x186a0 max_time=100000 c02=enabled" "the cached value, raw and decoded"
is "$(echo "$out" | grep -c '^[0-3] *0x186a0 *max_time=100000 c02=enabled$')" 4 "one line per CPU, each 0x186a0"
is "$(line '^source')" "source: $source" "per-CPU values from $source"
is "$(line '^verdict')" "verdict: OK: all 4 online CPUs hold the cached value 0x186a0" "verdict OK"

# a CPU changed behind the kernel's back
msr write 2 0xe1 0x61a81
st
is "$rc" 1 "cpu2 differs: exit 1"
is "$(line '^verdict')" "verdict: MISMATCH: cpu2 holds 0x61a81, the kernel caches 0x186a0" "verdict names the CPU and both values"
is "$(line '^2 ')" "2     0x61a81      max_time=400000 c02=disabled  <- differs" "cpu2's line decodes its value and flags it"
st --json
is "$rc" 1 "--json: exit 1 too"
case "$out" in
*'{"cpu": 2, "online": true, "value": 400001, "max_time": 400000, "c02": false, "match": false}'*'"ok": false'*)
	pass "--json: cpu2 does not match, ok is false" ;;
*) fail "--json: cpu2 does not match, ok is false" "got: $out" ;;
esac
msr write 2 0xe1 0x186a0

# every CPU differs: the verdict names 3 and counts the rest, whole words
for c in 0 1 2 3; do msr write $c 0xe1 0x61a81; done
out=$(umwait-trace status 2>&1)
rc=$?
for c in 0 1 2 3; do msr write $c 0xe1 0x186a0; done
is "$rc:$(echo "$out" | grep '^verdict')" \
	"1:verdict: MISMATCH: cpu0 holds 0x61a81, cpu1 holds 0x61a81, cpu2 holds 0x61a81 and 1 more CPUs differ, the kernel caches 0x186a0" \
	"all 4 CPUs differ: exit 1, the verdict names 3, counts the other, and ends in the cached value"

# changes through sysfs reach every CPU
echo 400000 >$d/max_time
echo 0 >$d/enable_c02
st
is "$rc:$(line '^verdict')" "0:verdict: OK: all 4 online CPUs hold the cached value 0x61a81" \
	"max_time=400000 enable_c02=0: every CPU holds 0x61a81"
echo 1 >$d/enable_c02
echo 100000 >$d/max_time

# an offline CPU is shown as such and not judged
echo 0 >/sys/devices/system/cpu/cpu3/online
st
is "$rc:$(line '^verdict')" "0:verdict: OK: all 3 online CPUs hold the cached value 0x186a0" "cpu3 offline: 3 CPUs judged"
is "$(line '^3 ')" "3     offline" "cpu3's line says offline"
echo 1 >/sys/devices/system/cpu/cpu3/online

st --json
is "$rc" 0 "--json: exit 0"
case "$out" in
'{"cached": {"value": 100000, "max_time": 100000, "enable_c02": true}, "source": '*'"ok": true, "verdict": "OK: all 4 online CPUs hold the cached value 0x186a0"}')
	pass "--json: one object, cached value, ok true" ;;
*) fail "--json: one object, cached value, ok true" "got: $out" ;;
esac
is "$(cat $d/max_time) $(cat $d/enable_c02) $(cat /sys/devices/system/cpu/online)" "100000 1 0-3" "controls and CPUs restored"
done_testing
