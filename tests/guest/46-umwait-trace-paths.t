# umwait-trace caps where other paths jump to the instruction after a TPAUSE
# and a UMWAIT (tests/fixtures/wait-sites.S: Jcc of all 16 conditions, short
# and near, JMP, CALL, JRCXZ, JECXZ, LOOP, taken and not), in a PIE and in a
# shared library whose file offsets differ from their addresses.  The fixture
# counts what really ran; caps' waits and capped must be its waits and CF=1
# returns exactly, and its unpaired the jumps that were taken.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
wp=/lab/bin/wait-paths
lib=/lab/bin/libwait-sites.so
tmp=$(mktemp -d)

# fixture OUT: its "site=INSN waits= capped= jumps=" lines as "INSN WAITS CAPPED JUMPS"
fixture() {
	sed -n 's/^wait-paths: site=\([a-z]*\) waits=\([0-9]*\) capped=\([0-9]*\) jumps=\([0-9]*\) .*/\1 \2 \3 \4/p' "$1"
}

# rows OUT: caps' final rows as "INSN WAITS CAPPED", one per instruction, summed over
# processes
rows() {
	caps_rows "$1" | awk '{ w[$3] += $4; c[$3] += $5 } END { for (i in w) print i, w[i], c[i] }' | sort
}

# check_run LABEL CAPS_OUT FIXTURE_OUT: caps' counts against the fixture's own
check_run() {
	want=$(fixture "$3" | awk '{ print $1, $2, $3 }' | sort)
	jumps=$(fixture "$3" | awk '{ s += $4 } END { print s + 0 }')
	echo "# $1: fixture: $(cat "$3" | tr '\n' ' ')"
	cmp_ok "$(fixture "$3" | awk '{ s += $2 } END { print s + 0 }')" -gt 0 "$1: the fixture waited"
	cmp_ok "$jumps" -gt 0 "$1: the fixture jumped to the instruction after its waits ($jumps times)"
	is "$(rows "$2")" "$want" "$1: caps' waits and capped per instruction are the fixture's"
	is "$(caps_count "$2" unpaired)" "$jumps" "$1: caps' unpaired is the fixture's count of jumps taken"
	lacks $2.err 'BPF map full' "$1: nothing dropped"
	lacks $2.err 'cannot be told apart\|indirect jump' "$1: no site inexact"
}

echo 100000 >$d/max_time

# 1. the PIE: waits above the limit (capped) and below it, one tracer
ut_begin $tmp/caps.out caps $wp
$wp -n 10 -c 1000000 >$tmp/a.out 2>&1
$wp -n 10 -c 20000 >$tmp/b.out 2>&1
ut_end "pie: caps exits 0 on Ctrl-C"
cat $tmp/a.out $tmp/b.out | awk '
	{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$2, kv[1]] += kv[2] } s[$2] = 1 }
	END { for (k in s) printf "wait-paths: %s waits=%d capped=%d jumps=%d fell=%d\n", k,
		v[k, "waits"], v[k, "capped"], v[k, "jumps"], v[k, "fell"] }' >$tmp/ab.out
check_run pie $tmp/caps.out $tmp/ab.out
cmp_ok "$(fixture $tmp/a.out | awk '{ s += $3 } END { print s + 0 }')" -gt 0 \
	"pie: some waits were capped (the capped check was not vacuous)"
is "$(grep -c '^Attached 2 sites in 1 file' $tmp/caps.out.err)" 1 "pie: the PIE's 2 sites attached"

# capped OUT: the fixture's capped waits, both sites
capped() {
	fixture "$1" | awk '{ s += $3 } END { print s + 0 }'
}

