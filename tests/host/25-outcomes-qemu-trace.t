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

for k in "" -6.12; do
	main_boot "$k"
	need_input "$log" '^# outcomes [a-z]*: caps ' "tests/guest/40-umwait-trace-outcomes.t ($name)"
	need_input "$trace" 'waitpkg_wait ' "the $name main boot's QEMU trace"
	while IFS='|' read -r kind a b c; do
		case "$kind" in
		ok) if [ "$a" = 1 ]; then pass "$name: $b"; else fail "$name: $b" "$c"; fi ;;
		diag) diag "$name: $a" ;;
		esac
	done < <(python3 - "$log" "$trace" "$(dirname "$0")/../lib" <<'PY'
import re, sys
log, trace, lib = sys.argv[1], sys.argv[2], sys.argv[3]
sys.dont_write_bytecode = True
sys.path.insert(0, lib)
from waitpkg_outcome import WITHIN, fields, outcome
runs = []
for line in open(log, errors="replace"):
    m = re.match(r"# outcomes ([a-z]+): caps (.*)$", line.rstrip())
    if m:
        kv = dict(f.split("=", 1) for f in m.group(2).split())
        runs.append((m.group(1), {k: int(v) for k, v in kv.items()}))
counts = [dict(capped=0, deadline=0, early=0, past=0, far=0, other=0, farearly=0) for _ in runs]
for line in open(trace, errors="replace"):
    i = line.find("waitpkg_wait ")
    if i < 0:
        continue
    f = fields(line[i + len("waitpkg_wait "):])
    if f.get("cpl") != "3":
        continue
    ts, out = int(f["tsc_start"], 16), outcome(f)
    for n, (label, r) in enumerate(runs):
        if r["tsc_begin"] <= ts <= r["tsc_end"]:
            counts[n][out] += 1
            # far and farearly are counted apart and as past and early
            if out in WITHIN:
                counts[n][WITHIN[out]] += 1
for n, (label, r) in enumerate(runs):
    t = counts[n]
    waits = t["capped"] + t["deadline"] + t["early"] + t["past"]
    print("diag|%s: caps capped=%d deadline=%d early=%d past=%d; trace capped=%d deadline=%d early=%d past=%d (far %d) other=%d far-early=%d"
          % (label, r["capped"], r["deadline"], r["early"], r["past"],
             t["capped"], t["deadline"], t["early"], t["past"], t["far"], t["other"], t["farearly"]))
    print("ok|%d|%s: the trace has the run's waits (%d), every one with a known reason|"
          % (waits > 0 and not t["other"], label, waits))
    print("ok|%d|%s: caps' capped is the trace's (%d, %d)|"
          % (r["capped"] == t["capped"], label, r["capped"], t["capped"]))
    print("ok|%d|%s: caps' past is at least the trace's far-past waits and at most its past ones (%d in [%d, %d])|"
          % (t["far"] <= r["past"] <= t["past"], label, r["past"], t["far"], t["past"]))
    short = t["early"] - r["early"]
    ok = (t["farearly"] <= r["early"] <= t["early"] and
          r["deadline"] + r["past"] == t["deadline"] + t["past"] + short)
    print("ok|%d|%s: caps' early is at least the trace's far-early waits and at most its early ones, "
          "the rest in its deadline (early %d in [%d, %d], deadline %d vs %d)|"
          % (ok, label, r["early"], t["farearly"], t["early"], r["deadline"], t["deadline"]))
PY
)
done
done_testing
