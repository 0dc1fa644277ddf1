#!/bin/bash
# Host side of tests/guest/47-umwait-trace-clients.t, with QEMU's trace as
# the truth.  Each client ran one marker wait first (a TPAUSE whose deadline
# is past, at an address it reported, between two TSC readings it
# reported); that wait's waitpkg_wait_ctx event gives the process's CR3.
# Every later user wait in that address space, up to the next client's
# marker or the TSC the guest read once the client had exited (whichever
# comes first: a later process may get the same page-table page), is
# attributed to a file offset of the library the client mapped
# (RIP - mapping start + mapping offset): per site, its count and its CF=1
# count must be caps' waits and capped exactly.
. "$(dirname "$0")/../lib/tap.sh"

# the boots whose clients QEMU traced: guest log and trace
boots=()
for b in main:qemu-trace distro:qemu-trace-distro; do
	log=${LAB_RESULTS:-}/guest-${b%%:*}.log
	trace=${LAB_RESULTS:-}/${b#*:}.log
	need_input "$log" '^# client ' "the clients' test of the ${b%%:*} boot"
	need_input "$trace" 'waitpkg_wait_ctx ' "the ${b%%:*} boot's QEMU trace"
	boots+=("$b")
done

# attribute: one line per client run: "LABEL FOUND CR3 TRACE CAPS OTHER WAITS CAPPED"
# TRACE is OFFSET:WAITS:CAPPED,... over the library's sites (sorted as text,
# - when none), CAPS the same from caps' rows, OTHER the waits of that
# address space outside the library.  A wait instruction that carries a
# uprobe runs out of line in the process's uprobes XOL area: the trace
# counts those per instruction (xol-tpause, xol-umwait), and so do caps'
# rows of the sites whose waits the trace saw nowhere in the library.
attribute() {
	python3 - "$log" "$trace" <<'PY'
import re, sys
log, trace = sys.argv[1], sys.argv[2]
LIBS = {"tbb": "libtbb.so.12", "omp": "libomp.so.5", "dpdk": "librte_eal.so.23"}

runs = {}      # label -> dict(marker, begin, end, maps[], lib)
order = []
for line in open(log, errors="replace"):
    c = re.match(r"# caps ([^:]+): ([0-9]+) (\S+) ([0-9]+) ([0-9]+) (\S+) (0x[0-9a-f]+)$", line.rstrip("\n"))
    if c:
        runs.setdefault(c.group(1), {"maps": [], "caps": []})["caps"].append(c.groups()[1:])
        continue
    m = re.match(r"# client ([^:]+): ([a-z-]+): (.*)", line.rstrip("\n"))
    if not m:
        continue
    label, rest = m.group(1), m.group(3)
    r = runs.setdefault(label, {"maps": [], "caps": []})
    if label not in order:
        order.append(label)
    if rest.startswith("map "):
        _, start, end, off, path = rest.split(" ", 4)
        r["maps"].append((int(start, 16), int(end, 16), int(off, 16), path))
    else:
        kv = dict(f.split("=", 1) for f in rest.split() if "=" in f)
        if "exit_tsc" in kv:
            # tests/lib/clients.sh: the TSC after the client exited, if read
            if re.fullmatch(r"[0-9]+", kv["exit_tsc"]):
                r["exit"] = int(kv["exit_tsc"])
            continue
        r["marker"] = int(kv["marker"], 16)
        r["begin"], r["end"] = int(kv["marker_begin"]), int(kv["marker_end"])

# pair waitpkg_wait and waitpkg_wait_ctx by (cpu, tsc_start)
def fields(s):
    t = s.split()
    return {t[i]: t[i + 1] for i in range(0, len(t) - 1, 2)}

ends, waits = {}, []
for line in open(trace, errors="replace"):
    i = line.find("waitpkg_wait_ctx ")
    if i >= 0:
        f = fields(line[i + len("waitpkg_wait_ctx "):])
        key = (f["cpu"], int(f["tsc_start"], 16))
        if key in ends:
            cpl, cf, insn = ends.pop(key)
            waits.append((key[1], int(f["rip"], 16), int(f["cr3"], 16), cpl, cf, insn))
        continue
    i = line.find("waitpkg_wait ")
    if i >= 0:
        f = fields(line[i + len("waitpkg_wait "):])
        ends[(f["cpu"], int(f["tsc_start"], 16))] = (int(f["cpl"]), int(f["cf"]), f["insn"])
waits.sort()

# CR3 bits 51:13: the page-table base without the PCID and PTI's user bit
def space(cr3):
    return cr3 & 0x000FFFFFFFFFE000

marks = {}
for label, r in runs.items():
    for tsc, rip, cr3, cpl, cf, insn in waits:
        if cpl == 3 and rip == r.get("marker") and r["begin"] <= tsc <= r["end"]:
            marks[label] = (tsc, space(cr3))
            break
starts = sorted(t for t, _ in marks.values())

for label in order:
    r = runs[label]
    if label not in marks:
        print(label, "no - - - 0 0 0")
        continue
    tsc0, sp = marks[label]
    later = [t for t in starts if t > tsc0]
    limit = min(later[0] if later else float("inf"), r.get("exit", float("inf")))
    lib = LIBS[label.split("-")[0]]
    # the mapping shows the file the soname links to (libtbb.so.12.8)
    maps = [m for m in r["maps"] if m[3].rsplit("/", 1)[-1].startswith(lib)]
    xol = [m for m in r["maps"] if m[3] == "[uprobes]"]
    sites, other, total, capped = {}, 0, 0, 0
    for tsc, rip, cr3, cpl, cf, insn in waits:
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
        total += 1
        capped += cf
    # caps' rows; a site whose waits the trace saw nowhere in the library
    # ran them out of line: it counts in its instruction's xol- row
    caps = {}
    for c in r["caps"]:
        pid, insn, w, cp, path, off = c
        key = off if off in sites else "xol-" + insn
        a, b = caps.get(key, (0, 0))
        caps[key] = (a + int(w), b + int(cp))
    fmt = lambda d: ",".join(sorted("%s:%d:%d" % (k, w, c) for k, (w, c) in d.items())) or "-"
    print(label, "yes", "0x%x" % sp, fmt(sites), fmt(caps), other, total, capped)
PY
}

# check_boot: every client run of $log against $trace
check_boot() {
	local out label found cr3 sites caps other total capped pid rows
	out=$(attribute) || { fail "$log and $trace parse" "python3 failed"; return; }
	while read -r label found cr3 sites caps other total capped; do
		pid=$(grep -m1 "^# client $label: [a-z-]*: pid=" "$log" | sed 's/.* pid=\([0-9]*\) .*/\1/')
		is "$found" yes "$label: the client's marker wait is in the trace (its CR3: $cr3)"
		[ "$found" = yes ] || continue
		cmp_ok "$total" -gt 0 "$label: QEMU traced waits in the library ($total, $capped with CF=1)"
		is "$other" 0 "$label: every traced wait of the process after its marker ran in the library (or out of line for a probe)"
		case "$label" in *-bare-*) ;; *)
			is "$caps" "$sites" \
				"$label: caps' waits and capped per site are the trace's (OFFSET:WAITS:CAPPED)"
			rows=$(grep "^# caps $label: [0-9]" "$log" | awk '{ print $4 }' | sort -u | paste -sd' ' -)
			is "$rows" "${pid:-?}" "$label: caps' rows are all the client's process" ;;
		esac
		case "$label" in *-0) is "$capped" 0 "$label: max_time=0: no wait capped in the trace" ;; esac
		diag "$label: trace waits=$total capped=$capped sites=$sites; caps" \
			"$(grep "^# caps $label: unpaired" "$log" | sed 's/.*: //')"
		frac[$label]="$capped/$total"
	done <<<"$out"
}

declare -A frac
for b in "${boots[@]}"; do
	log=${LAB_RESULTS:-}/guest-${b%%:*}.log
	trace=${LAB_RESULTS:-}/${b#*:}.log
	check_boot
done
# The observer must not change what it observes: caps probes no instruction
# between oneTBB's deadline (now + 700) and its TPAUSE, so at max_time=100
# the traced capped fraction with caps attached is that of the same program
# run without caps.  A probe on that path (the TPAUSE itself) made every
# wait start past its deadline: 0% against 99%.
if [ -n "${frac[tbb-100]:-}" ] && [ -n "${frac[tbb-bare-100]:-}" ]; then
	pct() { echo $((100 * ${1%/*} / (${1#*/} > 0 ? ${1#*/} : 1))); }
	with=$(pct "${frac[tbb-100]}") without=$(pct "${frac[tbb-bare-100]}")
	d=$((with - without))
	cmp_ok "${d#-}" -le 10 "oneTBB at max_time=100: capped ${frac[tbb-100]} ($with%) with caps attached, ${frac[tbb-bare-100]} ($without%) without: within 10 points"
fi
done_testing
