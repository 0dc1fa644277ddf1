# umwait-trace caps where other paths jump to the instruction after a TPAUSE
# and a UMWAIT (tests/fixtures/wait-sites.S: Jcc of all 16 conditions, short
# and near, JMP, CALL, JRCXZ, JECXZ, LOOP, taken and not), in a PIE and in a
# shared library whose file offsets differ from their addresses.  The fixture
# counts what really ran; caps' waits and capped must be its waits and CF=1
# returns exactly, and its unpaired the jumps that were taken.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh

d=/sys/devices/system/cpu/umwait_control
wp=/lab/bin/wait-paths
lib=/lab/bin/libwait-sites.so
tmp=$(mktemp -d)

# fixture OUT: its "site=INSN waits= capped= jumps=" lines as "INSN WAITS CAPPED JUMPS"
fixture() {
	sed -n 's/^wait-paths: site=\([a-z]*\) waits=\([0-9]*\) capped=\([0-9]*\) jumps=\([0-9]*\) .*/\1 \2 \3 \4/p' "$1"
}

# rows OUT: caps' final rows as "INSN WAITS CAPPED", one per instruction, summed over
# processes (not the CPU rows of the C0.x residency table after them)
rows() {
	sed -n '/^Totals since attach/,/^C0.x residency/p' "$1" | awk '/^[0-9]/ { w[$3] += $4; c[$3] += $5 }
		END { for (i in w) print i, w[i], c[i] }' | sort
}

# unpaired OUT: caps' unpaired count (0 when it prints no such line)
unpaired() {
	n=$(sed -n 's/^unpaired: \([0-9]*\) .*/\1/p' "$1" | tail -n 1)
	echo "${n:-0}"
}

# check_run LABEL CAPS_OUT FIXTURE_OUT: caps' counts against the fixture's own
check_run() {
	want=$(fixture "$3" | awk '{ print $1, $2, $3 }' | sort)
	jumps=$(fixture "$3" | awk '{ s += $4 } END { print s + 0 }')
	echo "# $1: fixture: $(cat "$3" | tr '\n' ' ')"
	cmp_ok "$(fixture "$3" | awk '{ s += $2 } END { print s + 0 }')" -gt 0 "$1: the fixture waited"
	cmp_ok "$jumps" -gt 0 "$1: the fixture jumped to the instruction after its waits ($jumps times)"
	is "$(rows "$2")" "$want" "$1: caps' waits and capped per instruction are the fixture's"
	is "$(unpaired "$2")" "$jumps" "$1: caps' unpaired is the fixture's count of jumps taken"
	check "$1: nothing dropped" sh -c "! grep -q 'BPF map full' $2.err"
	check "$1: no site inexact" sh -c "! grep -q 'cannot be told apart\|indirect jump' $2.err"
}

echo 100000 >$d/max_time

# 1. the PIE: waits above the limit (capped) and below it, one tracer
if ut_start $tmp/caps.out caps $wp; then
	$wp -n 10 -c 1000000 >$tmp/a.out 2>&1
	$wp -n 10 -c 20000 >$tmp/b.out 2>&1
	ut_stop
	cat $tmp/a.out $tmp/b.out | awk '
		{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$2, kv[1]] += kv[2] } s[$2] = 1 }
		END { for (k in s) printf "wait-paths: %s waits=%d capped=%d jumps=%d fell=%d\n", k,
			v[k, "waits"], v[k, "capped"], v[k, "jumps"], v[k, "fell"] }' >$tmp/ab.out
	check_run pie $tmp/caps.out $tmp/ab.out
	cmp_ok "$(fixture $tmp/a.out | awk '{ s += $3 } END { print s + 0 }')" -gt 0 \
		"pie: some waits were capped (the capped check was not vacuous)"
	is "$(grep -c '^Attached 2 sites in 1 file' $tmp/caps.out.err)" 1 "pie: the PIE's 2 sites attached"
fi

# capped OUT: the fixture's capped waits, both sites
capped() {
	fixture "$1" | awk '{ s += $3 } END { print s + 0 }'
}

