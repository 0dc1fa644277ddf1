# Helpers for the C0.x residency tests (busybox sh): reading umwait-trace
# caps' residency, in JSON and text.  Needs tap.sh.

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
	while [ "$(grep -cE "$2" "$1")" -lt "$3" ]; do
		[ $_i -ge 1200 ] && return 1
		_i=$((_i + 1))
		sleep 0.1
	done
}

# res_window JSON_LINE: "TSC_BEGIN TSC_END" of its residency
res_window() {
	echo "$1" | sed -n 's/.*"tsc_begin": \([0-9]*\), "tsc_end": \([0-9]*\),.*/\1 \2/p'
}

# res_cpu JSON_LINE CPU: "CYCLES C01 C02 C0_WAIT SCALED RUNNING CONSISTENT
# TSC_BEGIN TSC_END TSC_ERR" of a counted CPU, or "not-counted REASON"
res_cpu() {
	_o=$(echo "$1" | grep -o "{\"cpu\": $2, [^}]*}")
	case "$_o" in
	*'"counted": true'*)
		echo "$_o" | sed 's/[{}",]//g; s/: /=/g' | awk '{
			for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print v["cycles"], v["c01"], v["c02"], v["c0_wait"], v["scaled"], v["running"],
				v["consistent"], v["tsc_begin"], v["tsc_end"], v["tsc_err"] }' ;;
	*) echo "not-counted $(echo "$_o" | sed -n 's/.*"reason": "\([^"]*\)".*/\1/p')" ;;
	esac
}

# fcmp A OP B: a numeric comparison of decimals (OP: < <= > >= ==)
fcmp() {
	awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
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

# res_row TEXT_FILE CPU: the last text row of CPU in a residency block
res_row() {
	sed -n '/^C0.x residency, system-wide/,/^CYCLES: unhalted/p' "$1" | grep "^$2 " | tail -n 1
}
