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
lib=$(cd "$(dirname "$0")/../lib" && pwd)

# the main boots' vCPUs (vm/run's default --smp 4): each has its check
cpus="0 1 2 3"
for k in "" -6.12 -7.2; do
	main_boot "$k"
	need_input "$log" '^# s3-msr-writes: ' "tests/guest/50-umwait-suspend.t ($name)"
	need_input "$trace" '^waitpkg_msr_write ' "the $name main boot's QEMU trace"
	line=$(sed -n 's/^# s3-msr-writes: //p' "$log" | tail -n 1)
	set -- $line
	val=$(printf '0x%x' "${2:-0}")
	shift 2
	is "$#" 4 "$name: the guest names the writes of $val it expects for each of its 4 CPUs ($*)"
	writes=$(python3 "$lib/qemu_trace.py" msr-writes "$trace")
	is "$?" 0 "$name: the trace's MSR writes are counted (tests/lib/qemu_trace.py)"
	for cpu in $cpus; do
		want=$(tr ' ' '\n' <<<"$line" | sed -n "s/^cpu$cpu=//p")
		n=$(awk -v c="$cpu" -v v="$val" '$1 == c && $2 == v { print $3 }' <<<"$writes")
		is "${n:-0}" "${want:-none}" "$name: QEMU saw cpu$cpu write $val ${want:-?} times (enable_c02, each resume, each online)"
	done
done
done_testing
