# The guest state that test files change, saved, compared and put back
# (busybox sh): the umwait controls and each online CPU's
# IA32_UMWAIT_CONTROL, which CPUs are online, the perf sysctls, tracefs
# (recording on or off, the enabled events and every event filter, the
# instances, the buffer size, clock, tracer and options), the mounts, and
# the lab's programs still running.  A file that is killed or fails half-way
# must not leave max_time, a CPU offline or a tracepoint on for the files
# after it.
#
#   state_snapshot          the state now, one "KEY VALUE" line each
#   state_save FILE         state_snapshot into FILE
#   state_diff FILE         "KEY: saved 'A', now 'B'" for each difference;
#                           status 1 if there is one
#   state_restore FILE      puts back what differs from FILE, saying what
#                           ("# state: KEY: 'B' -> 'A'"); status 1 if
#                           something could not be put back (its diff follows)
#   state_guard             for a test file: saves the state now, and at its
#                           exit (its end, a failure, SIGINT, SIGTERM, SIGHUP)
#                           ends the processes it started, runs the commands
#                           in $state_also (what else the file must put back:
#                           an MSR of its own, say) and restores it
#
# The runner (tests/run-guest) saves the state before each file and, after
# it, state_diff (a check) and state_restore (for the next file).
# LAB_STATE_ROOT (default /) is where /sys and /proc are:
# tests/host/01-runner.t points it at a tree of its own, where no MSR is read.

# the sysctls under /proc/sys whose values are saved: perf's (a file that
# samples may lower perf_event_max_sample_rate through the kernel's own
# throttling) and the ones the lab's tools depend on
STATE_SYSCTLS=${STATE_SYSCTLS:-"kernel/perf_cpu_time_max_percent kernel/perf_event_max_contexts_per_stack kernel/perf_event_max_sample_rate kernel/perf_event_max_stack kernel/perf_event_mlock_kb kernel/perf_event_paranoid kernel/kptr_restrict kernel/unprivileged_bpf_disabled"}
# the event subsystems whose filters are saved (reading every event's filter
# would take seconds)
STATE_FILTERS=${STATE_FILTERS:-"umwait msr sched"}
# the lab's programs (their comm, at most 15 bytes): none runs between files
STATE_PROGS=${STATE_PROGS:-"tpause-loop umwait-trace wait-paths ut-target pmu-hog perf trace-cmd bench-floor write-rate lab-write umwait-fuzz insn-count waitpkg-check omp-waits tbb-waits dpdk-waits layouts-gcc-O0 layouts-gcc-O2 layouts-gcc-O3 layouts-clang-O0 layouts-clang-O2 layouts-clang-O3"}

_st_root=${LAB_STATE_ROOT:-}
_st_ctl=$_st_root/sys/devices/system/cpu/umwait_control
_st_cpu=$_st_root/sys/devices/system/cpu
_st_t=$_st_root/sys/kernel/tracing

# _st_line KEY FILE: "KEY CONTENT" (CONTENT's lines joined by spaces), if FILE
# reads; the shell's own read, not a process per file: the runner takes a
# snapshot between every two files, and a process costs tens of milliseconds
# in a TCG guest
_st_line() {
	[ -r "$2" ] || return 0
	_st_v=
	while IFS= read -r _st_l || [ -n "$_st_l" ]; do
		_st_v="$_st_v$_st_l "
	done <"$2" 2>/dev/null || return 0
	echo "$1 ${_st_v% }"
}

# _st_sysctls: "sysctl/NAME VALUE" of each of STATE_SYSCTLS, in one process:
# a sysctl answers only a read from its start, which the shell's read, a
# byte at a time, is not
_st_sysctls() {
	_st_v=
	for _st_s in $STATE_SYSCTLS; do
		[ -r "$_st_root/proc/sys/$_st_s" ] && _st_v="$_st_v $_st_root/proc/sys/$_st_s"
	done
	[ -n "$_st_v" ] || return 0
	# shellcheck disable=SC2086
	awk -v pfx="$_st_root/proc/sys/" 'FNR == 1 && NR > 1 { print line } FNR == 1 {
		line = "sysctl/" substr(FILENAME, length(pfx) + 1) " " $0; next }
		{ line = line " " $0 } END { if (NR) print line }' $_st_v 2>/dev/null
}

# _st_words CMD...: CMD's output, its words joined by single spaces
_st_words() {
	# shellcheck disable=SC2046
	set -- $("$@")
	echo "$*"
}

