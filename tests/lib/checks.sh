# Checks that print one line whatever happens, and counts the guest itself
# keeps (busybox sh).  Needs tap.sh and guest.sh.
#
#   ut_begin OUT ARGS...      ut_start, and exactly one TAP line for it: ok when
#                             umwait-trace ARGS attached, not ok (ut_start's own)
#                             when not.  What follows runs either way and fails
#                             on the empty output, so that a file's count of
#                             checks does not depend on whether it started.
#                             ut_up is 1 when it did, 0 when not.
#   ut_check DESC CMD...      check DESC CMD... where CMD waits for the tracer
#                             (ut_until_waits, ut_dump): not run, and failed,
#                             when ut_begin's did not start
#   ut_end DESC [PID]         ut_stop, and exactly one TAP line for it: DESC, a
#                             check that it exited 0, or ut_wait's own failure
#                             when it did not end (ut_rc 137)
#   ut_end_frozen DESC [PID]  the same with ut_stop_frozen
#   lacks FILE PATTERN DESC   a check that FILE has no line matching PATTERN
#                             (grep's basic regex); a missing or empty FILE
#                             fails it (! grep passes on a missing file)
#   calc EXPR                 $((EXPR)), or x if EXPR is not arithmetic
#   cpu_irqs CPU              the interrupts CPU has taken since boot: its
#                             column of /proc/interrupts, with its SMIs
#                             (MSR_SMI_COUNT), which are not there
#
# In this model a UMWAIT or TPAUSE that no store, migration or lost monitor
# ends stops before its deadline, with CF=0, only for an interrupt (an NMI,
# SMI or machine check, or one EFLAGS.IF masks): the waits of a program
# pinned to CPU N that ended early are at most the difference of two
# cpu_irqs N around it, however fast or loaded the host.

ut_begin() {
	_ck_n=$_tap_n
	_ck_out=$1
	shift
	if ut_start "$_ck_out" "$@"; then
		ut_up=1
		[ "$_tap_n" = "$_ck_n" ] && pass "umwait-trace $* attaches"
		return 0
	fi
	ut_up=0
	[ "$_tap_n" = "$_ck_n" ] && fail "umwait-trace $* attaches" "stderr: $(cat "$_ck_out.err" 2>/dev/null)"
	return 1
}

ut_check() {
	if [ "${ut_up:-0}" = 1 ]; then
		check "$@"
	else
		fail "$1" "umwait-trace did not start: not tried"
	fi
}

ut_end() {
	_ck_n=$_tap_n
	_ck_d=$1
	shift
	ut_stop "$@"
	[ "$_tap_n" = "$_ck_n" ] && is "$ut_rc" 0 "$_ck_d"
	return 0
}

ut_end_frozen() {
	_ck_n=$_tap_n
	_ck_d=$1
	shift
	ut_stop_frozen "$@"
	[ "$_tap_n" = "$_ck_n" ] && is "$ut_rc" 0 "$_ck_d"
	return 0
}

lacks() {
	if [ ! -s "$1" ]; then
		fail "$3" "$1 is missing or empty: nothing to look in"
	elif grep -q -- "$2" "$1"; then
		fail "$3" "$1 has: $(grep -m 1 -- "$2" "$1")"
	else
		pass "$3"
	fi
}

cpu_irqs() {
	_ck_i=$(awk -v c="CPU$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) col = i + 1; next }
		col && $col ~ /^[0-9]+$/ { s += $col } END { print col ? s + 0 : "x" }' /proc/interrupts)
	_ck_s=$(msr read "$1" 0x34 2>/dev/null)
	case "$_ck_i:$_ck_s" in
	x:* | *: | *:*[!0-9a-fx]*) echo x ;;
	*) echo $((_ck_i + _ck_s)) ;;
	esac
}

# calc EXPR: $((EXPR)), or x when EXPR is no arithmetic (a value parsed from
# output that was not there): busybox sh ends the whole file on a bad
# $((...)), which would cut its checks short
calc() {
	(echo $(($*))) 2>/dev/null || echo x
}
