# umwait-trace caps: how each wait ended (capped, deadline, early, past) and
# the advice on max_time, against tpause-loop's own count of each outcome
# (its RDTSC before and after each wait) and against what happens when the
# advice is applied.  tests/host/25-outcomes-qemu-trace.t checks the same
# runs against QEMU's trace of each wait's end.
#
# The rule (umwait-trace.8): caps reads the TSC at the probe after the wait,
# a little after it ended, so a wait that woke early but within the probe's
# lateness of its deadline reads as "deadline"; every other outcome is exact.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh

d=/sys/devices/system/cpu/umwait_control
tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)
old=$(cat $d/max_time)

# A copy of tpause-loop: another file, so another site, whose waits run to
# their deadline and give caps the probe's lateness its advice adds
late_tl=$tmp/tpause-loop-late
cp $tl $late_tl
late_args=

# outcomes LABEL MAX_TIME ARGS...: caps on tpause-loop ARGS at MAX_TIME; the
# program's report in r_*, caps' outcome line in c_* (c_capped c_deadline
# c_early c_past), its advice line in advice.  With late_args set, the copy
# runs them first, under the same caps.
outcomes() {
	_label=$1
	echo "$2" >$d/max_time
	shift 2
	r_waits=x c_capped=x c_deadline=x c_early=x c_past=x advice=
	ut_start $tmp/caps.out caps $tl ${late_args:+$late_tl} || return
	if [ -n "$late_args" ]; then
		$late_tl $late_args >$tmp/late.out 2>&1
		echo "# $_label: lateness from: $(cat $tmp/late.out)"
	fi
	$tl "$@" >$tmp/loop.out 2>&1
	ut_stop
	is "$ut_rc" 0 "$_label: caps exits 0 on Ctrl-C"
	line=$(cat $tmp/loop.out)
	eval "$(report tpause-loop "$line")"
	o=$(grep '^outcomes at /lab/bin/tpause-loop ' $tmp/caps.out | tail -n 1 | sed 's/.*: //')
	eval "$(echo "$o" | sed 's/\([a-z]*\)=/c_\1=/g')"
	advice=$(sed -n '\|^outcomes at /lab/bin/tpause-loop |{n;/^  advice: /p;}' $tmp/caps.out | tail -n 1)
	echo "# tpause-loop $_label: $line"
	echo "# outcomes $_label: caps $o max_time=$(cat $d/max_time) tsc_begin=$r_tsc_begin tsc_end=$r_tsc_end"
	is "$((c_capped + c_deadline + c_early + c_past))" "$r_waits" \
		"$_label: the outcomes add up to tpause-loop's waits ($r_waits)"
	is "$c_capped" "$r_capped" "$_label: capped is tpause-loop's CF=1 count"
	is "$c_past" "$r_deadline_past" "$_label: past is tpause-loop's count of deadlines behind its RDTSC"
	# the documented difference only: an early wake close to its deadline reads as deadline
	_desc="$_label: early <= tpause-loop's (caps $c_early, it $r_ended_early), deadline the rest"
	if [ "$c_early" -le "$r_ended_early" ] 2>/dev/null &&
		[ "$c_deadline" = $((r_ran_to_deadline + r_ended_early - c_early)) ]; then
		pass "$_desc"
	else
		fail "$_desc" "caps deadline $c_deadline, it ran_to_deadline $r_ran_to_deadline"
	fi
}

# bug caught: a deadline read from the wrong registers, or no calibration,
# sends capped waits' advice astray; capped counted as another outcome.
# The advice adds the probe's lateness, the least of the waits that ran to
# their deadline: 30 short ones of another site give it (of the 2M-cycle
# waits, few escape the cap, and one that a busy host kept off its CPU
# would make a lateness of milliseconds).
late_args="-n 30 -c 20000"
outcomes capped 100000 -n 30 -c 2000000
late_args=
cmp_ok "$c_capped" -ge 25 "capped: most waits of 2M cycles at max_time 100000 are capped ($c_capped)"
check "capped: an advice line for the site" test -n "$advice"
echo "# capped: $advice"
set -- $(echo "$advice" | sed 's/.*finish: //')
p99=$3
# bug caught: an advice that leaves out max_time or the probe's lateness (too
# short: the waits stay capped), or one far above what they ask for
cmp_ok "${p99:-x}" -ge 2000000 "capped: the max_time advised for 99% covers the 2M cycles asked ($p99)"
cmp_ok "${p99:-x}" -le 4000000 "capped: and is not far above it"
echo "${p99:-x}" >$d/max_time
$tl -n 30 -c 2000000 >$tmp/after.out
after=$(sed 's/.* capped=\([0-9]*\) .*/\1/' $tmp/after.out)
echo "# capped: applied max_time=${p99:-x}: $(cat $tmp/after.out)"
cmp_ok "$after" -le 1 "capped: with the advised max_time, at most 1 of 30 waits is capped ($after)"

