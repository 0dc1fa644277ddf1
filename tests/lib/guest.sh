# Helpers for guest tests beyond TAP (busybox sh).

# as_lab CMD...: CMD as the unprivileged user lab (uid 1000)
as_lab() {
	if setpriv --help 2>&1 | grep -q -- --reuid; then
		setpriv --reuid=1000 --regid=1000 --clear-groups "$@"
	else
		su lab -s /bin/sh -c "$*"	# busybox's setpriv cannot change uids
	fi
}

# Starting and stopping a tracer (umwait-trace, bpftrace, make bench's
# bench-floor): tr_start and tr_stop, the one way the tests (through ut_start
# and ut_stop below) and make bench (tests/guest-bench/run) do it.
#
# A background job of a non-interactive shell starts with SIGINT ignored,
# until the program installs its own handler, and the kernel drops a SIGINT
# sent before that: the tracer runs on, and a plain "kill -INT; wait" waits
# for ever. Being ready is no proof of the handler (bpftrace's probes are
# live before it installs its own), so tr_stop sends SIGINT only once
# /proc/PID/status shows the handler (SigCgt, bit 1 for SIGINT). Every wait
# here ends within TR_BOUND seconds (default 300), or the call returns 1
# with the reason in tr_why.

# tr_alive PID: PID runs (or is stopped): not gone, not a zombie
tr_alive() {
	kill -0 "$1" 2>/dev/null &&
		[ "$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/"$1"/status 2>/dev/null)" != Z ]
}

# tr_start OUT READY CMD...: CMD in the background (stdout to OUT, stderr
# to OUT.err); back once the shell command READY succeeds (it may read
# $tr_pid), with CMD's PID in tr_pid and the seconds from its launch to
# ready in tr_secs. A CMD that exits first, or is not ready within
# TR_BOUND s (then it is killed), returns 1 with tr_why.
tr_start() {
	_tr_out=$1 _tr_ready=$2
	shift 2
	# the last run's "Attached" must not look like this one's: the
	# redirection below truncates only once the child runs
	: >"$_tr_out.err"
	_tr_t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" >"$_tr_out" 2>"$_tr_out.err" &
	tr_pid=$!
	_tr_i=0
	until eval "$_tr_ready"; do
		if ! tr_alive $tr_pid; then
			wait $tr_pid
			tr_why="$* exited (status $?) before it was ready: $(head -c 300 "$_tr_out.err")"
			return 1
		fi
		if [ $_tr_i -ge $((${TR_BOUND:-300} * 20)) ]; then
			kill -KILL $tr_pid
			wait $tr_pid
			tr_why="$* was not ready ${TR_BOUND:-300} s after its start: $(head -c 300 "$_tr_out.err")"
			return 1
		fi
		_tr_i=$((_tr_i + 1))
		sleep 0.05
	done
	tr_secs=$(echo "$_tr_t0 $(cut -d' ' -f1 /proc/uptime)" | awk '{ printf "%.2f", $2 - $1 }')
}

