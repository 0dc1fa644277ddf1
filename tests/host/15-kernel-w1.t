#!/bin/bash
# The series builds without a warning with W=1 against Debian's own distribution
# config, for each tree: patches/7.2 on linux-source-7.2 with linux-config-7.2,
# and its backports patches/6.12 and patches/6.1 on their trees with their
# configs (PARAVIRT_XXL, where rdmsr() is a paravirt call and an unused high
# half warns, and everything else Debian enables). After each patch, every
# object the series has changed so far is rebuilt with W=1 and sparse (C=1) by
# vm/build-w1, cached by vm/ensure under a key of its inputs: neither may report
# anything on them that it does not report on the same files without the series
# (arch/x86/power/cpu.c has reports of its own: sparse's "symbol 'saved_context'
# was not declared" in every tree, and in 6.1 W=1's missing prototype of
# hibernate_resume_nonboot_cpu_disable() with sparse's report of the same).
# Debian 12's sparse (0.6.4) checks 6.1 and 6.12; 7.2 needs a newer one, which
# vm/build-w1 builds from Debian unstable's source (else kbuild would drop C=1
# with a mere warning, and this file would count no report at all).
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/patches.sh"

# w1 ARTIFACT SERIES: check one tree's W=1 results
w1() {
	local name=$1 series=$2 dir n p objs warnings errors sparse err=${LAB_RESULTS:-/tmp}/$1.err
	dir=$("$top/vm/ensure" "$name" 2>"$err")
	if [ -z "$dir" ] || [ ! -r "$dir/result" ]; then
		fail "$name: vm/ensure built the series with W=1"
		tail -n 20 "$err" | sed 's/^/#   /'
		return
	fi
	mapfile -t patches < <(series "$series")
	is "$(wc -l <"$dir/result")" "${#patches[@]}" "$name: one W=1 result per patch of ${series#"$top"/}"
	n=0
	while read -r p objs warnings errors sparse; do
		n=$((n + 1))
		if [ "$objs" = - ]; then
			pass "$name: $p touches no .c file (nothing to build)"
			continue
		fi
		is "$errors" 0 "$name: $p: $objs build with W=1 and Debian's config"
		is "$warnings" 0 "$name: $p: $objs: no new warning with W=1"
		is "$sparse" 0 "$name: $p: $objs: no new sparse report (C=1)"
		if [ "$warnings$errors$sparse" != 000 ]; then
			sed 's#^.*/src/##' "$dir/log/new.$n" | head -10 | sed 's/^/#   /'
		fi
	done <"$dir/result"
	diag "$name: W=1 results ($dir/result):"
	sed 's/^/#   /' "$dir/result"
	diag "$name: the same files without the series (their reports are not the series'):"
	grep -E 'warning:|error:' "$dir/log/base" | sed 's#^.*/src/##' | sort -u | sed 's/^/#   /'
}

w1 kernel-w1 "$top/patches/6.1/series"
w1 kernel-6.12-w1 "$top/patches/6.12/series"
w1 kernel-7.2-w1 "$top/patches/7.2/series"
done_testing