# 1b. caps leaves the waits as they were: a 200000-cycle wait under a
#     100000-cycle limit is capped (CF=1).  A probe on the TPAUSE/UMWAIT
#     itself (caps before, --hist-perturbing now) runs after the program computed its
#     deadline and, a uprobe hit costing far more than that here, the wait
#     starts past it and returns CF=0: few or none capped.  An interrupt
#     may end a wait early either way, the more so on a loaded host: the
#     bound is half as many.
$wp -n 20 -c 200000 >$tmp/free.out 2>&1
if ut_start $tmp/caps.out caps $wp; then
	$wp -n 20 -c 200000 >$tmp/obs.out 2>&1
	ut_stop
	free=$(capped $tmp/free.out) obs=$(capped $tmp/obs.out)
	echo "# unperturbed: capped $free of 40 waits without caps, $obs with caps"
	cmp_ok "$free" -ge 20 "unperturbed: without caps at least half the waits are capped ($free of 40)"
	cmp_ok "$((2 * obs))" -ge "$free" "unperturbed: with caps attached, at least half as many are ($obs vs $free)"
	is "$(rows $tmp/caps.out)" "$(fixture $tmp/obs.out | awk '{ print $1, $2, $3 }' | sort)" \
		"unperturbed: and caps counts them exactly"
fi

# 2. the shared library, loaded with dlopen after caps attached
if ut_start $tmp/caps.out caps $lib; then
	$wp --lib $lib -n 10 -c 1000000 >$tmp/a.out 2>&1
	ut_stop
	check_run library $tmp/caps.out $tmp/a.out
fi

