# umwait-trace's error paths: each is one clear line on stderr and exit status 2.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/state.sh
state_guard

tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)

# fails WANT_LINE DESC ARGS...: umwait-trace ARGS exits 2, prints WANT_LINE alone on stderr
fails() {
	_want=$1 _desc=$2
	shift 2
	"$@" >$tmp/out 2>$tmp/err
	is "$?" 2 "$_desc: exit status 2"
	is "$(cat $tmp/err)" "$_want" "$_desc: one line on stderr"
	is "$(cat $tmp/out)" "" "$_desc: nothing on stdout"
}

# caps and events need capabilities, not root (tests/guest/52 runs them as
# uid 1000 with those); status reads the MSRs, root's
caps="umwait-trace: needs CAP_SYS_ADMIN (root has it): this kernel creates uprobes for it alone, CAP_BPF and CAP_PERFMON are not enough"
events="umwait-trace: needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN (root has them): missing CAP_BPF and CAP_PERFMON"
root="umwait-trace: must run as root (BPF, perf events, debugfs and the MSR device need it)"
fails "$caps" "caps as uid 1000" as_lab umwait-trace caps $tl
fails "$events" "events as uid 1000" as_lab umwait-trace events
fails "$root" "status as uid 1000" as_lab umwait-trace status
is "$(as_lab id -u)" 1000 "(as_lab runs as uid 1000)"
is "$(as_lab umwait-trace sites $tl | wc -l)" 2 "sites needs no root: uid 1000 lists tpause-loop's 2 sites"

fails "umwait-trace: no process with PID 99999" "caps -p of a PID that does not exist" \
	umwait-trace caps -p 99999
fails "umwait-trace: no TPAUSE/UMWAIT site in: /bin/busybox /lab/bin/msr" \
	"caps on files without a site (lists them)" umwait-trace caps /bin/busybox /lab/bin/msr
fails "umwait-trace: cannot open /nonexistent: No such file or directory" \
	"caps on a file that does not exist" umwait-trace caps /nonexistent

# "kernel lacks umwait tracepoints" is asserted in tests/guest-base (Debian's
# kernel without the series)

# No kernel BTF: hide /sys/kernel/btf under an empty tmpfs for the duration
# (the state guard unmounts it if this file ends before it does).
check "an empty tmpfs hides /sys/kernel/btf" mount -t tmpfs none /sys/kernel/btf
nobtf="umwait-trace: kernel has no BTF (/sys/kernel/btf/vmlinux: No such file or directory): build it with CONFIG_DEBUG_INFO_BTF=y"
fails "$nobtf" "caps without kernel BTF" umwait-trace caps $tl
fails "$nobtf" "events without kernel BTF" umwait-trace events
umount /sys/kernel/btf
check "/sys/kernel/btf/vmlinux is back" test -r /sys/kernel/btf/vmlinux

