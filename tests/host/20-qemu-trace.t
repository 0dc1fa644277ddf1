#!/bin/bash
# Host side of tests/guest/21-waitpkg.t: every tpause-loop run the guest
# reports ("# report LABEL: ...") is matched with the waitpkg_wait events the
# lab's QEMU traced for user mode (cpl 3) between the run's first and last TSC
# (tests/lib/qemu_trace.py).  The runs are a fixed list: one the guest did
# not report fails each of its checks.
. "$(dirname "$0")/../lib/tap.sh"

log=${LAB_RESULTS:-}/guest-main.log
trace=${LAB_RESULTS:-}/qemu-trace.log
need_input "$log" '^ *# report ' tests/guest/21-waitpkg.t
need_input "$trace" 'waitpkg_wait ' "the main boot's QEMU trace"

lib=$(cd "$(dirname "$0")/../lib" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the runs tests/guest/21-waitpkg.t reports and the snapshot runs of
# tests/guest/23-waitpkg-snapshot.t: each has its checks, reported or not
labels="tpause-capped tpause-short tpause-past tpause-nolimit umwait-capped umwait-short
	umwait-past umwait-nolimit umwait-nomonitor umwait-store umwait-revert c02-disabled
	c02-enabled c01 p99 p50"
snapshots="umwait tpause"

# line KIND LABEL: the guest's "# KIND LABEL: ..." line (report or snapshot;
# the first, if it printed more)
line() {
	grep -m1 -E "^ *# $1 $2: " "$log"
}

# summarize: for each run's line, "KEY BEGIN END INSN" into the windows
# that tests/lib/qemu_trace.py summarizes (the user waits of INSN in the
# window), in "summary" by KEY (report-LABEL, snapshot-INSN)
declare -A summary
summarize() {
	local kind l key rest
	for kind in report snapshot; do
		[ $kind = report ] && set -- $labels || set -- $snapshots
		for l; do
			unset w_tsc_begin w_tsc_end w_insn
			eval "$(report tpause-loop "$(line $kind "$l")" w_)"
			[ -n "${w_tsc_begin:-}" ] && echo "$kind-$l $w_tsc_begin $w_tsc_end ${w_insn:-none}"
		done
	done >"$tmp/windows"
	python3 "$lib/qemu_trace.py" windows "$trace" <"$tmp/windows" >"$tmp/summary" 2>"$tmp/summary.err"
	is "$?" 0 "the trace's waits in each run's window are summed (tests/lib/qemu_trace.py)"
	sed 's/^/# /' "$tmp/summary.err"
	while read -r key rest; do
		summary[$key]=$rest
	done <"$tmp/summary"
}
summarize

for label in $labels; do
	unset r_stores r_tsc_begin r_waits r_capped
	eval "$(report tpause-loop "$(line report "$label")")"
	check "$label: tests/guest/21 reported the run with its TSC window" test -n "${r_tsc_begin:-}"
	# a run not reported (or not summed) fails each of its checks below:
	# nothing is counted for it
	n=x cf1=no-cf1 oscf=no-oscf othercf0=no-othercf0 limited=x
	unset reason_deadline reason_oslimit reason_past reason_nomonitor reason_store reason_interrupt
	unset state_C02C02 state_C02C01 state_C01C01
	eval "${summary[report-$label]:-}"
	r_waits=${r_waits:-none} r_capped=${r_capped:-none}
	is "$n" "$r_waits" "$label: QEMU traced as many user waits as tpause-loop ran"
	is "$oscf" "$cf1" "$label: CF=1 exactly for the waits the OS limit ended"
	[ "$n" = x ] && oslimit=none || oslimit=$((n - ${reason_oslimit:-0}))
	is "$othercf0" "$oslimit" "$label: CF=0 for every wait that something else ended"
	is "$cf1" "$r_capped" "$label: tpause-loop's capped count equals the traced CF=1 count"
	# A guest interrupt (tick, IPI) may end any wait early (reason interrupt,
	# CF=0): the checks below allow it but require the expected reason for most.
	irq=${reason_interrupt:-0}
	# the waits that started before their deadline: a vCPU the host preempts
	# between the RDTSC and the wait (more so on a busy host) finds it past,
	# and such a wait proves nothing about how waits end
	[ "$n" = x ] && started=x || started=$((n - ${reason_past:-0}))
	case "$label" in
	*-capped)
		cmp_ok "${reason_oslimit:-0}" -ge $((${started/x/1000000000} * 9 / 10)) "$label: the OS limit ended at least 90% of the waits that started before their deadline"
		# as in the nolimit runs, a vCPU preempted between RDTSC and the wait
		# may find the 1M-cycle deadline past: it returns at once, CF=0
		is $((${reason_oslimit:-0} + irq + ${reason_past:-0})) "$r_waits" \
			"$label: every wait ended by the OS limit or an interrupt (or found its deadline past)" ;;
	*-short)
		# the first wait of a run may find its 4 us deadline past after TB translation
		is $((${reason_deadline:-0} + irq + ${reason_past:-0})) "$r_waits" "$label: every wait ended at its deadline (or by an interrupt)"
		cmp_ok "${reason_deadline:-0}" -ge $((${started/x/1000000000} * 9 / 10)) "$label: at least 90% of the waits that started before their deadline ended at it" ;;
	*-nolimit)
		# a vCPU the host preempts between RDTSC and the wait may find its
		# 1M-cycle (~0.4 ms) deadline past: the wait then returns at once
		is $((${reason_deadline:-0} + irq + ${reason_past:-0})) "$r_waits" "$label: every wait ended at its deadline (or by an interrupt)"
		cmp_ok "${reason_deadline:-0}" -ge $((${started/x/1000000000} / 2)) "$label: most of the waits that started before their deadline ended at it" ;;
	*-past)
		is "${reason_past:-0}" "$r_waits" "$label: every past-deadline wait returned at once" ;;
	umwait-nomonitor)
		is "${reason_nomonitor:-0}" "$r_waits" "$label: every UMWAIT without UMONITOR returned at once" ;;
	umwait-store | umwait-revert)
		is $((${reason_store:-0} + irq)) "$r_waits" "$label: a store (or an interrupt) ended every wait"
		# tpause-loop waits again when an interrupt beats the store, so each
		# store ends the last wait of its round; only an interrupt that ends
		# the wait just before the store lands can take that from it
		cmp_ok "${reason_store:-0}" -le "${r_stores:-x}" "$label: no more store-ended waits than stores (${r_stores:-none})"
		cmp_ok "${reason_store:-0}" -ge $((${r_stores:-1000000000} * 3 / 4)) "$label: the store ended the last wait of most rounds" ;;
	c02-disabled)
		is "${state_C02C01:-0}" "$r_waits" "$label: enable_c02=0 demotes every C0.2 request to C0.1" ;;
	c02-enabled)
		is "${state_C02C02:-0}" "$r_waits" "$label: enable_c02=1 keeps C0.2 requests in C0.2" ;;
	c01)
		is "${state_C01C01:-0}" "$r_waits" "$label: C0.1 requests run in C0.1" ;;
	esac
	case "$label" in
	*-nolimit | umwait-nomonitor | umwait-store | umwait-revert) is "$limited" 0 "$label: no OS limit with max_time=0" ;;
	esac
