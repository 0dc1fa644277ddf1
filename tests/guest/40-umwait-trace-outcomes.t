# umwait-trace caps: how each wait ended (capped, deadline, early, past) and
# the advice on max_time, against tpause-loop's own count of each outcome
# (its RDTSC before and after each wait) and against what happens when the
# advice is applied.  tests/host/25-outcomes-qemu-trace.t checks the same
# runs against QEMU's trace of each wait's end.
#
# The rule (umwait-trace.8): caps reads the TSC at the probe after the wait,
# a little after it ended, so a wait that woke early but within the probe's
# lateness of its deadline reads as "deadline"; every other outcome is exact.
#
# Each outcome is made on purpose, so that its count does not depend on how
# fast the host runs the guest: capped by a max_time of 4 cycles (the OS
# limit expires before anything else can end the wait: the model checks it
# first), past by a deadline 10^10 cycles behind,
# early by a store to the monitored line.  A wait that runs to its deadline
# can always be cut short by an interrupt: that run goes on until
# tpause-loop itself counts the waits that did.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)
old=$(cat $d/max_time)
# the requests of the capped waits: the top of a histogram slot, so that
# the advice rounds up to at least the request whatever the probe's
# lateness and the wait's late start (up to an eighth of it): 2^22 (some
# 1.5 ms, shorter than the guest's tick, so that applied it is a limit the
# waits can meet) and, for the exact check of the JSON advice, 2^28
req=4194304
big=268435456

# A copy of tpause-loop: another file, so another site, whose waits run to
# their deadline and give caps the probe's lateness its advice adds
late_tl=$tmp/tpause-loop-late
cp $tl $late_tl
late_args=

# runs N ARGS...: tpause-loop ARGS until it has counted N waits that ran to
# their deadline (at most 20 runs; N 0: one run); the reports added up in
# r_* (r_tsc_begin the first run's, r_tsc_end the last's), the runs in r_runs
runs() {
	_need=$1
	shift
	_w=0 _c=0 _ran=0 _early=0 _past=0 _begin= r_runs=0
	while [ $r_runs -lt 20 ]; do
		r_waits=x r_capped=x r_ran_to_deadline=x r_ended_early=x r_deadline_past=x r_tsc_begin=x r_tsc_end=x
		$tl "$@" >$tmp/loop.out 2>&1
		eval "$(report tpause-loop "$(cat $tmp/loop.out)")"
		echo "# tpause-loop $_label: $(cat $tmp/loop.out)"
		r_runs=$((r_runs + 1))
		_begin=${_begin:-$r_tsc_begin}
		_w=$(calc "$_w + $r_waits") _c=$(calc "$_c + $r_capped") _ran=$(calc "$_ran + $r_ran_to_deadline")
		_early=$(calc "$_early + $r_ended_early") _past=$(calc "$_past + $r_deadline_past")
		[ "$_ran" = x ] && break
		[ "$_ran" -ge "$_need" ] && break
	done
	r_waits=$_w r_capped=$_c r_ran_to_deadline=$_ran r_ended_early=$_early r_deadline_past=$_past
	r_tsc_begin=$_begin
}

# outcomes LABEL MAX_TIME NEED ARGS...: caps on tpause-loop ARGS at
# MAX_TIME, run until NEED of its waits ran to their deadline; the
# program's report in r_*, caps' outcome line in c_* (c_capped c_deadline
# c_early c_past), its advice line in advice.  With late_args set, the
# copy runs them first, under the same caps and with no OS limit.
outcomes() {
	_label=$1 _mt=$2 _need=$3
	shift 3
	c_capped=x c_deadline=x c_early=x c_past=x advice=
	echo 0 >$d/max_time
	ut_begin $tmp/caps.out caps $tl ${late_args:+$late_tl}
	if [ -n "$late_args" ]; then
		$late_tl $late_args >$tmp/late.out 2>&1
		echo "# $_label: lateness from: $(cat $tmp/late.out)"
	fi
	echo "$_mt" >$d/max_time
	runs "$_need" "$@"
	ut_end "$_label: caps exits 0 on Ctrl-C"
	o=$(caps_outcomes $tmp/caps.out $tl)
	eval "$(echo "$o" | sed 's/\([a-z]*\)=/c_\1=/g')"
	advice=$(caps_advice $tmp/caps.out $tl)
	echo "# outcomes $_label: caps $o max_time=$(cat $d/max_time) tsc_begin=$r_tsc_begin tsc_end=$r_tsc_end"
	is "$(calc "$c_capped + $c_deadline + $c_early + $c_past")" "$r_waits" \
		"$_label: the outcomes add up to tpause-loop's waits ($r_waits)"
	is "$c_capped" "$r_capped" "$_label: capped is tpause-loop's CF=1 count"
	is "$c_past" "$r_deadline_past" "$_label: past is tpause-loop's count of deadlines behind its RDTSC"
	# the documented difference only: an early wake close to its deadline reads as deadline
	_desc="$_label: early <= tpause-loop's (caps $c_early, it $r_ended_early), deadline the rest"
	if [ "$c_early" -le "$r_ended_early" ] 2>/dev/null &&
		[ "$c_deadline" = "$(calc "$r_ran_to_deadline + $r_ended_early - $c_early")" ]; then
		pass "$_desc"
	else
		fail "$_desc" "caps deadline $c_deadline, it ran_to_deadline $r_ran_to_deadline"
	fi
}