# 1b. caps leaves the waits as they were: its probe runs after each wait,
#     never between the program's computation of the deadline and the wait.
#     With max_time 4 a wait is capped exactly when it starts before its
#     deadline (the model checks the OS limit before anything else could end
#     it), so with requests of $near cycles the capped waits are those that
#     started within $near cycles of their deadline's computation.  $near is
#     half what one probe hit costs, as tpause-loop measures it (its
#     shortest 1000-cycle wait with caps attached, less its shortest
#     without): a probe on the TPAUSE/UMWAIT itself (caps before,
#     --hist-perturbing now) holds every wait back by a hit, and none is
#     capped; without it only an interrupt or the host does, now and then,
#     so each run goes on (10 rounds of the fixture at most) until 20 of its
#     waits were capped.
echo 0 >$d/max_time
min0=$(/lab/bin/tpause-loop -n 200 -c 1000 -p 1 | sed -n 's/.* min=\([0-9]*\) .*/\1/p')
ut_begin $tmp/cost.out caps /lab/bin/tpause-loop
min1=$(/lab/bin/tpause-loop -n 200 -c 1000 -p 1 | sed -n 's/.* min=\([0-9]*\) .*/\1/p')
ut_end "probe cost: caps exits 0 on Ctrl-C"
near=$(calc "(${min1:-x} - ${min0:-x}) / 2")
diag "a probe hit costs at least $(calc "${min1:-x} - ${min0:-x}") cycles (shortest wait $min0 -> $min1): requests of $near"
cmp_ok "$near" -gt 0 "probe cost: tpause-loop's shortest wait is longer with caps attached ($min0 -> $min1)"
echo 4 >$d/max_time
# until_capped OUT: rounds of the fixture (OUT, all rounds' lines) until 20 of
# its waits were capped, at most 10; the capped ones in ucap
until_capped() {
	printf "" >"$1"
	ucap=0 _r=0
	while [ "$ucap" -lt 20 ] && [ $_r -lt 10 ]; do
		$wp -n 10 -c "$near" >>"$1" 2>&1
		ucap=$(capped "$1")
		_r=$((_r + 1))
	done
}
until_capped $tmp/free.out
cmp_ok "$ucap" -ge 20 "unperturbed: without caps, 20 waits of $near cycles started before their deadline (capped) within 10 rounds ($ucap)"
ut_begin $tmp/caps.out caps $wp
until_capped $tmp/obs.out
ut_end "unperturbed: caps exits 0 on Ctrl-C"
cmp_ok "$ucap" -ge 20 "unperturbed: with caps attached, 20 did too within 10 rounds ($ucap)"
is "$(rows $tmp/caps.out)" "$(fixture $tmp/obs.out | awk '{ w[$1] += $2; c[$1] += $3 } END { for (i in w) print i, w[i], c[i] }' | sort)" \
	"unperturbed: and caps counts them exactly"
# the negative control: a probe on the wait itself
ut_begin $tmp/caps.out caps --hist-perturbing $wp
$wp -n 10 -c "$near" >$tmp/pert.out 2>&1
ut_end "perturbed: caps --hist-perturbing exits 0 on Ctrl-C"
is "$(capped $tmp/pert.out) $(fixture $tmp/pert.out | awk '{ s += $2 } END { print s + 0 }')" "0 20" \
	"perturbed: with a probe on each wait (--hist-perturbing), none of its 20 waits started before its deadline"
echo 100000 >$d/max_time

# 2. the shared library, loaded with dlopen after caps attached
ut_begin $tmp/caps.out caps $lib
$wp --lib $lib -n 10 -c 1000000 >$tmp/a.out 2>&1
ut_end "library: caps exits 0 on Ctrl-C"
check_run library $tmp/caps.out $tmp/a.out

# 3. --hist-perturbing also probes the sites to time the waits.  A wait whose
# end the probe after it missed is unended (see 40-umwait-trace-caps.t): an
# interrupt ended it while it was single-stepped, before its limit, so the
# unended waits are at most the fixture's uncapped ones (bug caught: a site
# with its timing probe alone, every wait unended); counted waits plus
# unended are the fixture's; jumps stay exact.
ut_begin $tmp/caps.out caps --hist-perturbing $wp
$wp -n 10 -c 1000000 >$tmp/a.out 2>&1
ut_end "hist: caps exits 0 on Ctrl-C"
echo "# hist: fixture: $(cat $tmp/a.out | tr '\n' ' ')"
fw=$(fixture $tmp/a.out | awk '{ s += $2 } END { print s + 0 }')
fc=$(fixture $tmp/a.out | awk '{ s += $3 } END { print s + 0 }')
set -- $(caps_totals $tmp/caps.out)
unended=$(caps_count $tmp/caps.out unended)
cmp_ok "${1:-0}" -gt 0 "hist: caps counted waits"
is "$(calc "${1:-x} + $unended")" "$fw" "hist: counted plus unended waits (${1:-x} + $unended) are the fixture's"
cmp_ok "$unended" -le "$(calc "$fw - $fc")" \
	"hist: each unended wait is one the fixture saw uncapped ($unended unended, $(calc "$fw - $fc") uncapped)"
cmp_ok "${2:-x}" -le "$fc" "hist: capped: at most the fixture's (${2:-x} <= $fc)"
cmp_ok "$fc" -le "$(calc "${2:-x} + $unended")" "hist: capped: short of the fixture's by no more than the unended"
is "$(caps_count $tmp/caps.out unpaired)" "$(fixture $tmp/a.out | awk '{ s += $4 } END { print s + 0 }')" \
	"hist: unpaired is the fixture's count of jumps taken"
is "$(grep -c 'warning: --hist-perturbing probes each TPAUSE/UMWAIT itself' $tmp/caps.out.err)" 1 \
	"hist: says once that it perturbs the waits"
