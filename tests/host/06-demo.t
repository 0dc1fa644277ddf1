#!/bin/bash
# make demo, as a user runs it (README's first command): it must run to its
# end and show what it says it shows. The demo's script carries on past a
# failed step, so its exit status alone would hide a broken step: each
# step's output is checked here. A demo that no longer boots, a tool whose
# output or options changed under it, a step that prints an error: each
# fails one of these checks.
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make -s -C "$top" --no-print-directory demo </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
is "$rc" 0 "make demo exits 0"
check "it ran to its end (\"== What you just saw\")" grep -q '^== What you just saw' "$tmp/out"
check "the guest lists WAITPKG (step 1)" grep -q '^ *4 waitpkg$' "$tmp/out"
# step 2: 1M-cycle TPAUSEs with max_time=100000, then with no limit
mapfile -t runs < <(grep 'tpause-loop: .* waits=' "$tmp/out")
is "${#runs[@]}" 2 "step 2 ran tpause-loop twice"
# (early= counts every wait that returned before its deadline, the capped
# ones too: ended_early= is the uncapped part of it)
r_waits= r_capped=x r_ended_early=y
eval "$(report tpause-loop "${runs[0]:-}")"
is "$r_waits:$((r_capped + r_ended_early))" 200:200 \
	"max_time=100000: every 1M-cycle TPAUSE ended at the limit or earlier (capped $r_capped, early $r_ended_early)"
r_capped=x
eval "$(report tpause-loop "${runs[1]:-}")"
is "$r_capped" 0 "max_time=0: none capped"
check "status says every CPU holds the cached value (step 3)" grep -q '^verdict: OK: all 4 online CPUs hold the cached value' "$tmp/out"
tot=$(sed -n 's/^total: waits=\([0-9]*\) capped=\([0-9]*\) .*/\1 \2/p' "$tmp/out" | tail -n 1)
cmp_ok "${tot%% *}" -gt 0 "caps counted oneTBB's waits (step 4: ${tot:-none})"
cmp_ok "${tot##* }" -gt 0 "and the OS limit of 100 cycles capped some of them"
check "sites -v shows rte_power_monitor's UMWAIT (step 5)" grep -q 'umwait rte_power_monitor+0x' "$tmp/out"
is "$(grep -c ' control_update ' "$tmp/out")" 4 "events: the four writes of step 6, one control_update each"
is "$(grep -E -c '^umwait-trace: |not found|[Uu]sage:' "$tmp/out" "$tmp/err" | awk -F: '{ n += $NF } END { print n }')" 0 \
	"no step printed an error"
done_testing
