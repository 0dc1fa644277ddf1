# Suspend to RAM (S3) loses IA32_UMWAIT_CONTROL (the QEMU model resets it to 0
# like hardware); the kernel restores it on the boot CPU from its syscore resume
# callback (umwait_resume) and on the others through the hotplug callbacks
# (umwait_cpu_online). Three cycles, the second with a CPU offline across it.
# (msr:write_msr is not enabled across S3: with it, the guest hung in resume,
# where the MSR tracepoint runs before the CPU state is restored.)
# vm/run wakes the guest over QMP shortly after QEMU reports the suspend.
. /lab/tests/lib/tap.sh

d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
dbg=/sys/kernel/debug/x86/umwait/control
want=0x00061a81
cpus=$(grep -c ^processor /proc/cpuinfo)
last=$((cpus - 1))

events() {
	grep -o "umwait_${1:-[a-z_]*}: .*" $t/trace
}

# cpu_events CPU [NAME]: the same for the records of one CPU (the [NNN] column)
cpu_events() {
	grep -F "[$(printf %03d "$1")]" $t/trace | grep -o "umwait_${2:-[a-z_]*}: .*"
}

online_cpus() {
	for c in $(seq 0 $last); do
		[ "$c" = 0 ] || [ "$(cat /sys/devices/system/cpu/cpu$c/online)" = 1 ] && echo $c
	done
}

# restored: every online CPU holds $want in debugfs and in its MSR, sysfs unchanged
restored() {
	is "$(cat $d/max_time) $(cat $d/enable_c02)" "400000 0" "$1: sysfs still says max_time=400000 enable_c02=0"
	is "$(head -n 1 $dbg)" "cached $want max_time=400000 c02=0" "$1: debugfs cached value"
	for c in $(online_cpus); do
		is "$(grep "^cpu$c " $dbg)" "cpu$c $want max_time=400000 c02=0 ok" "$1: debugfs cpu$c holds $want"
		is "$(msr read $c 0xe1)" 0x0000000000061a81 "$1: /dev/cpu/$c/msr holds $want"
	done
}

check "the guest offers deep S3" sh -c "grep -qw mem /sys/power/state && grep -q '\[deep\]' /sys/power/mem_sleep"
is "$(lab-write $d/max_time 400000)" OK "max_time <- 400000"
is "$(lab-write $d/enable_c02 0)" OK "enable_c02 <- 0"
restored "before S3"

for cycle in 1 2 3; do
	off=
	if [ $cycle = 2 ]; then
		off=$last
		echo 0 >/sys/devices/system/cpu/cpu$off/online
		is "$(grep "^cpu$off " $dbg)" "cpu$off offline" "cycle 2: cpu$off offline before suspend"
	fi
	echo >$t/trace
	is "$(lab-write /sys/power/state mem)" OK "cycle $cycle: suspend to RAM and resume"
	ev=$(events)
	echo "$ev" | sed 's/^/# trace: /'
	is "$(cpu_events 0 | grep -c '^umwait_resume: old=0x00000000 new=0x00061a81 max_time=400000 c02=off$')" 1 \
		"cycle $cycle: umwait_resume on cpu0 shows it lost the value (old=0) and got $want back"
	n=0
	for c in $(online_cpus); do
		[ $c = 0 ] && continue
		n=$((n + 1))
		is "$(cpu_events $c | grep -c "^umwait_cpu_online: old=0x00000000 new=$want ")" 1 \
			"cycle $cycle: umwait_cpu_online on cpu$c restores it from 0 to $want"
	done
	is "$(echo "$ev" | grep -c '^umwait_cpu_online:')" $n "cycle $cycle: no other umwait_cpu_online"
	is "$(echo "$ev" | grep -c '^umwait_control_update:')" 0 "cycle $cycle: no umwait_control_update"
	restored "cycle $cycle"
	if [ -n "$off" ]; then
		is "$(grep "^cpu$off " $dbg)" "cpu$off offline" "cycle 2: cpu$off still offline after resume"
		echo >$t/trace
		echo 1 >/sys/devices/system/cpu/cpu$off/online
		is "$(cpu_events $off cpu_online | grep -c "^umwait_cpu_online: old=0x[0-9a-f]* new=$want ")" 1 \
			"cycle 2: onlining cpu$off after resume gives it $want"
		restored "cycle 2, cpu$off back"
	fi
done

lab-write $d/max_time 100000 >/dev/null
lab-write $d/enable_c02 1 >/dev/null
is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "controls restored"
echo >$t/trace
done_testing
