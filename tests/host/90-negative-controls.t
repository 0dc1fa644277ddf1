#!/bin/bash
# Negative controls for the host cross-checks: each check runs again on a
# copy of this run's results with one deliberate fault put in (a mutant of
# the model, of the tracer or of the guest's report), and must fail. A
# change that makes a check vacuous (it passes whatever it reads) fails
# here. The guest-side checks have their own (umwait-trace mutants built
# from tests/mutants, run by tests/guest/41; the --hist-perturbing observer control of
# tests/host/24).
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
res=${LAB_RESULTS:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# mutant NAME CHECK DESC FILE FILTER: copy this run's results, pass FILE of
# the copy through FILTER (a shell command, stdin to stdout), run
# tests/host/CHECK on the copy: it must fail (a "not ok" and a non-zero exit)
mutant() {
	local name=$1 check=$2 desc=$3 file=$4 filter=$5 out rc
	need_input "$res/$file" . "this run's $file"
	rm -rf "$tmp/res"
	mkdir "$tmp/res"
	cp -a "$res"/*.log "$tmp/res/" 2>/dev/null
	sh -c "$filter" <"$res/$file" >"$tmp/res/$file"
	if cmp -s "$res/$file" "$tmp/res/$file"; then
		fail "mutant $name: the fault went into $file" "the edit changed nothing: the mutant is no mutant"
		return
	fi
	out=$(LAB_RESULTS=$tmp/res bash "$top/tests/host/$check" 2>&1)
	rc=$?
	if [ "$rc" != 0 ] && grep -q '^not ok' <<<"$out"; then
		pass "mutant $name ($desc): $check fails on it ($(grep -c '^not ok' <<<"$out") not ok)"
	else
		fail "mutant $name ($desc): $check fails on it" "it passed (exit $rc): the check is vacuous"
	fi
}

# the WAITPKG model
mutant model-no-cf 20-qemu-trace.t "a model that never sets CF: the OS limit ends waits with CF=0" \
	qemu-trace.log "sed 's/reason oslimit cf 1/reason oslimit cf 0/'"
mutant model-no-limit 20-qemu-trace.t "a model that ignores the OS limit: capped waits run to their deadline" \
	qemu-trace.log "sed 's/reason oslimit cf 1/reason deadline cf 0/'"
mutant model-no-store 20-qemu-trace.t "a model where a store to the monitored line does not end UMWAIT" \
	qemu-trace.log "sed 's/reason store cf 0/reason interrupt cf 0/'"
mutant model-migrates-monitor 20-qemu-trace.t "a model that migrates the monitor: no UMWAIT ends on loadvm" \
	qemu-trace.log "sed 's/reason migration cf 0/reason interrupt cf 0/'"
mutant model-no-demotion 20-qemu-trace.t "a model that ignores enable_c02=0 (C0.2 requests stay in C0.2)" \
	qemu-trace.log "sed 's/req C0.2 used C0.1/req C0.2 used C0.2/'"
# the tracer, against the trace
mutant caps-drops 21-clients-qemu-trace.t "caps missing a wait at every site of the library clients" \
	guest-main.log "awk '/^# caps [a-z0-9-]*: [0-9]+ [a-z]+ [1-9]/ && !/^# caps lay-/ { \$6 = \$6 - 1 } 1'"
mutant caps-clients-past-as-deadline 21-clients-qemu-trace.t "caps calling the library clients' past waits ones that ran to their deadline" \
	guest-main.log "sed 's/^\\(# outcomes-site [a-z0-9-]*: 0x[0-9a-f]* capped=[0-9]* deadline=\\)[0-9]*\\( early=[0-9]* past=\\)\\([0-9]*\\)\$/\\1\\3\\20/'"
mutant caps-layouts-one-more 24-layouts-qemu-trace.t "caps counting one more wait at each site of the layout corpus" \
	guest-main.log "awk '/^# caps lay-[a-zA-Z0-9-]*: [0-9]+ [a-z]+ [0-9]/ { \$6 = \$6 + 1 } 1'"
mutant outcomes-early 25-outcomes-qemu-trace.t "caps calling waits early that the trace ended otherwise" \
	guest-main.log "sed 's/^\\(# outcomes [a-z]*: caps capped=[0-9]* deadline=[0-9]* \\)early=/\\1early=1/'"
mutant caps-past-as-deadline 25-outcomes-qemu-trace.t "caps calling waits whose deadline had passed ones that ran to it" \
	guest-main.log "sed 's/^\\(# outcomes [a-z]*: caps capped=[0-9]* deadline=\\)[0-9]*\\( early=[0-9]* past=\\)\\([0-9]*\\)/\\1\\3\\20/'"
# the kernel series' ABI
mutant sysfs-abi 30-umwait-sysfs-abi.t "a sysfs write that answers otherwise on the series' kernel" \
	guest-main.log "sed '0,/^# sysfs-transcript: .* -> EINVAL /s/\(^# sysfs-transcript: .*\) -> EINVAL /\1 -> OK /'"
# (one write of the value the guest expects goes: an earlier write of
# another value, the boot's, would leave the count the check reads intact)
s3val=$(sed -n 's/^# s3-msr-writes: value \([0-9a-fx]*\) .*/\1/p' "$res/guest-main.log" 2>/dev/null | tail -n 1)
s3val=$(printf '0x%x' "${s3val:-0}")
mutant s3-restore 50-umwait-suspend-msr.t "a resume that does not write IA32_UMWAIT_CONTROL back on one CPU" \
	qemu-trace.log "sed '0,/^waitpkg_msr_write cpu 1 val $s3val\$/{/^waitpkg_msr_write cpu 1 val $s3val\$/d}'"
done_testing
