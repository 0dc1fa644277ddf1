#!/bin/bash
# The series builds without a warning with W=1 against Debian's own distribution
# config (linux-config-6.1: PARAVIRT_XXL, where rdmsr() is a paravirt call and
# an unused high half warns, and everything else Debian enables): after each
# patch, every object the series has changed so far is rebuilt with W=1
# (vm/build-w1, cached by vm/ensure kernel-w1 under a key of its inputs).
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"

dir=$("$top/vm/ensure" kernel-w1 2>"${LAB_RESULTS:-/tmp}/kernel-w1.err")
if [ -z "$dir" ] || [ ! -r "$dir/result" ]; then
	fail "vm/ensure kernel-w1 built the series with W=1"
	tail -n 20 "${LAB_RESULTS:-/tmp}/kernel-w1.err" | sed 's/^/#   /'
	done_testing
	exit
fi

mapfile -t patches < <(grep -v -e '^#' -e '^[[:space:]]*$' "$top/patches/series")
is "$(wc -l <"$dir/result")" "${#patches[@]}" "one W=1 result per patch of patches/series"
n=0
while read -r p objs warnings errors; do
	n=$((n + 1))
	if [ "$objs" = - ]; then
		pass "$p: touches no .c file (nothing to build)"
		continue
	fi
	is "$errors" 0 "$p: $objs build with W=1 and Debian's config"
	is "$warnings" 0 "$p: $objs: no warning with W=1"
	if [ "$warnings$errors" != 00 ]; then
		grep -E 'warning:|error:' "$dir/log/$n" | head -10 | sed 's/^/#   /'
	fi
done <"$dir/result"
diag "W=1 results ($dir/result):"
sed 's/^/#   /' "$dir/result"
done_testing
