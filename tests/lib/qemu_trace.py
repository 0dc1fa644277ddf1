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
used and reason stay strings.  A record a reader takes that lacks a field,
or whose number does not parse, is an error (TraceError) that names the
file and the line: a check must not count a record it misread.  (waits()
asked for one privilege level reads no further into a wait of another.)

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
import hashlib
import os
import pickle
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
# the fields the formats print in hex ("0x%" PRIx64)
HEX = {"tsc_start", "deadline", "limit", "tsc_end", "rip", "cr3", "addr", "paddr", "val", "msr",
       "tsc", "overflow", "global_status"}


class TraceError(Exception):
    pass


def _number(s):
    return int(s, 16) if s.startswith("0x") else int(s)


def _hex(s):
    if not s.startswith("0x"):
        raise ValueError(s)
    return int(s, 16)


# per event, each field's reader
_READ = {ev: tuple(str if k in STRINGS else _hex if k in HEX else int for k in f)
         for ev, f in FIELDS.items()}


def _values(t, ev, line):
    """the values of EVENT's fields, in FIELDS order, from the words T after its name"""
    try:
        if len(t) == 2 * len(FIELDS[ev]) and tuple(t[0::2]) == FIELDS[ev]:
            return [r(v) for r, v in zip(_READ[ev], t[1::2])]
        raw = dict(zip(t[0::2], t[1::2]))
        return [raw[k] if k in STRINGS else _number(raw[k]) for k in FIELDS[ev]]
    except (KeyError, ValueError):
        raise TraceError("not a %s record: %s" % (ev, line.strip()))


def _fields(t, ev, line):
    """{field: value} of EVENT's record whose words after the name are T"""
    return dict(zip(FIELDS[ev], _values(t, ev, line)))


def parse_line(line, names=FIELDS):
    """(EVENT, {field: value}) of a record of one of NAMES, else None"""
    t = line.split()
    if not t:
        return None
    ev = t[0]
    if "@" in ev and ":" in ev:
        ev = ev.rsplit(":", 1)[1]        # -msg timestamp=on's PID@SECONDS:
    if ev not in names:
        return None
    return ev, _fields(t[1:], ev, line)


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


_CTX = FIELDS["waitpkg_wait_ctx"]


def waits(path, cpl=None):
    """the trace's waits (Wait; rip and cr3 from the waitpkg_wait_ctx record
    of the same cpu and tsc_start, None where there is none), by tsc_start;
    only those of privilege level CPL if given.  With LAB_TRACE_CACHE set (a
    directory: tests/host/90 runs the checks on many copies of one run's
    results, the traces linked), each file is read once: the waits are kept
    there under the file's real path, size and modification time."""
    cache = os.environ.get("LAB_TRACE_CACHE")
    if not cache:
        return _waits(path, cpl)
    st = os.stat(path)
    key = hashlib.sha256(repr((os.path.realpath(path), st.st_size, st.st_mtime_ns, cpl)).encode()).hexdigest()
    f = os.path.join(cache, "waits-%s.pickle" % key[:32])
    try:
        with open(f, "rb") as fd:
            return [Wait(*w) for w in pickle.load(fd)]
    except OSError:
        pass
    w = _waits(path, cpl)
    with open(f + ".tmp", "wb") as fd:
        pickle.dump([tuple(x) for x in w], fd, pickle.HIGHEST_PROTOCOL)
    os.replace(f + ".tmp", f)
    return w


def _waits(path, cpl):
    ctx, out = {}, []
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("waitpkg_wait"):
                t = line.split()
                ev, t = t[0], t[1:]
            elif "@" in line[:40]:
                # -msg timestamp=on's prefix: the general path
                r = parse_line(line, ("waitpkg_wait", "waitpkg_wait_ctx"))
                if not r:
                    continue
                ev, t = r[0], line.split()[1:]
            else:
                continue
            if ev == "waitpkg_wait_ctx":
                # read once its wait is known: most are the kernel's
                if tuple(t[0::2]) != _CTX:
                    raise TraceError("%s:%d: not a waitpkg_wait_ctx record: %s" % (path, n, line.strip()))
                ctx[t[1], t[3]] = (t[5], t[7], n, line)
            elif ev == "waitpkg_wait":
                # another privilege level's: not read further
                if cpl is not None and len(t) > 5 and t[4] == "cpl" and t[5] != str(cpl):
                    continue
                try:
                    out.append((_values(t, ev, line), t[1], t[11] if len(t) > 11 else None))
                except TraceError as e:
                    raise TraceError("%s:%d: %s" % (path, n, e))
    w = []
    for v, cpu_s, start_s in out:
        c = ctx.get((cpu_s, start_s))
        if c:
            try:
                c = (_hex(c[0]), _hex(c[1]))
            except ValueError:
                raise TraceError("%s:%d: not a waitpkg_wait_ctx record: %s" % (path, c[2], c[3].strip()))
        w.append(Wait(*v, *(c or (None, None))))
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