# bug caught: a deadline read from the wrong registers, or no calibration,
# sends capped waits' advice astray; capped counted as another outcome.
# The advice adds the probe's lateness, the least of the waits that ran to
# their deadline: 30 short ones of another site give it.
late_args="-n 30 -c 20000"
outcomes capped 4 0 -n 30 -c $req
late_args=
is "$c_capped" 30 "capped: max_time 4 caps every wait of 2^22 cycles ($c_capped of 30)"
check "capped: an advice line for the site" test -n "$advice"
echo "# capped: $advice"
set -- $(echo "$advice" | sed 's/.*finish: //')
p99=$3
# bug caught: an advice that leaves out max_time or the probe's lateness (too
# short: the waits stay capped), or one far above what they ask for (the
# slots err long by a quarter at most)
cmp_ok "${p99:-x}" -ge $req "capped: the max_time advised for 99% covers the 2^22 cycles asked ($p99)"
cmp_ok "${p99:-x}" -le $((req + req / 4)) "capped: and is not far above it"
# a max_time at least the request never caps it: the OS limit runs from the
# wait's start, after the deadline's computation (one short of it caps
# the waits that no interrupt ends first: most)
echo "${p99:-x}" >$d/max_time
$tl -n 30 -c $req >$tmp/after.out
after=$(sed -n 's/.* capped=\([0-9]*\) .*/\1/p' $tmp/after.out)
echo "# capped: applied max_time=${p99:-x}: $(cat $tmp/after.out)"
is "${after:-x}" 0 "capped: with the advised max_time, no wait is capped"

# bug caught: every CF=0 wait called early or deadline whatever its TSC:
# at least 20 waits that tpause-loop saw run to their deadline, each of
# which caps must call deadline (the check in outcomes)
outcomes deadline 0 20 -n 30 -c 200000
cmp_ok "$r_ran_to_deadline" -ge 20 \
	"deadline: tpause-loop counted 20 waits that ran to their deadline within 20 runs ($r_ran_to_deadline in $r_runs)"

outcomes past 0 0 -n 20 --past -c 10000000000
is "$c_past" 20 "past: deadlines 10^10 cycles behind are all past"
check "past: the site is warned about" grep -q '^  warning: these waits do nothing: the deadline is already past' $tmp/caps.out

# a count where the TSC deadline belongs (libomp 14's __kmp_tpause)
outcomes count 0 0 -n 20 --deadline 1000
is "$c_past" 20 "count: a deadline of 1000 is past every time"

# bug caught: a store's wake-up counted as a run to the deadline
outcomes store 0 0 -i umwait -n 20 -c 100000000 --store-after 200000
is "$c_early" "$r_waits" "store: every UMWAIT woken by the store (or an interrupt before it) is early"

# JSON: the site's outcomes object adds up to its waits, and its advice is
# exactly the request, rounded up to its slot's top (2^28 is one), plus
# max_time and the lateness caps took from the copy's waits.  bug caught:
# an advice that leaves out max_time or the lateness, or takes the
# deadline from the wrong registers
echo 0 >$d/max_time
ut_begin $tmp/caps.json caps --json $tl $late_tl
$late_tl -n 30 -c 20000 >/dev/null 2>&1
echo 4 >$d/max_time
$tl -n 10 -c $big >$tmp/loop.out 2>&1
ut_end "--json: caps exits 0 on Ctrl-C"
j=$(caps_json_site "$(caps_json_total $tmp/caps.json)" $tl)
w=$(echo "$j" | sed -n 's/^[^]]*"waits": \([0-9]*\), "outcomes": .*/\1/p')
sum=$(echo "$j" | sed -n 's/^[^]]*"outcomes": {"capped": \([0-9]*\), "deadline": \([0-9]*\), "early": \([0-9]*\), "past": \([0-9]*\)}.*/\1 + \2 + \3 + \4/p')
is "$w" 10 "--json: by_site has the site's 10 waits"
is "$(calc "${sum:-x}")" 10 "--json: its outcomes add up to them"
a=$(caps_json_advice "$j")
diag "--json: $a"
lat=$(caps_json_num "$a" lateness)
cmp_ok "${lat:-0}" -gt 0 "--json: the advice has the probe's lateness, from the copy's waits that ran to their deadline (${lat:-none})"
is "$(caps_json_num "$a" max_time) $(caps_json_num "$a" max_time_p99)" \
	"4 $(calc "($big + 4 + ${lat:-x} + 3) & ~3")" \
	"--json: the advice is max_time 4 and, for 99%, 2^28 plus max_time plus the lateness"

# --hist: the denied histogram holds every capped wait, the late one every
# wait that ran to its deadline (bug caught: a histogram that loses or
# misfiles waits, or --hist printing the wrong one)
echo 4 >$d/max_time
ut_begin $tmp/hist.out caps --hist $tl
$tl -n 10 -c $big >/dev/null 2>&1
echo 0 >$d/max_time
_label=hist
runs 1 -n 10 -c 200000 >/dev/null
ut_end "--hist: caps exits 0 on Ctrl-C"
c_capped=x c_deadline=x
eval "$(caps_outcomes $tmp/hist.out $tl | sed 's/\([a-z]*\)=/c_\1=/g')"
is "$c_capped" 10 "--hist: max_time 4 capped all 10 waits of 2^28 cycles"
cmp_ok "$c_deadline" -ge 1 "--hist: and waits ran to their deadline ($c_deadline, tpause-loop saw $r_ran_to_deadline)"
is "$(caps_ohist $tmp/hist.out denied $tl)" "$c_capped" "--hist: the denied histogram holds each capped wait ($c_capped)"
is "$(caps_ohist $tmp/hist.out late $tl)" "$c_deadline" "--hist: the late histogram holds each wait that ran to its deadline ($c_deadline)"
lacks $tmp/hist.out '^wait time at ' "--hist: no wait timed by a probe on the site"

echo "$old" >$d/max_time
is "$(cat $d/max_time)" "$old" "max_time restored"
rm -rf $tmp
done_testing
