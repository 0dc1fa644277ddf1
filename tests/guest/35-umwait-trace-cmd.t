# The umwait events' formats read by a real consumer: Debian's trace-cmd records
# umwait:* in its own buffer instance while a tracefs instance of this file's
# own records the same events. For every event (an update, a hotplug cycle,
# suspend to RAM): `trace-cmd report` prints the same line as tracefs (the
# print format, evaluated by libtraceevent), and `trace-cmd report -R` has the
# fields with the values tracefs printed (the field layout of the format files).
. /lab/tests/lib/tap.sh
. /lab/tests/lib/events.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
tmp=$(mktemp -d)
# the lab's guest: 4 CPUs, cpu3 hotpluggable (tests/guest/10-lab.t)
last=3

check "trace-cmd is in the guest (vm/build-initramfs copies /usr/bin/trace-cmd, package trace-cmd)" \
	sh -c 'command -v trace-cmd >/dev/null'

# norm: "[CPU] EVENT: PAYLOAD" for each umwait line, blanks squeezed
norm() {
	sed -n 's/.*\[0*\([0-9][0-9]*\)\][^:]*: *\(umwait_[a-z_]*\): *\(.*\)$/cpu\1 \2: \3/p' | tr -s ' '
}

echo 100000 >$d/max_time
echo 1 >$d/enable_c02
ev_open g35 umwait

# the workload: every umwait event at least once
cat >$tmp/work.sh <<WORK
echo 400000 >$d/max_time
echo 0 >$d/enable_c02
echo 0 >/sys/devices/system/cpu/cpu$last/online
echo 200000 >$d/max_time
echo 1 >/sys/devices/system/cpu/cpu$last/online
grep -qw mem /sys/power/state && echo mem >/sys/power/state
echo 100000 >$d/max_time
echo 1 >$d/enable_c02
WORK

trace-cmd record -B umwait -e umwait -o $tmp/u.dat sh $tmp/work.sh >$tmp/rec.out 2>&1
rc=$?
is "$rc" 0 "trace-cmd record -B umwait -e umwait ran the workload"
[ $rc -eq 0 ] || sed 's/^/#   /' $tmp/rec.out | tail -5

norm <$ev_dir/trace >$tmp/tracefs
trace-cmd report -i $tmp/u.dat 2>$tmp/report.err | norm >$tmp/report
trace-cmd report -R -i $tmp/u.dat 2>>$tmp/report.err | norm >$tmp/raw

n=$(grep -c . $tmp/tracefs)
cmp_ok "$n" -ge 7 "tracefs recorded the workload's umwait events ($n)"
for ev in control_update cpu_offline cpu_online resume; do
	cmp_ok "$(grep -c " umwait_$ev: " $tmp/tracefs)" -ge 1 "tracefs has umwait_$ev"
done
is "$(grep -ci 'warning\|error\|failed' $tmp/report.err)" 0 "trace-cmd report parsed the formats without a complaint"
sed 's/^/#   /' $tmp/report.err | head -5

# 1. the print format, evaluated by libtraceevent, prints what the kernel printed
if [ "$(cat $tmp/report)" = "$(cat $tmp/tracefs)" ]; then
	pass "trace-cmd report shows the same $n events as tracefs, line by line"
else
	fail "trace-cmd report shows the same $n events as tracefs, line by line"
	diff $tmp/tracefs $tmp/report | head -20 | sed 's/^/#   /'
fi
diag "trace-cmd report:"
trace-cmd report -i $tmp/u.dat 2>/dev/null | grep umwait_ | sed 's/^/#   /'

# 2. the raw fields: old_control and new_control hold what tracefs printed as
#    old and new, and new_control decodes to the max_time and c02 it printed
#    (the print format's own decoding; the record stores nothing derived)
is "$(grep -c . $tmp/raw)" "$n" "trace-cmd report -R shows as many events"
paste -d '|' $tmp/tracefs $tmp/raw >$tmp/pairs
i=0
bad=0
while IFS='|' read -r a b; do
	i=$((i + 1))
	wa=$(echo "$a" | sed 's/^\(cpu[0-9]* umwait_[a-z_]*\):.*/\1/')
	wb=$(echo "$b" | sed 's/^\(cpu[0-9]* umwait_[a-z_]*\):.*/\1/')
	ao=$(echo "$a" | sed -n 's/.* old=\([^ ]*\).*/\1/p')
	an=$(echo "$a" | sed -n 's/.* new=\([^ ]*\).*/\1/p')
	am=$(echo "$a" | sed -n 's/.* max_time=\([^ ]*\).*/\1/p')
	ac=$(echo "$a" | sed -n 's/.* c02=\([^ ]*\).*/\1/p')
	bo=$(echo "$b" | sed -n 's/.* old_control=\([^ ]*\).*/\1/p')
	bn=$(echo "$b" | sed -n 's/.* new_control=\([^ ]*\).*/\1/p')
	extra=$(echo "$b" | grep -c ' max_time=\| c02_enabled=')
	[ "$ac" = on ] && ac=1
	[ "$ac" = off ] && ac=0
	if [ "$wa" != "$wb" ] || [ -z "$ao$bo" ] || [ -z "$an" ] || [ -z "$bn" ] || [ -z "$am" ] ||
		[ -z "$ac" ] || [ -z "$ao" ] || [ -z "$bo" ] || [ "$extra" != 0 ] ||
		[ $((ao)) -ne $((bo)) ] || [ $((an)) -ne $((bn)) ] ||
		[ $((am)) -ne $((bn & 0xfffffffc)) ] || [ $((ac)) -ne $(((bn & 1) ^ 1)) ]; then
		bad=$((bad + 1))
		diag "event $i: tracefs '$a'"
		diag "event $i: raw     '$b'"
	fi
done <$tmp/pairs
is "$bad" 0 "every raw record has old_control and new_control, and only them, with the values and decoding tracefs printed"
diag "trace-cmd report -R, first lines:"
head -3 $tmp/raw | sed 's/^/#   /'

# trace-cmd's instance goes as this file's own does: "trace-cmd reset"
# would turn the top-level buffer's events off and set its clock, which
# empties it (and the boot's records tests/guest/31 reads there)
ev_close
ev_dir=$t/instances/umwait
ev_close
is "$(cat $t/tracing_on) $(cat $t/events/umwait/enable) $(sed -n 's/.*\[\(.*\)\].*/\1/p' $t/trace_clock) $(ls $t/instances | grep -c .)" \
	"1 1 global 0" \
	"the top-level buffer still records umwait events on its clock, and no instance is left"
is "$(cat /sys/devices/system/cpu/online)" "0-$last" "all CPUs online"
rm -rf $tmp
done_testing
