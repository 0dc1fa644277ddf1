#!/usr/bin/env python3
"""QEMU's trace of the lab's models (vm/run --qemu-trace): the one reader of
its records for every host check and make bench (tests/host/2*, 50,
tests/bench/accuracy).

A record is one line, "EVENT name value name value ...", as QEMU's log
backend writes the formats of vm/qemu/patches (a "PID@SECONDS:" prefix, which
-msg timestamp=on adds, is allowed):

  waitpkg_wait       cpu insn cpl req used tsc_start deadline limit tsc_end
                     reason cf             (one per completed wait)
  waitpkg_wait_ctx   cpu tsc_start rip cr3 (where that wait ran)
  waitpkg_umonitor   cpu addr paddr
  waitpkg_msr_write  cpu val               (a guest WRMSR of IA32_UMWAIT_CONTROL)
  x86_pmu_wrmsr      cpu msr val
  x86_pmu_overflow   cpu tsc overflow global_status

Numbers in hex (0x...) are read as such, the others in decimal; insn, req,
used and reason stay strings.  A line of one of these events that lacks a
field, or whose number does not parse, is an error (TraceError) that names
the file and the line: a check must not count a record it misread.

As a command, for the shell checks (each prints one line per input line):

  qemu_trace.py windows TRACE     stdin "KEY BEGIN END INSN" (decimal TSCs):
                                  "KEY n=N cf1=N oscf=N othercf0=N limited=N
                                  reason_R=N... state_REQUSED=N..." of the user
                                  (cpl 3) waits of INSN starting in [BEGIN, END]
  qemu_trace.py pmu TRACE         stdin "KEY BEGIN END": "KEY t_n=N t_c01=N
                                  t_c02=N t_ovf=N": the cpl 3 waits starting in
                                  the window, their TSC time by the state used,
                                  and the PMU's overflows in it
  qemu_trace.py msr-writes TRACE  "CPU VAL COUNT" of every waitpkg_msr_write
  qemu_trace.py evtsel TRACE      "CPU MSR VAL" of every x86_pmu_wrmsr to an
                                  IA32_PERFEVTSELx (0x186-0x189)
"""
import bisect
import collections
import re
import sys

sys.dont_write_bytecode = True

# each event's fields, in the order its format prints them
FIELDS = {
    "waitpkg_wait": ("cpu", "insn", "cpl", "req", "used", "tsc_start", "deadline", "limit",
                     "tsc_end", "reason", "cf"),
    "waitpkg_wait_ctx": ("cpu", "tsc_start", "rip", "cr3"),
    "waitpkg_umonitor": ("cpu", "addr", "paddr"),
    "waitpkg_msr_write": ("cpu", "val"),
    "x86_pmu_wrmsr": ("cpu", "msr", "val"),
    "x86_pmu_overflow": ("cpu", "tsc", "overflow", "global_status"),
}
STRINGS = {"insn", "req", "used", "reason"}
_LINE = re.compile(r"(?:[0-9]+@[0-9.]+:)?([a-z0-9_]+) (.*)")


class TraceError(Exception):
    pass


def _number(s):
    return int(s, 16) if s.startswith("0x") else int(s)


def parse_line(line, names=FIELDS):
    """(EVENT, {field: value}) of a record of one of NAMES, else None"""
    m = _LINE.match(line)
    if not m or m.group(1) not in names:
        return None
    ev = m.group(1)
    t = m.group(2).split()
    raw = dict(zip(t[0::2], t[1::2]))
    try:
        return ev, {k: raw[k] if k in STRINGS else _number(raw[k]) for k in FIELDS[ev]}
    except (KeyError, ValueError):
        raise TraceError("not a %s record: %s" % (ev, line.strip()))


def records(path, names=FIELDS):
    """every (EVENT, fields) of NAMES in the trace at PATH, in its order"""
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            try:
                r = parse_line(line, names)
            except TraceError as e:
                raise TraceError("%s:%d: %s" % (path, n, e))
            if r:
                yield r


