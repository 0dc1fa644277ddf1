# A VM snapshot (savevm, then loadvm at once: vm/run --snapshots takes it when
# the guest prints "vmrun-hook: snapshot") while user waits run back to back:
# one is under way, or a monitor is armed, when the CPU state is saved. The
# model migrates a wait in progress but not the monitored line, so the UMWAIT
# under way ends on loadvm (CF=0, reason migration in QEMU's trace: checked
# by tests/host/20-qemu-trace.t from the "# snapshot" lines) and the TPAUSE
# goes on; every wait must still complete, none capped.
. /lab/tests/lib/tap.sh

d=/sys/devices/system/cpu/umwait_control

if ! grep -qw vmrun.snapshots=1 /proc/cmdline; then
	skip "waits across savevm/loadvm" "vm/run ran without --snapshots: no host takes the snapshot"
	done_testing
	exit
fi

old=$(cat $d/max_time)
# no OS limit: each 30G-cycle wait lasts until an interrupt (the tick) ends it
echo 0 >$d/max_time
for insn in umwait tpause; do
	tpause-loop -i $insn -n 2000 -c 30000000000 -p 1 >/tmp/snap-$insn.out 2>&1 &
	pid=$!
	# the waits have begun once the loop has run in user mode (utime > 0)
	i=0
	while [ "$(cut -d' ' -f14 /proc/$pid/stat 2>/dev/null || echo 0)" = 0 ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	# nothing else may print until the loop ends: loadvm replays the guest
	# from the snapshot, and what it printed after it would come out twice
	echo "vmrun-hook: snapshot"
	wait $pid
	rc=$?
	line=$(cat /tmp/snap-$insn.out)
	echo "# snapshot $insn: $line"
	is "$rc" 0 "$insn across savevm/loadvm: tpause-loop exits 0"
	is "$(echo "$line" | grep -o ' waits=[0-9]* capped=[0-9]*')" " waits=2000 capped=0" \
		"$insn across savevm/loadvm: every wait completed, none capped"
done
echo "$old" >$d/max_time
is "$(cat $d/max_time)" "$old" "max_time restored"
done_testing
