# umwait-trace caps' C0.x residency against what the CPUs did, on the core PMU
# the lab's QEMU models (this boot presents Sapphire Rapids, family 6 model
# 0x8f).  tpause-loop waits pinned to CPU 1 in C0.1, in C0.2, and in C0.2
# with enable_c02=0 (demoted to C0.1), while CPU 3 has nothing to do.  The
# first 2 s interval of caps --json that lies inside the waits is printed as
# "# residency LABEL: cpu=N ..." lines; tests/host/23-residency-qemu-trace.t
# derives each share from QEMU's trace of the same interval (TSC at caps'
# reads) and requires the two within 2 percentage points.  Here: the
# shares point the right way.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/residency.sh
. /lab/tests/lib/state.sh
state_guard

res_need_pmu
diag "dmesg: $(dmesg | grep -m1 'Performance Events' | sed 's/^\[[^]]*\] //')"

d=/sys/devices/system/cpu/umwait_control
tmp=$(mktemp -d)
printf "" >$tmp/all.out
max_time0=$(cat $d/max_time)
c020=$(cat $d/enable_c02)

# the model gate: caps recognises the CPU as the part whose events the PMU models
umwait-trace caps $RES_SITES 1 1 >$tmp/gate.out 2>$tmp/gate.err
is "$?" 0 "caps runs one interval"
is "$(grep -c '^C0.x residency: unavailable' $tmp/gate.out)" 0 \
	"residency is available on a Golden Cove model (bug: gated off, or the PMU refuses the group)"
check "the block names the PMU and the model (family 6 model 0x8f, Sapphire Rapids)" \
	grep -q '^C0.x residency, system-wide (every process on these CPUs), cpu PMU, family 6 model 0x8f (Sapphire Rapids):$' $tmp/gate.out
is "$(grep -c '^C0.x residency, system-wide' $tmp/gate.out)" 2 \
	"a block of its own for the interval and for the totals (bug: inside the per-process rows, or missing)"
is "$(sed -n '/^C0.x residency, system-wide/,/^CYCLES/p' $tmp/gate.out | grep -c '^[0-3] .*%')" 8 \
	"every online CPU has a row with percentages, twice"
check "the sum row names the CPUs it adds (0-3), not 'all'" grep -q '^0-3 .*  sum$' $tmp/gate.out
check "C0_WAIT is named for what it counts (C0.1, C0.2 or PAUSE)" \
	grep -q '^CYCLES: unhalted; C0.1, C0.2, C0_WAIT (C0.1, C0.2 or PAUSE): % of CYCLES$' $tmp/gate.out
[ -s $tmp/gate.err ] && diag "stderr: $(cat $tmp/gate.err)"

