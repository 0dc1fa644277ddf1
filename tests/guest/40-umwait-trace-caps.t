# umwait-trace caps against tpause-loop's own report: the waits and the capped
# waits (CF=1) it counts must be exactly tpause-loop's, for TPAUSE and UMWAIT,
# max_time 100000 / 400000 / 0, requests above and below the limit, pinned and
# unpinned, attached by FILE before the process starts and by -p PID to a
# process in the middle of its run.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)

# rows OUT: caps' process rows as "PID COMM INSN WAITS CAPPED"
rows() {
	caps_rows "$1" | awk '{ print $1, $2, $3, $4, $5 }'
}

# loop LABEL ARGS...: run tpause-loop ARGS to the end; its report in r_*, PID in loop_pid
loop() {
	_label=$1
	shift
	$tl "$@" >$tmp/loop.out 2>&1 &
	loop_pid=$!
	wait $loop_pid
	read_loop
	echo "# tpause-loop $_label: $line"
}

# read_loop: parse $tmp/loop.out (tpause-loop's one line) into r_waits r_capped ...
read_loop() {
	line=$(cat $tmp/loop.out)
	r_waits=x r_capped=x r_insn=x r_mean=x r_min=x r_ended_early=x
	eval "$(report tpause-loop "$line")"
}

# compare LABEL MAX_TIME ARGS...: caps attached to the file before tpause-loop ARGS starts
compare() {
	_label=$1
	echo "$2" >$d/max_time
	shift 2
	ut_begin $tmp/caps.out caps $tl
	loop "$_label" "$@"
	ut_end "$_label: caps exits 0 on Ctrl-C"
	is "$(caps_totals $tmp/caps.out)" "$r_waits $r_capped" \
		"$_label: caps counts tpause-loop's waits and capped waits exactly"
	is "$(rows $tmp/caps.out)" "$loop_pid tpause-loop $r_insn $r_waits $r_capped" \
		"$_label: one row: the process, its instruction, the same counts"
}

is "$(cat $d/max_time)" 100000 "max_time starts at its default"

#       LABEL              MAX_TIME  tpause-loop ARGS
compare tpause-above-100k  100000    -i tpause -n 50 -c 1000000
cmp_ok "$r_capped" -gt 0 "tpause-above-100k: some waits were capped (the check above was not vacuous)"
compare tpause-below-100k  100000    -i tpause -n 200 -c 10000 -p 1
compare umwait-above-100k  100000    -i umwait -n 50 -c 1000000 -p 2
cmp_ok "$r_capped" -gt 0 "umwait-above-100k: some waits were capped"
compare umwait-below-100k  100000    -i umwait -n 200 -c 10000
compare tpause-above-400k  400000    -i tpause -n 50 -c 1000000 -p 3
cmp_ok "$r_capped" -gt 0 "tpause-above-400k: some waits were capped"
compare tpause-below-400k  400000    -i tpause -n 50 -c 200000
compare umwait-above-400k  400000    -i umwait -n 50 -c 1000000 -s c01
compare tpause-nolimit     0         -i tpause -n 20 -c 1000000 -p 1
is "$r_capped" 0 "tpause-nolimit: max_time=0 caps nothing"
compare umwait-nolimit     0         -i umwait -n 20 -c 1000000
echo 100000 >$d/max_time

# Two processes, two instructions, one tracer: a row each.
ut_begin $tmp/caps.out caps $tl
loop two-a -i tpause -n 40 -c 1000000
a="$loop_pid tpause-loop tpause $r_waits $r_capped"
loop two-b -i umwait -n 30 -c 1000000 -p 1
b="$loop_pid tpause-loop umwait $r_waits $r_capped"
ut_end "two processes: caps exits 0 on Ctrl-C"
is "$(rows $tmp/caps.out)" "$(printf '%s\n%s' "$a" "$b")" \
	"two processes: one row each, with their own instruction and counts"
# this boot's CPU model has no CPU_CLK_UNHALTED.C0x (see --residency below)
is "$(grep -c '^C0.x residency: unavailable (' $tmp/caps.out)" 1 \
	"exactly one 'C0.x residency: unavailable' line"
diag "$(grep '^C0.x residency' $tmp/caps.out)"

# --json: the totals object carries top-level waits and capped
ut_begin $tmp/caps.out caps --json $tl
loop json -i tpause -n 30 -c 1000000
ut_end "--json: caps exits 0 on Ctrl-C"
j=$(tail -n 1 $tmp/caps.out)
case "$j" in
'{"type": "total", '*) pass "--json: the last line is the totals object" ;;
*) fail "--json: the last line is the totals object" "got: $j" ;;
esac
j=$(caps_json_total $tmp/caps.out)
is "$(caps_json_num "$j" waits) $(caps_json_num "$j" capped)" "$r_waits $r_capped" \
	"--json: top-level waits and capped are tpause-loop's"
is "$(echo "$j" | grep -o '"residency": {"available": false, "reason": "[^"]*"}' | wc -l)" 1 \
	"--json: residency is {\"available\": false, \"reason\": ...}"

