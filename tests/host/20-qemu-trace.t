#!/bin/bash
# Host side of tests/guest/21-waitpkg.t: every tpause-loop run the guest
# reported ("# report LABEL: ...") is matched with the waitpkg_wait events the
# lab's QEMU traced for user mode (cpl 3) between the run's first and last TSC.
. "$(dirname "$0")/../lib/tap.sh"

log=${LAB_RESULTS:-}/guest-main.log
trace=${LAB_RESULTS:-}/qemu-trace.log
need_input "$log" '^ *# report ' tests/guest/21-waitpkg.t
need_input "$trace" 'waitpkg_wait ' "the main boot's QEMU trace"

# windows: for each line "KEY BEGIN END INSN" on stdin (BEGIN/END as 16-digit
# hex), a line "KEY SUMMARY" of the user-mode waits traced in [BEGIN, END],
# SUMMARY as shell assignments; one pass over the trace for every window
windows() {
	awk '
	# 64-bit TSCs do not fit awk numbers: compare zero-padded hex strings
	function hex16(s) {
		s = tolower(substr(s, 3))
		while (length(s) < 16) s = "0" s
		return s
	}
	FNR == NR { key[++nw] = $1; lo[nw] = $2; hi[nw] = $3; want[nw] = $4; next }
	/waitpkg_wait / {
		sub(/.*waitpkg_wait /, "")
		delete f
		for (i = 1; i < NF; i += 2) f[$i] = $(i + 1)
		if (f["cpl"] != 3) next
		t = hex16(f["tsc_start"])
		for (w = 1; w <= nw; w++) {
			if (f["insn"] != want[w] || t < lo[w] || t > hi[w]) continue
			n[w]++
			reason[w, f["reason"]]++
			if (f["cf"] == 1) cf1[w]++
			if (f["reason"] == "oslimit" && f["cf"] == 1) oscf[w]++
			if (f["reason"] != "oslimit" && f["cf"] == 0) othercf0[w]++
			state[w, f["req"] "->" f["used"]]++
			if (f["limit"] != "0x0") limited[w]++
		}
	}
	END {
		for (w = 1; w <= nw; w++) {
			printf "%s n=%d cf1=%d oscf=%d othercf0=%d limited=%d", key[w], n[w], cf1[w],
				oscf[w], othercf0[w], limited[w]
			for (rs in reason) {
				split(rs, p, SUBSEP)
				if (p[1] == w) printf " reason_%s=%d", p[2], reason[rs]
			}
			for (ss in state) {
				split(ss, p, SUBSEP)
				if (p[1] != w) continue
				k = p[2]
				gsub(/[.>-]/, "", k)
				printf " state_%s=%d", k, state[ss]
			}
			printf "\n"
		}
	}' - "$trace"
}

