# Debian 12's own kernel (vm/run --kernel distro: linux-image-amd64's image,
# its config, its BTF, msr as a module) on the lab's WAITPKG QEMU:
# umwait-trace was built against the lab kernel's BTF and must run here by
# CO-RE alone.  status, sites and caps (on the library clients, caps' counts
# checked per site against QEMU's trace by tests/host/21-clients-qemu-trace.t)
# work; events --source umwait exits 2 with one line: this kernel has no
# umwait tracepoints.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/clients.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
case "$(uname -r)" in
*-amd64) pass "running Debian's packaged kernel ($(uname -r))" ;;
*) fail "running Debian's packaged kernel" "uname -r: $(uname -r)" ;;
esac
check "msr, a module in this kernel, is loaded by /init" grep -q '^msr ' /proc/modules
check "and gives /dev/cpu/0/msr" test -c /dev/cpu/0/msr
check "the kernel has BTF (/sys/kernel/btf/vmlinux)" test -r /sys/kernel/btf/vmlinux
check "umwait_control exists (6.1's sysfs ABI)" test -d $d
check "no umwait trace events in this kernel" test ! -e /sys/kernel/tracing/events/umwait

is "$(cat /sys/devices/system/cpu/possible) $(cat /sys/devices/system/cpu/present)" "0-5 0-3" \
	"vm/run --maxcpus 6: 6 possible CPUs, 4 present"
out=$(umwait-trace status 2>&1)
is "$?" 0 "status: every present CPU agrees with the cached value (exit 0; the 2 possible, not present ones are no CPUs)"
echo "$out" | sed 's/^/# status: /'
case "$out" in
*"/dev/cpu"*) pass "status reads the MSRs through the msr module" ;;
*) fail "status reads the MSRs through the msr module" "got: $out" ;;
esac

# events reads msr:write_msr on a stock kernel (tests/guest-debian/54); the
# series' tracepoints asked for, it says in one line that they are missing
umwait-trace events --source umwait >/tmp/out 2>/tmp/err
is "$?" 2 "events --source umwait: exit status 2"
is "$(cat /tmp/err)" "umwait-trace: kernel lacks umwait tracepoints (--source msr reads msr:write_msr instead)" "events: one line on stderr"
echo "# events: $(cat /tmp/err)"
is "$(cat /tmp/out)" "" "events: nothing on stdout"

for lib in $CLIENT_TBB $CLIENT_OMP $CLIENT_EAL; do
	n=$(umwait-trace sites $lib | wc -l)
	cmp_ok "$n" -gt 0 "sites: $n TPAUSE/UMWAIT sites in $lib"
done

client_caps $CLIENT_TBB 100000 tbb-distro tbb-waits -r 4 -m 20
client_caps $CLIENT_OMP 100000 omp-tpause-distro KMP_TPAUSE=1 omp-waits -r 4 -m 20
client_caps $CLIENT_EAL 100000 dpdk-distro dpdk-waits -n 20 -c 1000000
p=$(client_report_field pauses) m=$(client_report_field monitors)
is "$cl_waits" "$((p + m))" "dpdk-distro: caps counted DPDK's own waits exactly ($p + $m)"
caps_rows $_cl_tmp/caps.out | sed 's/^/# caps: /'
echo 100000 >$d/max_time
done_testing
