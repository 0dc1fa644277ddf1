# TPAUSE / UMONITOR / UMWAIT semantics in the QEMU model, measured by tpause-loop.
# Lines "# report LABEL: ..." are read again by tests/host/20-qemu-trace.t, which
# matches them with the host-side QEMU trace (waitpkg_wait events).
#
# Each count is one the program controls, whatever the host's speed: a wait
# is capped for certain when max_time is 4 cycles and the request 1M (the
# model checks the OS limit before anything else could end the wait, and a
# vCPU that runs late only finds it more expired); one that ends before its
# deadline with no limit, no store and an armed monitor was ended by an
# interrupt on its CPU, so such waits are at most the interrupts that CPU
# took (tests/lib/checks.sh: cpu_irqs).
. /lab/tests/lib/tap.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/state.sh
state_guard

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
	# bug caught: a model that never sets CF, or ignores the OS limit.
	# Pinned: a UMWAIT moved to another CPU between its UMONITOR and the
	# wait would find no monitor armed there and return at once.
	max_time 4
	run "$insn-capped" -i $insn -n 50 -c 1000000 -p 1
	max_time 100000
	is "$r_waits" 50 "$insn: 50 waits of 1M cycles ran"
	is "$r_capped" 50 "$insn: max_time=4 caps every one of the 1M-cycle waits (CF=1)"

	run "$insn-short" -i $insn -n 200 -c 10000 -p 1
	is "$r_capped" 0 "$insn: 10k-cycle requests below max_time are never capped"

	run "$insn-past" -i $insn -n 100 -c 1000 --past
	is "$r_capped" 0 "$insn: a deadline in the past returns with CF=0"

	max_time 0
	# 200 waits (some 70 ms): a model that ends them all early shows
	# more early waits than the interrupts of those 70 ms and the run's
	# start and end
	irq0=$(cpu_irqs 1)
	run "$insn-nolimit" -i $insn -n 200 -c 1000000 -p 1
	irq1=$(cpu_irqs 1)
	is "$r_capped" 0 "$insn: max_time=0 never caps"
	# a guest interrupt (the tick, an IPI) legitimately ends a wait early with
	# CF=0, nothing else does here; tests/host/20-qemu-trace.t accounts for
	# each wait's reason.  bug caught: a wait ended before its deadline by
	# the model's own timer or a spin on the wrong clock
	cmp_ok "$r_early" -le "$(calc "$irq1 - $irq0")" \
		"$insn: max_time=0: each wait that ended before its deadline had an interrupt on its CPU to end it ($r_early early, $(calc "$irq1 - $irq0") interrupts)"
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
# the capped count.  With --p99, whose sort must not reorder them.  And the
# OS limit in the model's units: a capped wait ran from its start to the
# limit's end at least (the program reads the TSC before the wait starts and
# after it ends; bug caught: a limit taken in other units, or CF=1 set
# before it expired).
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
is "$(awk '$1 == "wait" && $4 == 1 { n++; if ($3 < 10000) short++ } END { print (n > 0), short + 0 }' /tmp/per-wait)" "1 0" \
	"--per-wait: every capped wait ($r_capped) lasted at least max_time (10000 cycles)"

is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "controls restored"
done_testing
