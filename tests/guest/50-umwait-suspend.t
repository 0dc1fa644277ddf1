# Suspend to RAM (S3) loses IA32_UMWAIT_CONTROL (the QEMU model resets it to 0
# like hardware); the kernel restores it on the boot CPU from its syscore resume
# callback (umwait_resume) and on the others through the hotplug callbacks
# (umwait_cpu_online). Three cycles, the second with a CPU offline across it.
# vm/run wakes the guest over QMP shortly after QEMU reports the suspend.
# The value is one no other test uses (max_time 399996): QEMU's own trace of
# the guest's WRMSRs (tests/host/50-umwait-suspend-msr.t) then shows which
# writes brought it back. The kernel's own msr:write_msr event is on across
# each suspend too: the series' first patch keeps the writes that precede the
# GS base restore out of it (without it, resume triple faults:
# tests/host/55-s3-write-msr.t), so its trace must hold the restore of the GS
# base on cpu0 and a write of the value on every online CPU.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/events.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
dbg=/sys/kernel/debug/x86/umwait/control
mt=399996
want=0x00061a7d
# the lab's guest: 4 CPUs (tests/guest/10-lab.t)
last=3

# up [OFF]: the CPUs that must be online, all but OFF
up() {
	for c in $(seq 0 $last); do
		[ "$c" = "${1:-}" ] || echo $c
	done
}

# restored LABEL [OFF]: every CPU but OFF holds $want in debugfs and in its
# MSR, sysfs unchanged
restored() {
	is "$(cat $d/max_time) $(cat $d/enable_c02)" "$mt 0" "$1: sysfs still says max_time=$mt enable_c02=0"
	is "$(head -n 1 $dbg)" "cached $want max_time=$mt c02=off" "$1: debugfs cached value"
	for c in $(up ${2:-}); do
		is "$(grep "^cpu$c " $dbg)" "cpu$c $want max_time=$mt c02=off ok" "$1: debugfs cpu$c holds $want"
		is "$(msr read $c 0xe1)" 0x0000000000061a7d "$1: /dev/cpu/$c/msr holds $want"
	done
}

check "the guest offers deep S3" sh -c "grep -qw mem /sys/power/state && grep -q '\[deep\]' /sys/power/mem_sleep"
is "$(lab-write $d/max_time $mt)" OK "max_time <- $mt"
is "$(lab-write $d/enable_c02 0)" OK "enable_c02 <- 0"
restored "before S3"

# WRMSRs of $want the kernel should make, per CPU (wr_N): the enable_c02
# write, then each resume on every CPU online across it, and an online
for c in $(seq 0 $last); do eval "wr_$c=1"; done
wrote() { eval "wr_$1=\$((wr_$1 + 1))"; }

# the umwait events and every WRMSR (GS base, 0xe1), in an instance of this
# file's own; msr:write_msr is on across each suspend, and off between
ev_open g50 umwait
for cycle in 1 2 3; do
	off=
	if [ $cycle = 2 ]; then
		off=$last
		echo 0 >/sys/devices/system/cpu/cpu$off/online
		is "$(grep -c "^cpu$off " $dbg)" 0 "cycle 2: cpu$off offline before suspend, not listed in debugfs"
	fi
	ev_clear
	echo 1 >$ev_dir/events/msr/write_msr/enable
	is "$(lab-write /sys/power/state mem)" OK "cycle $cycle: suspend to RAM and resume, msr:write_msr on"
	echo 0 >$ev_dir/events/msr/write_msr/enable
	is "$(msr_values 0 c0000101 | grep -c .)" 1 \
		"cycle $cycle: msr:write_msr holds the restore of MSR_GS_BASE on cpu0"
	got= exp=
	for c in $(up $off); do
		got="$got cpu$c=$(msr_values $c e1 | grep -cx "$(printf %x $want)")" exp="$exp cpu$c=1"
	done
	is "$got" "$exp" "cycle $cycle: msr:write_msr holds one write of $want to 0xe1 on every online CPU"
	for c in $(up $off); do wrote $c; done
	ev=$(events)
	echo "$ev" | sed 's/^/# trace: /'
	is "$(cpu_events 0 | grep -c "^umwait_resume: old=0x00000000 new=$want max_time=$mt c02=off\$")" 1 \
		"cycle $cycle: umwait_resume on cpu0 shows it lost the value (old=0) and got $want back"
	n=0
	for c in $(up $off); do
		[ $c = 0 ] && continue
		n=$((n + 1))
		is "$(cpu_events $c | grep -c "^umwait_cpu_online: old=0x00000000 new=$want ")" 1 \
			"cycle $cycle: umwait_cpu_online on cpu$c restores it from 0 to $want"
	done
	is "$(echo "$ev" | grep -c '^umwait_cpu_online:')" $n "cycle $cycle: no other umwait_cpu_online"
	is "$(echo "$ev" | grep -c '^umwait_control_update:')" 0 "cycle $cycle: no umwait_control_update"
	restored "cycle $cycle" $off
	if [ -n "$off" ]; then
		is "$(grep -c "^cpu$off " $dbg)" 0 "cycle 2: cpu$off still offline after resume, not listed"
		ev_clear
		echo 1 >/sys/devices/system/cpu/cpu$off/online
		wrote $off
		is "$(cpu_events $off cpu_online | grep -c "^umwait_cpu_online: old=0x[0-9a-f]* new=$want ")" 1 \
			"cycle 2: onlining cpu$off after resume gives it $want"
		restored "cycle 2, cpu$off back"
	fi
done
ev_close

# for tests/host/50-umwait-suspend-msr.t, which counts them in QEMU's trace
echo "# s3-msr-writes: value $want$(for c in $(seq 0 $last); do eval "printf ' cpu%d=%d' $c \$wr_$c"; done)"

lab-write $d/max_time 100000 >/dev/null
lab-write $d/enable_c02 1 >/dev/null
is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "controls restored"
done_testing
