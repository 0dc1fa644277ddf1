# The library clients under umwait-trace caps (busybox sh): shared by the
# main suite (tests/guest/47-umwait-trace-clients.t, checked against QEMU's
# trace by tests/host/21-clients-qemu-trace.t) and the distro-kernel suite.
# Needs tap.sh and guest.sh.

CLIENT_TBB=/usr/lib/x86_64-linux-gnu/libtbb.so.12
CLIENT_OMP=/usr/lib/llvm-14/lib/libomp.so.5
CLIENT_EAL=/usr/lib/x86_64-linux-gnu/librte_eal.so.23
_cl_ctl=/sys/devices/system/cpu/umwait_control
_cl_tmp=$(mktemp -d)

# client_exited: the TSC now that the client has exited, for client_log: the
# first RDTSC of a one-wait tpause-loop (TCG's RDMSR of IA32_TSC reads 0)
client_exited() {
	_cl_exit=$(tpause-loop -n 1 -c 1 2>/dev/null | sed -n 's/.* tsc_begin=\([0-9]*\) .*/\1/p')
}

# client_log LABEL: the client's report and mappings, and the TSC read once
# it had exited (the host side counts its waits up to there: a later process
# may get its page-table page, and with it its CR3)
client_log() {
	sed "s/^/# client $1: /" $_cl_tmp/client.out
	echo "# client $1: exit: exit_tsc=${_cl_exit:-none}"
}

# client_caps LIBRARY MAX_TIME LABEL CMD...: run CMD (a client, env
# settings first) to its end with caps attached to LIBRARY before it starts,
# at MAX_TIME (and caps given $CAPS_ARGS, if set).  Logs the client's
# report and caps' rows ("# caps LABEL: PID INSN WAITS CAPPED FILE OFFSET",
# then "unpaired N unended N"), caps' outcomes per site ("# outcomes-site
# LABEL: OFFSET capped=N deadline=N early=N past=N") and the advice or
# warning under each ("# outcomes-note LABEL: OFFSET advice: ..."); the
# rows' totals in cl_waits and cl_capped, the client's report line in
# cl_report.
client_caps() {
	_lib=$1 _mt=$2 _label=$3
	shift 3
	cl_waits=x cl_capped=x cl_report=
	echo "$_mt" >$_cl_ctl/max_time
	ut_start $_cl_tmp/caps.out caps ${CAPS_ARGS:-} "$_lib" || return 1
	# a generous bound: a client that hangs fails its run, not the suite
	busybox timeout 600 env "$@" >$_cl_tmp/client.out 2>$_cl_tmp/client.err
	_rc=$?
	client_exited
	ut_stop
	is "$_rc" 0 "$_label: the client ran to its end (exit 0)"
	[ "$_rc" = 0 ] || diag "client stderr: $(tail -n 5 $_cl_tmp/client.err)"
	is "$ut_rc" 0 "$_label: caps exits 0 on Ctrl-C"
	client_log "$_label"
	cl_report=$(grep -v ': map ' $_cl_tmp/client.out | tail -n 1)
	# the process rows (the C0.x residency table after them has CPU rows)
	sed -n '/^Totals since attach/,/^C0.x residency/p' $_cl_tmp/caps.out | grep '^[0-9]' |
		awk -v l="$_label" '{ print "# caps " l ": " $1, $3, $4, $5, $7, $8 }'
	_unpaired=$(sed -n 's/^unpaired: \([0-9]*\) .*/\1/p' $_cl_tmp/caps.out)
	_unended=$(sed -n 's/^unended: \([0-9]*\) .*/\1/p' $_cl_tmp/caps.out)
	echo "# caps $_label: unpaired ${_unpaired:-0} unended ${_unended:-0}"
	awk -v l="$_label" '
		/^outcomes at / {
			off = $4; sub(/:$/, "", off); s = $0; sub(/.*: capped=/, "capped=", s)
			print "# outcomes-site " l ": " off " " s; next
		}
		/^  (advice|warning): / && off != "" {
			s = $0; sub(/^  /, "", s); print "# outcomes-note " l ": " off " " s
		}' $_cl_tmp/caps.out
	set -- $(grep '^total:' $_cl_tmp/caps.out | tail -n 1 |
		sed 's/^total: waits=\([0-9]*\) capped=\([0-9]*\) .*/\1 \2/')
	cl_waits=${1:-x} cl_capped=${2:-x}
	cmp_ok "$cl_waits" -gt 0 "$_label: caps counted waits in $_lib ($cl_waits, $cl_capped capped)"
}

# client_bare MAX_TIME LABEL CMD...: the same run without caps (QEMU's trace
# alone counts it)
client_bare() {
	_mt=$1 _label=$2
	shift 2
	echo "$_mt" >$_cl_ctl/max_time
	busybox timeout 600 env "$@" >$_cl_tmp/client.out 2>$_cl_tmp/client.err
	_rc=$?
	client_exited
	is "$_rc" 0 "$_label: the client ran to its end without caps (exit 0)"
	client_log "$_label"
}

# client_report_field KEY: KEY=VALUE from the last client report
client_report_field() {
	echo "$cl_report" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
