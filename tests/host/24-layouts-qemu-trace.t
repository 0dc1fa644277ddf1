#!/bin/bash
# Host side of tests/guest/47-umwait-trace-layouts.t, with QEMU's trace as the
# truth (tests/lib/attribute.py attributes every traced wait to a site of
# the layout binary).  Per binary and site, as `umwait-trace sites -v` said:
#   exact yes     caps' waits and capped are the trace's;
#   exact capped  caps' capped is the trace's, its waits between the trace's
#                 and the layout's calls (each arrival after the site is a
#                 wait or a skip, and only the skips can add);
#   exact no      caps never counts fewer than the trace (said, not equal).
# The marker wait (the first wait, before the attribution window) is
# counted by caps, not by the trace: one more at its site.
# The observer check, per site: its capped share with caps attached is that
# of the run without caps, within 3 standard errors of the difference of two
# shares (binomial), and no closer than 10 points: a site of 10 waits moves
# by 10 points with one wait a tick delays past its cap.  Its negative
# control: with --hist-perturbing (a probe on each wait itself) the run's
# share must differ by more than that.
. "$(dirname "$0")/../lib/tap.sh"

for k in "" -6.12; do
	main_boot "$k"
	need_input "$log" '^# layout-sites ' "tests/guest/47-umwait-trace-layouts.t ($name)"
	need_input "$trace" 'waitpkg_wait_ctx ' "the $name main boot's QEMU trace"
	python3 "$(dirname "$0")/../lib/attribute.py" "$log" "$trace" >"${LAB_RESULTS:-/tmp}/layouts$k.attr" ||
		fail "$name: the trace and the log parse"
	# one line per check: "is|GOT|WANT|DESC", "ok|1 or 0|DESC", "diag|TEXT"
	while IFS='|' read -r kind a b c; do
		case "$kind" in
		is) is "$a" "$b" "$name: $c" ;;
		ok) if [ "$a" = 1 ]; then pass "$name: $b"; else fail "$name: $b" "$c"; fi ;;
		diag) diag "$name: $a" ;;
		esac
	done < <(python3 - "$log" "${LAB_RESULTS:-/tmp}/layouts$k.attr" <<'PY'
import math, re, sys
log, attr = sys.argv[1], sys.argv[2]
sites, report, runs = {}, {}, {}
for line in open(log, errors="replace"):
    m = re.match(r"# layout-sites (\S+): (0x[0-9a-f]+) (\S+) (yes|capped|no)$", line.rstrip())
    if m:
        sites.setdefault(m.group(1), []).append(m.groups()[1:])
        continue
    m = re.match(r"# client (lay-\S+): layouts: pid=.* marker=(0x[0-9a-f]+) .*", line)
    if m:
        report[m.group(1)] = dict(f.split("=", 1) for f in line.split() if "=" in f)
    m = re.match(r"# client (lay-\S+): layouts: map (0x\S+) (0x\S+) (0x\S+) (\S+)", line)
    if m:
        runs.setdefault(m.group(1), []).append(tuple(int(x, 16) for x in m.groups()[1:4]) + (m.group(5),))
res = {}
for line in open(attr):
    f = line.split()
    if f[0].startswith("lay-"):
        res[f[0]] = f

def parse(s):
    return {} if s == "-" else {k: (int(w), int(c)) for k, w, c in (x.split(":") for x in s.split(","))}

def marker_offset(label):
    mk = int(report[label]["marker"], 16)
    for start, end, off, path in runs.get(label, []):
        if start <= mk < end and "layouts-" in path:
            return "0x%x" % (mk - start + off)
    return None

def bound(s1, n1, s2, n2):
    """Points two capped shares (percent, of n1 and n2 waits) may differ by"""
    p = (s1 * n1 + s2 * n2) / (100.0 * (n1 + n2))
    return max(10, int(math.ceil(300 * math.sqrt(p * (1 - p) * (1.0 / n1 + 1.0 / n2)))))

def share(d, off):
    w, c = d.get(off, (0, 0))
    return (100 * c // w, w) if w else (None, 0)

for label in sorted(sites):
    r = res.get(label)
    print("ok|%d|%s: the marker wait is in the trace" % (bool(r and r[1] == "yes"), label))
    bare = res.get(label + "-bare")
    print("ok|%d|%s-bare: the marker wait is in the trace" % (bool(bare and bare[1] == "yes"), label))
    if not r or r[1] != "yes" or not bare or bare[1] != "yes":
        continue
    print("is|%s|0|%s: every traced wait of the process ran in the binary" % (r[5], label))
    trace, caps, tb = parse(r[3]), parse(r[4]), parse(bare[3])
    mko = marker_offset(label)
    calls = {k.replace("_calls", ""): int(v) for k, v in report[label].items() if k.endswith("_calls")}
    for off, sym, exact in sites[label]:
        fn = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        tw, tc = trace.get(off, (0, 0))
        if off == mko:
            tw += 1         # the marker: before the window, counted by caps
        cw, cc = caps.get(off, (0, 0))
        if exact == "yes":
            print("is|%d:%d|%d:%d|%s %s %s (exact): caps' waits:capped are the trace's"
                  % (cw, cc, tw, tc, label, off, sym))
        elif exact == "capped":
            n = calls.get(fn, tw)
            print("ok|%d|%s %s %s (capped exact): caps capped %d = trace %d, waits trace %d <= caps %d <= calls %d|"
                  % (cc == tc and tw <= cw <= n, label, off, sym, cc, tc, tw, cw, n))
        else:
            print("ok|%d|%s %s %s (inexact): caps counts no fewer than the trace (waits %d >= %d, capped %d >= %d)|"
                  % (cw >= tw and cc >= tc, label, off, sym, cw, tw, cc, tc))
        if off == mko:
            continue
        s_bare, n_bare = share(tb, off)
        s_caps, n_caps = share(trace, off)
        if n_bare >= 10 and n_caps >= 10:
            b = bound(s_caps, n_caps, s_bare, n_bare)
            print("ok|%d|%s %s %s: capped share with caps %d%% (%d waits) and without %d%% (%d): within %d points|"
                  % (abs(s_caps - s_bare) <= b, label, off, sym, s_caps, n_caps, s_bare, n_bare, b))
        else:
            print("diag|%s %s %s: %d and %d traced waits: too few for the observer check" % (label, off, sym, n_caps, n_bare))
    # the whole run's share: waits run out of line (a probe on them) count too
    tot = lambda r: (100 * int(r[7]) // max(int(r[6]), 1), int(r[6]))
    (s_caps, n_caps), (s_bare, n_bare) = tot(r), tot(bare)
    b = bound(s_caps, max(n_caps, 1), s_bare, max(n_bare, 1))
    print("ok|%d|%s: the run's capped share with caps %d%% (%d waits) and without %d%% (%d): within %d points|"
          % (abs(s_caps - s_bare) <= b, label, s_caps, n_caps, s_bare, n_bare, b))
    h = res.get(label + "-hist")
    if label == "lay-gcc-O2":
        ok = bool(h and h[1] == "yes")
        print("ok|%d|%s-hist: the negative control ran and its marker is in the trace" % (ok, label))
        if ok:
            s_h, n_h = tot(h)
            b = bound(s_h, max(n_h, 1), s_bare, max(n_bare, 1))
            print("ok|%d|%s-hist: with a probe on each wait (--hist-perturbing) the run's capped share %d%% (%d waits) "
                  "is not within %d points of %d%%: the observer check can fail|"
                  % (abs(s_h - s_bare) > b, label, s_h, n_h, b, s_bare))
PY
)
done
done_testing