# --residency: off never opens the counters; bad input is one error, exit 2.
# This boot's -cpu max has the lab's Intel PMU but a CPU model (family 15
# model 0x6b) that no real part with CPU_CLK_UNHALTED.C0x has: auto says so
# and force counts anyway, saying so; tests/guest-pmu boots a Golden Cove
# model and checks the counts.
umwait-trace caps --residency off $tl 1 1 >$tmp/res.out 2>/dev/null
is "$(grep '^C0.x residency' $tmp/res.out)" "C0.x residency: unavailable (--residency off)" \
	"--residency off: unavailable, and why"
umwait-trace caps --residency bogus $tl >$tmp/res.out 2>$tmp/res.err
is "$?" 2 "--residency bogus: exit status 2"
is "$(head -n 1 $tmp/res.err)" "umwait-trace caps: invalid --residency 'bogus' (auto, force or off) (see 'umwait-trace caps --help')" \
	"--residency bogus: says which values it takes"
is "$(cat $tmp/res.out)" "" "--residency bogus: nothing on stdout"
umwait-trace caps $tl 1 1 >$tmp/res.out 2>/dev/null
reason=$(sed -n 's/^C0.x residency: unavailable (\(.*\))$/\1/p' $tmp/res.out)
# the main boot's CPU has the lab's PMU (vm/run: pmu=on)
model=$(awk -F': ' '/^cpu family/ { f = $2 } /^model\t/ { m = $2 } f != "" && m != "" {
	printf "family %d model 0x%x", f, m; exit }' /proc/cpuinfo)
is "$reason" "$model is not known to have CPU_CLK_UNHALTED.C01/.C02/.C0_WAIT (Golden Cove and later P-cores); --residency force counts anyway" \
	"auto: a PMU on a CPU model without the events is not trusted, and the model is named (bug: gated on Intel + WAITPKG only)"
umwait-trace caps --residency force $tl 1 1 >$tmp/res.out 2>/dev/null
check "--residency force: counts, and says the model is not known to" \
	grep -q '^(--residency force: this model is not known to count these events)$' $tmp/res.out
check "--residency force: the block names PMU and model" \
	grep -q "^C0.x residency, system-wide (every process on these CPUs), cpu PMU, $model:\$" $tmp/res.out

# --hist-perturbing: every wait lands in one histogram bucket, capped and
# uncapped apart.  Its probe on the TPAUSE single-steps it; a wait that an
# interrupt ends then has its trap one instruction late, past the probe
# after it, and is unended (CF unknown), never dropped silently: the
# unended waits are at most those tpause-loop saw end before their
# deadline (bug caught: a site with its timing probe alone).  The
# probe delays each wait's start: capped for certain whatever that costs,
# at max_time 4 with a deadline 10^12 cycles ahead; never capped at max_time 0.
ut_begin $tmp/caps.out caps --hist-perturbing $tl
echo 4 >$d/max_time
loop hist-capped -i tpause -n 40 -c 1000000000000 -p 1
w1=$r_waits c1=$r_capped e1=$r_ended_early
echo 0 >$d/max_time
loop hist-short -i tpause -n 40 -c 20000 -p 1
ut_end "--hist-perturbing: caps exits 0 on Ctrl-C"
unended=$(caps_count $tmp/caps.out unended)
[ "$unended" -gt 0 ] && diag "--hist-perturbing: $(grep '^unended:' $tmp/caps.out)"
set -- $(caps_totals $tmp/caps.out)
cmp_ok "${1:-0}" -gt 0 "--hist-perturbing: waits were counted (${1:-0})"
cmp_ok "$unended" -le "$(calc "$e1 + $r_ended_early")" \
	"--hist-perturbing: each unended wait is one that ended before its deadline ($unended unended, $(calc "$e1 + $r_ended_early") early)"
is "$(calc "${1:-x} + $unended")" "$(calc "$w1 + $r_waits")" "--hist-perturbing: counted waits plus the unended ones are tpause-loop's"
cmp_ok "${2:-x}" -le "$(calc "$c1 + $r_capped")" "--hist-perturbing: capped: at most tpause-loop's (${2:-x} <= $(calc "$c1 + $r_capped"))"
cmp_ok "$(calc "$c1 + $r_capped")" -le "$(calc "${2:-x} + $unended")" \
	"--hist-perturbing: capped: short of tpause-loop's by no more than the unended ($(calc "$c1 + $r_capped") <= ${2:-x} + $unended)"
cmp_ok "$(grep -c '^wait time at ' $tmp/caps.out)" -gt 0 "--hist-perturbing: histograms were printed"
sums="$(caps_whist $tmp/caps.out capped) $(caps_whist $tmp/caps.out 'not capped')"
is "$sums" "${2:-x} $(calc "${1:-x} - ${2:-x}")" \
	"--hist-perturbing: the capped histogram holds every capped wait, the other every other one"
