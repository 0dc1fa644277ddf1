# The soak scenario (sourced by tests/guest-soak/10-soak.t with the full
# duration and by tests/guest/60-umwait-soak.t with a short one): for SECONDS,
# 4 writers put random valid and invalid values into enable_c02 and max_time,
# a hotplug loop takes CPUs 1..N-1 down and up in random order, tpause-loop
# waits on every CPU, a reader polls debugfs and umwait-trace status, and
# umwait-trace events records it all.  Then every result is checked against
# what each actor logged itself.  Needs tap.sh and guest.sh.

d=/sys/devices/system/cpu/umwait_control
dbg=/sys/kernel/debug/x86/umwait/control

# cached_hex: the cached control value as debugfs shows it (0x%08x)
cached_hex() {
	sed -n 's/^cached \(0x[0-9a-f]*\) .*/\1/p' $dbg
}

# soak_hotplug LOG STOP CPUS: toggle a random CPU 1..CPUS-1 until STOP exists,
# then bring all up; each operation that worked is logged as the trace names it
soak_hotplug() {
	while [ ! -e "$2" ]; do
		n=$(shuf -i 1-$(($3 - 1)) -n 1)
		f=/sys/devices/system/cpu/cpu$n/online
		want=$((1 - $(cat $f)))
		r=$(lab-write $f $want)
		if [ "$r" != OK ]; then
			echo "failed cpu$n online <- $want: $r" >>"$1"
			return 1
		fi
		[ $want = 1 ] && echo "cpu_online $n" >>"$1" || echo "cpu_offline $n" >>"$1"
	done
	for n in $(seq 1 $(($3 - 1))); do
		f=/sys/devices/system/cpu/cpu$n/online
		[ "$(cat $f)" = 1 ] && continue
		[ "$(lab-write $f 1)" = OK ] || return 1
		echo "cpu_online $n" >>"$1"
	done
}

# soak_waits CPU LOG STOP: tpause-loop pinned to CPU, run after run, until STOP
soak_waits() {
	while [ ! -e "$3" ]; do
		tpause-loop -p $1 -n 20 -c 2000000 >>"$2" 2>&1
		echo "rc $?" >>"$2"
	done
}

# soak_reader LOG STOP: poll debugfs and umwait-trace status until STOP; log
# what is wrong (a debugfs line neither ok nor offline, a status exit not 0)
soak_reader() {
	polls=0
	while [ ! -e "$2" ]; do
		polls=$((polls + 1))
		cat $dbg >"$1.dbg" 2>&1 || echo "debugfs unreadable: $(cat "$1.dbg")" >>"$1"
		grep -Ev '^cached 0x[0-9a-f]{8} |^cpu[0-9]+ (0x[0-9a-f]{8} .* ok|offline)$' "$1.dbg" |
			sed 's/^/debugfs: /' >>"$1"
		umwait-trace status >"$1.st" 2>&1 || echo "status exit $?: $(grep -v '^[0-9C]' "$1.st")" >>"$1"
	done
	echo "polls $polls" >>"$1"
}