# _st_clock: the trace clock in use (the one trace_clock lists in brackets)
_st_clock() {
	IFS= read -r _st_l <$_st_t/trace_clock
	_st_l=${_st_l#*\[}
	echo "${_st_l%%]*}"
}

# _st_instances: tracefs's instances, by name
_st_instances() {
	_st_v=
	for _st_i in $_st_t/instances/*; do
		[ -e "$_st_i" ] && _st_v="$_st_v ${_st_i##*/}"
	done
	echo "${_st_v# }"
}

# _st_procs [comm]: the PIDs and names of the lab's programs running, "PID
# COMM" each (with "comm", their names alone)
_st_procs() {
	cat $_st_root/proc/[0-9]*/stat 2>/dev/null | awk -v progs=" $STATE_PROGS " -v only="${1:-}" '{
		i = index($0, " ("); j = 0
		for (k = length($0); k > 0; k--) if (substr($0, k, 1) == ")") { j = k; break }
		if (!i || !j) next
		comm = substr($0, i + 2, j - i - 2)
		if (index(progs, " " comm " ")) print (only == "comm" ? comm : $1 " " comm) }'
}

# _st_filters: "PATH:FILTER" of each filter set on an event of STATE_FILTERS
_st_filters() {
	_st_v=
	for _st_s in $STATE_FILTERS; do
		_st_v="$_st_v $_st_t/events/$_st_s/*/filter"
	done
	# shellcheck disable=SC2086
	grep -Hv '^none$' $_st_v 2>/dev/null
}

# _st_mounts: /proc/mounts without tracefs's automount in debugfs
_st_mounts() {
	[ -r $_st_root/proc/mounts ] || return 0
	awk '$2 != "/sys/kernel/debug/tracing"' $_st_root/proc/mounts
}