# summarize: the window of each run the guest log reports ("# report LABEL:"
# or "# snapshot INSN:" lines), keyed by the line's number, in "summary"
declare -A summary
summarize() {
	local nr line k rest
	while IFS=: read -r nr line; do
		eval "$(report tpause-loop "$line" w_)"
		[ -n "${w_tsc_begin:-}" ] || continue
		printf '%s %016x %016x %s\n' "$nr" "$w_tsc_begin" "$w_tsc_end" "$w_insn"
		unset w_tsc_begin w_tsc_end w_insn
	done < <(grep -nE '^ *# (report|snapshot) ' "$log") >"$tmp/windows"
	while read -r k rest; do
		summary[$k]=$rest
	done < <(windows <"$tmp/windows")
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summarize

declare -A seen
while IFS=: read -r nr line; do
	label=$(sed -n 's/^ *# report \([^:]*\): .*/\1/p' <<<"$line")
	unset r_stores
	eval "$(report tpause-loop "$line")"
	[ -n "${r_tsc_begin:-}" ] || { fail "$label: report has no TSC window" "$line"; continue; }
	seen[$label]=1
	n=0 cf1=0 oscf=0 othercf0=0 limited=0
	unset reason_deadline reason_oslimit reason_past reason_nomonitor reason_store reason_interrupt
	unset state_C02C02 state_C02C01 state_C01C01
	eval "${summary[$nr]}"
	is "$n" "$r_waits" "$label: QEMU traced as many user waits as tpause-loop ran"
	is "$oscf" "$cf1" "$label: CF=1 exactly for the waits the OS limit ended"
	is "$othercf0" "$((n - ${reason_oslimit:-0}))" "$label: CF=0 for every wait that something else ended"
	is "$cf1" "$r_capped" "$label: tpause-loop's capped count equals the traced CF=1 count"
	# A guest interrupt (tick, IPI) may end any wait early (reason interrupt,
	# CF=0): the checks below allow it but require the expected reason for most.
	irq=${reason_interrupt:-0}
	# the waits that started before their deadline: a vCPU the host preempts
	# between the RDTSC and the wait (more so on a busy host) finds it past,
	# and such a wait proves nothing about how waits end
	started=$((n - ${reason_past:-0}))
	case "$label" in
	*-capped)
		cmp_ok "${reason_oslimit:-0}" -ge $((started * 9 / 10)) "$label: the OS limit ended at least 90% of the waits that started before their deadline"
		# as in the nolimit runs, a vCPU preempted between RDTSC and the wait
		# may find the 1M-cycle deadline past: it returns at once, CF=0
		is $((${reason_oslimit:-0} + irq + ${reason_past:-0})) "$r_waits" \
			"$label: every wait ended by the OS limit or an interrupt (or found its deadline past)" ;;
	*-short)
		# the first wait of a run may find its 4 us deadline past after TB translation
		is $((${reason_deadline:-0} + irq + ${reason_past:-0})) "$r_waits" "$label: every wait ended at its deadline (or by an interrupt)"
		cmp_ok "${reason_deadline:-0}" -ge $((started * 9 / 10)) "$label: at least 90% of the waits that started before their deadline ended at it" ;;
	*-nolimit)
		# a vCPU the host preempts between RDTSC and the wait may find its
		# 1M-cycle (~0.4 ms) deadline past: the wait then returns at once
		is $((${reason_deadline:-0} + irq + ${reason_past:-0})) "$r_waits" "$label: every wait ended at its deadline (or by an interrupt)"
		cmp_ok "${reason_deadline:-0}" -ge $((started / 2)) "$label: most of the waits that started before their deadline ended at it" ;;
	*-past)
		is "${reason_past:-0}" "$r_waits" "$label: every past-deadline wait returned at once" ;;
	umwait-nomonitor)
		is "${reason_nomonitor:-0}" "$r_waits" "$label: every UMWAIT without UMONITOR returned at once" ;;
	umwait-store | umwait-revert)
		is $((${reason_store:-0} + irq)) "$r_waits" "$label: a store (or an interrupt) ended every wait"
		# tpause-loop waits again when an interrupt beats the store, so each
		# store ends the last wait of its round; only an interrupt that ends
		# the wait just before the store lands can take that from it
		cmp_ok "${reason_store:-0}" -le "${r_stores:-0}" "$label: no more store-ended waits than stores (${r_stores:-none})"
		cmp_ok "${reason_store:-0}" -ge $((${r_stores:-0} * 3 / 4)) "$label: the store ended the last wait of most rounds" ;;
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
done < <(grep -n '^ *# report ' "$log")

# tests/guest/23-waitpkg-snapshot.t: savevm/loadvm while waits run back to back
nsnap=0
while IFS=: read -r nr line; do
	insn=$(sed -n 's/^ *# snapshot \([a-z]*\): .*/\1/p' <<<"$line")
	nsnap=$((nsnap + 1))
	eval "$(report tpause-loop "$line")"
	unset reason_deadline reason_oslimit reason_past reason_nomonitor reason_store reason_interrupt reason_migration
	eval "${summary[$nr]:-n=0}"
	diag "snapshot $insn: n=$n reasons: $(set | grep -o '^reason_[a-z]*=[0-9]*' | tr '\n' ' ')"
	case $insn in
	umwait)
		is "${reason_migration:-0}" 1 \
			"snapshot umwait: the UMWAIT under way when the state was saved (the host saw vCPU 1 halted in it) ended on loadvm, reason migration" ;;
	tpause)
		is "${reason_migration:-0}" 0 "snapshot tpause: TPAUSE goes on across loadvm (no wait ended by the migration)" ;;
	esac
done < <(grep -n '^ *# snapshot ' "$log")
is "$nsnap" 2 "tests/guest/23-waitpkg-snapshot.t reported its two snapshot runs (umwait, tpause)"
is "$(grep -c '^# vmrun-hook: savevm ok, loadvm ok$' "$log")" "$nsnap" \
	"vm/run took and loaded back a snapshot for each snapshot run"

# every run tests/guest/21-waitpkg.t makes, checked above: one missing is a
# check that did not happen
missing=
for l in tpause-capped tpause-short tpause-past tpause-nolimit umwait-capped umwait-short \
	umwait-past umwait-nolimit umwait-nomonitor umwait-store umwait-revert c02-disabled \
	c02-enabled c01 p99 p50; do
	[ -n "${seen[$l]:-}" ] || missing="$missing $l"
done
is "${missing# }" "" "the trace was matched with every run of tests/guest/21 (16 labels)"
done_testing
