# The umwait trace events (Documentation/trace/events-umwait.rst): the boot-time
# umwait_cpu_online of every CPU (trace_event=umwait:* on the command line).
# One umwait_control_update per changing sysfs write, none for a write of the
# same value or a rejected one, and every CPU holding the value after each: the
# series' kselftest checks those (tests/guest/36-umwait-kselftest.t runs it),
# through the debugfs dump, which tests/guest/33-umwait-debugfs.t shows reads
# each CPU's real MSR.
#
# The boot's records are those of the top-level buffer stamped before user
# space began (the kernel's "Run /init" line, on the same clock:
# trace_clock=global): whatever ran before this file (a CPU taken offline
# and back, a control written) records after that.  No test file clears the
# top-level buffer or fills it (they record in instances of their own, and
# stop it for their bursts), so this file runs in any order.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/events.sh

d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
cpus=$(grep -c ^processor /proc/cpuinfo)

# init: the time user space began, in seconds since boot ("Run /init as init
# process", which the kernel prints once /init is about to run)
init=$(dmesg | sed -n 's/^\[ *\([0-9]*\.[0-9]*\)\] Run .* as init process$/\1/p' | head -n 1)

# boot [CPU]: the umwait records of the top-level buffer stamped before
# $init, "umwait_NAME: payload" (of CPU's records only, if given)
boot() {
	awk -v end="${init:-0}" -v cpu="${1:-}" '
		match($0, / [0-9]+\.[0-9]+: umwait_/) {
			ts = substr($0, RSTART + 1, RLENGTH - 10) + 0
			if (ts >= end) next
			if (cpu != "" && index($0, sprintf("[%03d]", cpu)) == 0) next
			s = $0
			sub(/.* umwait_/, "umwait_", s)
			print s
		}' $t/trace
}

check "the kernel said when user space began ('Run /init as init process': ${init:-none})" test -n "$init"
is "$(cat $t/events/umwait/enable)" 1 "trace_event=umwait:* enabled the umwait events at boot"
is "$(cat $t/per_cpu/cpu*/stats | awk '/^overrun:/ { n++; s += $2 } END { print n ? s : "none" }')" 0 \
	"the top-level buffer lost no record (overrun 0): the boot's records are all there"
is "$(boot | grep -c '^umwait_cpu_online: ')" "$cpus" "one umwait_cpu_online per CPU before user space began"
if ! boot | grep -q . && dmesg | grep -q 'switching default tracing clock'; then
	diag "the boot events were lost when the tracing clock was switched at late_initcall"
	diag "(unstable sched_clock): boot with trace_clock=global next to trace_event=umwait:*"
fi
# each CPU's own: old is the CPU's reset value (0: the SDM's and the model's),
# new the kernel's default (max_time 100000, C0.2 on), one record each
got= want=
for n in $(seq 0 $((cpus - 1))); do
	got="$got|cpu$n: $(boot $n | tr '\n' ' ')"
	want="$want|cpu$n: umwait_cpu_online: old=0x00000000 new=0x000186a0 max_time=100000 c02=on "
done
is "$got" "$want" "each CPU recorded one boot umwait_cpu_online, from the reset value 0 to 0x000186a0, and nothing else"
is "$(boot | grep -v '^umwait_cpu_online: ')" "" "no other umwait record at boot (no offline, resume or update)"

# 2. the controls as the boot left them: every file puts back what it changes
is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "the defaults: max_time 100000, enable_c02 1"
done_testing
