# umwait-trace's error paths: each is one clear line on stderr and exit status 2.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh

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

root="umwait-trace: must run as root (BPF, perf events, debugfs and the MSR device need it)"
fails "$root" "caps as uid 1000" as_lab umwait-trace caps $tl
fails "$root" "events as uid 1000" as_lab umwait-trace events
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

# No kernel BTF: hide /sys/kernel/btf under an empty tmpfs for the duration.
if mount -t tmpfs none /sys/kernel/btf 2>$tmp/err; then
	nobtf="umwait-trace: kernel has no BTF (/sys/kernel/btf/vmlinux: No such file or directory): build it with CONFIG_DEBUG_INFO_BTF=y"
	fails "$nobtf" "caps without kernel BTF" umwait-trace caps $tl
	fails "$nobtf" "events without kernel BTF" umwait-trace events
	umount /sys/kernel/btf
	check "/sys/kernel/btf/vmlinux is back" test -r /sys/kernel/btf/vmlinux
else
	skip "the no-BTF error" "cannot mount over /sys/kernel/btf: $(cat $tmp/err)"
fi

umwait-trace frobnicate >$tmp/out 2>$tmp/err
is "$?" 2 "an unknown command: exit status 2"
is "$(head -n 1 $tmp/err)" "umwait-trace: unknown command 'frobnicate'" "an unknown command: named on stderr"
rm -rf $tmp
done_testing