# Bad input, every subcommand: one line (exactly), exit 2, nothing on stdout,
# and nothing loaded: one test each
# refuses DESC WANT_LINE ARGS...
refuses() {
	_desc=$1 _want=$2
	shift 2
	umwait-trace "$@" >$tmp/out 2>$tmp/err
	_rc=$?
	if [ "$_rc" = 2 ] && [ ! -s $tmp/out ] && [ "$(cat $tmp/err)" = "$_want" ]; then
		pass "$_desc: exit 2 and one line"
	else
		fail "$_desc: exit 2 and one line" "exit $_rc; want '$_want'; stderr '$(cat $tmp/err)'; stdout '$(head -c 200 $tmp/out)'"
	fi
}
see() { echo "(see 'umwait-trace $1 --help')"; }
head -c 5000 $tl >$tmp/cut
refuses "caps --max-entries 0" "umwait-trace caps: invalid number of entries '0' (1 to 16777216) $(see caps)" caps --max-entries 0 $tl
refuses "caps --max-entries -1" "umwait-trace caps: invalid number of entries '-1' (1 to 16777216) $(see caps)" caps --max-entries -1 $tl
refuses "caps --max-entries 99999999999" "umwait-trace caps: invalid number of entries '99999999999' (1 to 16777216) $(see caps)" caps --max-entries 99999999999 $tl
refuses "caps --max-entries abc" "umwait-trace caps: invalid number of entries 'abc' (1 to 16777216) $(see caps)" caps --max-entries abc $tl
refuses "caps --max-entries without its value" "umwait-trace caps: unknown option, or an option without its value: '--max-entries' $(see caps)" caps --max-entries
refuses "caps --residency maybe" "umwait-trace caps: invalid --residency 'maybe' (auto, force or off) $(see caps)" caps --residency maybe $tl
refuses "caps --format xml" "umwait-trace caps: invalid format 'xml' (text, json, prometheus or openmetrics) $(see caps)" caps --format xml $tl
refuses "caps -o without a metrics format" "umwait-trace: --output needs --format prometheus or openmetrics" caps -o $tmp/m.prom $tl
refuses "caps -o into a missing directory" "umwait-trace: cannot write into the directory of /nonexistent/m.prom: No such file or directory" \
	caps --format openmetrics -o /nonexistent/m.prom $tl
refuses "caps interval 0" "umwait-trace caps: invalid number '0' $(see caps)" caps 0 $tl
refuses "caps interval 99999999999999999999" "umwait-trace caps: invalid number '99999999999999999999' $(see caps)" caps 99999999999999999999 $tl
refuses "caps with a third number" "umwait-trace caps: unexpected argument '3' $(see caps)" caps 1 2 3 $tl
refuses "caps -p 4294967297 (never PID 1)" "umwait-trace caps: invalid PID '4294967297' (a number from 1 to 4194304) $(see caps)" caps -p 4294967297
refuses "caps -p -1" "umwait-trace caps: invalid PID '-1' (a number from 1 to 4194304) $(see caps)" caps -p -1
refuses "caps --frobnicate" "umwait-trace caps: unknown option, or an option without its value: '--frobnicate' $(see caps)" caps --frobnicate $tl
refuses "caps on a directory" "umwait-trace: /lab: not a regular file (a directory)" caps /lab
refuses "caps on a text file" "umwait-trace: /proc/cpuinfo: not an ELF file" caps /proc/cpuinfo
refuses "caps on a truncated ELF file" "umwait-trace: $tmp/cut: a corrupt or truncated ELF file (its headers point past its 5000 bytes)" caps $tmp/cut
refuses "events -d abc" "umwait-trace events: invalid duration 'abc' $(see events)" events -d abc
refuses "events -d 0" "umwait-trace events: invalid duration '0' $(see events)" events -d 0
refuses "events with an argument" "umwait-trace events: unexpected argument 'x' $(see events)" events x
refuses "status --format xml" "umwait-trace status: invalid format 'xml' (text, json, prometheus or openmetrics) $(see status)" status --format xml
refuses "status with an argument" "umwait-trace status: unexpected argument 'x' $(see status)" status x
refuses "sites with no FILE" "umwait-trace sites: give FILEs or -p PID $(see sites)" sites
# no permission: another user's process as uid 1000
as_lab umwait-trace sites -p 1 >$tmp/out 2>$tmp/err
is "$?:$(cat $tmp/err)" "2:umwait-trace: cannot read /proc/1/maps: Permission denied (another user's process: that takes CAP_SYS_PTRACE)" \
	"sites -p of another user's process as uid 1000: 'Permission denied', not 'no process'"

umwait-trace frobnicate >$tmp/out 2>$tmp/err
is "$?" 2 "an unknown command: exit status 2"
is "$(cat $tmp/err)" "umwait-trace: unknown command 'frobnicate' (status, events, caps or sites; see 'umwait-trace --help')" \
	"an unknown command: named on stderr in one line"
rm -rf $tmp
done_testing
