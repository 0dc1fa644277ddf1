# CPU hotplug and IA32_UMWAIT_CONTROL: offline restores the boot value
# (umwait_cpu_offline, and the kernel's own msr:write_msr shows the WRMSR on that
# CPU), a change while a CPU is offline skips it, online writes the current value
# (umwait_cpu_online with the MSR's previous content); debugfs and /dev/cpu/N/msr
# agree throughout. Suspend to RAM: 50-umwait-suspend.t. The events are
# recorded in a tracefs instance of this file's own (tests/lib/events.sh).
. /lab/tests/lib/tap.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/events.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
dbg=/sys/kernel/debug/x86/umwait/control
# the lab's guest: 4 CPUs, cpu1-3 hotpluggable (tests/guest/10-lab.t)
cpus=4
last=3

# setcpu N 0|1: take a CPU down or bring it up; fails the test if that fails
setcpu() {
	is "$(lab-write /sys/devices/system/cpu/cpu$1/online "$2")" OK "cpu$1 online <- $2"
	is "$(cat /sys/devices/system/cpu/cpu$1/online)" "$2" "cpu$1/online reads $2"
}

# dump CTRL OFFLINE...: debugfs shows CTRL for the cache and every online CPU,
# and no line for the listed (offline) CPUs; /dev/cpu/N/msr agrees on every
# online CPU and cannot be read on an offline one (one test: all of it at once)
dump() {
	_want=$(printf '0x%08x' "$1")
	_rest="max_time=$(($1 & 0xfffffffc)) c02=on"
	[ $(($1 & 1)) = 1 ] && _rest="max_time=$(($1 & 0xfffffffc)) c02=off"
	shift
	_got=$(head -n 1 $dbg) _exp="cached $_want $_rest"
	for _n in $(seq 0 $last); do
		_got="$_got|$(grep "^cpu$_n " $dbg)"
		case " $* " in
		*" $_n "*)
			_got="$_got|msr $(msr read $_n 0xe1 2>/dev/null || echo unreadable)"
			_exp="$_exp||msr unreadable" ;;
		*)
			_got="$_got|msr $(msr read $_n 0xe1)"
			_exp="$_exp|cpu$_n $_want $_rest ok|msr $(printf '0x%016x' "$_want")" ;;
		esac
	done
	is "$_got" "$_exp" "debugfs and /dev/cpu/N/msr: $_want on every online CPU${1:+, cpu $* offline}"
}

# field EVENT_LINE NAME: the value of NAME=... in an event line
field() {
	echo "$1" | sed -n "s/.* $2=\([^ ]*\).*/\1/p"
}

is "$(grep -c ^processor /proc/cpuinfo) $(ls /sys/devices/system/cpu/cpu[123]/online | wc -l)" "4 3" \
	"4 CPUs, cpu1-3 hotpluggable"

restore() {
	for n in $(seq 1 $last); do
		echo 1 >/sys/devices/system/cpu/cpu$n/online 2>/dev/null
	done
	echo 100000 >$d/max_time
	echo 1 >$d/enable_c02
}
restore
dump 0x186a0

# the umwait events, and the kernel's own record of every WRMSR of
# IA32_UMWAIT_CONTROL
ev_open g32 umwait msr:write_msr
check "msr:write_msr filtered on msr == 0xe1" ev_filter msr:write_msr 'msr == 0xe1'

# 1. offline: the boot value comes back, one event on that CPU
ev_clear
setcpu 2 0
off=$(events)
is "$(echo "$off" | grep -c .)" 1 "one umwait event for the offline of cpu2"
is "$(cpu_events 2 | grep -c '^umwait_cpu_offline: old=0x000186a0 new=0x')" 1 \
	"it is umwait_cpu_offline, recorded on cpu2, replacing 0x000186a0"
orig=$(field "$off" new)
diag "value restored on offline (the boot value): $orig"
# the model's reset value and the boot value are both 0: only the WRMSR itself
# shows that the offline callback wrote it
is "$(msr_ops write_msr)" "cpu2 $(printf '0x%x' "$orig")" \
	"msr:write_msr: exactly one WRMSR of 0xe1, on cpu2, of the boot value"
is "$(echo "$off" | sed 's/.* max_time=/max_time=/')" \
	"max_time=$(calc "$orig & 0xfffffffc") c02=$( [ "$(calc "$orig & 1")" = 1 ] && echo off || echo on)" \
	"the offline event decodes its control value"
dump 0x186a0 2

# 2. change while cpu2 is offline: the IPI goes to the online CPUs only
ev_clear
is "$(lab-write $d/max_time 400000)" OK "max_time <- 400000 while cpu2 is offline"
is "$(events)" "umwait_control_update: old=0x000186a0 new=0x00061a80 max_time=400000 c02=on" \
	"one umwait_control_update, no per-CPU event"
is "$(msr_ops write_msr | sort | tr '\n' ' ')" "$(for n in $(seq 0 $last); do [ $n = 2 ] || echo "cpu$n 0x61a80"; done | tr '\n' ' ')" \
	"msr:write_msr: one WRMSR of 0x61a80 on each online CPU, none on cpu2"
dump 0x61a80 2

# 3. online: the MSR holds what the offline callback wrote or the INIT of the
#    bring-up left (0 in the model, like the boot value), now the new value
ev_clear
setcpu 2 1
is "$(cpu_events 2)" "umwait_cpu_online: old=$orig new=0x00061a80 max_time=400000 c02=on" \
	"one umwait_cpu_online, on cpu2: old is the boot value, new the cached value"
is "$(events | grep -c .)" 1 "and no other umwait event"
is "$(msr_ops write_msr)" "cpu2 0x61a80" "msr:write_msr: exactly one WRMSR of 0xe1, on cpu2, of 0x61a80"
dump 0x61a80

# 4. two CPUs down, C0.2 disabled meanwhile, both back up
ev_clear
setcpu 1 0
setcpu $last 0
is "$(cpu_events 1 cpu_offline | sed 's/ max_time=.*//') $(cpu_events $last cpu_offline | sed 's/ max_time=.*//')" \
	"umwait_cpu_offline: old=0x00061a80 new=$orig umwait_cpu_offline: old=0x00061a80 new=$orig" \
	"umwait_cpu_offline on cpu1 and cpu$last restore $orig"
is "$(lab-write $d/enable_c02 0)" OK "enable_c02 <- 0 with cpu1 and cpu$last offline"
dump 0x61a81 1 $last
ev_clear
setcpu 1 1
setcpu $last 1
is "$(cpu_events 1) $(cpu_events $last)" \
	"umwait_cpu_online: old=$orig new=0x00061a81 max_time=400000 c02=off umwait_cpu_online: old=$orig new=0x00061a81 max_time=400000 c02=off" \
	"umwait_cpu_online on cpu1 and cpu$last, with C0.2 off"
is "$(events | grep -c .)" 2 "and no other umwait event"
dump 0x61a81

# 5. suspend to RAM: see 50-umwait-suspend.t

# 6. back to the defaults, all CPUs online
ev_clear
is "$(lab-write $d/enable_c02 1)" OK "enable_c02 <- 1"
is "$(lab-write $d/max_time 100000)" OK "max_time <- 100000"
is "$(events | grep -c umwait_control_update)" 2 "two umwait_control_update events"
is "$(events | grep -vc umwait_control_update)" 0 "and nothing else"
is "$(cat /sys/devices/system/cpu/online)" "0-$last" "all CPUs online"
dump 0x186a0
ev_close
done_testing
