# umwait-trace under rough handling: caps -p outlives its target, SIGINT
# always ends with the final totals, and a burst of updates faster than
# events reads them is counted as lost, never dropped silently.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)

# 1. caps -p PID whose process is killed mid-run: it keeps going, counts
#    nothing of a later process of the same program, prints totals on SIGINT.
#    The target waits until it is killed (a count it cannot reach): a slow
#    guest must not let it end on its own before the SIGTERM.
$tl -n 1000000000 -c 200000 -p 1 >/dev/null 2>&1 &
loop_pid=$!
# attach while the process is stopped, once it is tpause-loop and not yet done
i=0
until [ "$(readlink /proc/$loop_pid/exe)" = $tl ] || [ $i -ge 100 ]; do
	i=$((i + 1))
	sleep 0.1
done
kill -STOP $loop_pid
ut_begin $tmp/caps.out caps -p $loop_pid
kill -CONT $loop_pid
# kill it once caps has seen it wait: progress, not a fixed time
ut_check "caps -p sees the target wait" ut_until_waits $ut_pid $tmp/caps.out
kill -TERM $loop_pid
wait $loop_pid
is "$?" 143 "the target was killed mid-run (SIGTERM)"
# alive and still answering after its target died
[ $ut_up = 1 ] && ut_dump $ut_pid $tmp/caps.out
ut_check "caps -p is still running after its target died" kill -0 $ut_pid
dumps=$(grep -c '^Totals since attach' $tmp/caps.out)
t1=$(grep '^total:' $tmp/caps.out | tail -n 1)
$tl -n 200 -c 200000 -p 1 >/dev/null
ut_end "caps -p: exits 0 on SIGINT after its target is gone"
is "$(grep -c '^Totals since attach' $tmp/caps.out)" $((dumps + 1)) "caps -p: prints its final totals (and did on SIGUSR1)"
set -- $(echo "$t1" | sed -n 's/^total: waits=\([0-9]*\) .*/\1/p')
cmp_ok "${1:-0}" -gt 0 "caps -p: counted the target's waits (${1:-0})"
is "$(grep '^total:' $tmp/caps.out | tail -n 1)" "${t1:-no total line}" \
	"caps -p: nothing of a later process of the same program"

# 2. events on SIGINT, with nothing and with something to report
ut_begin $tmp/ev.out events
ut_end "events: exits 0 on SIGINT with no event"
is "$(tail -n 1 $tmp/ev.out.err)" "0 events, 0 lost" "events: SIGINT with no event prints '0 events, 0 lost'"

# 3. a burst while events cannot read (stopped): the ring buffer fills, the
#    rest is counted as lost; printed + lost = the writes, in order.  The
#    top-level tracefs buffer stops for the burst (tests/guest/31 reads the
#    boot's records there).
n=6000
ut_begin $tmp/ev.out events
kill -STOP $ut_pid 2>/dev/null
echo 0 >$t/tracing_on
is "$(lab-write -n $n $d/max_time 400000 100000)" OK "a burst of $n max_time changes"
echo 1 >$t/tracing_on
# no sleep: what the ring buffer took must come out at exit (its drain)
ut_end_frozen "events: exits 0 on SIGINT after the burst"
printed=$(grep -c '^control_update ' $tmp/ev.out)
set -- $(tail -n 1 $tmp/ev.out.err | sed -n 's/^\([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p')
is "${1:-x}" "$printed" "the summary counts the $printed events it printed"
cmp_ok "${2:-0}" -gt 0 "events were lost: the burst outran the ring buffer (${2:-0})"
is "$(calc "${1:-x} + ${2:-x}")" $n "printed + lost = the $n updates"
is "$(sed -n 's/^umwait-trace: warning: lost \([0-9]*\) events: ring buffer full$/\1/p' $tmp/ev.out.err |
	awk '{ s += $1 } END { print s + 0 }')" "${2:-x}" "the warnings on stderr add up to the lost count"
is "$(awk 'NR % 2 == 1 && !/ raw=0x00061a80 .* old_raw=0x000186a0 / ||
	NR % 2 == 0 && !/ raw=0x000186a0 .* old_raw=0x00061a80 / { n++ } END { print n + 0 }' $tmp/ev.out)" 0 \
	"the printed ones are the first updates, in order"
is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "controls back to the defaults"
rm -rf $tmp
done_testing
