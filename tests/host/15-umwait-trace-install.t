#!/bin/bash
# umwait-trace on its own: "make umwait-trace" in a clean copy of the tree
# (what the working tree holds, committed or not) with a lab cache that holds
# nothing but Zydis's Debian source (copied from the lab's own cache, where
# vm/ensure zydis keeps it: no network, no mirror to fail) builds Zydis and
# the tool without starting a kernel or QEMU build and makes one static file; "make install DESTDIR=..." installs exactly the binary, the
# man page, the bash completion, the caps --all service and the alerting
# rules (systemd-analyze and promtool check them), "make uninstall" removes them; the man
# page is lint clean and, like the completion, knows every option the
# binary's --help lists.
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Zydis's source as vm/build-zydis downloads it (apt-get source), from the
# lab's cache: vm/ensure zydis fetched it there once
zv=$("$top/vm/build-zydis" --version)
seed=$("$top/vm/cache-dir")/zydis-source-$zv
"$top/vm/ensure" zydis >/dev/null 2>"$tmp/ensure.log"
check "the lab's cache holds Zydis $zv's Debian source (vm/ensure zydis)" test -r "$seed/zydis_$zv.dsc"
[ -r "$seed/zydis_$zv.dsc" ] || sed 's/^/#   /' "$tmp/ensure.log" | tail -n 5
export UMWAIT_LAB_CACHE=$tmp/cache
mkdir "$UMWAIT_LAB_CACHE"
cp -a "$seed" "$UMWAIT_LAB_CACHE/" 2>/dev/null

# the tree as it is (committed or not, less what git ignores), not HEAD
mkdir "$tmp/clone"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	cpio -0pdm --quiet "$tmp/clone") || {
	fail "a copy of the tree"
	done_testing
	exit
}
start=$(date +%s.%N)
make -C "$tmp/clone" umwait-trace >"$tmp/build.log" 2>&1
rc=$?
end=$(date +%s.%N)
is "$rc" 0 "make umwait-trace in a clean copy of the tree with a lab cache of Zydis's source alone"
[ $rc -eq 0 ] || sed 's/^/#   /' "$tmp/build.log" | tail -20
diag "make umwait-trace took $(echo "$end - $start" | bc) s (Zydis built from source too)"
is "$(grep -c 'debian-source: downloading' "$tmp/build.log")" 0 "nothing downloaded: the build took the seeded source"
bin=$tmp/clone/build/tools/umwait-trace
check "it made build/tools/umwait-trace" test -x "$bin"
is "$(cd "$UMWAIT_LAB_CACHE" && ls -d qemu-* kernel-* 2>/dev/null)" "" \
	"no kernel or QEMU build in the lab cache"
is "$(grep -cE 'build-(kernel|qemu)|ensure: building (kernel|qemu)' "$tmp/build.log")" 0 \
	"no kernel or QEMU build in the build's output"
cmp_ok "$(cd "$UMWAIT_LAB_CACHE" && ls -d zydis-* | grep -vc -e '-source-' -e '\.')" -eq 1 \
	"the static Zydis was built into the cache (the build did run from scratch)"
is "$(readelf -l "$bin" | grep -c 'Requesting program interpreter')" 0 "the binary has no program interpreter (PT_INTERP)"
is "$(readelf -d "$bin" | grep -c '(NEEDED)')" 0 "the binary needs no shared library (no NEEDED)"
diag "$(file -b "$bin" | cut -d, -f1-4)"

# make install / uninstall, staged
dest=$tmp/dest
make -s -C "$tmp/clone" install DESTDIR="$dest" PREFIX=/usr >"$tmp/install.log" 2>&1
is "$?" 0 "make install DESTDIR=... PREFIX=/usr"
is "$(cd "$dest" && find . -type f -printf '%m %p\n' | sort)" "$(printf '%s\n' \
	'644 ./usr/lib/systemd/system/umwait-trace-caps.service' \
	'644 ./usr/share/bash-completion/completions/umwait-trace' \
	'644 ./usr/share/man/man8/umwait-trace.8' \
	'644 ./usr/share/umwait-trace/umwait.rules.yml' \
	'755 ./usr/sbin/umwait-trace')" \
	"make install: the binary, the man page, the completion, the service and the alerting rules, nothing else"