is "$(caps_whist $tmp/caps.out)" "${1:-x}" "hist: the histograms hold every counted wait"

# 4. More processes than the BPF maps hold (--max-entries 32 instead of the
#    default 10240, which would take too long to outrun here): a process's
#    counts must leave the map when it exits, and stay in the totals.
n=100
ut_begin $tmp/caps.out caps --max-entries 32 $wp
$wp --fork $n -c 1000000 >$tmp/a.out 2>&1
ut_end "fork: caps exits 0 on Ctrl-C"
echo "# fork: fixture: $(cat $tmp/a.out)"
is "$(fixture $tmp/a.out | awk '{ print $2 }')" $n "fork: the fixture ran $n processes, a wait each"
is "$(caps_totals $tmp/caps.out)" "$(fixture $tmp/a.out | awk '{ print $2, $3 }')" \
	"fork: caps' total waits and capped over $n processes are the fixture's"
lacks $tmp/caps.out.err 'BPF map full' "fork: nothing dropped"

# 5. --hist-perturbing, threads killed inside a wait (#GP at the TPAUSE: the site probe
#    saw it start, nothing sees it end), more of them than the start map holds
#    (--max-entries 32): each is unended, and the entries must go with the
#    threads, or later waits go untimed.
ut_begin $tmp/caps.out caps --hist-perturbing --max-entries 32 $wp
$wp --die $n >$tmp/a.out 2>&1
$wp -n 5 -c 1000000 >$tmp/b.out 2>&1
ut_end "die: caps exits 0 on Ctrl-C"
echo "# die: fixture: $(cat $tmp/a.out $tmp/b.out | tr '\n' ' ')"
is "$(sed -n 's/^wait-paths: died=//p' $tmp/a.out)" $n "die: $n processes died at the TPAUSE"
unended=$(caps_count $tmp/caps.out unended)
fw=$(fixture $tmp/b.out | awk '{ s += $2 } END { print s + 0 }')
set -- $(caps_totals $tmp/caps.out)
cmp_ok "$unended" -ge $n "die: each of the $n is an unended wait ($unended unended)"
is "$(calc "${1:-x} + $unended")" "$((fw + n))" \
	"die: counted plus unended waits are the fixture's $fw plus the $n that died"
lacks $tmp/caps.out.err 'BPF map full' "die: nothing dropped"
cmp_ok "${1:-0}" -gt 0 "die: the waits after them are counted"
is "$(caps_whist $tmp/caps.out)" "${1:-x}" "die: and timed (the start map did not fill with dead threads)"

# 6. a program whose file was deleted while it runs (a library or binary
#    upgraded under a running service): caps -p reaches the mapping through
#    /proc/PID/map_files, says so once, and counts its waits; the same file
#    named twice, or through a link, is traced once (device and inode)
cp /lab/bin/tpause-loop $tmp/tl-old
$tmp/tl-old -i tpause -n 1000000 -c 200000 -p 1 --until-signal >$tmp/old.out 2>&1 &
old=$!
i=0
until [ "$(cut -d' ' -f14 /proc/$old/stat 2>/dev/null || echo 0)" != 0 ] || [ $i -ge 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
rm $tmp/tl-old
ut_begin $tmp/caps.out caps -p $old
ut_check "deleted: caps -p waits for the deleted program's waits" ut_until_waits $ut_pid $tmp/caps.out
kill -USR1 $old
wait $old
ut_end "deleted: caps exits 0 on Ctrl-C"
is "$(grep -c "tl-old (deleted): deleted since $old mapped it: traced through /proc/$old/map_files/" \
	$tmp/caps.out.err)" 1 "deleted: said once, with the path caps reaches it through"
set -- $(caps_totals $tmp/caps.out)
mine=$(sed -n 's/^tpause-loop: .* waits=\([0-9]*\) .*/\1/p' $tmp/old.out)
cmp_ok "${1:-0}" -gt 0 "deleted: caps counted the deleted program's waits (${1:-0} of its ${mine:-?})"
cmp_ok "${1:-x}" -le "${mine:-0}" "deleted: never more than the program ran"
ln -sf $wp $tmp/wp-link
ut_begin $tmp/caps.out caps $wp $wp $tmp/wp-link
$wp -n 2 -c 20000 >$tmp/a.out 2>&1
ut_end "one file named three times: caps exits 0 on Ctrl-C"
check "one file named three times: attached once (2 sites in 1 file)" grep -q '^Attached 2 sites in 1 file' $tmp/caps.out.err
is "$(rows $tmp/caps.out)" "$(fixture $tmp/a.out | awk '{ print $1, $2, $3 }' | sort)" \
	"one file named three times: each wait counted once"

rm -rf $tmp
done_testing
