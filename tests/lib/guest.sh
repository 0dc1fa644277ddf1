# Helpers for guest tests beyond TAP (busybox sh).

# as_lab CMD...: CMD as the unprivileged user lab (uid 1000)
as_lab() {
	if setpriv --help 2>&1 | grep -q -- --reuid; then
		setpriv --reuid=1000 --regid=1000 --clear-groups "$@"
	else
		su lab -s /bin/sh -c "$*"	# busybox's setpriv cannot change uids
	fi
}

# ut_start OUT ARGS...: umwait-trace ARGS in the background (stdout to OUT,
# stderr to OUT.err), back once it says it is attached or tracing; its PID in
# ut_pid. A tracer that dies or never gets ready is a failed test.
ut_start() {
	_out=$1
	shift
	# the last run's "Attached" must not look like this one's: the
	# redirection below truncates only once the child runs
	: >"$_out.err"
	# UT_BIN: another build (a mutant of tests/mutants) for a negative control
	${UT_BIN:-umwait-trace} "$@" >"$_out" 2>"$_out.err" &
	ut_pid=$!
	_i=0
	until grep -qE '^(Attached|Tracing)' "$_out.err"; do
		if ! kill -0 $ut_pid 2>/dev/null || [ $_i -ge 600 ]; then
			fail "umwait-trace $* starts" "stderr: $(cat "$_out.err")"
			return 1
		fi
		_i=$((_i + 1))
		sleep 0.1
	done
}

# ut_stop [PID]: SIGINT to umwait-trace (default: the last started), then its
# exit status in ut_rc.  One that has not ended 300 s after the signal is a
# failed test: where it sleeps goes to the log, then it is killed (ut_rc 137),
# so that a hang shows up as a failure, not as a suite that never finishes.
ut_stop() {
	kill -INT ${1:-$ut_pid}
	ut_wait "$@"
}

# ut_stop_frozen [PID]: SIGINT to umwait-trace while it is stopped (SIGSTOP),
# then SIGCONT: it wakes with the signal and whatever its ring buffer holds
# unread at once, so only its drain at exit can print that (no sleep that
# would let it read them first); then as ut_stop
ut_stop_frozen() {
	kill -INT ${1:-$ut_pid}
	kill -CONT ${1:-$ut_pid}
	ut_wait "$@"
}

# ut_wait [PID]: wait for umwait-trace to end after a signal, as ut_stop says
ut_wait() {
	_pid=${1:-$ut_pid}
	_i=0
	while kill -0 $_pid 2>/dev/null && [ -d /proc/$_pid ] &&
		[ "$(cut -d' ' -f3 /proc/$_pid/stat 2>/dev/null)" != Z ] && [ $_i -lt 3000 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
	if [ $_i -ge 3000 ]; then
		fail "umwait-trace (PID $_pid) ends on SIGINT" \
			"still running after 300 s: state $(cut -d' ' -f3 /proc/$_pid/stat), wchan $(cat /proc/$_pid/wchan 2>/dev/null)"
		grep -E '^(Threads|Sig|Shd)' /proc/$_pid/status 2>/dev/null | sed 's/^/#   /'
		cat /proc/$_pid/stack 2>/dev/null | sed 's/^/#   /'
		# still waking (its poll's timeout fires: the SIGINT was lost) or
		# not (its timer is dead): the context switches 1 s apart
		_cs=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/$_pid/status)
		sleep 1
		echo "#   voluntary_ctxt_switches: $_cs, 1 s later $(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/$_pid/status)"
		kill -KILL $_pid
	fi
	wait $_pid
	ut_rc=$?
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
