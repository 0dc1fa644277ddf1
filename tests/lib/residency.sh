# Helpers for the C0.x residency tests (busybox sh); caps' residency blocks
# are read by tests/lib/caps.sh (caps_res_window, caps_res_cpu,
# caps_res_row).  Needs tap.sh.

RES_SITES=/lab/bin/wait-paths	# a file with sites nothing runs here: residency alone

# res_need_pmu: back if the guest has a core PMU; else a TAP skip saying why,
# and the test file ends there
res_need_pmu() {
	[ -d /sys/bus/event_source/devices/cpu ] && return 0
	skip "C0.x residency with the modelled core PMU" \
		"no core PMU in this guest ($(dmesg | grep -m1 'Performance Events' | sed 's/^\[[^]]*\] //'))"
	done_testing
	exit
}

# res_until FILE PATTERN N: until FILE has N lines matching PATTERN (grep -E):
# progress seen, at most about 120 s; 1 if it never does
res_until() {
	_i=0
	while _n=$(grep -cE "$2" "$1" 2>/dev/null); [ "${_n:-0}" -lt "$3" ]; do
		[ $_i -ge 1200 ] && return 1
		_i=$((_i + 1))
		sleep 0.1
	done
}

# fcmp A OP B: a numeric comparison of decimals (OP: < <= > >= ==); false
# when A or B is no number (a value missing from caps' output)
fcmp() {
	awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
		if (a !~ /^-?[0-9]+(\.[0-9]+)?$/ || b !~ /^-?[0-9]+(\.[0-9]+)?$/) exit 1
		r = op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : op == ">=" ? a >= b : a == b
		exit !r }'
}

# fcmp_ok A OP B DESC: fcmp as a test
fcmp_ok() {
	if fcmp "$1" "$2" "$3"; then
		pass "$4"
	else
		fail "$4" "expected: $1 $2 $3"
	fi
}
