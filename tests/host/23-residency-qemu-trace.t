#!/bin/bash
# Host side of tests/guest-pmu/40-umwait-trace-residency.t, with QEMU's trace
# as the truth.  For every "# residency LABEL: cpu=N tsc_begin=B tsc_end=E
# cycles=Y c01=P c02=P c0_wait=P ..." line the guest printed (one caps
# interval, bounded by the TSC around caps' reads of that CPU's counters,
# +- tsc_err), the waitpkg_wait events of that vCPU (any privilege level: the
# kernel's TPAUSE delays count too) are clipped to [B, E] and summed by the
# state each wait really used.  caps' C0.1 and C0.2 shares must be those of
# the trace within 2 percentage points (plus what tsc_err leaves uncertain:
# the time the read's IPI took to reach that CPU and come back).
. "$(dirname "$0")/../lib/tap.sh"

log=${LAB_RESULTS:-}/guest-pmu.log
trace=${LAB_RESULTS:-}/qemu-trace-pmu.log
need_input "$log" '^# residency ' tests/guest-pmu/40-umwait-trace-residency.t
need_input "$trace" 'waitpkg_wait ' "the PMU boot's QEMU trace"

lib=$(cd "$(dirname "$0")/../lib" && pwd)

# truth: one line per residency line, "LABEL CPU WINDOW ERR CYCLES C01 C02 C0WAIT T01 T02"
# (T01/T02: TSC cycles the trace saw the vCPU waiting in C0.1/C0.2 inside the window)
truth() {
	python3 - "$log" "$trace" "$lib" <<'PY'
import sys
log, trace, lib = sys.argv[1:4]
sys.dont_write_bytecode = True
sys.path.insert(0, lib)
import guest_log
import qemu_trace
waits = {}     # cpu -> [Wait]
for w in qemu_trace.waits(trace):
    waits.setdefault(w.cpu, []).append(w)
for label, kv in guest_log.keyvals(log, "residency"):
    try:
        b, e = int(kv["tsc_begin"]), int(kv["tsc_end"])
    except (KeyError, ValueError):
        # a CPU caps did not count: no window
        print(label, kv.get("cpu", "-"), "- - - - - - - -")
        continue
    got = {"C0.1": 0, "C0.2": 0}
    for w in waits.get(int(kv["cpu"]), []):
        o = min(w.tsc_end, e) - max(w.tsc_start, b)
        if o > 0:
            got[w.used] = got.get(w.used, 0) + o
    print(label, kv["cpu"], e - b, kv.get("tsc_err") or "0", kv.get("cycles") or "-", kv.get("c01") or "-",
          kv.get("c02") or "-", kv.get("c0_wait") or "-", got["C0.1"], got["C0.2"])
PY
}

near() { # A B TOL: |A - B| <= TOL
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(d <= t && d >= -t) }'
}

out=$(truth)
is "$?" 0 "the trace's waits in each interval are summed (tests/lib/qemu_trace.py)"
# the three cases of tests/guest-pmu/40, each with an interval inside its
# waits, for the busy CPU 1 and the idle CPU 3: every one has its checks
for label in c01 c02 demoted; do
	for c in 1 3; do
		what="$label, cpu $c"
		cycles=-
		read -r _ cpu window err cycles c01 c02 c0w t01 t02 <<<"$(grep -m1 "^$label $c " <<<"$out")"
		if [ "${cycles:--}" = - ]; then
			# not reported, or not counted: each check fails
			why="no residency line of the guest with counts for $what"
			fail "$what: unhalted cycles fit in the interval" "$why"
			fail "$what: C0.1 is the trace's within 2 points" "$why"
			fail "$what: C0.2 is the trace's within 2 points" "$why"
			fail "$what: C0_WAIT covers every traced wait" "$why"
			[ "$c" = 1 ] && fail "$what: busy CPU: the shares are those of the interval" "$why"
			continue
		fi
		what="$what, interval of $window TSC cycles"
		# the shares of unhalted cycles the trace gives, and of the interval
		# TOL: 2 points, and what the reads' TSC uncertainty adds
		read -r p01 p02 w01 w02 share tol tolw <<<"$(awk -v y="$cycles" -v w="$window" -v a="$t01" -v b="$t02" -v e="$err" \
			'BEGIN { printf "%.2f %.2f %.2f %.2f %.2f %.2f %.2f", 100 * a / y, 100 * b / y, 100 * a / w, 100 * b / w,
				100 * y / w, 2 + 100 * e / y, 2 + 100 * e / w }')"
		diag "$what (+-$err): caps C0.1 $c01% C0.2 $c02% C0_WAIT $c0w% of $cycles unhalted ($share% of the interval); trace C0.1 $p01% C0.2 $p02% (tolerance $tol)"
		awk -v y="$cycles" -v w="$window" -v e="$err" 'BEGIN { exit !(y <= w * 1.01 + 2 * e + 100000) }'
		ok_=$?
		if [ $ok_ -eq 0 ]; then pass "$what: unhalted cycles fit in the interval ($share%)"
		else fail "$what: unhalted cycles fit in the interval" "$cycles cycles in $window"; fi
		if near "$c01" "$p01" "$tol"; then pass "$what: C0.1 $c01% is the trace's $p01% within $tol points"
		else fail "$what: C0.1 $c01% is the trace's $p01% within $tol points" "bug: C01 counts another state, other time or another CPU"; fi
		if near "$c02" "$p02" "$tol"; then pass "$what: C0.2 $c02% is the trace's $p02% within $tol points"
		else fail "$what: C0.2 $c02% is the trace's $p02% within $tol points" "bug: C02 counts another state, other time or another CPU"; fi
		awk -v a="$c0w" -v b="$p01" -v c="$p02" -v t="$tol" 'BEGIN { exit !(a >= b + c - t) }'
		ok_=$?
		if [ $ok_ -eq 0 ]; then pass "$what: C0_WAIT $c0w% covers every traced wait ($p01% + $p02%)"
		else fail "$what: C0_WAIT $c0w% covers every traced wait" "trace: $p01% + $p02%"; fi
		# the CPU tpause-loop kept busy is unhalted throughout: its printed
		# shares are the shares of the whole interval the trace saw waiting
		if [ "$cpu" = 1 ]; then
			if near "$c01" "$w01" "$tolw" && near "$c02" "$w02" "$tolw"; then
				pass "$what: busy CPU: the shares are those of the interval ($w01% C0.1, $w02% C0.2)"
			else
				fail "$what: busy CPU: the shares are those of the interval" \
					"trace: $w01% C0.1 $w02% C0.2 of the interval; bug: waits not counted as unhalted cycles"
			fi
		fi
	done
done
done_testing
