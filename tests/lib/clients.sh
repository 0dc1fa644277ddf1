# The library clients under umwait-trace caps (busybox sh): shared by the
# main suite (tests/guest/47-umwait-trace-clients.t, checked against QEMU's
# trace by tests/host/21-clients-qemu-trace.t) and the distro-kernel suite.
# Needs tap.sh, guest.sh, checks.sh and caps.sh.

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
# cl_report.  Four checks, whether caps starts or not.
client_caps() {
	_lib=$1 _mt=$2 _label=$3
	shift 3
	cl_waits=x cl_capped=x cl_report=
	echo "$_mt" >$_cl_ctl/max_time
	ut_begin $_cl_tmp/caps.out caps ${CAPS_ARGS:-} "$_lib"
	# a generous bound: a client that hangs fails its run, not the suite
	busybox timeout 600 env "$@" >$_cl_tmp/client.out 2>$_cl_tmp/client.err
	_rc=$?
	client_exited
	ut_end "$_label: caps exits 0 on Ctrl-C"
	is "$_rc" 0 "$_label: the client ran to its end (exit 0)"
	[ "$_rc" = 0 ] || diag "client stderr: $(tail -n 5 $_cl_tmp/client.err)"
	client_log "$_label"
	cl_report=$(grep -v ': map ' $_cl_tmp/client.out | tail -n 1)
	caps_rows $_cl_tmp/caps.out | awk -v l="$_label" '{ print "# caps " l ": " $1, $3, $4, $5, $7, $8 }'
	echo "# caps $_label: unpaired $(caps_count $_cl_tmp/caps.out unpaired) unended $(caps_count $_cl_tmp/caps.out unended)"
	caps_by_site $_cl_tmp/caps.out | sed "s/^outcomes /# outcomes-site $_label: /; s/^note /# outcomes-note $_label: /"
	set -- $(caps_totals $_cl_tmp/caps.out)
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