check "the installed binary is the built one" cmp -s "$bin" "$dest/usr/sbin/umwait-trace"
unit=$dest/usr/lib/systemd/system/umwait-trace-caps.service
is "$(sed -n 's/^ExecStart=//p' "$unit")" \
	"/usr/sbin/umwait-trace caps --all --format prometheus -o /var/lib/prometheus/node-exporter/umwait.prom 15" \
	"the service runs the installed caps --all into node exporter's textfile directory (Debian's)"
# systemd's own check of the unit, with the binary where the unit says
sed "s#/usr/sbin/umwait-trace#$dest/usr/sbin/umwait-trace#" "$unit" >"$tmp/umwait-trace-caps.service"
out=$(systemd-analyze verify --man=no "$tmp/umwait-trace-caps.service" 2>&1)
is "$?:$out" "0:" "systemd-analyze verify accepts the service"
# the alerting rules, by Prometheus's own promtool, and their unit tests
rules=$top/tools/umwait-trace/prometheus
out=$(promtool check rules "$dest/usr/share/umwait-trace/umwait.rules.yml" 2>&1)
is "$?" 0 "promtool check rules accepts the installed alerting rules"
out=$(cd "$rules" && promtool test rules umwait.rules.test.yml 2>&1)
is "$?" 0 "promtool test rules: the rules fire, and do not, as their unit tests say"
[ "$?" = 0 ] || diag "$out"
# their negative control: a rule that never fires fails its unit tests
mkdir "$tmp/rules"
sed 's/umwait:capped_share:rate5m > 0.5/umwait:capped_share:rate5m > 5/' "$rules/umwait.rules.yml" >"$tmp/rules/umwait.rules.yml"
cp "$rules/umwait.rules.test.yml" "$tmp/rules/"
(cd "$tmp/rules" && promtool test rules umwait.rules.test.yml >/dev/null 2>&1)
isnt "$?" 0 "and a rule that can never fire fails them (the unit tests can fail)"
diag "installed: $(cd "$dest" && find . -type f | sort | tr '\n' ' ')"
make -s -C "$tmp/clone" uninstall DESTDIR="$dest" PREFIX=/usr >>"$tmp/install.log" 2>&1
is "$?" 0 "make uninstall"
is "$(find "$dest" -type f)" "" "make uninstall removed every installed file"

# the man page: lint clean, and it names every option of every subcommand
man=$top/tools/umwait-trace/umwait-trace.8
is "$(mandoc -T lint -W warning "$man" 2>&1)" "" "mandoc -T lint -W warning: clean"
is "$(groff -man -ww -z "$man" 2>&1)" "" "groff -man -ww -z: clean"

# long options of SUBCOMMAND as its --help lists them
help_opts() {
	"$bin" "$1" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' |
		grep -vxE -- '--(help|usage|version)' | sort
}

# completion SUBCOMMAND: the long options bash completes after "umwait-trace SUBCOMMAND --"
completion() {
	bash -c '. /usr/share/bash-completion/bash_completion
		. "$1"
		COMP_WORDS=(umwait-trace "$2" --) COMP_CWORD=2 COMP_LINE="umwait-trace $2 --" COMP_POINT=${#COMP_LINE}
		_umwait_trace
		printf "%s\n" "${COMPREPLY[@]}"' _ "$top/tools/umwait-trace/umwait-trace.bash" "$1" |
		grep -vxE -- '--(help|usage|version)' | sort
}

for cmd in status events caps sites; do
	opts=$(help_opts $cmd)
	missing=
	for o in $opts; do
		# in roff every '-' of an option is written '\-'
		grep -qF -- "${o//-/\\-}" "$man" || missing="$missing $o"
	done
	is "$missing" "" "man page: every option of '$cmd' (${opts//$'\n'/ })"
	if [ -r /usr/share/bash-completion/bash_completion ]; then
		is "$(completion $cmd)" "$opts" "bash completion: '$cmd --<TAB>' offers exactly its options"
	else
		fail "bash completion of '$cmd'" "package bash-completion is not installed (vm/setup-host)"
	fi
done
done_testing