done

# tests/guest/23-waitpkg-snapshot.t: savevm/loadvm while waits run back to back
nsnap=0
for insn in $snapshots; do
	unset reason_deadline reason_oslimit reason_past reason_nomonitor reason_store reason_interrupt reason_migration
	n=x
	[ -n "$(line snapshot "$insn")" ] && nsnap=$((nsnap + 1))
	eval "${summary[snapshot-$insn]:-}"
	diag "snapshot $insn: n=$n reasons: $(set | grep -o '^reason_[a-z]*=[0-9]*' | tr '\n' ' ')"
	[ "$n" = x ] && reason_migration=x
	case $insn in
	umwait)
		is "${reason_migration:-0}" 1 \
			"snapshot umwait: the UMWAIT under way when the state was saved (the host saw vCPU 1 halted in it) ended on loadvm, reason migration" ;;
	tpause)
		is "${reason_migration:-0}" 0 "snapshot tpause: TPAUSE goes on across loadvm (no wait ended by the migration)" ;;
	esac
done
is "$nsnap" 2 "tests/guest/23-waitpkg-snapshot.t reported its two snapshot runs (umwait, tpause)"
is "$(grep -c '^# vmrun-hook: savevm ok, loadvm ok$' "$log")" "$nsnap" \
	"vm/run took and loaded back a snapshot for each snapshot run"
done_testing