# tr_stop [--cont] [PID]: SIGINT to PID (default tr_pid) once it has a
# handler for it (--cont: then SIGCONT, for a tracer stopped with SIGSTOP,
# which wakes with the signal pending), and its exit status in tr_rc. A
# tracer that gets no handler, or does not end, within TR_BOUND s each is
# killed (tr_rc 137) after where it sleeps has gone to stdout ("#" lines),
# and the call returns 1 with tr_why.
tr_stop() {
	_tr_cont=0
	[ "${1:-}" = --cont ] && _tr_cont=1 && shift
	_tr_p=${1:-$tr_pid} _tr_i=0
	while tr_alive $_tr_p; do
		# the last hex digit of the caught-signals mask holds SIGINT's bit (2)
		_tr_m=$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/$_tr_p/status 2>/dev/null)
		if [ -n "$_tr_m" ] && [ $((0x${_tr_m#"${_tr_m%?}"} & 2)) -ne 0 ]; then
			kill -INT $_tr_p
			break
		fi
		if [ $_tr_i -ge $((${TR_BOUND:-300} * 20)) ]; then
			tr_why="PID $_tr_p ($(cat /proc/$_tr_p/comm 2>/dev/null)) had no SIGINT handler ${TR_BOUND:-300} s after it was asked to stop"
			tr_kill $_tr_p
			return 1
		fi
		_tr_i=$((_tr_i + 1))
		sleep 0.05
	done
	[ $_tr_cont -eq 1 ] && kill -CONT $_tr_p 2>/dev/null
	tr_reap $_tr_p
}

# tr_reap PID: wait for PID to end after a signal, as tr_stop says. A
# tracer that closes descriptors on its way out makes progress, and the
# bound counts from the last one it closed: on 6.1 each BPF link's release
# waits for an RCU grace period (perf_event_detach_bpf_prog), and a tracer
# with hundreds of links (caps --all) takes minutes to end in a TCG guest.
tr_reap() {
	_tr_i=0 _tr_fds=$(ls /proc/$1/fd 2>/dev/null | wc -l)
	while tr_alive $1; do
		if [ $_tr_i -ge $((${TR_BOUND:-300} * 10)) ]; then
			tr_why="PID $1 ($(cat /proc/$1/comm 2>/dev/null)) still running ${TR_BOUND:-300} s after SIGINT (or after it last closed a descriptor): state $(sed -n 's/^State:[[:space:]]*//p' /proc/$1/status 2>/dev/null), wchan $(cat /proc/$1/wchan 2>/dev/null)"
			tr_kill $1
			return 1
		fi
		_tr_i=$((_tr_i + 1))
		sleep 0.1
		_tr_n=$(ls /proc/$1/fd 2>/dev/null | wc -l)
		[ "$_tr_n" -lt "$_tr_fds" ] && _tr_fds=$_tr_n _tr_i=0
	done
	wait $1
	tr_rc=$?
}

# tr_kill PID: where PID sleeps to stdout ("#" lines), then SIGKILL; tr_rc 137
tr_kill() {
	grep -E '^(State|Threads|Sig|Shd)' /proc/$1/status 2>/dev/null | sed 's/^/#   /'
	cat /proc/$1/stack 2>/dev/null | sed 's/^/#   /'
	# still waking (its poll's timeout fires: the SIGINT was lost) or not
	# (its timer is dead): the context switches 1 s apart
	_tr_cs=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/$1/status 2>/dev/null)
	sleep 1
	echo "#   voluntary_ctxt_switches: $_tr_cs, 1 s later $(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/$1/status 2>/dev/null)"
	kill -KILL $1 2>/dev/null
	kill -CONT $1 2>/dev/null
	wait $1
	tr_rc=137
}

# ut_start OUT ARGS...: umwait-trace ARGS in the background (stdout to OUT,
# stderr to OUT.err), back once it says it is attached or tracing; its PID in
# ut_pid. A tracer that dies or never gets ready is a failed test.
ut_start() {
	_out=$1
	shift
	# UT_BIN: another build (a mutant of tests/mutants) for a negative control
	if ! tr_start "$_out" "grep -qE '^(Attached|Tracing)' \"\$_tr_out.err\"" ${UT_BIN:-umwait-trace} "$@"; then
		ut_pid=$tr_pid
		fail "umwait-trace $* starts" "$tr_why"
		return 1
	fi
	ut_pid=$tr_pid
}

# ut_stop [PID]: SIGINT to umwait-trace (default: the last started), then its
# exit status in ut_rc (tr_stop).  One that has not ended 300 s after the
# signal is a failed test: where it sleeps goes to the log, then it is killed
# (ut_rc 137), so that a hang shows up as a failure, not as a suite that
# never finishes.
ut_stop() {
	tr_stop ${1:-$ut_pid} || fail "umwait-trace (PID ${1:-$ut_pid}) ends on SIGINT" "$tr_why"
	ut_rc=$tr_rc
}

# ut_stop_frozen [PID]: SIGINT to umwait-trace while it is stopped (SIGSTOP),
# then SIGCONT: it wakes with the signal and whatever its ring buffer holds
# unread at once, so only its drain at exit can print that (no sleep that
# would let it read them first); then as ut_stop
ut_stop_frozen() {
	tr_stop --cont ${1:-$ut_pid} || fail "umwait-trace (PID ${1:-$ut_pid}) ends on SIGINT" "$tr_why"
	ut_rc=$tr_rc
}

# ut_wait [PID]: wait for umwait-trace to end after a signal, as ut_stop says
ut_wait() {
	tr_reap ${1:-$ut_pid} || fail "umwait-trace (PID ${1:-$ut_pid}) ends on SIGINT" "$tr_why"
	ut_rc=$tr_rc
}

# ut_dump PID OUT: SIGUSR1 to umwait-trace caps PID (stdout in OUT), back once
# OUT holds one more "Totals since attach" block (at most 60 s)
ut_dump() {
	_n=$(grep -c '^Totals since attach' "$2")
	kill -USR1 "$1"
	_i=0
	while [ "$(grep -c '^Totals since attach' "$2")" -le "$_n" ] && [ $_i -lt 600 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
}

# ut_until_waits PID OUT: until caps PID has counted a wait: progress seen,
# not time waited (at most about 60 s); fails if it never does (needs
# tests/lib/caps.sh, whose ut_waits reads caps' totals)
ut_until_waits() {
	_j=0
	while [ $_j -lt 300 ]; do
		ut_dump "$1" "$2"
		[ "$(ut_waits "$2")" -gt 0 ] && return 0
		_j=$((_j + 1))
		sleep 0.1
	done
	return 1
}

# ut_rewritten FILE N: until caps' -o FILE was written N more times (each
# write renames a new file over it: its inode changes); at most about 60 s.
# A count read after that holds every wait of a process that ended before.
ut_rewritten() {
	_k=0 _left=$2 _ino=$(stat -c %i "$1" 2>/dev/null)
	while [ "$_left" -gt 0 ] && [ $_k -lt 600 ]; do
		_k=$((_k + 1))
		sleep 0.1
		_now=$(stat -c %i "$1" 2>/dev/null)
		[ "$_now" != "$_ino" ] && _left=$((_left - 1)) _ino=$_now
	done
	[ "$_left" -eq 0 ]
}
