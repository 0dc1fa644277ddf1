#!/usr/bin/env python3
"""The guest log's lines that the host checks read (tests/host/21, 23, 24,
25): the one reader of what the guest printed of umwait-trace caps' output
(its text rows and outcomes, its JSON residency) and of the library
clients' reports.  The guest side writes them: tests/lib/clients.sh,
tests/guest/40-umwait-trace-outcomes.t, 47-umwait-trace-layouts.t and
tests/guest-pmu/40-umwait-trace-residency.t.

Per client run LABEL (client_runs):
  # client LABEL: NAME: map START END OFFSET PATH   an executable mapping
  # client LABEL: NAME: pid=N marker=0x... marker_begin=N marker_end=N ...
                                                    the client's report
  # client LABEL: exit: exit_tsc=N                  the TSC once it had exited
  # client LABEL: target: FILE                      the file whose sites count
  # caps LABEL: PID INSN WAITS CAPPED FILE OFFSET   one of caps' rows
  # caps LABEL: unpaired N unended N
  # outcomes-site LABEL: OFFSET capped=N deadline=N early=N past=N
  # outcomes-note LABEL: OFFSET advice: ... | warning: ...
  # layout-sites LABEL: OFFSET SYMBOL EXACT         sites -v of a layout binary
Key=value lines (keyvals): "# outcomes LABEL: caps k=v ...",
"# residency LABEL: k=v ...".
"""
import collections
import re
import sys

sys.dont_write_bytecode = True

CapsRow = collections.namedtuple("CapsRow", "pid insn waits capped file offset")
Outcomes = collections.namedtuple("Outcomes", "capped deadline early past")


class Run:
    """What the guest log holds of one client run"""

    def __init__(self, label):
        self.label = label
        self.maps = []          # (start, end, offset, path)
        self.report = {}        # the client's report line, key=value (strings)
        self.exit = None        # the TSC once it had exited, if read
        self.target = None
        self.caps = []          # CapsRow
        self.unpaired = self.unended = None
        self.outcomes = {}      # OFFSET -> Outcomes
        self.notes = collections.defaultdict(list)   # OFFSET -> ["advice: ...", ...]
        self.sites = []         # (OFFSET, SYMBOL, EXACT)

    def marker(self):
        """(address, TSC before, TSC after) of the marker wait, or None"""
        r = self.report
        if "marker" not in r:
            return None
        return int(r["marker"], 16), int(r["marker_begin"]), int(r["marker_end"])

    def offset_of(self, addr):
        """the file offset ADDR maps to, "0x..." (None if in no mapping)"""
        for start, end, off, _ in self.maps:
            if start <= addr < end:
                return "0x%x" % (addr - start + off)
        return None


_CAPS = re.compile(r"# caps ([^:]+): ([0-9]+) (\S+) ([0-9]+) ([0-9]+) (\S+) (0x[0-9a-f]+)$")
_UNP = re.compile(r"# caps ([^:]+): unpaired ([0-9]+) unended ([0-9]+)$")
_OSITE = re.compile(r"# outcomes-site ([^:]+): (0x[0-9a-f]+) capped=([0-9]+) deadline=([0-9]+) "
                    r"early=([0-9]+) past=([0-9]+)$")
_ONOTE = re.compile(r"# outcomes-note ([^:]+): (0x[0-9a-f]+) (.*)$")
_LSITE = re.compile(r"# layout-sites ([^:]+): (0x[0-9a-f]+) (\S+) (yes|capped|no)$")
_CLIENT = re.compile(r"# client ([^:]+): ([a-z-]+): (.*)$")


def client_runs(path):
    """{LABEL: Run}, in the order the log first names each"""
    runs = {}

    def run(label):
        if label not in runs:
            runs[label] = Run(label)
        return runs[label]

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.startswith(("# caps ", "# outcomes-", "# layout-sites ", "# client ")):
                continue
            m = _CAPS.match(line)
            if m:
                g = m.groups()
                run(g[0]).caps.append(CapsRow(int(g[1]), g[2], int(g[3]), int(g[4]), g[5], g[6]))
                continue
            m = _UNP.match(line)
            if m:
                r = run(m.group(1))
                r.unpaired, r.unended = int(m.group(2)), int(m.group(3))
                continue
            m = _OSITE.match(line)
            if m:
                run(m.group(1)).outcomes[m.group(2)] = Outcomes(*(int(x) for x in m.groups()[2:]))
                continue
            m = _ONOTE.match(line)
            if m:
                run(m.group(1)).notes[m.group(2)].append(m.group(3))
                continue
            m = _LSITE.match(line)
            if m:
                run(m.group(1)).sites.append(m.groups()[1:])
                continue
            m = _CLIENT.match(line)
            if not m:
                continue
            r, what, rest = run(m.group(1)), m.group(2), m.group(3)
            if what == "target":
                r.target = rest.strip()
            elif rest.startswith("map "):
                _, start, end, off, p = rest.split(" ", 4)
                r.maps.append((int(start, 16), int(end, 16), int(off, 16), p))
            else:
                kv = dict(x.split("=", 1) for x in rest.split() if "=" in x)
                if "exit_tsc" in kv:
                    # tests/lib/clients.sh: "none" if it could not be read
                    if re.fullmatch(r"[0-9]+", kv["exit_tsc"]):
                        r.exit = int(kv["exit_tsc"])
                elif "marker" in kv:
                    r.report = kv
    return runs


def keyvals(path, tag, prefix=""):
    """[(LABEL, {key: value})] of the lines "# TAG LABEL: PREFIXk=v ...", in order"""
    out = []
    pat = re.compile(r"# %s ([^:]+): %s(.*)$" % (re.escape(tag), re.escape(prefix)))
    with open(path, errors="replace") as f:
        for line in f:
            m = pat.match(line.rstrip("\n"))
            if m:
                out.append((m.group(1), dict(x.split("=", 1) for x in m.group(2).split() if "=" in x)))
    return out
