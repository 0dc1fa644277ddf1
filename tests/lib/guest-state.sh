# The guest state a test file may change and must leave as it found it
# (busybox sh; tests/run-guest checks it after every file, and restores it
# after a file that did not: one killed by the watchdog cannot restore it
# itself).
#
#   state_snapshot            the state, one "KEY VALUE" a line, on stdout
#   state_restore FILE        write FILE's state (a snapshot) back
#
# What is held: umwait's sysfs controls, the online CPUs, the sysctls the
# tests turn (perf's and BPF's), and tracefs: the enabled events, tracing_on,
# the current tracer and the instances. perf_event_max_sample_rate is not:
# the kernel lowers it by itself. LAB_STATE_ROOT (default /) is where /sys
# and /proc are: tests/host/01-runner.t points it at a tree of its own.

_st_root=${LAB_STATE_ROOT:-}
_st_cpu=$_st_root/sys/devices/system/cpu
_st_umwait=$_st_cpu/umwait_control
_st_tracing=$_st_root/sys/kernel/tracing
_st_sysctls="kernel/perf_event_paranoid kernel/perf_cpu_time_max_percent kernel/unprivileged_bpf_disabled
	kernel/kptr_restrict kernel/nmi_watchdog kernel/perf_event_mlock_kb net/core/bpf_jit_enable"

state_snapshot() {
	if [ -d $_st_umwait ]; then
		echo "max_time $(cat $_st_umwait/max_time)"
		echo "enable_c02 $(cat $_st_umwait/enable_c02)"
	fi
	echo "online $(cat $_st_cpu/online)"
	for _st_s in $_st_sysctls; do
		[ -r $_st_root/proc/sys/$_st_s ] && echo "sysctl $_st_s $(cat $_st_root/proc/sys/$_st_s)"
	done
	if [ -r $_st_tracing/tracing_on ]; then
		echo "tracing_on $(cat $_st_tracing/tracing_on)"
		echo "current_tracer $(cat $_st_tracing/current_tracer)"
		echo "set_event $(sort $_st_tracing/set_event | tr '\n' ' ')"
		echo "instances $(ls $_st_tracing/instances | tr '\n' ' ')"
	fi
}

# _st_cpus LIST: the CPUs of a list such as 0-2,5, one a line
_st_cpus() {
	echo "$1" | tr ',' '\n' | while IFS=- read -r _st_a _st_b; do
		seq "$_st_a" "${_st_b:-$_st_a}"
	done
}

state_restore() {
	while read -r _st_k _st_v; do
		case $_st_k in
		max_time | enable_c02) echo "$_st_v" >$_st_umwait/$_st_k ;;
		online)
			for _st_c in $(cd $_st_cpu && ls -d cpu[0-9]* | sed 's/cpu//'); do
				[ -w $_st_cpu/cpu$_st_c/online ] || continue
				if _st_cpus "$_st_v" | grep -qx "$_st_c"; then
					echo 1 >$_st_cpu/cpu$_st_c/online
				else
					echo 0 >$_st_cpu/cpu$_st_c/online
				fi
			done ;;
		sysctl) echo "${_st_v#* }" >$_st_root/proc/sys/${_st_v%% *} ;;
		tracing_on | current_tracer) echo "$_st_v" >$_st_tracing/$_st_k ;;
		set_event)
			: >$_st_tracing/set_event
			for _st_e in $_st_v; do echo "$_st_e" >>$_st_tracing/set_event; done ;;
		instances)
			for _st_i in $(ls $_st_tracing/instances); do
				case " $_st_v " in *" $_st_i "*) ;; *) rmdir $_st_tracing/instances/$_st_i ;; esac
			done ;;
		esac
	done <"$1" 2>/dev/null
}
