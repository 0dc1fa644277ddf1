# umwait-trace caps --hist-perturbing when probes fail to attach part way: each probe is
# a file descriptor, so a limit on open files (ulimit -n) makes the attach of
# one probe fail and every later one. Each limit from a few below what a full
# attach needs up to it cuts the attach at another probe, among them a site's
# counting probe (after the instruction) and its timing probe (on the
# instruction). Whatever the cut: the tool either refuses with one line or
# runs, and a site it counts is counted exactly (tpause-loop's own count);
# no site is left with only its timing probe, which would make every wait
# there "unended" (seen starting, never ending). Residency is off: its
# counters would take descriptors after the probes.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)
echo 100000 >$d/max_time

# waits_of INSN: tpause-loop's own count of 20 waits of INSN (capped: 1M cycles)
waits_of() {
	$tl -i "$1" -n 20 -c 1000000 | sed -n 's/^tpause-loop: .* waits=\([0-9]*\) .*/\1/p'
}

# the descriptors a full attach holds: the highest open one
ut_begin $tmp/full.out caps --hist-perturbing --residency off $tl
top=$(ls /proc/$ut_pid/fd 2>/dev/null | sort -n | tail -n 1)
nsites=$(sed -n 's/^Attached \([0-9]*\) site.*/\1/p' $tmp/full.out.err)
ut_end "full attach: caps exits 0 on Ctrl-C"
diag "full attach: $nsites sites, highest descriptor $top"
cmp_ok "${nsites:-0}" -ge 2 "tpause-loop has a TPAUSE and a UMWAIT site"
top=${top:-0} nsites=${nsites:-0}

# One test per behaviour, whatever number of limits the range holds: each
# limit's outcome is noted, and the tests below judge all of them at once.
lim=$((top - 4 * nsites))
refused=0 cut=0 full=0 bad=
while [ $lim -le $((top + 1)) ]; do
	out=$tmp/caps-$lim.out
	(ulimit -n $lim && exec umwait-trace caps --hist-perturbing --residency off $tl) >$out 2>$out.err &
	pid=$!
	i=0
	until grep -q '^Attached' $out.err || ! kill -0 $pid 2>/dev/null || [ $i -ge 600 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	if ! grep -q '^Attached' $out.err; then
		wait $pid
		rc=$?
		# refused: non-zero, and its last line says why
		if [ "$rc" = 0 ] || ! tail -n 1 $out.err | grep -q 'umwait-trace: no site could be probed\|umwait-trace: cannot'; then
			bad="$bad; ulimit -n $lim: nothing attached, exit $rc, last line '$(tail -n 1 $out.err)'"
		fi
		refused=$((refused + 1))
		lim=$((lim + 1))
		continue
	fi
	wt=$(waits_of tpause)
	wu=$(waits_of umwait)
	ut_stop $pid
	unended=$(caps_count $out unended)
	# the sites counted: the TPAUSE row's and the UMWAIT row's waits
	set -- $(caps_rows $out | awk '$2 == "tpause-loop" { w[$3] += $4 } END { printf "%d %d", w["tpause"], w["umwait"] }')
	diag "ulimit -n $lim: $(grep -c 'cannot attach' $out.err) probes failed; tpause $1 of $wt, umwait $2 of $wu, unended ${unended:-0}"
	[ "$ut_rc" = 0 ] || bad="$bad; ulimit -n $lim: caps exit $ut_rc on Ctrl-C"
	# a site is counted exactly or not at all
	{ [ "$1" -eq "$wt" ] || [ "$1" -eq 0 ]; } && { [ "$2" -eq "$wu" ] || [ "$2" -eq 0 ]; } ||
		bad="$bad; ulimit -n $lim: counted tpause $1 of $wt, umwait $2 of $wu"
	# no site left with only its timing probe: then all its waits are unended
	[ "$((4 * ${unended:-0}))" -le "$((wt + wu))" ] || bad="$bad; ulimit -n $lim: ${unended:-0} waits unended"
	if [ "$1" -eq 0 ] || [ "$2" -eq 0 ]; then
		cut=$((cut + 1))
	elif [ "$1" -eq "$wt" ] && [ "$2" -eq "$wu" ] && [ "$wt" -gt 0 ] && [ "$wu" -gt 0 ]; then
		full=$((full + 1))
	fi
	lim=$((lim + 1))
done
is "${bad#; }" "" "under every limit: caps refuses with one line, or counts each site exactly or not at all, none all unended"
# the range must have cut where it matters, else the test above proves nothing
cmp_ok "$refused" -ge 1 "some limit left nothing attached ($refused)"
cmp_ok "$cut" -ge 1 "some limit ran with a site whose counting probe failed ($cut)"
cmp_ok "$full" -ge 1 "some limit counted both sites, every wait (not 0: $full)"
done_testing
