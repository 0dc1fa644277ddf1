#!/bin/bash
# Negative controls for the host cross-checks: each mutant names one check
# of one file, which runs again on this run's results with one deliberate
# fault put in (a mutant of the model, of the tracer or of the guest's
# report): that check must fail there and pass on the real results. A
# change that makes a check vacuous (it passes whatever it reads) fails
# here, and so does a mutant whose check fails already. The guest-side checks have their own (umwait-trace mutants built
# from tests/mutants, run by tests/guest/41; the --hist-perturbing observer control of
# tests/host/24).
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
res=${LAB_RESULTS:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# each trace read once for all the runs below (tests/lib/qemu_trace.py)
export LAB_TRACE_CACHE=$tmp/trace-cache
mkdir "$LAB_TRACE_CACHE"

# real CHECK: the TAP of tests/host/CHECK on this run's results (run once)
real() {
	[ -e "$tmp/real-$1" ] || LAB_RESULTS=$res bash "$top/tests/host/$1" >"$tmp/real-$1" 2>&1
	cat "$tmp/real-$1"
}

# lines TAP NAME: the TAP lines of checks whose description holds NAME
lines() {
	grep -E '^(not )?ok [0-9]+ - ' <<<"$1" | grep -F -- "$2"
}

# mutant NAME CHECK TEST DESC FILE FILTER: this run's results with FILE
# passed through FILTER (a shell command, stdin to stdout; the other files
# linked, not copied), and tests/host/CHECK run on them: the one check whose
# description holds TEST must fail there, and pass on the real results (a
# check that fails already catches nothing), and the script that judges
# it must not have died on the mutant (that would fail it for no reason
# of its own)
mutant() {
	local name=$1 check=$2 test=$3 desc=$4 file=$5 filter=$6 out want got f
	need_input "$res/$file" . "this run's $file"
	rm -rf "$tmp/res"
	mkdir "$tmp/res"
	for f in "$res"/*; do
		[ "$(basename "$f")" = "$file" ] || ln -s "$f" "$tmp/res/"
	done
	sh -c "$filter" <"$res/$file" >"$tmp/res/$file"
	if cmp -s "$res/$file" "$tmp/res/$file"; then
		fail "mutant $name ($desc): $check '$test' fails on it" "the edit changed nothing in $file: the mutant is no mutant"
		return
	fi
	out=$(LAB_RESULTS=$tmp/res bash "$top/tests/host/$check" 2>&1)
	want=$(lines "$(real "$check")" "$test")
	got=$(lines "$out" "$test")
	if [ "$(grep -c . <<<"$want")" != 1 ] || [ "$(grep -c . <<<"$got")" != 1 ]; then
		fail "mutant $name ($desc): $check '$test' fails on it" \
			"the name must pick one check: real results $(grep -c . <<<"$want"), mutant $(grep -c . <<<"$got")"
	elif [ "${want%% *}" != ok ]; then
		fail "mutant $name ($desc): $check '$test' fails on it" "it fails on the real results already: $want"
	elif [ "${got%% *}" = ok ]; then
		fail "mutant $name ($desc): $check '$test' fails on it" "it passed: the check is vacuous"
	elif grep -q '^not ok [0-9]* - .* ran to its end' <<<"$out"; then
		# a script that judges it died: that fails every check, this one
		# for no reason of its own
		fail "mutant $name ($desc): $check '$test' fails on it" \
			"the script that judges it died on the mutant: $(grep -m1 -A1 '^not ok [0-9]* - .* ran to its end' <<<"$out" | tail -n 1)"
	else
		pass "mutant $name ($desc): $check '$test' fails on it, passes on the real results"
	fi
}

# the WAITPKG model
mutant model-no-cf 20-qemu-trace.t "tpause-capped: tpause-loop's capped count equals the traced CF=1 count" \
	"a model that never sets CF: the OS limit ends waits with CF=0" \
	qemu-trace.log "sed 's/reason oslimit cf 1/reason oslimit cf 0/'"
mutant model-no-limit 20-qemu-trace.t "tpause-capped: the OS limit ended at least 90%" \
	"a model that ignores the OS limit: capped waits run to their deadline" \
	qemu-trace.log "sed 's/reason oslimit cf 1/reason deadline cf 0/'"
mutant model-no-store 20-qemu-trace.t "umwait-store: the store ended the last wait of most rounds" \
	"a model where a store to the monitored line does not end UMWAIT" \
	qemu-trace.log "sed 's/reason store cf 0/reason interrupt cf 0/'"
mutant model-migrates-monitor 20-qemu-trace.t "snapshot umwait: the UMWAIT under way" \
	"a model that migrates the monitor: no UMWAIT ends on loadvm" \
	qemu-trace.log "sed 's/reason migration cf 0/reason interrupt cf 0/'"
mutant model-no-demotion 20-qemu-trace.t "c02-disabled: enable_c02=0 demotes every C0.2 request" \
	"a model that ignores enable_c02=0 (C0.2 requests stay in C0.2)" \
	qemu-trace.log "sed 's/req C0.2 used C0.1/req C0.2 used C0.2/'"
# the tracer, against the trace
mutant caps-drops 21-clients-qemu-trace.t "main: tbb-100000: caps' waits and capped per site are the trace's" \
	"caps missing a wait at every site of the library clients" \
	guest-main.log "awk '/^# caps [a-z0-9-]*: [0-9]+ [a-z]+ [1-9]/ && !/^# caps lay-/ { \$6 = \$6 - 1 } 1'"
mutant caps-clients-past-as-deadline 21-clients-qemu-trace.t "main: omp-tpause-100000: caps' outcomes per site follow" \
	"caps calling the library clients' past waits ones that ran to their deadline" \
	guest-main.log "sed 's/^\\(# outcomes-site [a-z0-9-]*: 0x[0-9a-f]* capped=[0-9]* deadline=\\)[0-9]*\\( early=[0-9]* past=\\)\\([0-9]*\\)\$/\\1\\3\\20/'"
mutant caps-layouts-one-more 24-layouts-qemu-trace.t "6.1: lay-gcc-O2: caps' waits and capped at every site" \
	"caps counting one more wait at each site of the layout corpus" \
	guest-main.log "awk '/^# caps lay-[a-zA-Z0-9-]*: [0-9]+ [a-z]+ [0-9]/ { \$6 = \$6 + 1 } 1'"
mutant outcomes-early 25-outcomes-qemu-trace.t "6.1: capped: caps' early is at least" \
	"caps calling waits early that the trace ended otherwise" \
	guest-main.log "sed 's/^\\(# outcomes [a-z]*: caps capped=[0-9]* deadline=[0-9]* \\)early=/\\1early=1/'"
mutant caps-past-as-deadline 25-outcomes-qemu-trace.t "6.1: past: caps' past is at least" \
	"caps calling waits whose deadline had passed ones that ran to it" \
	guest-main.log "sed 's/^\\(# outcomes [a-z]*: caps capped=[0-9]* deadline=\\)[0-9]*\\( early=[0-9]* past=\\)\\([0-9]*\\)/\\1\\3\\20/'"
# the observer: a probe on the way from each wait's deadline to the wait (a
# scanner that probes a wait's own path) delays every wait's start by a
# trap, 2^18 cycles: as if each deadline had been computed that much earlier
# (a deadline nearer 0 than that, the markers' 0, stays)
cat >"$tmp/late.py" <<'PY'
import re, sys
def earlier(m):
    d = int(m.group(1), 16)
    return " deadline 0x%x " % (d - (1 << 18) if d >= 1 << 18 else d)
for line in sys.stdin:
    if line.startswith("waitpkg_wait ") and " cpl 3 " in line:
        line = re.sub(r" deadline (0x[0-9a-f]+) ", earlier, line)
    sys.stdout.write(line)
PY
mutant observer-tbb 21-clients-qemu-trace.t "main: tbb-100: the median cycles from oneTBB's RDTSC to its TPAUSE" \
	"an observer with a probe between each wait's deadline and the wait" \
	qemu-trace.log "python3 $tmp/late.py"
mutant observer-layouts 24-layouts-qemu-trace.t "6.1: lay-gcc-O2: caps attached, at every site the median cycles" \
	"an observer with a probe between each wait's deadline and the wait" \
	qemu-trace.log "python3 $tmp/late.py"
# the kernel series' ABI
mutant sysfs-abi 30-umwait-sysfs-abi.t "the transcripts of the base kernel and ours are identical" \
	"a sysfs write that answers otherwise on the series' kernel" \
	guest-main.log "sed '0,/^# sysfs-transcript: .* -> EINVAL /s/\(^# sysfs-transcript: .*\) -> EINVAL /\1 -> OK /'"
# (one write of the value the guest expects goes: an earlier write of
# another value, the boot's, would leave the count the check reads intact)
s3val=$(sed -n 's/^# s3-msr-writes: value \([0-9a-fx]*\) .*/\1/p' "$res/guest-main.log" 2>/dev/null | tail -n 1)
s3val=$(printf '0x%x' "${s3val:-0}")
mutant s3-restore 50-umwait-suspend-msr.t "6.1: QEMU saw cpu1 write" \
	"a resume that does not write IA32_UMWAIT_CONTROL back on one CPU" \
	qemu-trace.log "sed '0,/^waitpkg_msr_write cpu 1 val $s3val\$/{/^waitpkg_msr_write cpu 1 val $s3val\$/d}'"
done_testing