# soak SECONDS
soak() {
	secs=$1
	cpus=$(grep -c ^processor /proc/cpuinfo)
	tmp=$(mktemp -d)
	for n in $(seq 1 $((cpus - 1))); do
		echo 1 >/sys/devices/system/cpu/cpu$n/online
	done
	echo 100000 >$d/max_time
	echo 1 >$d/enable_c02
	start=$(cached_hex)
	diag "soak: ${secs} s, $cpus CPUs, cached value $start at the start"

	ut_start $tmp/ev.json events --json || return 1

	# every actor in the background; "NAME PID" in jobs
	: >$tmp/jobs
	for w in 1 2 3 4; do
		umwait-fuzz -d "$secs" -l $tmp/w$w.log $d/enable_c02 $d/max_time >$tmp/w$w.out 2>&1 &
		echo "writer$w $!" >>$tmp/jobs
	done
	soak_hotplug $tmp/hotplug.log $tmp/stop $cpus &
	echo "hotplug $!" >>$tmp/jobs
	for n in $(seq 0 $((cpus - 1))); do
		soak_waits $n $tmp/tl$n.log $tmp/stop &
		echo "tpause-loop$n $!" >>$tmp/jobs
	done
	soak_reader $tmp/reader.log $tmp/stop &
	echo "reader $!" >>$tmp/jobs
	sleep "$secs"
	touch $tmp/stop

	# no process died: every actor ends by itself, with status 0
	bad=
	while read -r name pid; do
		wait $pid
		rc=$?
		[ $rc -eq 0 ] || bad="$bad $name:$rc"
	done <$tmp/jobs
	is "$bad" "" "every writer, the hotplug loop, each CPU's tpause-loop and the reader ended with status 0"
	ut_stop
	is "$ut_rc" 0 "umwait-trace events ended with status 0 on SIGINT"

	# final state: sysfs, debugfs and each online CPU's MSR agree
	final=$(cached_hex)
	sysfs=$(printf '0x%08x' $(($(cat $d/max_time) | ($(cat $d/enable_c02) ^ 1))))
	is "$sysfs" "$final" "sysfs and debugfs cache the same value ($final)"
	is "$(cat /sys/devices/system/cpu/online)" "0-$((cpus - 1))" "all CPUs online again"
	for n in $(seq 0 $((cpus - 1))); do
		is "$(grep "^cpu$n " $dbg | cut -d' ' -f2,5)" "$final ok" "debugfs: cpu$n holds $final"
		is "$(msr read $n 0xe1)" "$(printf '0x%016x' $final)" "/dev/cpu/$n/msr holds $final"
	done

	# the writers: each result as the model of the parsers predicts
	acc=0 einval=0 erange=0 other=0 mism=0
	for w in 1 2 3 4; do
		eval "$(sed -n 's/^umwait-fuzz: file=[a-z_0-9]* writes=[0-9]* accepted=\([0-9]*\) EINVAL=\([0-9]*\) ERANGE=\([0-9]*\) other=\([0-9]*\) mismatches=\([0-9]*\)$/acc=$((acc + \1)) einval=$((einval + \2)) erange=$((erange + \3)) other=$((other + \4)) mism=$((mism + \5))/p' $tmp/w$w.out)"
		grep MISMATCH $tmp/w$w.out | head -n 3 | sed 's/^/# writer$w: /'
	done
	is "$mism" 0 "every write's result is the one the parser model predicts"
	is "$other" 0 "no write failed with anything but EINVAL or ERANGE"
	cmp_ok "$acc" -gt 0 "writes were accepted ($acc)"

	# the events against the writers' and the hotplug loop's own logs
	: >$tmp/writes
	for w in 1 2 3 4; do
		pid=$(sed -n "s/^writer$w //p" $tmp/jobs)
		sed "s/^/$pid /" $tmp/w$w.log >>$tmp/writes
	done
	is "$(tail -n 1 $tmp/ev.json.err)" "$(grep -c . $tmp/ev.json) events, 0 lost" \
		"umwait-trace: as many events as it printed, none lost"
	awk -v start=$(($start)) -f /lab/tests/guest-soak/events.awk $tmp/writes $tmp/hotplug.log $tmp/ev.json >$tmp/check
	grep '^diag: ' $tmp/check | sed 's/^diag: /# /'
	eval "$(grep '^[a-z_]*=' $tmp/check | tr '\n' ' ' | sed 's/\([a-z_]*\)=/c_\1=/g')"
	is "$c_chain_breaks" 0 "update events chain: each old is the previous new, from $start"
	is "$c_last" "$((final))" "the last update's new value is the cached one ($final)"
	is "$c_noop_updates" 0 "no update event for a write that changed nothing"
	is "$c_foreign_writers" 0 "every update event comes from one of the writers"
	is "$c_unmatched_updates" 0 "every update event is one of its writer's accepted writes, in order"
	is "$c_other_events" 0 "no event but updates, online and offline"
	is "$c_hotplug_mismatch" 0 "online/offline events are the hotplug loop's operations, in order"
	is "$c_hotplug_wrong_cpu" 0 "each online/offline event fired on its CPU"
	is "$c_online_bad" 0 "each CPU came up with the cached value, from what its offline left"
	is "$c_offline_bad" 0 "each offline restored the same boot value"
	cmp_ok "$c_offline" -gt 0 "CPUs went offline ($c_offline times)"

	# the reader: debugfs always consistent, status always OK
	is "$(grep -v '^polls ' $tmp/reader.log | head -n 5)" "" "the reader saw no MISMATCH, error or failed status"
	polls=$(sed -n 's/^polls //p' $tmp/reader.log)
	cmp_ok "${polls:-0}" -gt 0 "the reader polled (${polls:-0} times)"

	# tpause-loop: every run either ran all its waits or found its CPU offline
	runs=0 waits=0 offline=0 wrong=
	for n in $(seq 0 $((cpus - 1))); do
		r=$(grep -c '^rc 0$' $tmp/tl$n.log)
		w=$(grep -c '^tpause-loop: .* waits=20 ' $tmp/tl$n.log)
		o=$(grep -c "^tpause-loop: cannot pin to CPU $n: Invalid argument$" $tmp/tl$n.log)
		[ "$r" = "$w" ] && [ "$(grep -c '^rc ' $tmp/tl$n.log)" = $((r + o)) ] || wrong="$wrong cpu$n"
		runs=$((runs + r)) waits=$((waits + w * 20)) offline=$((offline + o))
	done
	is "$wrong" "" "every tpause-loop run did its 20 waits, or could not pin to an offline CPU"
	cmp_ok "$runs" -gt 0 "tpause-loop ran ($runs runs)"

	is "$(dmesg | grep -E -f /lab/tests/lib/kernel-reports | head -n 5)" "" \
		"dmesg has no WARNING, BUG, lockdep, RCU stall or sleeping-function report"

	echo "# soak counts: writes accepted=$acc rejected=$((einval + erange)) (EINVAL=$einval ERANGE=$erange)," \
		"hotplug cycles=$c_offline (online=$c_online offline=$c_offline), events=$c_events" \
		"(updates=$c_updates), tpause-loop runs=$runs waits=$waits (offline CPU: $offline)," \
		"reader polls=${polls:-0}"
	echo 100000 >$d/max_time
	echo 1 >$d/enable_c02
	rm -rf $tmp
}
