# Check the events umwait-trace recorded (--json, one object per line) against
# what the soak's actors logged themselves.  Input files, in this order:
#   WRITES   "PID NAME VALUE" per accepted write, in each writer's own order
#   HOTPLUG  "cpu_offline N" / "cpu_online N" per hotplug operation, in order
#   EVENTS   umwait-trace events --json
# -v start=VALUE: the cached control value before the first write.
# Prints "NAME=COUNT" lines; "diag: ..." lines explain the first problems.

# field NAME: the value of key NAME in this line's object, quotes removed
function field(name,    s) {
	if (!match($0, "\"" name "\": [^,}]*"))
		return ""
	s = substr($0, RSTART + length(name) + 4, RLENGTH - length(name) - 4)
	gsub(/"/, "", s)
	return s
}

# hex V: V as 0x%08x; busybox awk's %x and %d stop at 2^31, control values do not
function hex(v) {
	return sprintf("0x%04x%04x", int(v / 65536), v % 65536)
}

function problem(what, n) {
	counts[what]++
	if (ndiag++ < 10)
		print "diag: " what ": " n
}

# the control value after writing VALUE to NAME when it was OLD
function apply(old, name, value) {
	if (name == "max_time")
		return value + old % 2
	return old - old % 2 + (value ? 0 : 1)
}

BEGIN { cached = start + 0 }

FILENAME == ARGV[1] {
	nw[$1]++
	wname[$1, nw[$1]] = $2
	wval[$1, nw[$1]] = $3
	next
}

FILENAME == ARGV[2] {
	hp[++nhp] = $1 " " $2
	next
}

{
	ev = field("event"); ctl = field("control") + 0; old = field("old_control")
	pid = field("pid") + 0; cpu = field("cpu") + 0; target = field("target")
	events++
	if (ev == "control_update") {
		updates++
		if (old + 0 != cached)
			problem("chain_breaks", sprintf("event %d: old %s, the previous new was %s", events, hex(old), hex(cached)))
		if (ctl == old + 0)
			problem("noop_updates", "event " events " changes nothing: " $0)
		if (!(pid in nw)) {
			problem("foreign_writers", "event " events " from pid " pid ", not a writer: " $0)
		} else {
			# the writer's next accepted write that turns old into new
			while (pos[pid] < nw[pid] && apply(old, wname[pid, pos[pid] + 1], wval[pid, pos[pid] + 1]) != ctl)
				pos[pid]++
			if (pos[pid] == nw[pid])
				problem("unmatched_updates", sprintf("event %d: %s -> %s from pid %d: no such write left in its log", events, hex(old), hex(ctl), pid))
			else
				pos[pid]++
		}
		cached = ctl
		next
	}
	n = substr(target, 4) + 0
	if (ev == "cpu_offline") {
		offline++
		if (orig == "")
			orig = ctl
		if (ctl != orig)
			problem("offline_bad", sprintf("event %d: cpu%d offline restored %s, earlier %s", events, n, hex(ctl), hex(orig)))
		left[n] = ctl
	} else if (ev == "cpu_online") {
		online++
		if (ctl != cached)
			problem("online_bad", sprintf("event %d: cpu%d came up with %s, the cached value was %s", events, n, hex(ctl), hex(cached)))
		if (n in left && old + 0 != left[n])
			problem("online_bad", sprintf("event %d: cpu%d held %s, its offline left %s", events, n, hex(old), hex(left[n])))
	} else {
		problem("other_events", "event " events ": " $0)
		next
	}
	if (cpu != n)
		problem("hotplug_wrong_cpu", "event " events " for cpu" n " fired on cpu" cpu)
	if (hp[++nhe] != ev " " n)
		problem("hotplug_mismatch", sprintf("event %d is '%s %d', the hotplug log's #%d is '%s'", events, ev, n, nhe, hp[nhe]))
}

END {
	if (nhe != nhp)
		problem("hotplug_mismatch", sprintf("%d hotplug events, %d operations in the log", nhe, nhp))
	printf "events=%d updates=%d online=%d offline=%d last=%.0f\n", events, updates, online, offline, cached
	split("chain_breaks noop_updates foreign_writers unmatched_updates offline_bad online_bad other_events hotplug_wrong_cpu hotplug_mismatch", k, " ")
	for (i = 1; i in k; i++)
		printf "%s=%d\n", k[i], counts[k[i]]
}
