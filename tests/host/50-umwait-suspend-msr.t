#!/bin/bash
# Host side of tests/guest/50-umwait-suspend.t: S3 resets IA32_UMWAIT_CONTROL
# and the kernel writes it back. The kernel's msr:write_msr event cannot be on
# across S3 (it fires before the GS base is restored), so the truth here is
# QEMU's own trace of every guest WRMSR to the MSR (waitpkg_msr_write). The
# guest test prints how many writes of its value each CPU must have made (the
# enable_c02 write, one per resume while online, one per online); the trace
# must hold exactly that many per CPU. Fails if resume restores a CPU without
# writing the MSR (a cached value shown but never written), writes it twice
# (boot CPU from both the syscore and the hotplug path), or writes a CPU that
# was offline across the suspend.
. "$(dirname "$0")/../lib/tap.sh"

for k in "" -6.12 -7.2; do
	main_boot "$k"
	need_input "$log" '^# s3-msr-writes: ' "tests/guest/50-umwait-suspend.t ($name)"
	need_input "$trace" '^waitpkg_msr_write ' "the $name main boot's QEMU trace"
	line=$(sed -n 's/^# s3-msr-writes: //p' "$log" | tail -n 1)
	set -- $line
	val=$(printf '0x%x' "$2")
	shift 2
	cmp_ok "$#" -ge 2 "$name: the guest names the writes of $val it expects for each CPU ($*)"
	for want in "$@"; do
		cpu=${want%%=*}
		cpu=${cpu#cpu}
		n=$(grep -c "^waitpkg_msr_write cpu $cpu val $val\$" "$trace")
		is "$n" "${want#*=}" "$name: QEMU saw cpu$cpu write $val ${want#*=} times (enable_c02, each resume, each online)"
	done
done
done_testing
