# A VM snapshot (savevm, then loadvm at once) taken while a user wait is under
# way, by construction: the guest asks vm/run --snapshots for one with
# "vmrun-hook: snapshot cpu=1 insn=INSN", and the host stops the VM, looks,
# and takes it only once vCPU 1 is halted inside that instruction (then lets
# the VM go on and answers on /dev/ttyS1). The model migrates a wait in
# progress but not the monitored line, so the UMWAIT under way ends on loadvm
# (CF=0, reason migration in QEMU's trace: checked by
# tests/host/20-qemu-trace.t from the "# snapshot" lines) and the TPAUSE goes
# on; every wait must still complete, none capped.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control

# without vm/run --snapshots no host answers the hook: the runs below are
# not tried, and their checks fail
check "vm/run took snapshots for this boot (vmrun.snapshots=1)" grep -qw vmrun.snapshots=1 /proc/cmdline
snaps=$?

old=$(cat $d/max_time)
# no OS limit: each 30G-cycle wait lasts until an interrupt (the tick) ends it
echo 0 >$d/max_time
for insn in umwait tpause; do
	ack= rc=x line=
	if [ $snaps = 0 ]; then
		tpause-loop -i $insn -n 1000000 -c 30000000000 -p 1 --until-signal >/tmp/snap-$insn.out 2>&1 &
		pid=$!
		echo "vmrun-hook: snapshot cpu=1 insn=$insn"
		# the host's answer, once the VM runs again from the loaded snapshot;
		# read by a child: this file's shell leads its session
		# (tests/run-guest), and a session leader that opens a tty takes it
		# as its controlling terminal, which hangs up (EIO for every later
		# write to it) when the leader exits
		ack=$(sh -c 'read -r l; echo "$l"' </dev/ttyS1)
		kill -USR1 $pid
		wait $pid
		rc=$?
		line=$(cat /tmp/snap-$insn.out)
		echo "# snapshot $insn: $line"
	fi
	is "$ack" "vmrun-hook: savevm ok, loadvm ok" "$insn: the host took and loaded back a snapshot with the wait under way"
	is "$rc" 0 "$insn across savevm/loadvm: tpause-loop exits 0"
	is "$(echo "$line" | sed -n 's/.* waits=[1-9][0-9]* capped=\([0-9]*\) .*/waits>0 capped=\1/p')" "waits>0 capped=0" \
		"$insn across savevm/loadvm: the waits completed, none capped"
done
echo "$old" >$d/max_time
is "$(cat $d/max_time)" "$old" "max_time restored"
done_testing