Wait = collections.namedtuple("Wait", FIELDS["waitpkg_wait"] + ("rip", "cr3"))


def waits(path, cpl=None):
    """the trace's waits (Wait; rip and cr3 from the waitpkg_wait_ctx record
    of the same cpu and tsc_start, None where there is none), by tsc_start;
    only those of privilege level CPL if given"""
    ctx, out = {}, []
    for ev, f in records(path, ("waitpkg_wait", "waitpkg_wait_ctx")):
        if ev == "waitpkg_wait_ctx":
            ctx[f["cpu"], f["tsc_start"]] = (f["rip"], f["cr3"])
        elif cpl is None or f["cpl"] == cpl:
            out.append(f)
    w = [Wait(*(f[k] for k in FIELDS["waitpkg_wait"]), *ctx.get((f["cpu"], f["tsc_start"]), (None, None)))
         for f in out]
    w.sort(key=lambda x: (x.tsc_start, x.cpu))
    return w


def starting_in(ws, begin, end):
    """the waits of WS (sorted by tsc_start) that start in [BEGIN, END]"""
    starts = [w.tsc_start for w in ws]
    return ws[bisect.bisect_left(starts, begin):bisect.bisect_right(starts, end)]


def _windows(trace):
    ws = waits(trace, cpl=3)
    for line in sys.stdin:
        key, lo, hi, insn = line.split()
        n = collections.Counter()
        for w in starting_in(ws, int(lo), int(hi)):
            if w.insn != insn:
                continue
            n["n"] += 1
            n["cf1"] += w.cf == 1
            n["oscf"] += w.reason == "oslimit" and w.cf == 1
            n["othercf0"] += w.reason != "oslimit" and w.cf == 0
            n["limited"] += w.limit != 0
            n["reason_" + w.reason] += 1
            n["state_" + (w.req + w.used).replace(".", "")] += 1
        fixed = ["%s=%d" % (k, n[k]) for k in ("n", "cf1", "oscf", "othercf0", "limited")]
        print(key, " ".join(fixed + ["%s=%d" % kv for kv in sorted(n.items()) if "_" in kv[0]]))


def _pmu(trace):
    ws = waits(trace, cpl=3)
    ovf = sorted(f["tsc"] for _, f in records(trace, ("x86_pmu_overflow",)))
    for line in sys.stdin:
        key, lo, hi = line.split()
        lo, hi = int(lo), int(hi)
        n, t = 0, {"C0.1": 0, "C0.2": 0}
        for w in starting_in(ws, lo, hi):
            n += 1
            t["C0.1" if w.used == "C0.1" else "C0.2"] += w.tsc_end - w.tsc_start
        o = bisect.bisect_right(ovf, hi) - bisect.bisect_left(ovf, lo)
        print("%s t_n=%d t_c01=%d t_c02=%d t_ovf=%d" % (key, n, t["C0.1"], t["C0.2"], o))


def main():
    a = sys.argv[1:]
    try:
        if len(a) == 2 and a[0] == "windows":
            _windows(a[1])
        elif len(a) == 2 and a[0] == "pmu":
            _pmu(a[1])
        elif len(a) == 2 and a[0] == "msr-writes":
            n = collections.Counter((f["cpu"], f["val"]) for _, f in records(a[1], ("waitpkg_msr_write",)))
            for (cpu, val), c in sorted(n.items()):
                print(cpu, "0x%x" % val, c)
        elif len(a) == 2 and a[0] == "evtsel":
            for _, f in records(a[1], ("x86_pmu_wrmsr",)):
                if 0x186 <= f["msr"] <= 0x189:
                    print(f["cpu"], "0x%x" % f["msr"], "0x%x" % f["val"])
        else:
            print("usage: qemu_trace.py windows|pmu|msr-writes|evtsel TRACE", file=sys.stderr)
            sys.exit(2)
    except (OSError, TraceError) as e:
        print("qemu_trace.py: %s" % e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
