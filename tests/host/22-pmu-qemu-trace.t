#!/bin/bash
# Host side of tests/guest/24-pmu.t: each perf count the guest reported
# ("# pmu LABEL: ...") against the truth the lab's QEMU traced for the same
# tpause-loop window: the user-mode (cpl 3) waits' TSC time by the C0.x state
# they used (waitpkg_wait), and the PMU's overflows (x86_pmu_overflow).
. "$(dirname "$0")/../lib/tap.sh"

log=${LAB_RESULTS:-}/guest-main.log
trace=${LAB_RESULTS:-}/qemu-trace.log
need_input "$log" '# pmu ' tests/guest/24-pmu.t
need_input "$trace" 'x86_pmu_' "the main boot's QEMU trace"

# truth BEGIN END (16-digit hex TSCs): the cpl 3 waits in [BEGIN, END]: their
# number and TSC cycles by the state used, and the PMU's overflows
truth() {
	awk -v lo="$1" -v hi="$2" '
	function hex16(s) {
		s = tolower(substr(s, 3))
		while (length(s) < 16) s = "0" s
		return s
	}
	# awk numbers are doubles: exact to 2^53, far above a window length
	function num(s,    i, n, c) {
		s = tolower(substr(s, 3))
		n = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			n = n * 16 + c
		}
		return n
	}
	{
		ev = ""
		if (/waitpkg_wait /) ev = "wait"
		else if (/x86_pmu_overflow /) ev = "overflow"
		else next
		sub(/.*(waitpkg_wait|x86_pmu_overflow) /, "")
		delete f
		for (i = 1; i < NF; i += 2) f[$i] = $(i + 1)
	}
	ev == "wait" {
		if (f["cpl"] != 3) next
		t = hex16(f["tsc_start"])
		if (t < lo || t > hi) next
		n++
		d = num(f["tsc_end"]) - num(f["tsc_start"])
		if (f["used"] == "C0.1") c01 += d
		else c02 += d
	}
	ev == "overflow" {
		t = hex16(f["tsc"])
		if (t >= lo && t <= hi) ovf++
	}
	END { printf "t_n=%d t_c01=%.0f t_c02=%.0f t_ovf=%d\n", n, c01, c02, ovf }' "$trace"
}

# near GOT WANT N DESC: GOT within 1% of WANT, plus 20000 cycles per wait for
# the instructions between the PMU's update and the trace's TSC read
near() {
	local slack=$(($2 / 100 + $3 * 20000))
	if [ "$1" -ge $(($2 - slack)) ] 2>/dev/null && [ "$1" -le $(($2 + slack)) ]; then
		pass "$4"
	else
		fail "$4" "got $1, traced $2 (allowed +-$slack)"
	fi
}

seen=
while IFS= read -r line; do
	label=$(sed -n 's/^ *# pmu \([a-z0-9]*\): .*/\1/p' <<<"$line")
	[ -n "$label" ] || continue
	seen="$seen $label"
	unset c01 c02 c0wait c02k samples
	eval "$(sed 's/^ *# pmu [a-z0-9]*: //; s/tpause-loop: //' <<<"$line" |
		tr ' ' '\n' | grep -E '^(c01|c02|c0wait|c02k|samples|mark_begin|mark_end|waits|tsc_begin|tsc_end)=' |
		sed 's/^\(tsc_begin\|tsc_end\|waits\)=/r_\1=/')"
	# perf record's samples: every overflow between the marks around it
	[ $label = record ] && r_tsc_begin=$mark_begin r_tsc_end=$mark_end
	eval "$(truth "$(printf '%016x' "$r_tsc_begin")" "$(printf '%016x' "$r_tsc_end")")"
	diag "$label: perf c01=${c01:-} c02=${c02:-} samples=${samples:-}; trace waits=$t_n c01=$t_c01 c02=$t_c02 overflows=$t_ovf"
	case $label in
	c02 | ring)
		# bug: C0.x time lost (a wait's end not hooked) or extra (state kept after the wait)
		near "$c02" "$t_c02" "$t_n" "$label: perf's C0.2 count is the traced C0.2 wait time"
		is "$t_c01" 0 "$label: QEMU traced no C0.1 wait" ;;
	c01)
		near "$c01" "$t_c01" "$t_n" "$label: perf's C0.1 count is the traced C0.1 wait time"
		is "$t_c02" 0 "$label: QEMU traced no C0.2 wait" ;;
	demoted)
		# bug: the count follows the requested state, not the one used
		near "$c01" "$t_c01" "$t_n" "$label: perf's C0.1 count is the traced time of the demoted waits"
		is "$t_c02" 0 "$label: QEMU traced no wait in C0.2" ;;
	record)
		# bug: an overflow that sets GLOBAL_STATUS without a PMI, or a PMI
		# without an overflow (a sample for nothing)
		cmp_ok "$t_ovf" -gt 0 "$label: QEMU traced overflows"
		cmp_ok "${samples:-0}" -le "$t_ovf" "$label: no more samples than traced overflows"
		cmp_ok "${samples:-0}" -ge $((t_ovf * 9 / 10)) "$label: a sample for at least 90% of them" ;;
	esac
	case $label in
	c02 | c01 | demoted)
		# bug: C0_WAIT counting something other than C0.1 + C0.2
		near "$c0wait" $((c01 + c02)) "$t_n" "$label: C0_WAIT (umask 0x70) is C0.1 + C0.2" ;;
	esac
done < <(grep -E "^ *# pmu [a-z0-9]+: " "$log")

for l in c02 c01 demoted ring record; do
	case " $seen " in *" $l "*) ;; *) fail "guest reported PMU run $l" "missing from $log" ;; esac
done
# The guest's perf programmed the raw event on a general counter, user mode
# only (EN | INT | USR | umask 0x20 | event 0xEC): the x86_pmu_wrmsr trace
check "QEMU traced IA32_PERFEVTSELx = 0x5120ec (perf's cpu/event=0xec,umask=0x20/u)" \
	grep -qE 'x86_pmu_wrmsr .*msr 0x18[6-9] val 0x5120ec$' "$trace"
done_testing
