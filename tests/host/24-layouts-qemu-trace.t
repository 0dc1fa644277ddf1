#!/bin/bash
# Host side of tests/guest/47-umwait-trace-layouts.t, with QEMU's trace as the
# truth (tests/lib/attribute.py attributes every traced wait to a site of
# the layout binary).  Per binary, at every site, as `umwait-trace sites -v`
# said:
#   exact yes     caps' waits and capped are the trace's;
#   exact capped  caps' capped is the trace's, its waits between the trace's
#                 and the layout's calls (each arrival after the site is a
#                 wait or a skip, and only the skips can add);
#   exact no      caps never counts fewer than the trace (said, not equal).
# The marker wait (the first wait, before the attribution window) is
# counted by caps, not by the trace: one more at its site.
#
# The observer check: caps must put no probe between a wait's deadline and
# the wait.  Every deadline of the corpus is an RDTSC plus the run's CYCLES
# (its report's cycles=), so the trace's deadline and start give, per wait,
# the cycles from that RDTSC to the wait's start (the gap, a few
# instructions); a probe on that path adds a trap to each: 0.1-0.3 ms under
# TCG, hundreds of thousands of cycles.  The corpus' early-return guard and
# tail jump each put a branch to the instruction after a wait on that path,
# seen only through a conditional branch's jump or a tail jump (the scanner
# walks both, tests/host/40).  At every site the median gap must be
# under GAP_BOUND (tests/lib/attribute.py), with caps attached and without:
# neither a loaded host (which delays a few waits, not the median) nor the
# site's capped share moves that verdict.  Its negative control: with
# --hist-perturbing (a probe on each wait itself) the median is over the
# bound at every kind of wait.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/verdicts.sh"
lib=$(cd "$(dirname "$0")/../lib" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# judge LOG TRACE: the verdicts on the layout runs, ids LABEL/CHECK
judge() {
	python3 - "$1" "$2" "$lib" <<'PY'
import re
import statistics
import sys
log, trace, lib = sys.argv[1:4]
sys.dont_write_bytecode = True
sys.path.insert(0, lib)
import attribute
import guest_log
import verdict
from verdict import check, diag


def medians(g, keys):
    """[(KEY, MEDIAN gap or None, WAITS)] of the sites KEYS"""
    return [(k, statistics.median_low(g[k]) if g.get(k) else None, len(g.get(k, []))) for k in keys]


def under(m):
    """a site's median under the bound, over enough waits to tell (and not
    below 0: a deadline cycles= past an RDTSC before the wait)"""
    return m[2] >= attribute.GAP_MIN_WAITS and 0 <= m[1] < attribute.GAP_BOUND


def fmt(ms):
    return " ".join("%s:%s/%d" % m for m in ms)


def main():
    runs = guest_log.client_runs(log)
    att = attribute.attribute(log, trace, runs)
    for label, a in sorted(att.items()):
        if not label.startswith("lay-"):
            continue
        r = a.run
        check(label + "/marker", a.found, "CR3 0x%x" % a.space if a.found else "",
              "no traced user wait at the marker's address between its RDTSCs")
        if not a.found:
            for c in ("other", "gap", "counts"):
                check(label + "/" + c, False, "", "the run's marker wait is not in the trace")
            continue
        check(label + "/other", a.other == 0, "%d outside" % a.other, "waits of the process outside the binary")
        try:
            cycles = int(r.report["cycles"])
        except (KeyError, ValueError):
            check(label + "/gap", False, "", "the layout's report names no cycles=: its deadlines' distance")
            cycles = None
        if cycles is not None:
            g = {k: [attribute.gap(w, cycles) for w in ws] for k, ws in a.waits.items()}
            if label.endswith("-hist"):
                # every wait ran out of line: per instruction
                ms = medians(g, sorted(g))
                check(label + "/gap", ms and not [m for m in ms if under(m) or m[2] < attribute.GAP_MIN_WAITS],
                      fmt(ms), "bound %d: under it, or too few waits to tell" % attribute.GAP_BOUND)
            else:
                sites = runs.get(label.replace("-bare", ""), r).sites
                ms = medians(g, [off for off, _, _ in sites if off != a.marker_offset])
                bad = [m for m in ms if not under(m)]
                check(label + "/gap", ms and not bad, fmt(ms),
                      "bound %d, at least %d waits; over it, below 0 or too few: %s"
                      % (attribute.GAP_BOUND, attribute.GAP_MIN_WAITS, fmt(bad) or "no site listed"))
        if label.endswith(("-bare", "-hist")):
            continue
        # caps' counts per site, by exactness
        calls = {k[:-len("_calls")]: int(v) for k, v in r.report.items() if k.endswith("_calls")}
        trace_sites, caps, bad, seen = a.sites, a.caps, [], []
        for off, sym, exact in r.sites:
            # the function's name, without a clone's suffix (retry.constprop.0)
            fn = re.sub(r"(\.(constprop|isra|part)\.[0-9]+)*\+0x[0-9a-f]+$", "", sym)
            tw, tc = trace_sites.get(off, (0, 0))
            if off == a.marker_offset:
                tw += 1         # the marker: before the window, counted by caps
            cw, cc = caps.get(off, (0, 0))
            n = calls.get(fn, tw)
            ok = {"yes": (cw, cc) == (tw, tc),
                  "capped": cc == tc and tw <= cw <= n,
                  "no": cw >= tw and cc >= tc}[exact]
            s = "%s %s %s: caps %d:%d trace %d:%d%s" % (off, sym, exact, cw, cc, tw, tc,
                                                         " calls %d" % n if exact == "capped" else "")
            seen.append(s)
            if not ok:
                bad.append(s)
        check(label + "/counts", r.sites and not bad, "%d sites" % len(r.sites),
              "; ".join(bad) or "no site listed (# layout-sites)")
        for s in seen:
            diag("%s: %s" % (label, s))


verdict.run(main)
PY
}

binaries="gcc-O0 gcc-O2 gcc-O3 clang-O0 clang-O2 clang-O3"
# the layout corpus runs in the 6.1 lane alone (tests/run: later_lane_files)
for k in ""; do
	main_boot "$k"
	need_input "$log" '^# layout-sites ' "tests/guest/47-umwait-trace-layouts.t ($name)"
	need_input "$trace" 'waitpkg_wait_ctx ' "the $name main boot's QEMU trace"
	v=$tmp/verdicts$k
	judge "$log" "$trace" >"$v" 2>"$v.err"
	for b in $binaries; do
		l=lay-$b
		verdict "$v" "$l/marker" "$name: $l: the marker wait is in the trace"
		verdict "$v" "$l-bare/marker" "$name: $l-bare: the marker wait is in the trace"
		verdict "$v" "$l/other" "$name: $l: every traced wait of the process ran in the binary"
		# bugs: a wait missed or counted twice, a capped wait not counted as such
		verdict "$v" "$l/counts" "$name: $l: caps' waits and capped at every site follow the trace by the site's exactness"
		# bug: a probe between a wait's deadline and the wait (a trap on every wait)
		verdict "$v" "$l/gap" "$name: $l: caps attached, at every site the median cycles from the deadline's RDTSC to the wait are under the bound (SITE:MEDIAN/WAITS)"
		verdict "$v" "$l-bare/gap" "$name: $l-bare: without caps, the same (the bound is above the unprobed path)"
	done
	verdict "$v" lay-gcc-O2-hist/marker "$name: lay-gcc-O2-hist: the negative control ran and its marker is in the trace"
	verdict "$v" lay-gcc-O2-hist/gap "$name: lay-gcc-O2-hist: with a probe on each wait (--hist-perturbing) the median gap is over the bound: the observer check can fail"
	verdicts_end "$v" "$name: the layouts' judge (python)" "$name"
done
done_testing
