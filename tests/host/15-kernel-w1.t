#!/bin/bash
# The series builds without a warning with W=1 against Debian's own distribution
# config, for each tree: patches/7.2 on linux-source-7.2 with linux-config-7.2,
# and its backports patches/6.12 and patches/6.1 on their trees with their
# configs (PARAVIRT_XXL, where rdmsr() is a paravirt call and an unused high
# half warns, and everything else Debian enables). After each patch, every
# object it changes (all the series has changed so far, for a header) is
# rebuilt with W=1 and sparse (C=1) by vm/build-w1, cached by vm/ensure
# under a key of its inputs: neither may report
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

# w1 ARTIFACT SERIES: check one tree's W=1 results: one check that the
# build ran, one that it has a result per patch, and three per patch of
# SERIES (a patch that touches no .c file has nothing to build: "- 0 0 0")
w1() {
	local name=$1 series=$2 dir n p objs warnings errors sparse err=$tmp/$1.err
	dir=$("$top/vm/ensure" "$name" 2>"$err")
	if [ -n "$dir" ] && [ -r "$dir/result" ]; then
		pass "$name: vm/ensure built the series with W=1"
	else
		fail "$name: vm/ensure built the series with W=1"
		tail -n 20 "$err" | sed 's/^/#   /'
	fi
	mapfile -t patches < <(series "$series")
	is "$(cut -d' ' -f1 "$dir/result" 2>/dev/null)" "$(printf '%s\n' "${patches[@]}")" \
		"$name: one W=1 result per patch of ${series#"$top"/}, in order"
	n=0
	for p in "${patches[@]}"; do
		n=$((n + 1))
		# a patch without its result line: each of its checks fails
		read -r _ objs warnings errors sparse < <(awk -v p="$p" '$1 == p' "$dir/result" 2>/dev/null)
		[ "$objs" = - ] && objs="no .c file"
		[ -n "$objs" ] || objs="no result" warnings=x errors=x sparse=x
		is "$errors" 0 "$name: $p: $objs build with W=1 and Debian's config"
		is "$warnings" 0 "$name: $p: $objs: no new warning with W=1"
		is "$sparse" 0 "$name: $p: $objs: no new sparse report (C=1)"
		if [ "$warnings$errors$sparse" != 000 ] && [ -r "$dir/log/new.$n" ]; then
			sed 's#^.*/src/##' "$dir/log/new.$n" | head -10 | sed 's/^/#   /'
		fi
	done
	[ -r "$dir/result" ] || return
	diag "$name: W=1 results ($dir/result):"
	sed 's/^/#   /' "$dir/result"
	diag "$name: the same files without the series (their reports are not the series'):"
	grep -E 'warning:|error:' "$dir/log/base" | sed 's#^.*/src/##' | sort -u | sed 's/^/#   /'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
w1 kernel-w1 "$top/patches/6.1/series"
w1 kernel-6.12-w1 "$top/patches/6.12/series"
w1 kernel-7.2-w1 "$top/patches/7.2/series"
done_testing
