# TAP helpers for the lab's tests (sourced by busybox sh in the guest and bash on the host).
#
#   ok COND_EXIT_STATUS "description"      -- use: check "desc" cmd args...
#   is GOT WANT "description"             -- equality, prints both on failure
#   skip "description" "reason"
#   done_testing                          -- prints the plan, exits 1 if anything failed
#
# Every failing check names what it expected and what it saw.

_tap_n=0
_tap_failed=0

_tap_ok() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1"
}

_tap_not_ok() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $1"
}

diag() {
	echo "# $*"
}

# check DESC CMD [ARGS...]: passes when CMD exits 0
check() {
	_d=$1
	shift
	if "$@"; then
		_tap_ok "$_d"
	else
		_tap_not_ok "$_d"
		diag "  command failed: $*"
	fi
}

# is GOT WANT DESC
is() {
	if [ "$1" = "$2" ]; then
		_tap_ok "$3"
	else
		_tap_not_ok "$3"
		diag "  expected: '$2'"
		diag "       got: '$1'"
	fi
}

# isnt GOT UNWANTED DESC
isnt() {
	if [ "$1" != "$2" ]; then
		_tap_ok "$3"
	else
		_tap_not_ok "$3"
		diag "  expected anything but: '$2'"
	fi
}

# cmp_ok GOT OP WANT DESC   (numeric: -eq -ne -lt -le -gt -ge)
cmp_ok() {
	if [ "$1" "$2" "$3" ] 2>/dev/null; then
		_tap_ok "$4"
	else
		_tap_not_ok "$4"
		diag "  expected: $1 $2 $3"
	fi
}

pass() { _tap_ok "$1"; }

fail() {
	_tap_not_ok "$1"
	[ -n "${2:-}" ] && diag "  $2"
	return 0
}

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}

# main_boot K: the main boot of kernel K ("" for 6.1, -6.12): its guest log
# in $log, its QEMU trace in $trace, the kernel's name in $name
main_boot() {
	log=${LAB_RESULTS:-}/guest-main$1.log
	trace=${LAB_RESULTS:-}/qemu-trace$1.log
	name=${1#-}
	name=${name:-6.1}
}

# need_input FILE [PATTERN [WHAT]]: a cross-check's input must be there (and
# hold a line matching the extended regex PATTERN): a missing input is a
# failure, never a skip, and ends the file (its plan printed). WHAT names the
# test file that writes it.
need_input() {
	if [ ! -s "$1" ]; then
		fail "input $1 is there" "missing or empty: ${3:-the guest run that writes it} did not run (tests/run without -k, or -k matching it too)"
	elif [ -n "${2:-}" ] && ! grep -qE -- "$2" "$1"; then
		fail "input $1 has lines matching '$2'" "none: ${3:-the guest run that writes them} did not run or printed nothing"
	else
		return 0
	fi
	done_testing
	exit 1
}

# until_true SECONDS CMD...: until CMD succeeds, tried every 0.1 s for at
# most SECONDS (progress seen, not a fixed sleep); 1 if it never does
until_true() {
	_tap_u=$(($1 * 10))
	shift
	_tap_k=0
	until "$@"; do
		[ $_tap_k -ge $_tap_u ] && return 1
		_tap_k=$((_tap_k + 1))
		sleep 0.1
	done
}

# report TOOL TEXT [PREFIX]: the key=value fields of the line in TEXT that
# has "TOOL: key=..." (the lab's tools report so, one line) as assignments
# PREFIXKEY=VALUE (PREFIX: r_), for eval: eval "$(report tpause-loop "$out")"
# sets r_waits, r_capped, ... A line of TOOL's that is not a report (an
# error) sets nothing.
report() {
	printf '%s\n' "$2" | sed -n "s/^.*$1: \([a-z_][a-z_0-9]*=\)/\1/p" |
		sed "s/\([a-z_][a-z_0-9]*\)=/${3:-r_}\1=/g"
}

# perf_counts FILE VAR=EVENT...: the counts in FILE (perf stat -x ';' -o FILE)
# as assignments VAR='COUNT', for eval; x for an event FILE does not have
perf_counts() {
	_tap_f=$1
	shift
	for _tap_p in "$@"; do
		_tap_v=$(awk -F';' -v e="${_tap_p#*=}" 'NF >= 3 && $3 == e { print $1; exit }' "$_tap_f")
		echo "${_tap_p%%=*}='${_tap_v:-x}'"
	done
}

# perf_samples TEXT: the sample count perf record's TEXT reports (nothing if none)
perf_samples() {
	printf '%s\n' "$1" | sed -n 's/.*perf record: Captured and wrote .*(\([0-9]*\) samples).*/\1/p'
}

# perf_unthrottled CMD...: CMD with perf's sampling not throttled in the
# guest.  Linux lowers kernel.perf_event_max_sample_rate each time a PMI
# handler runs long, as they do under TCG when the host preempts a vCPU, and
# then drops the overflows past its samples per tick: a count of samples
# would depend on the host's load.  0 in perf_cpu_time_max_percent turns
# that off (the kernel warns once) for CMD, at the default rate; the old
# setting comes back after it.
perf_unthrottled() {
	_tap_pct=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)
	_tap_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
	echo 100000 >/proc/sys/kernel/perf_event_max_sample_rate
	"$@"
	_tap_rc=$?
	echo "$_tap_pct" >/proc/sys/kernel/perf_cpu_time_max_percent
	echo "$_tap_rate" >/proc/sys/kernel/perf_event_max_sample_rate
	return $_tap_rc
}

done_testing() {
	echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ]
}
