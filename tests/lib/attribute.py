#!/usr/bin/env python3
"""The host side's attribution of traced waits to sites (tests/host/21 and 24).

A run's client (tools/clients/client.h) executed one marker wait first; the
guest log (tests/lib/guest_log.py) has, per run LABEL, the client's
mappings, its report (marker=, marker_begin=, marker_end=), the TSC read
after it exited, optionally the file whose sites count (target; by default
the library its label names) and caps' rows.  The trace's
waitpkg_wait_ctx record of the marker (tests/lib/qemu_trace.py) gives the
process's CR3; every later user wait of that address space, up to the next
run's marker or the run's exit TSC, is attributed to FILE OFFSET = RIP -
start + offset.  A wait instruction that carries a uprobe runs out of line
in the process's uprobes XOL area: the trace counts those per instruction
(xol-tpause, xol-umwait), and so do caps' rows of the sites whose waits the
trace saw nowhere in the target.

attribute(LOG, TRACE) gives {LABEL: Attribution}; as a command it prints,
per run, "LABEL FOUND CR3 TRACE CAPS OTHER WAITS CAPPED TOUT COUT" (TRACE and
CAPS as OFFSET:WAITS:CAPPED,..., TOUT as OFFSET:CAPPED/DEADLINE/EARLY/PAST/
FAR/OTHER/FAREARLY, COUT as OFFSET:CAPPED/DEADLINE/EARLY/PAST; - for none).
"""
import os
import sys

# the tests leave the tree as they found it: no __pycache__
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_log  # noqa: E402
import qemu_trace  # noqa: E402
from waitpkg_outcome import WITHIN, outcome  # noqa: E402

# The observer check (tests/host/21 and 24): the cycles from the RDTSC that
# a wait's deadline was computed from (deadline - AHEAD, AHEAD what the
# program adds) to the wait's start.  Without a probe on that path it is a
# few instructions; a uprobe on it adds a trap, 0.1-0.3 ms under TCG.  A
# site's median gap must be under GAP_BOUND, over GAP_MIN_WAITS waits at
# least.
GAP_BOUND = 20000
GAP_MIN_WAITS = 5


def gap(w, ahead):
    """the cycles from the RDTSC that W's deadline (that value + AHEAD) came from to W's start"""
    return w.tsc_start - (w.deadline - ahead)


LIBS = {"tbb": "libtbb.so.12", "omp": "libomp.so.5", "dpdk": "librte_eal.so.23"}
OUTCOMES = ("capped", "deadline", "early", "past", "far", "other", "farearly")


def space(cr3):
    """CR3 bits 51:13: the page-table base without the PCID and PTI's user bit"""
    return cr3 & 0x000FFFFFFFFFE000


class Attribution:
    """One run's waits as the trace has them, per site, and caps' view"""

    def __init__(self, run):
        self.run = run
        self.found = False      # the marker wait is in the trace
        self.space = None
        self.waits = {}         # KEY -> [Wait], in the order they began
        self.other = 0          # waits of the address space outside the target
        self.outs = {}          # KEY -> {outcome: count} (far, farearly also in past, early)
        self.caps = {}          # KEY -> (waits, capped), caps' rows
        self.marker_offset = None

    @property
    def sites(self):
        """KEY -> (waits, capped) by the trace"""
        return {k: (len(v), sum(w.cf for w in v)) for k, v in self.waits.items()}

    @property
    def total(self):
        return sum(len(v) for v in self.waits.values())

    @property
    def capped(self):
        return sum(w.cf for v in self.waits.values() for w in v)


def _fmt(d):
    return ",".join(sorted("%s:%d:%d" % (k, w, c) for k, (w, c) in d.items())) or "-"


def attribute(log, trace, runs=None, waits=None):
    """{LABEL: Attribution} of every client run of LOG against TRACE (the
    parsed RUNS and user WAITS may be given instead of reading them again)"""
    runs = guest_log.client_runs(log) if runs is None else runs
    waits = qemu_trace.waits(trace, cpl=3) if waits is None else waits
    # the marker wait: at its address, or out of line in the run's XOL area
    # when a probe sits on the wait itself (caps --hist-perturbing)
    marks = {}
    for label, r in runs.items():
        mk = r.marker()
        if not mk:
            continue
        xol = [m for m in r.maps if m[3] == "[uprobes]"]
        for w in qemu_trace.starting_in(waits, mk[1], mk[2]):
            if w.rip is not None and (w.rip == mk[0] or any(x[0] <= w.rip < x[1] for x in xol)):
                marks[label] = (w.tsc_start, space(w.cr3))
                break
    starts = sorted(t for t, _ in marks.values())
    out = {}
    for label, r in runs.items():
        a = out[label] = Attribution(r)
        mk = r.marker()
        if mk:
            a.marker_offset = r.offset_of(mk[0])
        if label not in marks:
            continue
        a.found = True
        tsc0, a.space = marks[label]
        later = [t for t in starts if t > tsc0]
        limit = min(later[0] if later else float("inf"), r.exit if r.exit is not None else float("inf"))
        lib = r.target or LIBS.get(label.split("-")[0], "-")
        # the mapping shows the file the soname links to (libtbb.so.12.8)
        maps = [m for m in r.maps if m[3].rsplit("/", 1)[-1].startswith(lib)]
        xol = [m for m in r.maps if m[3] == "[uprobes]"]
        for w in qemu_trace.starting_in(waits, tsc0 + 1, limit - 1):
            if w.cr3 is None or space(w.cr3) != a.space:
                continue
            m = [m for m in maps if m[0] <= w.rip < m[1]]
            if m:
                key = "0x%x" % (w.rip - m[0][0] + m[0][2])
            elif any(x[0] <= w.rip < x[1] for x in xol):
                key = "xol-" + w.insn
            else:
                a.other += 1
                continue
            a.waits.setdefault(key, []).append(w)
            o = a.outs.setdefault(key, dict.fromkeys(OUTCOMES, 0))
            k = outcome(w)
            o[k] += 1
            if k in WITHIN:
                o[WITHIN[k]] += 1
        # caps' rows; a site whose waits the trace saw nowhere in the target
        # ran them out of line: it counts in its instruction's xol- row.  Not
        # the marker's site: its one wait is before the window, in no row.
        for c in r.caps:
            key = c.offset if c.offset in a.waits or c.offset == a.marker_offset else "xol-" + c.insn
            w0, c0 = a.caps.get(key, (0, 0))
            a.caps[key] = (w0 + c.waits, c0 + c.capped)
    return out


def main():
    if len(sys.argv) != 3:
        print("usage: attribute.py GUEST_LOG QEMU_TRACE", file=sys.stderr)
        sys.exit(2)
    for label, a in attribute(sys.argv[1], sys.argv[2]).items():
        if not a.found:
            print(label, "no - - - 0 0 0 - -")
            continue
        tout = ",".join(sorted("%s:%s" % (k, "/".join(str(o[x]) for x in OUTCOMES))
                               for k, o in a.outs.items())) or "-"
        cout = ",".join(sorted("%s:%s" % (k, "/".join(map(str, o)))
                               for k, o in a.run.outcomes.items())) or "-"
        print(label, "yes", "0x%x" % a.space, _fmt(a.sites), _fmt(a.caps), a.other, a.total,
              a.capped, tout, cout)


if __name__ == "__main__":
    main()
