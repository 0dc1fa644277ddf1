# TPAUSE / UMONITOR / UMWAIT semantics in the QEMU model, measured by tpause-loop.
# Lines "# report LABEL: ..." are read again by tests/host/20-qemu-trace.t, which
# matches them with the host-side QEMU trace (waitpkg_wait events).
. /lab/tests/lib/tap.sh

d=/sys/devices/system/cpu/umwait_control

# run LABEL ARGS...: run tpause-loop, print its report, set r_waits r_capped r_early ...
run() {
	label=$1
	shift
	line=$(tpause-loop "$@" 2>&1)
	echo "# report $label: $line"
	r_waits=x r_capped=x r_early=x
	eval "$(report tpause-loop "$line")"
}

max_time() {
	echo "$1" >$d/max_time
}

for insn in tpause umwait; do
	max_time 100000
	run "$insn-capped" -i $insn -n 50 -c 1000000
	is "$r_waits" 50 "$insn: 50 waits of 1M cycles ran"
	cmp_ok "$r_capped" -ge 45 "$insn: max_time=100000 caps at least 90% of 1M-cycle waits (CF=1): $r_capped/50"

	run "$insn-short" -i $insn -n 200 -c 10000 -p 1
	is "$r_capped" 0 "$insn: 10k-cycle requests below max_time are never capped"

	run "$insn-past" -i $insn -n 100 -c 1000 --past
	is "$r_capped" 0 "$insn: a deadline in the past returns with CF=0"

	max_time 0
	run "$insn-nolimit" -i $insn -n 20 -c 1000000
	is "$r_capped" 0 "$insn: max_time=0 never caps"
	# a guest interrupt (the tick, an IPI) legitimately ends a wait early with
	# CF=0; tests/host/20-qemu-trace.t accounts for each wait's reason exactly
	cmp_ok "$r_early" -le 10 "$insn: max_time=0: most waits last until the deadline ($r_early/20 early)"
	max_time 100000
done

max_time 0
run umwait-nomonitor -i umwait --no-monitor -n 20 -c 1000000000
is "$r_capped" 0 "umwait without umonitor: CF=0"
is "$r_early" 20 "umwait without umonitor returns long before a 1G-cycle deadline"

run umwait-store -i umwait -n 20 -c 3000000000 --store-after 1000000 -p 1 --store-cpu 2
is "$r_capped" 0 "umwait ended by a store from another CPU: CF=0"
is "$r_stores" 20 "umwait-store: 20 stores, each ending a round of waits"
is "$r_early" "$r_waits" "a store (or an interrupt before it) ends every 3G-cycle umwait before its deadline"

# a store that puts the old value back leaves the line unchanged: only
# tests/host/20-qemu-trace.t can tell (reason store) that it ended the waits
run umwait-revert -i umwait -n 20 -c 3000000000 --store-after 1000000 --revert -p 1 --store-cpu 2
is "$r_capped" 0 "umwait ended by a store-and-revert from another CPU: CF=0"
is "$r_stores" 20 "umwait-revert: 20 stores, each ending a round of waits"
is "$r_early" "$r_waits" "every 3G-cycle umwait with a store-and-revert (or an interrupt before it) ends before its deadline"
max_time 100000

echo 0 >$d/enable_c02
run c02-disabled -i tpause -s c02 -n 50 -c 20000
echo 1 >$d/enable_c02
is "$r_capped" 0 "enable_c02=0: C0.2 waits still complete"
run c02-enabled -i tpause -s c02 -n 50 -c 20000
run c01 -i umwait -s c01 -n 50 -c 20000

# --p99: the 99th percentile lies within the run
r_p99=x
run p99 -i tpause -n 100 -c 20000 --p99
is "$r_waits" 100 "--p99: 100 waits ran"
check "--p99: min <= p99 <= max ($r_min <= $r_p99 <= $r_max)" \
	test "$r_min" -le "$r_p99" -a "$r_p99" -le "$r_max"
r_p50=x
run p50 -i tpause -n 101 -c 20000 --p99
check "--p99: min <= p50 (the median) <= p99 ($r_min <= $r_p50 <= $r_p99)" \
	test "$r_min" -le "$r_p50" -a "$r_p50" -le "$r_p99"

# --per-wait (make bench's accuracy rows, which pair each line with QEMU's
# trace): one line per wait after the report, in the order the waits ran,
# each inside the run's TSC window and before the next, the CFs adding up to
# the capped count.  With --p99, whose sort must not reorder them.
max_time 10000
tpause-loop -i tpause -n 50 -c 20000 -p 1 --p99 --per-wait >/tmp/per-wait 2>&1
echo "# per-wait: $(head -n 1 /tmp/per-wait)"
eval "$(report tpause-loop "$(head -n 1 /tmp/per-wait)")"
max_time 100000
is "$(grep -c '^wait [0-9]* [0-9]* [01]$' /tmp/per-wait)" 50 "--per-wait: a line per wait"
is "$(awk '$1 == "wait" { n += $4 } END { print n + 0 }' /tmp/per-wait)" "$r_capped" \
	"--per-wait: the lines' CF=1 count is the report's capped count ($r_capped)"
is "$(awk -v lo="$r_tsc_begin" -v hi="$r_tsc_end" '$1 == "wait" {
		if ($2 < lo || $2 < prev || $2 + $3 > hi) bad++
		prev = $2 + $3
	} END { print bad + 0 }' /tmp/per-wait)" 0 \
	"--per-wait: each wait starts after the one before ends, within the run's TSC window"

is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "controls restored"
done_testing
