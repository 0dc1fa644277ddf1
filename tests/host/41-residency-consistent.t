#!/bin/bash
# umwait-trace marks a CPU whose counts break C01 + C02 <= C0_WAIT <= cycles
# (the events are not what they are named: an E-core, a wrong model).  No
# PMU at hand breaks it, so the check itself (residency_consistent() in
# tools/umwait-trace/residency.c) runs here on counts whose answer is
# arithmetic: half a percent of the cycles allowed for counter skew, no more.
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

src=$top/tools/umwait-trace
if ! cc -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$src" -o "$tmp/rc" \
	"$top/tests/fixtures/residency-consistent.c" "$src/residency.c" "$src/cpu.c" "$src/output.c" 2>"$tmp/cc.err"; then
	fail "the check builds on its own" "$(head -5 "$tmp/cc.err")"
	done_testing
	exit
fi
mapfile -t got < <("$tmp/rc")
want=(consistent consistent consistent consistent inconsistent inconsistent consistent inconsistent)
why=("exact counts"
	"an idle CPU"
	"C0_WAIT above C01 + C02 (PAUSE counts there too)"
	"C0_WAIT 0.1% short of C01 + C02: counter skew"
	"C01 + C02 above C0_WAIT by 10% of the cycles (bug: no check)"
	"C0_WAIT above the cycles by 10% (bug: only the first inequality checked)"
	"C01 and C0_WAIT 0.4% above the cycles: counter skew"
	"wait cycles with no unhalted cycles (bug: a tolerance that grows unbounded)")
is "${#got[@]}" "${#want[@]}" "one answer per case"
for i in "${!want[@]}"; do
	is "${got[$i]##* -> }" "${want[$i]}" "${why[$i]}: ${got[$i]%% ->*}"
done
done_testing
