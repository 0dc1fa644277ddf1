# umwait-trace on Debian's own packaged kernels as they are, without the
# series, by CO-RE: tests/run boots each of them with this suite (Debian 11's
# 5.10, Debian 12's 6.1 and 6.12, unstable's 7.2). Its floor is Linux 5.15
# (BPF cookies on uprobes):
# - below it, caps says so in one line and exits 2, with nothing on stdout;
# - from it on, caps loads (no map of its BPF programs is allocated while
#   they run: the build checks the object, tools/umwait-trace/check-bpf-maps)
#   and counts tpause-loop's waits, and the capped ones among them, as
#   tpause-loop counts them itself; status reads every CPU's
#   IA32_UMWAIT_CONTROL through the msr driver, or, where the kernel has none
#   (unstable's 7.2 boots without its modules package), says how to load it
#   in one line and exits 2.
# On either side the kernel warns of nothing it did (5.7 to 6.0 warned of a
# hash map allocated in a tracing program). The count of checks is the
# kernel's: 4 below the floor, 8 from it on; the first line says which.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)
rel=$(uname -r)
maj=${rel%%.*}
min=${rel#*.}
min=${min%%[!0-9]*}
old=0
[ "$maj" -lt 5 ] || { [ "$maj" -eq 5 ] && [ "$min" -lt 15 ]; } && old=1
diag "kernel $rel: $([ $old = 1 ] && echo 'below the floor' || echo 'at or above the floor') (5.15)"
dmesg >$tmp/dmesg.before

if [ $old = 1 ]; then
	umwait-trace caps $tl >$tmp/out 2>$tmp/err
	is "$?" 2 "caps below Linux 5.15: exit status 2"
	is "$(cat $tmp/err)" "umwait-trace: needs Linux 5.15 or later: this kernel ($rel) lacks BPF cookies on uprobes" \
		"caps below Linux 5.15: one line, the floor and what is missing"
	is "$(cat $tmp/out)" "" "caps below Linux 5.15: nothing on stdout"
else
	# exact by construction: under a limit of 4 cycles every 1M-cycle wait
	# is capped (CF=1) before anything can wake it (under 100000, a timer
	# interrupt ended 1 in 30 early, CF=0); under 100000, no 10k-cycle
	# wait is capped, whatever ends it
	echo 4 >$d/max_time
	ut_begin $tmp/caps.out caps --residency off $tl
	out1=$($tl -n 30 -c 1000000)
	echo 100000 >$d/max_time
	out2=$($tl -n 20 -c 10000)
	ut_end "caps from Linux 5.15 on: exits 0 on Ctrl-C"
	r_waits=x r_capped=x
	eval "$(report tpause-loop "$out1")"
	w1=$r_waits c1=$r_capped
	r_waits=x r_capped=x
	eval "$(report tpause-loop "$out2")"
	is "$w1 $c1 $r_waits $r_capped" "30 30 20 0" \
		"tpause-loop's own count: 30 waits of 1M cycles, all capped; 20 of 10k, none"
	is "$(caps_totals $tmp/caps.out)" "$((w1 + r_waits)) $((c1 + r_capped))" \
		"caps from Linux 5.15 on: its waits and capped waits are tpause-loop's own"
	is "$(grep -c 'needs Linux' $tmp/caps.out.err)" 0 "caps from Linux 5.15 on: no floor to complain of"
	umwait-trace status >$tmp/st 2>$tmp/st.err
	rc=$?
	if [ -e /dev/cpu/0/msr ]; then
		is "$rc $(grep -c '^source: /dev/cpu/N/msr' $tmp/st)" "0 1" \
			"status: every CPU's value read through the msr driver agrees with sysfs (exit 0)"
		# IA32_UMWAIT_CONTROL: max_time in bits 31:2, bit 0 set when C0.2 is off
		want=$(printf '0x%x' $((100000 | ($(cat $d/enable_c02) ? 0 : 1))))
		is "$(grep -c "^verdict: OK: all [0-9]* online CPUs hold the cached value $want\$" $tmp/st)" 1 \
			"status: the value is the 100000 cycles just written ($want)"
	else
		diag "no /dev/cpu/0/msr: the kernel has no msr driver loaded"
		is "$rc" 2 "status without the msr driver: exit status 2"
		is "$(cat $tmp/st.err)" "umwait-trace: cannot read the CPUs' values: no /sys/kernel/debug/x86/umwait/control (kernel without the umwait series, or debugfs not mounted) and no /dev/cpu/0/msr: load the msr driver (modprobe msr)" \
			"status without the msr driver: one line that says how to load it"
	fi
fi
dmesg >$tmp/dmesg.after
is "$(diff $tmp/dmesg.before $tmp/dmesg.after | grep -c '^+.*\(WARNING\|BUG\)')" 0 \
	"caps: the kernel warned of nothing while it ran"
rm -rf $tmp
done_testing
