#!/usr/bin/env python3
# The host side's attribution of traced waits to sites (tests/host/21 and 24).
#
# usage: attribute.py GUEST_LOG QEMU_TRACE
#
# A run's client (tools/clients/client.h) executed one marker wait first; the
# guest log has, per run LABEL, "# client LABEL: NAME: map START END OFFSET
# PATH" lines, its report (marker=, marker_begin=, marker_end=), the TSC read
# after it exited (exit: exit_tsc=), optionally "# client LABEL: target:
# FILE" (the file whose sites count; by default the library its label names)
# and caps' rows "# caps LABEL: PID INSN WAITS CAPPED FILE OFFSET".  The
# trace's waitpkg_wait_ctx event of the marker gives the process's CR3;
# every later user wait of that address space, up to the next run's marker
# or the run's exit TSC, is attributed to FILE OFFSET = RIP - start + offset.
#
# One line per run: "LABEL FOUND CR3 TRACE CAPS OTHER WAITS CAPPED TOUT COUT",
# TRACE being OFFSET:WAITS:CAPPED,... over the target's sites (sorted as text,
# - when none), CAPS the same from caps' rows, OTHER the waits of that
# address space outside the target.  TOUT is each site's outcomes by the
# trace, OFFSET:CAPPED/DEADLINE/EARLY/PAST/FAR/OTHER/FAREARLY (FAR: those of
# PAST whose deadline was behind by 2^33 cycles or more when they began, over
# the 1 s of lateness caps allows at up to 8 GHz, so that caps must call them
# past; OTHER: a reason without an outcome; FAREARLY: those of EARLY that
# ended 2^26 cycles or more before their deadline, so that caps must call
# them early: its return probe would have to run over 8 ms late at up to
# 8 GHz to see the deadline passed), COUT caps' from "# outcomes-site LABEL: OFFSET capped=N
# deadline=N early=N past=N" lines, OFFSET:CAPPED/DEADLINE/EARLY/PAST.  A wait instruction that carries a uprobe runs
# out of line in the process's uprobes XOL area: the trace counts those per
# instruction (xol-tpause, xol-umwait), and so do caps' rows of the sites
# whose waits the trace saw nowhere in the target.
import os
import re
import sys

# the tests leave the tree as they found it: no __pycache__
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from waitpkg_outcome import WITHIN, fields, outcome  # noqa: E402

log, trace = sys.argv[1], sys.argv[2]
LIBS = {"tbb": "libtbb.so.12", "omp": "libomp.so.5", "dpdk": "librte_eal.so.23"}

runs = {}      # label -> dict(marker, begin, end, maps[], caps[], target)
order = []
for line in open(log, errors="replace"):
    c = re.match(r"# caps ([^:]+): ([0-9]+) (\S+) ([0-9]+) ([0-9]+) (\S+) (0x[0-9a-f]+)$", line.rstrip("\n"))
    if c:
        runs.setdefault(c.group(1), {"maps": [], "caps": []})["caps"].append(c.groups()[1:])
        continue
    o = re.match(r"# outcomes-site ([^:]+): (0x[0-9a-f]+) capped=([0-9]+) deadline=([0-9]+) "
                 r"early=([0-9]+) past=([0-9]+)$", line.rstrip("\n"))
    if o:
        r = runs.setdefault(o.group(1), {"maps": [], "caps": []})
        r.setdefault("outcomes", {})[o.group(2)] = "/".join(o.groups()[2:])
        continue
    m = re.match(r"# client ([^:]+): ([a-z-]+): (.*)", line.rstrip("\n"))
    if not m:
        continue
    label, rest = m.group(1), m.group(3)
    r = runs.setdefault(label, {"maps": [], "caps": []})
    if label not in order:
        order.append(label)
    if m.group(2) == "target":
        r["target"] = rest.strip()
    elif rest.startswith("map "):
        _, start, end, off, path = rest.split(" ", 4)
        r["maps"].append((int(start, 16), int(end, 16), int(off, 16), path))
    else:
        kv = dict(f.split("=", 1) for f in rest.split() if "=" in f)
        if "exit_tsc" in kv:
            # tests/lib/clients.sh: the TSC after the client exited, if read
            if re.fullmatch(r"[0-9]+", kv["exit_tsc"]):
                r["exit"] = int(kv["exit_tsc"])
            continue
        if "marker" in kv:
            r["marker"] = int(kv["marker"], 16)
            r["begin"], r["end"] = int(kv["marker_begin"]), int(kv["marker_end"])

