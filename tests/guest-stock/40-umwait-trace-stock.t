# umwait-trace on a CPU without WAITPKG (Debian's stock qemu): caps warns once
# that no site can execute and carries on; status says the kernel manages nothing.
. /lab/tests/lib/tap.sh

tmp=$(mktemp -d)

umwait-trace caps -T /lab/bin/tpause-loop 1 2 >$tmp/out 2>$tmp/err
is "$?" 0 "caps runs to its count without WAITPKG"
is "$(grep -c '^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]$' $tmp/out)" 2 "-T: each of the 2 intervals starts with HH:MM:SS"
is "$(grep -c '^Totals since attach' $tmp/out)" 1 "then the totals, once"
is "$(grep -c 'warning' $tmp/err)" 1 "one warning"
is "$(grep 'warning' $tmp/err)" \
	"umwait-trace: warning: this CPU lacks WAITPKG (CPUID.7.0:ECX[5]): no TPAUSE/UMWAIT site can execute here" \
	"the warning says no site can execute"
check "and it still attached" grep -q '^Attached 2 sites in 1 file ' $tmp/err
is "$(grep -c '^C0.x residency' $tmp/out)" 1 "exactly one C0.x residency line"
is "$(grep '^C0.x residency' $tmp/out)" "C0.x residency: unavailable (CPU lacks WAITPKG)" "which says why"
is "$(grep '^total:' $tmp/out | sort -u)" "total: waits=0 capped=0 capped%=0.0" "no waits, in each interval and in all"

out=$(umwait-trace status 2>&1)
is "$?" 2 "status exits 2"
is "$out" "umwait-trace: no /sys/devices/system/cpu/umwait_control: this kernel does not manage IA32_UMWAIT_CONTROL (CPU without WAITPKG, or umwait disabled)" \
	"status: one line, the kernel manages no IA32_UMWAIT_CONTROL"
rm -rf $tmp
done_testing