# run LABEL ENABLE_C02 TPAUSE_LOOP_ARGS...: the waits on CPU 1 under caps
# --json with 2 s intervals; sets r_n (intervals inside the waits) and, from
# the first of them, c1 (CPU 1: cycles c01 c02 c0_wait ...) and c3 (CPU 3).
# Five checks, whatever happens.
run() {
	label=$1
	echo "$2" >$d/enable_c02
	shift 2
	r_n=0 c1= c3=
	ut_begin $tmp/caps.out caps --json $RES_SITES 2
	# counting: the first interval is out
	[ $ut_up = 1 ] && res_until $tmp/caps.out '"type": "interval"' 1
	# the waits go on until caps has printed four more intervals: two
	# (4 s) for the program to start, two that lie inside its waits,
	# however fast the guest runs (a fixed count of waits left that to
	# the host's load: one 3 s run held no whole 2 s interval)
	n0=$(grep -c '"type": "interval"' $tmp/caps.out)
	tpause-loop -p 1 --until-signal -n 1000000000 "$@" >$tmp/loop.out 2>&1 &
	lp=$!
	ut_check "$label: caps prints four intervals while the waits run" \
		res_until $tmp/caps.out '"type": "interval"' $((n0 + 4))
	kill -USR1 $lp
	wait $lp
	line=$(cat $tmp/loop.out)
	echo "# tpause-loop $label: $line"
	ut_end "$label: caps exits 0 on Ctrl-C"
	cat $tmp/caps.out >>$tmp/all.out
	lb=$(echo "$line" | sed -n 's/.* tsc_begin=\([0-9]*\) tsc_end=\([0-9]*\).*/\1/p')
	le=$(echo "$line" | sed -n 's/.* tsc_begin=\([0-9]*\) tsc_end=\([0-9]*\).*/\2/p')
	check "$label: tpause-loop reports its TSC window" test -n "$lb"
	grep '"type": "interval"' $tmp/caps.out >$tmp/intervals
	while IFS= read -r j; do
		set -- $(caps_res_window "$j")
		[ $# -eq 2 ] || continue
		fcmp "$1" ">=" "${lb:-x}" && fcmp "$2" "<=" "${le:-x}" || continue
		r_n=$((r_n + 1))
		# the first such interval goes to the host check: one per case,
		# so that its count of tests is the same on every run
		[ $r_n -eq 1 ] || continue
		# each CPU's window: the TSC around the reads of its counters
		for cpu in 1 3; do
			echo "# residency $label: cpu=$cpu $(caps_res_cpu "$j" $cpu |
				awk '{ printf "tsc_begin=%s tsc_end=%s tsc_err=%s cycles=%s c01=%s c02=%s c0_wait=%s scaled=%s running=%s consistent=%s",
					$8, $9, $10, $1, $2, $3, $4, $5, $6, $7 }')"
		done
		[ -z "$c1" ] && c1=$(caps_res_cpu "$j" 1) && c3=$(caps_res_cpu "$j" 3)
	done <$tmp/intervals
	cmp_ok "$r_n" -ge 1 "$label: at least one 2 s interval lies inside the waits ($r_n)"
}

echo 0 >$d/max_time
# waits of 10M TSC cycles (some 4 ms), back to back for four intervals;
# the checks of a run that had no interval fail on the empty counts
run c01 1 -s c01 -c 10000000
set -- ${c1:-x x x x x x x}
fcmp_ok "$2" ">=" 50 "c01: CPU 1 waiting in C0.1 most of the time counts C0.1 for most of it ($2%)"
fcmp_ok "$3" "<=" 2 "c01: and C0.2 near 0 ($3%) (bug: umasks swapped)"
fcmp_ok "$4" ">=" "$2" "c01: C0_WAIT at least C0.1 ($4% >= $2%)"
is "$7" true "c01: C01 + C02 <= C0_WAIT <= cycles holds"
set -- ${c3:-x x x}
fcmp_ok "$(awk -v a="$2" -v b="$3" 'BEGIN { if (a "" == "x" || b "" == "x") print "x"; else print a + b }')" "<=" 2 \
	"c01: idle CPU 3 near 0 ($2% C0.1, $3% C0.2) (bug: counts of another CPU, or system-wide)"
run c02 1 -s c02 -c 10000000
set -- ${c1:-x x x x x x x}
fcmp_ok "$3" ">=" 50 "c02: CPU 1 waiting in C0.2 most of the time counts C0.2 for most of it ($3%)"
fcmp_ok "$2" "<=" 2 "c02: and C0.1 near 0 ($2%)"
is "$7" true "c02: C01 + C02 <= C0_WAIT <= cycles holds"
run demoted 0 -s c02 -c 10000000
set -- ${c1:-x x x x x x x}
fcmp_ok "$2" ">=" 50 "demoted: enable_c02=0 turns C0.2 requests into C0.1 counts ($2%)"
fcmp_ok "$3" "<=" 2 "demoted: and C0.2 near 0 ($3%) (bug: counts the requested state, not the one used)"
is "$(cat $tmp/all.out $tmp/gate.out | grep -c -e inconsistent -e '"consistent": false')" 0 \
	"no CPU's counts broke C01 + C02 <= C0_WAIT <= cycles"

echo "$c020" >$d/enable_c02
echo "$max_time0" >$d/max_time
rm -rf $tmp
done_testing
