#!/bin/bash
# Host side of tests/guest/40-umwait-trace-outcomes.t: caps' outcome of each
# wait against QEMU's trace of how it ended (waitpkg_wait's reason): oslimit
# is capped, deadline is deadline, past is past, and store, interrupt,
# nomonitor and migration are early; a CF=0 wait whose deadline was behind
# when it began is past whatever the reason (the model may name a store
# first).  The user-mode (cpl 3) waits of each
# run's window [tsc_begin, tsc_end] are tpause-loop's: nothing else in the
# guest waits in user mode meanwhile.
#
# The rule (umwait-trace.8), as tests/host/21 holds it per site: capped is
# exact; a deadline behind by less than caps' slack at the start reads as
# deadline, so caps' past lies between the trace's far-past waits (behind by
# 2^33 cycles or more) and all its past ones; an early wake within the
# probe's lateness of the deadline reads as deadline, so caps' early lies
# between the trace's far-early waits (ended 2^26 cycles or more before the
# deadline: tests/lib/attribute.py) and all its early ones; what caps took
# from past and early is in its deadline.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/verdicts.sh"
lib=$(cd "$(dirname "$0")/../lib" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the runs of tests/guest/40-umwait-trace-outcomes.t
labels="capped deadline past count store"

# judge LOG TRACE: the verdicts on each run, ids LABEL/CHECK
judge() {
	python3 - "$1" "$2" "$lib" <<'PY'
import collections
import sys
log, trace, lib = sys.argv[1:4]
sys.dont_write_bytecode = True
sys.path.insert(0, lib)
import guest_log
import qemu_trace
import verdict
from verdict import check, diag
from waitpkg_outcome import WITHIN, outcome


def main():
    ws = qemu_trace.waits(trace, cpl=3)
    for label, r in guest_log.keyvals(log, "outcomes", "caps "):
        r = {k: int(v) for k, v in r.items()}
        t = collections.Counter()
        for w in qemu_trace.starting_in(ws, r["tsc_begin"], r["tsc_end"]):
            out = outcome(w)
            t[out] += 1
            # far and farearly are counted apart and as past and early
            if out in WITHIN:
                t[WITHIN[out]] += 1
        waits = t["capped"] + t["deadline"] + t["early"] + t["past"]
        diag("%s: caps capped=%d deadline=%d early=%d past=%d; trace capped=%d deadline=%d early=%d "
             "past=%d (far %d) other=%d far-early=%d"
             % (label, r["capped"], r["deadline"], r["early"], r["past"], t["capped"], t["deadline"],
                t["early"], t["past"], t["far"], t["other"], t["farearly"]))
        check(label + "/waits", waits > 0 and not t["other"], "%d, %d of an unknown reason" % (waits, t["other"]),
              "none, or a reason without an outcome")
        check(label + "/capped", r["capped"] == t["capped"], "caps %d, trace %d" % (r["capped"], t["capped"]))
        check(label + "/past", t["far"] <= r["past"] <= t["past"],
              "%d in [%d, %d]" % (r["past"], t["far"], t["past"]))
        short = t["early"] - r["early"]
        check(label + "/early", t["farearly"] <= r["early"] <= t["early"] and
              r["deadline"] + r["past"] == t["deadline"] + t["past"] + short,
              "early %d in [%d, %d], deadline %d vs %d" % (r["early"], t["farearly"], t["early"],
                                                           r["deadline"], t["deadline"]))


verdict.run(main)
PY
}

# the outcomes run in the 6.1 lane alone (tests/run: later_lane_files)
for k in ""; do
	main_boot "$k"
	need_input "$log" '^# outcomes [a-z]*: caps ' "tests/guest/40-umwait-trace-outcomes.t ($name)"
	need_input "$trace" 'waitpkg_wait ' "the $name main boot's QEMU trace"
	v=$tmp/verdicts$k
	judge "$log" "$trace" >"$v" 2>"$v.err"
	for l in $labels; do
		verdict "$v" "$l/waits" "$name: $l: the trace has the run's waits, every one with a known reason"
		verdict "$v" "$l/capped" "$name: $l: caps' capped is the trace's"
		verdict "$v" "$l/past" "$name: $l: caps' past is at least the trace's far-past waits and at most its past ones"
		verdict "$v" "$l/early" "$name: $l: caps' early is at least the trace's far-early waits and at most its early ones, the rest in its deadline"
	done
	verdicts_end "$v" "$name: the outcomes' judge (python)" "$name"
done
done_testing