# bug caught: every CF=0 wait called early or deadline whatever its TSC
outcomes deadline 0 -n 30 -c 200000
cmp_ok "$c_deadline" -ge 20 "deadline: most waits of 200000 cycles at no limit ran to it ($c_deadline)"

outcomes past 0 -n 20 --past -c 10000000000
is "$c_past" 20 "past: deadlines 10^10 cycles behind are all past"
check "past: the site is warned about" grep -q '^  warning: these waits do nothing: the deadline is already past' $tmp/caps.out

# a count where the TSC deadline belongs (libomp 14's __kmp_tpause)
outcomes count 0 -n 20 --deadline 1000
is "$c_past" 20 "count: a deadline of 1000 is past every time"

# bug caught: a store's wake-up counted as a run to the deadline
outcomes store 0 -i umwait -n 20 -c 100000000 --store-after 200000
is "$c_early" "$r_waits" "store: every UMWAIT woken by the store (or an interrupt before it) is early"

# JSON: the site's outcomes object adds up to its waits
echo 100000 >$d/max_time
ut_start $tmp/caps.json caps --json $tl || true
$tl -n 10 -c 2000000 >$tmp/loop.out 2>&1
ut_stop
j=$(grep '"type": "total"' $tmp/caps.json | sed 's/.*"by_site": \[//')
w=$(echo "$j" | sed -n 's/^[^]]*"waits": \([0-9]*\), "outcomes": .*/\1/p')
sum=$(echo "$j" | sed -n 's/^[^]]*"outcomes": {"capped": \([0-9]*\), "deadline": \([0-9]*\), "early": \([0-9]*\), "past": \([0-9]*\)}.*/\1 + \2 + \3 + \4/p')
is "$w" 10 "--json: by_site has the site's 10 waits"
is "$((${sum:-0}))" 10 "--json: its outcomes add up to them"
check "--json: the site has advice with max_time_p99" grep -q '"advice": {"max_time": 100000, .*"max_time_p99": [1-9]' $tmp/caps.json

# --hist: the denied histogram holds every capped wait, the late one every
# wait that ran to its deadline (bug caught: a histogram that loses or
# misfiles waits, or --hist printing the wrong one)
ut_start $tmp/hist.out caps --hist $tl || true
echo 100000 >$d/max_time
$tl -n 10 -c 2000000 >/dev/null 2>&1
echo 0 >$d/max_time
$tl -n 10 -c 200000 >/dev/null 2>&1
ut_stop
o=$(grep '^outcomes at /lab/bin/tpause-loop ' $tmp/hist.out | tail -n 1 | sed 's/.*: //')
c_capped=x c_deadline=x
eval "$(echo "$o" | sed 's/\([a-z]*\)=/c_\1=/g')"
# hist_sum KIND: the counts of the last KIND histogram of the site
hist_sum() {
	awk -v k="$1" '$0 ~ "^" k " at /lab/bin/tpause-loop " { n = 0; on = 1; next }
		on && /: count/ { next } on && /->/ { n += $5; next } on { on = 0 }
		END { print n + 0 }' $tmp/hist.out
}
cmp_ok "$((${c_capped:-0} > 0 && ${c_deadline:-0} > 0))" -eq 1 "--hist: the runs made capped and on-deadline waits ($c_capped, $c_deadline)"
is "$(hist_sum denied)" "$c_capped" "--hist: the denied histogram holds each capped wait ($c_capped)"
is "$(hist_sum late)" "$c_deadline" "--hist: the late histogram holds each wait that ran to its deadline ($c_deadline)"
check "--hist: no wait timed by a probe on the site" sh -c "! grep -q '^wait time at ' $tmp/hist.out"

echo "$old" >$d/max_time
is "$(cat $d/max_time)" "$old" "max_time restored"
done_testing
