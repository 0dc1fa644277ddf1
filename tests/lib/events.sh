# The kernel's trace events as the guest tests read them (busybox sh): each
# file records what it checks in a tracefs instance of its own, so that it
# never clears or fills the top-level buffer, where the boot's events stay
# for tests/guest/31-umwait-events.t, and never depends on what another file
# enabled there.  Needs tap.sh.
#
#   ev_open NAME EVENT...   an instance NAME recording EVENTs ("umwait",
#                           "umwait:umwait_cpu_online", "msr:write_msr"),
#                           empty; the readers below read it ($ev_dir)
#   ev_filter EVENT EXPR    the instance records EVENT only where EXPR holds
#   ev_clear                empties it
#   ev_close                removes it, if it is there (state_guard removes one
#                           a file left)
#   ev_top                  the readers read the top-level buffer instead
#
#   events [NAME]           the umwait events recorded, "umwait_NAME: payload"
#   cpu_events CPU [NAME]   the same, of the records of one CPU
#   msr_ops OP [MSR]        "cpuN 0xVALUE" per msr:OP (read_msr, write_msr)
#                           record of MSR (hex without 0x; default e1)
#   msr_values CPU MSR      the values of CPU's msr:write_msr records of MSR,
#                           hex without 0x, one a line
#   ev_writes               the scripted changes tests/guest/41 and 54 trace:
#                           sysfs writes (7 that change, 2 no-ops, 2 rejected)
#                           and a hotplug cycle of cpu1, lab-write's result
#                           of each on a line

ev_root=/sys/kernel/tracing
ev_dir=$ev_root

ev_open() {
	ev_dir=$ev_root/instances/$1
	shift
	[ -d "$ev_dir" ] || mkdir "$ev_dir" || {
		fail "tracefs instance $ev_dir is created" "mkdir failed"
		return 1
	}
	printf "" >"$ev_dir/set_event"
	for _ev_e in "$@"; do
		case "$_ev_e" in *:*) ;; *) _ev_e="$_ev_e:*" ;; esac
		echo "$_ev_e" >>"$ev_dir/set_event"
	done
	echo 1 >"$ev_dir/tracing_on"
	printf "" >"$ev_dir/trace"
}

ev_filter() {
	echo "$2" >"$ev_dir/events/${1%%:*}/${1#*:}/filter"
}

ev_clear() {
	printf "" >"$ev_dir/trace"
}

ev_close() {
	if [ "$ev_dir" = "$ev_root" ] || [ ! -d "$ev_dir" ]; then
		ev_dir=$ev_root
		return 0
	fi
	echo 0 >"$ev_dir/tracing_on"
	printf "" >"$ev_dir/set_event"
	rmdir "$ev_dir"
	ev_dir=$ev_root
}

ev_top() {
	ev_dir=$ev_root
}

events() {
	grep -o "umwait_${1:-[a-z_]*}: .*" "$ev_dir/trace"
}

cpu_events() {
	grep -F "[$(printf %03d "$1")]" "$ev_dir/trace" | grep -o "umwait_${2:-[a-z_]*}: .*"
}

msr_ops() {
	sed -n "s/.*\[0*\([0-9][0-9]*\)\].* $1: ${2:-e1}, value \([0-9a-f]*\).*/cpu\1 0x\2/p" "$ev_dir/trace"
}

msr_values() {
	grep -F "[$(printf %03d "$1")]" "$ev_dir/trace" | sed -n "s/.* write_msr: $2, value \([0-9a-f]*\).*/\1/p"
}

ev_writes() {
	_ev_d=/sys/devices/system/cpu/umwait_control
	lab-write $_ev_d/max_time 400000
	lab-write $_ev_d/max_time 400000		# a no-op
	lab-write $_ev_d/max_time 100001		# rejected
	lab-write $_ev_d/enable_c02 0
	lab-write $_ev_d/enable_c02 n		# a no-op
	lab-write $_ev_d/enable_c02 2		# rejected
	lab-write $_ev_d/max_time 0
	lab-write $_ev_d/enable_c02 1
	lab-write $_ev_d/max_time 100000
	lab-write /sys/devices/system/cpu/cpu1/online 0
	lab-write /sys/devices/system/cpu/cpu1/online 1
}
