# Under KVM on a host with WAITPKG (the KVM lane of tests/run): the guest's
# waits run on the processor itself, with no model in between. What the
# processor does is held to tpause-loop's own count, and umwait-trace caps
# to that count: the hardware is the truth the TCG model is judged against
# elsewhere. A KVM that hides WAITPKG, a kernel whose max_time does not
# reach the MSR, or a caps that loses or adds waits under KVM fails here.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
d=/sys/devices/system/cpu/umwait_control
old=$(cat $d/max_time)
tmp=$(mktemp -d)
trap 'echo "$old" >$d/max_time; rm -rf $tmp' EXIT INT TERM

check "the guest CPU has WAITPKG (CPUID.7.0:ECX[5]) under KVM" grep -qw waitpkg /proc/cpuinfo

# 1M-cycle waits under a 100k-cycle limit: each ends at the limit (CF=1) or
# earlier, at an interrupt; none runs to its deadline
echo 100000 >$d/max_time
r_waits= r_capped=x r_ended_early=y
eval "$(report tpause-loop "$(tpause-loop -n 100 -c 1000000)")"
is "$r_waits" 100 "tpause-loop ran its 100 TPAUSEs"
# (early= counts the capped waits too: ended_early= is the uncapped rest)
is "$((r_capped + r_ended_early))" 100 "max_time=100000: every 1M-cycle TPAUSE ended at the limit or earlier ($r_capped capped, $r_ended_early early)"
cmp_ok "$r_capped" -gt 0 "and the limit ended some ($r_capped): max_time reached the MSR"

# no limit: CF=1 never
echo 0 >$d/max_time
r_capped=x
eval "$(report tpause-loop "$(tpause-loop -n 20 -c 100000)")"
is "$r_capped" 0 "max_time=0: no TPAUSE capped"

# caps counts what tpause-loop counted itself
echo 100000 >$d/max_time
if ut_start $tmp/caps caps /lab/bin/tpause-loop; then
	r_waits= r_capped=
	eval "$(report tpause-loop "$(tpause-loop -n 100 -c 1000000)")"
	ut_stop
	got=$(grep '^total:' $tmp/caps | tail -n 1 | sed 's/^total: waits=\([0-9]*\) capped=\([0-9]*\) .*/\1 \2/')
	is "$got" "$r_waits $r_capped" "caps counts tpause-loop's waits and capped exactly (its own report: $r_waits $r_capped)"
fi	# else ut_start's own failure stands for this check
out=$(umwait-trace status)
is "$(echo "$out" | grep '^verdict')" "verdict: OK: all $(nproc) online CPUs hold the cached value 0x186a0" \
	"status: every CPU holds the cached value"
done_testing
