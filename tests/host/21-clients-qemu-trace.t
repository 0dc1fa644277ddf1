#!/bin/bash
# Host side of tests/guest/47-umwait-trace-clients.t, with QEMU's trace as
# the truth.  Each client ran one marker wait first (a TPAUSE whose deadline
# is past, at an address it reported, between two TSC readings it
# reported); that wait's waitpkg_wait_ctx event gives the process's CR3.
# Every later user wait in that address space, up to the next client's
# marker or the TSC the guest read once the client had exited (whichever
# comes first: a later process may get the same page-table page), is
# attributed to a file offset of the library the client mapped
# (RIP - mapping start + mapping offset): per site, its count and its CF=1
# count must be caps' waits and capped exactly, and caps' outcomes those of
# the trace's reasons by the rule of umwait-trace.8 (outcomes_agree).
. "$(dirname "$0")/../lib/tap.sh"

# the boots whose clients QEMU traced: guest log and trace
boots=()
for b in main:qemu-trace distro:qemu-trace-distro; do
	log=${LAB_RESULTS:-}/guest-${b%%:*}.log
	trace=${LAB_RESULTS:-}/${b#*:}.log
	need_input "$log" '^# client ' "the clients' test of the ${b%%:*} boot"
	need_input "$trace" 'waitpkg_wait_ctx ' "the ${b%%:*} boot's QEMU trace"
	boots+=("$b")
done

# attribute: one line per client run (tests/lib/attribute.py)
attribute() {
	python3 "$(dirname "$0")/../lib/attribute.py" "$log" "$trace"
}

# outcomes_agree TOUT COUT: every site's outcomes by caps (COUT) follow
# from the trace's (TOUT; tests/lib/attribute.py) by the rule: capped
# exact; past at least the trace's far-past waits and at most its past ones;
# early at most the trace's and at least its far-early ones (ended 2^26
# cycles or more before the deadline; an early wake nearer it may read as
# deadline, the probe being late), those counted as deadline instead.
# Prints what differs; fails if any.
outcomes_agree() {
	local x y off c d e p far oth fe cc cd ce cp short bad=0
	[ "$1" != - ] || { echo "the trace has no outcomes"; return 1; }
	for x in ${1//,/ }; do
		off=${x%%:*}
		IFS=/ read -r c d e p far oth fe <<<"${x#*:}"
		y=$(echo "$2" | tr ',' '\n' | grep "^$off:")
		IFS=/ read -r cc cd ce cp <<<"${y#*:}"
		short=$((e - ${ce:-0}))
		if [ -z "$y" ] || [ "$oth" != 0 ] || [ "$cc" != "$c" ] || [ "$cp" -lt "$far" ] ||
			[ "$cp" -gt "$p" ] || [ "$short" -lt 0 ] || [ "${ce:-0}" -lt "$fe" ] ||
			[ $((cd + cp)) != $((d + p + short)) ]; then
			echo "$off: trace capped/deadline/early/past/far/other/far-early $c/$d/$e/$p/$far/$oth/$fe, caps ${y#*:}"
			bad=1
		fi
	done
	return $bad
}

# check_boot: every client run of $log against $trace
check_boot() {
	local out label found cr3 sites caps other total capped tout cout pid rows why
	out=$(attribute) || { fail "$log and $trace parse" "python3 failed"; return; }
	while read -r label found cr3 sites caps other total capped tout cout; do
		# the layout corpus's runs: tests/host/24-layouts-qemu-trace.t
		case "$label" in lay-*) continue ;; esac
		pid=$(grep -m1 "^# client $label: [a-z-]*: pid=" "$log" | sed 's/.* pid=\([0-9]*\) .*/\1/')
		is "$found" yes "$label: the client's marker wait is in the trace (its CR3: $cr3)"
		[ "$found" = yes ] || continue
		cmp_ok "$total" -gt 0 "$label: QEMU traced waits in the library ($total, $capped with CF=1)"
		is "$other" 0 "$label: every traced wait of the process after its marker ran in the library (or out of line for a probe)"
		case "$label" in *-bare-*) ;; *)
			is "$caps" "$sites" \
				"$label: caps' waits and capped per site are the trace's (OFFSET:WAITS:CAPPED)"
			rows=$(grep "^# caps $label: [0-9]" "$log" | awk '{ print $4 }' | sort -u | paste -sd' ' -)
			is "$rows" "${pid:-?}" "$label: caps' rows are all the client's process"
			# bug caught: a deadline read from the wrong registers, a TSC
			# calibration off, an outcome counted as another
			if why=$(outcomes_agree "$tout" "$cout"); then
				pass "$label: caps' outcomes per site follow the trace's reasons ($cout)"
			else
				fail "$label: caps' outcomes per site follow the trace's reasons" "$why"
			fi
			outcome_cases ;;
		esac
		case "$label" in *-0) is "$capped" 0 "$label: max_time=0: no wait capped in the trace" ;; esac
		diag "$label: trace waits=$total capped=$capped sites=$sites; caps" \
			"$(grep "^# caps $label: unpaired" "$log" | sed 's/.*: //')"
		frac[$label]="$capped/$total"
	done <<<"$out"
}

# outcome_cases: what the trace says of the real clients' waits
outcome_cases() {
	local umw t
	case "$label" in
	omp-tpause-*)
		# libomp 14's __kmp_tpause takes a TSC deadline, and is given a
		# spin count: its TPAUSEs start with the deadline long behind
		t=$(echo "$tout" | tr ',' '\n' | awk -F'[:/]' '{ w += $2 + $3 + $4 + $5; f += $6 }
			END { print f + 0, w + 0 }')
		cmp_ok "$((2 * ${t% *}))" -gt "${t#* }" \
			"$label: most of libomp's TPAUSEs begin with their deadline far behind, in the trace ($t)"
		check "$label: caps warns that the site's waits do nothing" \
			grep -q "^# outcomes-note $label: 0x[0-9a-f]* warning: these waits do nothing" "$log" ;;
	dpdk-store)
		umw=$(grep "^# caps $label: [0-9]* umwait " "$log" | awk '{ print $NF; exit }')
		t=$(echo "$tout" | tr ',' '\n' | grep "^${umw:-none}:" | cut -d/ -f3)
		is "${t:-x}" 20 "$label: the trace ends all 20 UMWAITs of rte_power_monitor ($umw) before their deadline" ;;
	esac
}

declare -A frac
for b in "${boots[@]}"; do
	log=${LAB_RESULTS:-}/guest-${b%%:*}.log
	trace=${LAB_RESULTS:-}/${b#*:}.log
	check_boot
done
# The observer must not change what it observes: caps probes no instruction
# between oneTBB's deadline (now + 700) and its TPAUSE, so at max_time=100
# the traced capped fraction with caps attached is that of the same program
# run without caps.  A probe on that path (the TPAUSE itself) made every
# wait start past its deadline: 0% against 99%.
if [ -n "${frac[tbb-100]:-}" ] && [ -n "${frac[tbb-bare-100]:-}" ]; then
	pct() { echo $((100 * ${1%/*} / (${1#*/} > 0 ? ${1#*/} : 1))); }
	with=$(pct "${frac[tbb-100]}") without=$(pct "${frac[tbb-bare-100]}")
	d=$((with - without))
	cmp_ok "${d#-}" -le 10 "oneTBB at max_time=100: capped ${frac[tbb-100]} ($with%) with caps attached, ${frac[tbb-bare-100]} ($without%) without: within 10 points"
fi
done_testing