state_snapshot() {
	if [ -d $_st_ctl ]; then
		_st_line umwait/enable_c02 $_st_ctl/enable_c02
		_st_line umwait/max_time $_st_ctl/max_time
	fi
	_st_line cpu/online $_st_cpu/online
	for _st_f in $_st_cpu/cpu[0-9]*/online; do
		[ -e "$_st_f" ] || continue
		_st_n=${_st_f%/online}
		_st_line "cpu/${_st_n##*/}" "$_st_f"
	done
	# each online CPU's IA32_UMWAIT_CONTROL (changed behind the kernel's back
	# through /dev/cpu/N/msr by some files)
	if [ -z "$_st_root" ] && [ -d $_st_ctl ] && command -v msr >/dev/null; then
		for _st_n in $_st_cpu/cpu[0-9]*; do
			_st_o=1
			[ -r $_st_n/online ] && read -r _st_o <$_st_n/online
			[ "$_st_o" = 1 ] || continue
			_st_n=${_st_n##*/cpu}
			echo "msr/0xe1/cpu$_st_n $(msr read $_st_n 0xe1 2>&1)"
		done
	fi
	_st_sysctls
	if [ -e $_st_t/trace ]; then
		_st_line tracefs/tracing_on $_st_t/tracing_on
		_st_line tracefs/current_tracer $_st_t/current_tracer
		echo "tracefs/trace_clock $(_st_clock)"
		_st_line tracefs/buffer_size_kb $_st_t/buffer_size_kb
		echo "tracefs/set_event $(_st_words sort $_st_t/set_event)"
		# every filter that is set, on an event of STATE_FILTERS
		_st_filters | sed "s|^$_st_t/events/\([^/]*\)/\([^/]*\)/filter:|tracefs/filter/\1:\2 |"
		_st_line tracefs/trace_options $_st_t/trace_options
		echo "tracefs/instances $(_st_instances)"
	fi
	# mounts: by mount point (a tmpfs left over /sys/kernel/btf, debugfs's
	# mode), but tracefs's automount in debugfs, which any reader of
	# /sys/kernel/debug/tracing makes
	_st_mounts | awk '{ print "mount/" $2, $3, $4, $1 }' | sort
	echo "procs $(_st_words _st_procs_sorted)"
}

# _st_procs_sorted: the names of the lab's programs running, sorted
_st_procs_sorted() {
	_st_procs comm | sort
}

state_save() {
	state_snapshot >"$1"
}

# _st_value FILE KEY: KEY's value in FILE (a snapshot)
_st_value() {
	awk -v k="$2" '$1 == k { sub(/^[^ ]* ?/, ""); print; exit }' "$1"
}

state_diff() {
	state_snapshot >"$1.now"
	awk 'FNR == NR { v = $0; sub(/^[^ ]* ?/, "", v); saved[$1] = v; next }
		{ v = $0; sub(/^[^ ]* ?/, "", v); now[$1] = v }
		END {
			for (k in saved) if (!(k in now) || now[k] != saved[k])
				printf "%s: saved '\''%s'\'', now '\''%s'\''\n", k, saved[k], (k in now) ? now[k] : "(none)"
			for (k in now) if (!(k in saved))
				printf "%s: saved '\''(none)'\'', now '\''%s'\''\n", k, now[k]
		}' "$1" "$1.now" | sort >"$1.diff"
	rm -f "$1.now"
	cat "$1.diff"
	[ ! -s "$1.diff" ]
	_st_rc=$?
	rm -f "$1.diff"
	return $_st_rc
}

# _st_put KEY PATH VALUE: write VALUE to PATH if KEY differs, and say so
_st_put() {
	_st_now=$(tr '\n' ' ' <"$2" 2>/dev/null | sed 's/ $//')
	[ "$_st_now" = "$3" ] && return 0
	echo "$3" >"$2" 2>/dev/null
	echo "# state: $1: '$_st_now' -> '$3'"
}

# _st_kill PID...: SIGTERM (and SIGCONT, for a stopped one), then SIGKILL to
# those still there after 5 s
_st_kill() {
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	kill -CONT "$@" 2>/dev/null
	_st_i=0
	while [ $_st_i -lt 50 ]; do
		_st_alive=
		for _st_p in "$@"; do
			[ -d /proc/$_st_p ] && [ "$(cut -d' ' -f3 /proc/$_st_p/stat 2>/dev/null)" != Z ] &&
				_st_alive="$_st_alive $_st_p"
		done
		[ -z "$_st_alive" ] && return 0
		_st_i=$((_st_i + 1))
		sleep 0.1
	done
	kill -KILL $_st_alive 2>/dev/null
}

state_restore() {
	_st_saved=$1
	# nothing to do if nothing differs (one snapshot, not three)
	state_diff "$_st_saved" >/dev/null && return 0
	# the lab's programs the saved state did not have running
	_st_keep=$(_st_value "$_st_saved" procs)
	_st_pids=$(_st_procs | awk -v keep=" $_st_keep " '!index(keep, " " $2 " ") { print $1 }')
	[ -n "$_st_pids" ] && echo "# state: ending $(_st_procs | awk -v keep=" $_st_keep " '!index(keep, " " $2 " ") { printf "%s ", $2 }')"
	_st_kill $_st_pids
	# mounts: one the saved state lacks goes (the latest first), one it had
	# comes back, one with other options is remounted with the saved ones
	for _st_m in $(_st_mounts | awk '{ print $2 }' | sort -r); do
		grep -q "^mount/$_st_m " "$_st_saved" && continue
		umount "$_st_m" 2>/dev/null || umount -l "$_st_m" 2>/dev/null
		echo "# state: mount/$_st_m: unmounted"
	done
	grep '^mount/' "$_st_saved" | while read -r _st_k _st_fs _st_o _st_src; do
		_st_m=${_st_k#mount/}
		_st_now=$(_st_mounts | awk -v m="$_st_m" '$2 == m { print $3, $4 }' | tail -n 1)
		if [ -z "$_st_now" ]; then
			mount -t "$_st_fs" -o "$_st_o" "$_st_src" "$_st_m" 2>/dev/null
			echo "# state: $_st_k: mounted again"
		elif [ "$_st_now" != "$_st_fs $_st_o" ]; then
			mount -o "remount,$_st_o" "$_st_m" 2>/dev/null
			echo "# state: $_st_k: '$_st_now' -> '$_st_fs $_st_o'"
		fi
	done
	# CPUs: online first, so that the controls below reach every one
	grep '^cpu/cpu[0-9]* ' "$_st_saved" | while read -r _st_k _st_v; do
		_st_put "$_st_k" "$_st_cpu/${_st_k#cpu/}/online" "$_st_v"
	done
	if [ -d $_st_ctl ]; then
		_st_put umwait/enable_c02 $_st_ctl/enable_c02 "$(_st_value "$_st_saved" umwait/enable_c02)"
		_st_put umwait/max_time $_st_ctl/max_time "$(_st_value "$_st_saved" umwait/max_time)"
	fi
	grep '^msr/0xe1/cpu[0-9]* ' "$_st_saved" | while read -r _st_k _st_v; do
		_st_n=${_st_k#msr/0xe1/cpu}
		_st_now=$(msr read "$_st_n" 0xe1 2>&1)
		[ "$_st_now" = "$_st_v" ] && continue
		msr write "$_st_n" 0xe1 "$_st_v" >/dev/null 2>&1
		echo "# state: $_st_k: '$_st_now' -> '$_st_v'"
	done
	grep '^sysctl/' "$_st_saved" | while read -r _st_k _st_v; do
		_st_put "$_st_k" "$_st_root/proc/sys/${_st_k#sysctl/}" "$_st_v"
	done
	if [ -e $_st_t/trace ]; then
		# instances the saved state lacks (recording off, then removed)
		_st_keep=" $(_st_value "$_st_saved" tracefs/instances) "
		for _st_i in $(ls $_st_t/instances 2>/dev/null); do
			case "$_st_keep" in *" $_st_i "*) continue ;; esac
			echo 0 >$_st_t/instances/$_st_i/tracing_on 2>/dev/null
			printf "" >$_st_t/instances/$_st_i/set_event 2>/dev/null
			rmdir $_st_t/instances/$_st_i 2>/dev/null
			echo "# state: tracefs/instances: $_st_i removed"
		done
		_st_put tracefs/current_tracer $_st_t/current_tracer "$(_st_value "$_st_saved" tracefs/current_tracer)"
		_st_v=$(_st_value "$_st_saved" tracefs/trace_clock)
		if [ "$(_st_clock)" != "$_st_v" ]; then
			echo "$_st_v" >$_st_t/trace_clock
			echo "# state: tracefs/trace_clock: -> '$_st_v'"
		fi
		_st_put tracefs/buffer_size_kb $_st_t/buffer_size_kb "$(_st_value "$_st_saved" tracefs/buffer_size_kb)"
		for _st_o in $(_st_value "$_st_saved" tracefs/trace_options); do
			grep -qx -- "$_st_o" $_st_t/trace_options || {
				echo "$_st_o" >$_st_t/trace_options 2>/dev/null
				echo "# state: tracefs/trace_options: $_st_o"
			}
		done
		# filters: the saved ones, and none elsewhere
		_st_filters | sed 's/:.*//' | while read -r _st_f; do
			_st_e=${_st_f#$_st_t/events/}
			_st_e=${_st_e%/filter}
			grep -q "^tracefs/filter/${_st_e%%/*}:${_st_e#*/} " "$_st_saved" && continue
			echo 0 >"$_st_f"
			echo "# state: tracefs/filter/${_st_e%%/*}:${_st_e#*/}: cleared"
		done
		grep '^tracefs/filter/' "$_st_saved" | while read -r _st_k _st_v; do
			_st_e=${_st_k#tracefs/filter/}
			_st_f=$_st_t/events/${_st_e%%:*}/${_st_e#*:}/filter
			[ "$(cat "$_st_f")" = "$_st_v" ] && continue
			echo "$_st_v" >"$_st_f"
			echo "# state: $_st_k: -> '$_st_v'"
		done
		_st_v=$(_st_value "$_st_saved" tracefs/set_event)
		if [ "$(_st_words sort $_st_t/set_event)" != "$_st_v" ]; then
			printf "" >$_st_t/set_event
			for _st_e in $_st_v; do
				echo "$_st_e" >>$_st_t/set_event
			done
			echo "# state: tracefs/set_event: -> '$_st_v'"
		fi
		_st_put tracefs/tracing_on $_st_t/tracing_on "$(_st_value "$_st_saved" tracefs/tracing_on)"
	fi
	state_diff "$_st_saved" >"$_st_saved.left" && { rm -f "$_st_saved.left"; return 0; }
	sed 's/^/# state: not restored: /' "$_st_saved.left"
	rm -f "$_st_saved.left"
	return 1
}

# _st_descendants PID: the PIDs of PID's descendants, now
_st_descendants() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '{
		j = 0
		for (k = length($0); k > 0; k--) if (substr($0, k, 1) == ")") { j = k; break }
		if (!j) next
		split(substr($0, j + 2), f, " ")
		parent[$1] = f[2]
	}
	END {
		want[root] = 1
		for (more = 1; more; ) {
			more = 0
			for (p in parent) if (!(p in want) && (parent[p] in want)) { want[p] = 1; more = 1 }
		}
		for (p in want) if (p != root) print p
	}'
}

# _st_exit STATUS: the guard's exit: the file's own processes ended, its
# state restored, STATUS kept
_st_exit() {
	trap - EXIT HUP INT TERM
	_st_kill $(_st_descendants $$)
	[ -n "${state_also:-}" ] && eval "$state_also"
	state_restore "$_st_file"
	rm -f "$_st_file"
	exit "$1"
}

state_guard() {
	_st_file=$(mktemp /tmp/state.XXXXXX)
	state_save "$_st_file"
	trap '_st_exit $?' EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