cmp_ok "${sums%% *}" -gt 0 "--hist-perturbing: the capped histogram is not empty"
cmp_ok "${sums##* }" -gt 0 "--hist-perturbing: the not-capped histogram is not empty"
lacks $tmp/caps.out '^unpaired:' "--hist-perturbing: no jump counted (tpause-loop has none)"
echo 100000 >$d/max_time

# -p PID, attached to a process in the middle of its run.  Exact by construction:
# tracer A (by file, checked against tpause-loop above) runs throughout; the process
# is stopped, A's totals read (SIGUSR1), B attached with -p, the process resumed.
# B must count exactly what A counted after that point.
echo 400000 >$d/max_time
ut_begin $tmp/a.out caps $tl
a_pid=$ut_pid a_up=$ut_up
$tl -i tpause -n 4000 -c 1000000 -p 2 >$tmp/loop.out 2>&1 &
loop_pid=$!
# stop it once A has seen it wait (progress, not a fixed time)
ut_check "-p PID: tracer A sees the process wait" ut_until_waits $a_pid $tmp/a.out
kill -STOP $loop_pid
# kill returns before the process stops: a wait counted after A's
# snapshot would be invisible to B. Wait for the stopped state.
i=0
while [ $i -lt 100 ] && ! grep -q '^State:.*stopped' /proc/$loop_pid/status; do
	sleep 0.1
	i=$((i + 1))
done
check "-p PID: tpause-loop is stopped before A's totals are read" \
	grep -q '^State:.*stopped' /proc/$loop_pid/status
[ $a_up = 1 ] && ut_dump $a_pid $tmp/a.out
a1=$(caps_totals $tmp/a.out)
ut_begin $tmp/b.out caps -p $loop_pid
b_pid=$ut_pid
kill -CONT $loop_pid
wait $loop_pid
read_loop
echo "# tpause-loop pid-attach: $line"
ut_end "-p PID: caps exits 0 on Ctrl-C" $b_pid
ut_end "-p PID: tracer A exits 0 on Ctrl-C" $a_pid
is "$(caps_totals $tmp/a.out)" "$r_waits $r_capped" "-p PID: tracer A (by file) counted the whole run exactly"
set -- ${a1:-x x}
cmp_ok "$1" -gt 0 "-p PID: the process had waited before B attached ($1 waits)"
cmp_ok "$1" -lt "$r_waits" "-p PID: and waited after ($r_waits in all)"
is "$(caps_totals $tmp/b.out)" "$(calc "$r_waits - $1") $(calc "$r_capped - $2")" \
	"-p PID: B counted exactly the waits after its attach"
is "$(grep -c '^Attached 2 sites in 1 file\. ' $tmp/b.out.err)" 1 \
	"-p PID: B attached to the 2 sites of the process's one executable mapping"
echo 100000 >$d/max_time

# A bare FILE name: the file of that name in the current directory (a copy of
# tpause-loop), not /lab/bin/tpause-loop that $PATH would give: the uprobes
# must go where the scanner looked, so the copy's waits are the ones counted.
mkdir -p $tmp/cwd
cp $tl $tmp/cwd/tpause-loop
cd $tmp/cwd
ut_begin $tmp/caps.out caps tpause-loop
cd /
loop bare-name-path -i tpause -n 10 -c 1000000
path_pid=$loop_pid
$tmp/cwd/tpause-loop -i tpause -n 20 -c 1000000 >$tmp/loop.out 2>&1 &
loop_pid=$!
wait $loop_pid
read_loop
echo "# tpause-loop bare-name-copy: $line"
ut_end "bare FILE: caps exits 0 on Ctrl-C"
is "$(rows $tmp/caps.out)" "$loop_pid tpause-loop tpause $r_waits $r_capped" \
	"bare FILE: the copy in the current directory is the one counted, exactly (and only it)"
lacks $tmp/caps.out "^$path_pid " "bare FILE: /lab/bin/tpause-loop (\$PATH's) is not probed"
is "$(caps_rows $tmp/caps.out | awk '{ print $7 }' | sort -u)" \
	"$tmp/cwd/tpause-loop" "bare FILE: caps names the file by its absolute path"

# What a probe costs each wait: short waits, with and without.  The means
# are reported, not judged (one host stall in either run moves them); the
# shortest waits are judged: the probe runs inside every traced wait, so no
# traced wait is shorter than the shortest untraced one, whatever the load.
loop overhead-without -i tpause -n 2000 -c 1000 -p 1
m0=$r_mean min0=$r_min
ut_begin $tmp/caps.out caps $tl
loop overhead-with -i tpause -n 2000 -c 1000 -p 1
m1=$r_mean min1=$r_min
ut_end "overhead: caps exits 0 on Ctrl-C"
diag "per-wait cost of the probe: mean $m0 -> $m1 TSC cycles per 1000-cycle TPAUSE (+$(calc "$m1 - $m0")), min $min0 -> $min1"
cmp_ok "$min1" -ge "$min0" "the shortest traced wait is no shorter than the shortest untraced one"

is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "controls restored"
rm -rf $tmp
done_testing
