# umwait-trace caps on programs built on Debian's libraries with real
# TPAUSE/UMWAIT code: oneTBB (idle workers: prolonged_pause), LLVM OpenMP 14
# (KMP_TPAUSE: TPAUSE while spinning; KMP_USER_LEVEL_MWAIT: UMONITOR/UMWAIT
# while sleeping) and DPDK (rte_power_pause, rte_power_monitor).  Each runs
# at max_time 100000 (the default), 100 (below oneTBB's 700-cycle waits) and
# 0, with caps attached to the library before the client starts (and
# oneTBB and libomp's TPAUSE at 100 without caps too, and oneTBB at 100
# under caps --hist-perturbing: the observer check's negative control).  Here:
# DPDK's own count of its waits equals caps'; tests/host/21-clients-qemu-trace.t
# then attributes every wait QEMU traced to a site and compares per site.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/clients.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
is "$(cat $d/max_time)" 100000 "max_time starts at its default"

for mt in 100000 100 0; do
	client_caps $CLIENT_TBB $mt tbb-$mt tbb-waits -r 4 -m 20
	client_caps $CLIENT_OMP $mt omp-tpause-$mt KMP_TPAUSE=1 omp-waits -r 4 -m 20
	# KMP_TASKING=0: libomp 14's teardown races with its user-level
	# UMWAIT loop. A worker whose UMWAIT returned before it saw the end
	# marks itself unsafe to reap (only when tasking is on) while the
	# master asserts it is safe: "Assertion failure at
	# kmp_runtime.cpp(6331)", exit 134, in 3 of 7 clean-clone runs of the
	# suite. The clients have no tasks; the waits are the same.
	client_caps $CLIENT_OMP $mt omp-umwait-$mt KMP_USER_LEVEL_MWAIT=1 KMP_BLOCKTIME=0 \
		KMP_TASKING=0 omp-waits -r 4 -m 5
	client_caps $CLIENT_EAL $mt dpdk-$mt dpdk-waits -n 20 -c 1000000
	p=$(client_report_field pauses) m=$(client_report_field monitors)
	is "$cl_waits" "$((p + m))" \
		"dpdk-$mt: caps counted DPDK's own waits exactly ($p rte_power_pause + $m rte_power_monitor)"
	# one check per max_time: none capped without a limit, some with one
	# (how many an interrupt or a late start leaves uncapped is the host's:
	# tests/host/21 holds caps' capped to QEMU's trace, site by site)
	case $mt in
	0) is "$cl_capped" 0 "dpdk-0: max_time=0 caps nothing" ;;
	*) cmp_ok "$cl_capped" -gt 0 "dpdk-$mt: max_time=$mt caps DPDK's waits ($cl_capped of $cl_waits)" ;;
	esac
done
# DPDK's rte_power_monitor with a store from another thread once each
# UMONITOR is armed, at no limit: its UMWAITs end early (tests/host/21 holds
# caps' outcomes per site to the trace's)
client_caps $CLIENT_EAL 0 dpdk-store dpdk-waits -n 20 -c 1000000000 -s
is "$(client_report_field stores)" 20 "dpdk-store: the second thread stored once per rte_power_monitor (20)"
# bug caught: a wake by the store counted as a run to the deadline, or the
# store's wake missed (the model's or caps')
_off=$(caps_rows $_cl_tmp/caps.out | awk '$3 == "umwait" { print $8; exit }')
_early=$(caps_by_site $_cl_tmp/caps.out | awk -v o="${_off:-none}" '$1 == "outcomes" && $2 == o' |
	tail -n 1 | sed -n 's/.* early=\([0-9]*\) .*/\1/p')
is "${_early:-x}" 20 "dpdk-store: caps calls all 20 UMWAITs of rte_power_monitor (${_off:-no site}) early"
# at max_time=100 without caps: the programs as they run unobserved
client_bare 100 tbb-bare-100 tbb-waits -r 4 -m 20
client_bare 100 omp-tpause-bare-100 KMP_TPAUSE=1 omp-waits -r 4 -m 20
# the observer check's negative control (tests/host/21): with a probe on
# each TPAUSE itself (--hist-perturbing), one lies between oneTBB's RDTSC
# and its wait
CAPS_ARGS=--hist-perturbing client_caps $CLIENT_TBB 100 tbb-hist-100 tbb-waits -r 4 -m 20
CAPS_ARGS=
echo 100000 >$d/max_time
is "$(cat $d/max_time)" 100000 "max_time restored"
done_testing