ends, waits = {}, []
for line in open(trace, errors="replace"):
    i = line.find("waitpkg_wait_ctx ")
    if i >= 0:
        f = fields(line[i + len("waitpkg_wait_ctx "):])
        key = (f["cpu"], int(f["tsc_start"], 16))
        if key in ends:
            cpl, cf, insn, out = ends.pop(key)
            waits.append((key[1], int(f["rip"], 16), int(f["cr3"], 16), cpl, cf, insn, out))
        continue
    i = line.find("waitpkg_wait ")
    if i >= 0:
        f = fields(line[i + len("waitpkg_wait "):])
        start = int(f["tsc_start"], 16)
        out = outcome(f)
        ends[(f["cpu"], start)] = (int(f["cpl"]), int(f["cf"]), f["insn"], out)
waits.sort()

# CR3 bits 51:13: the page-table base without the PCID and PTI's user bit
def space(cr3):
    return cr3 & 0x000FFFFFFFFFE000

# the marker wait: at its address, or out of line in the run's XOL area
# when a probe sits on the wait itself (caps --hist-perturbing)
marks = {}
for label, r in runs.items():
    xol = [m for m in r["maps"] if m[3] == "[uprobes]"]
    for tsc, rip, cr3, cpl, cf, insn, out in waits:
        if cpl != 3 or not r.get("begin", 1) <= tsc <= r.get("end", 0):
            continue
        if rip == r["marker"] or [x for x in xol if x[0] <= rip < x[1]]:
            marks[label] = (tsc, space(cr3))
            break
starts = sorted(t for t, _ in marks.values())

for label in order:
    r = runs[label]
    if label not in marks:
        print(label, "no - - - 0 0 0 - -")
        continue
    tsc0, sp = marks[label]
    later = [t for t in starts if t > tsc0]
    limit = min(later[0] if later else float("inf"), r.get("exit", float("inf")))
    lib = r.get("target") or LIBS[label.split("-")[0]]
    # the mapping shows the file the soname links to (libtbb.so.12.8)
    maps = [m for m in r["maps"] if m[3].rsplit("/", 1)[-1].startswith(lib)]
    xol = [m for m in r["maps"] if m[3] == "[uprobes]"]
    sites, other, total, capped, outs = {}, 0, 0, 0, {}
    for tsc, rip, cr3, cpl, cf, insn, out in waits:
        if tsc <= tsc0 or tsc >= limit or cpl != 3 or space(cr3) != sp:
            continue
        m = [m for m in maps if m[0] <= rip < m[1]]
        if m:
            key = "0x%x" % (rip - m[0][0] + m[0][2])
        elif [x for x in xol if x[0] <= rip < x[1]]:
            key = "xol-" + insn
        else:
            other += 1
            continue
        w, c = sites.get(key, (0, 0))
        sites[key] = (w + 1, c + cf)
        o = outs.setdefault(key, dict(capped=0, deadline=0, early=0, past=0, far=0, other=0,
                                          farearly=0))
        o[out] += 1
        if out in WITHIN:
            o[WITHIN[out]] += 1
        total += 1
        capped += cf
    # caps' rows; a site whose waits the trace saw nowhere in the target
    # ran them out of line: it counts in its instruction's xol- row.  Not
    # the marker's site: its one wait is before the window, in no row.
    mk = [m for m in maps if m[0] <= r["marker"] < m[1]]
    mko = "0x%x" % (r["marker"] - mk[0][0] + mk[0][2]) if mk else None
    caps = {}
    for c in r["caps"]:
        pid, insn, w, cp, path, off = c
        key = off if off in sites or off == mko else "xol-" + insn
        a, b = caps.get(key, (0, 0))
        caps[key] = (a + int(w), b + int(cp))
    fmt = lambda d: ",".join(sorted("%s:%d:%d" % (k, w, c) for k, (w, c) in d.items())) or "-"
    tout = ",".join(sorted("%s:%d/%d/%d/%d/%d/%d/%d" % (k, o["capped"], o["deadline"], o["early"],
                                                       o["past"], o["far"], o["other"],
                                                       o["farearly"])
                           for k, o in outs.items())) or "-"
    cout = ",".join(sorted("%s:%s" % kv for kv in r.get("outcomes", {}).items())) or "-"
    print(label, "yes", "0x%x" % sp, fmt(sites), fmt(caps), other, total, capped, tout, cout)