# 3. --hist-perturbing also probes the sites to time the waits.  A wait whose end the
# probe after it missed is unended (see 40-umwait-trace-caps.t): counted
# waits plus unended are the fixture's; jumps stay exact.
if ut_start $tmp/caps.out caps --hist-perturbing $wp; then
	$wp -n 10 -c 1000000 >$tmp/a.out 2>&1
	ut_stop
	echo "# hist: fixture: $(cat $tmp/a.out | tr '\n' ' ')"
	fw=$(fixture $tmp/a.out | awk '{ s += $2 } END { print s + 0 }')
	fc=$(fixture $tmp/a.out | awk '{ s += $3 } END { print s + 0 }')
	set -- $(sed -n 's/^total: waits=\([0-9]*\) capped=\([0-9]*\) .*/\1 \2/p' $tmp/caps.out | tail -n 1)
	unended=$(sed -n 's/^unended: \([0-9]*\) .*/\1/p' $tmp/caps.out)
	unended=${unended:-0}
	cmp_ok "${1:-0}" -gt 0 "hist: caps counted waits"
	is "$((${1:-0} + unended))" "$fw" "hist: counted plus unended waits ($1 + $unended) are the fixture's"
	cmp_ok "$unended" -le "$((fw / 4))" "hist: at most a quarter of the waits unended ($unended of $fw)"
	cmp_ok "${2:-0}" -le "$fc" "hist: capped: at most the fixture's (${2:-0} <= $fc)"
	cmp_ok "$fc" -le "$((${2:-0} + unended))" "hist: capped: short of the fixture's by no more than the unended"
	is "$(unpaired $tmp/caps.out)" "$(fixture $tmp/a.out | awk '{ s += $4 } END { print s }')" \
		"hist: unpaired is the fixture's count of jumps taken"
	is "$(grep -c 'warning: --hist-perturbing probes each TPAUSE/UMWAIT itself' $tmp/caps.out.err)" 1 \
		"hist: says once that it perturbs the waits"
	sums=$(awk '/^wait time at / { m = 1 } m && / -> / { split($0, a, ":"); split(a[2], b, " "); s += b[1] }
		END { print s + 0 }' $tmp/caps.out)
	is "$sums" "${1:-x}" "hist: the histograms hold every counted wait"
fi

# 4. More processes than the BPF maps hold (--max-entries 32 instead of the
#    default 10240, which would take too long to outrun here): a process's
#    counts must leave the map when it exits, and stay in the totals.
n=100
if ut_start $tmp/caps.out caps --max-entries 32 $wp; then
	$wp --fork $n -c 1000000 >$tmp/a.out 2>&1
	ut_stop
	echo "# fork: fixture: $(cat $tmp/a.out)"
	is "$(fixture $tmp/a.out | awk '{ print $2 }')" $n "fork: the fixture ran $n processes, a wait each"
	is "$(sed -n 's/^total: waits=\([0-9]*\) capped=\([0-9]*\) .*/\1 \2/p' $tmp/caps.out | tail -n 1)" \
		"$(fixture $tmp/a.out | awk '{ print $2, $3 }')" \
		"fork: caps' total waits and capped over $n processes are the fixture's"
	check "fork: nothing dropped" sh -c "! grep -q 'BPF map full' $tmp/caps.out.err"
fi

# 5. --hist-perturbing, threads killed inside a wait (#GP at the TPAUSE: the site probe
#    saw it start, nothing sees it end), more of them than the start map holds
#    (--max-entries 32): each is unended, and the entries must go with the
#    threads, or later waits go untimed.
if ut_start $tmp/caps.out caps --hist-perturbing --max-entries 32 $wp; then
	$wp --die $n >$tmp/a.out 2>&1
	$wp -n 5 -c 1000000 >$tmp/b.out 2>&1
	ut_stop
	echo "# die: fixture: $(cat $tmp/a.out $tmp/b.out | tr '\n' ' ')"
	is "$(sed -n 's/^wait-paths: died=//p' $tmp/a.out)" $n "die: $n processes died at the TPAUSE"
	unended=$(sed -n 's/^unended: \([0-9]*\) .*/\1/p' $tmp/caps.out)
	unended=${unended:-0}
	fw=$(fixture $tmp/b.out | awk '{ s += $2 } END { print s + 0 }')
	set -- $(sed -n 's/^total: waits=\([0-9]*\) .*/\1/p' $tmp/caps.out | tail -n 1)
	cmp_ok "$unended" -ge $n "die: each of the $n is an unended wait ($unended unended)"
	is "$((${1:-0} + unended))" "$((fw + n))" \
		"die: counted plus unended waits are the fixture's $fw plus the $n that died"
	check "die: nothing dropped" sh -c "! grep -q 'BPF map full' $tmp/caps.out.err"
	cmp_ok "${1:-0}" -gt 0 "die: the waits after them are counted"
	sums=$(awk '/^wait time at / { m = 1 } m && / -> / { split($0, a, ":"); split(a[2], b, " "); s += b[1] }
		END { print s + 0 }' $tmp/caps.out)
	is "$sums" "${1:-x}" "die: and timed (the start map did not fill with dead threads)"
fi

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
if ut_start $tmp/caps.out caps -p $old; then
	check "deleted: caps -p waits for the deleted program's waits" ut_until_waits $ut_pid $tmp/caps.out
	kill -USR1 $old
	wait $old
	ut_stop
	is "$(grep -c "tl-old (deleted): deleted since $old mapped it: traced through /proc/$old/map_files/" \
		$tmp/caps.out.err)" 1 "deleted: said once, with the path caps reaches it through"
	set -- $(sed -n 's/^total: waits=\([0-9]*\) .*/\1/p' $tmp/caps.out | tail -n 1)
	mine=$(sed -n 's/^tpause-loop: .* waits=\([0-9]*\) .*/\1/p' $tmp/old.out)
	cmp_ok "${1:-0}" -gt 0 "deleted: caps counted the deleted program's waits (${1:-0} of its ${mine:-?})"
	cmp_ok "${1:-0}" -le "${mine:-0}" "deleted: never more than the program ran"
else
	kill -USR1 $old
	wait $old
fi
ln -sf $wp $tmp/wp-link
if ut_start $tmp/caps.out caps $wp $wp $tmp/wp-link; then
	$wp -n 2 -c 20000 >$tmp/a.out 2>&1
	ut_stop
	check "one file named three times: attached once (2 sites in 1 file)" grep -q '^Attached 2 sites in 1 file' $tmp/caps.out.err
	is "$(rows $tmp/caps.out)" "$(fixture $tmp/a.out | awk '{ print $1, $2, $3 }' | sort)" \
		"one file named three times: each wait counted once"
fi

rm -rf $tmp
done_testing
