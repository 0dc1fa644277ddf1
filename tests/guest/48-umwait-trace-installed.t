# umwait-trace as "make install" put it (/lab/install, staged by the initramfs
# build): the one static file (no PT_INTERP) runs for status, sites and caps,
# whose counts must be tpause-loop's own. --format prometheus writes caps and
# status into files the node exporter way, --format openmetrics the same as
# OpenMetrics 1.0; the files, and what text and JSON said, go to the log
# ("om-*| " lines) for tests/host/45-umwait-trace-openmetrics.t.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/state.sh
state_guard

inst=/lab/install/usr/local
d=/sys/devices/system/cpu/umwait_control
dbg=/sys/kernel/debug/x86/umwait/control
tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)
om=$tmp/textfile
mkdir -p $om

for f in sbin/umwait-trace share/man/man8/umwait-trace.8 share/bash-completion/completions/umwait-trace; do
	check "installed: $inst/$f" test -s $inst/$f
done
# ut_start and the checks below run umwait-trace from PATH: the installed one
PATH=$inst/sbin:$PATH
is "$(command -v umwait-trace)" "$inst/sbin/umwait-trace" "umwait-trace on PATH is the installed one"
# has_interp FILE: 0 if the ELF64 FILE has a PT_INTERP program header (it
# needs ld.so), 1 if not, 2 if its program headers cannot be read
has_interp() {
	[ "$(od -An -c -N 4 "$1" | tr -d ' ')" = 177ELF ] || return 2
	_off=$(od -An -t u8 -j 32 -N 8 "$1" | tr -d ' ')
	_sz=$(od -An -t u2 -j 54 -N 2 "$1" | tr -d ' ')
	_n=$(od -An -t u2 -j 56 -N 2 "$1" | tr -d ' ')
	[ "${_n:-0}" -gt 0 ] 2>/dev/null && [ "${_sz:-0}" -gt 0 ] && [ -n "$_off" ] || return 2
	_i=0
	while [ "$_i" -lt "$_n" ]; do
		[ "$(od -An -t u4 -j $((_off + _i * _sz)) -N 4 "$1" | tr -d ' ')" = 3 ] && return 0
		_i=$((_i + 1))
	done
	return 1
}
has_interp $inst/sbin/umwait-trace
is "$?" 1 "the installed binary has program headers and no interpreter (PT_INTERP): static"

# print_file TAG FILE: FILE into the log for the host, each line "TAG| LINE"
print_file() {
	sed "s/^/$1| /" "$2"
}

# wait_for FILE PATTERN: until FILE has a line matching PATTERN (at most 60 s)
wait_for() {
	_i=0
	until grep -q "$2" "$1" 2>/dev/null || [ $_i -ge 600 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
}

# status: the verdict against debugfs, the kernel series' own per-CPU dump
out=$(umwait-trace status 2>&1)
is "$?" 0 "status: exit 0"
ncpu=$(grep -c '^cpu[0-9]* 0x000186a0 .* ok$' $dbg)
is "$(echo "$out" | sed -n 's/^verdict: //p')" "OK: all $ncpu online CPUs hold the cached value 0x186a0" \
	"status: verdict OK for the $ncpu CPUs debugfs shows holding 0x186a0"

# sites: tpause-loop has one TPAUSE and one UMWAIT
out=$(umwait-trace sites $tl)
is "$?" 0 "sites: exit 0"
is "$(echo "$out" | awk '{ print $1, $4 }' | sort | tr '\n' ' ')" "$tl tpause $tl umwait " \
	"sites: one TPAUSE and one UMWAIT in tpause-loop"

# caps as text, as Prometheus text (per site, -o, 1 s intervals) and as
# OpenMetrics (--per-pid, -o) side by side, against tpause-loop
echo 100000 >$d/max_time
# series SAMPLE FILE: the values of SAMPLE's series in FILE, summed
series() {
	caps_series "$2" "$1"
}
ut_begin $tmp/caps.out caps $tl
t_pid=$ut_pid
ut_begin $tmp/prom.out caps --format prometheus -o $om/caps.prom $tl 1
p_pid=$ut_pid
ut_begin $tmp/om.out caps --format openmetrics --per-pid -o $tmp/caps.om $tl 1
o_pid=$ut_pid
$tl -i tpause -n 60 -c 1000000 >$tmp/loop.out 2>&1 &
loop_pid=$!
wait $loop_pid
line=$(cat $tmp/loop.out)
r_waits=x r_capped=x
eval "$(report tpause-loop "$line")"
echo "# tpause-loop: $line"
# an interval's files hold every wait of the process once it has ended
_i=0
until [ "$(series umwait_waits_total $om/caps.prom 2>/dev/null)" = "$r_waits" ] &&
	[ "$(series umwait_waits_total $tmp/caps.om 2>/dev/null)" = "$r_waits" ] || [ $_i -ge 600 ]; do
	_i=$((_i + 1))
	sleep 0.1
done
cp $om/caps.prom $tmp/caps.prom.last 2>/dev/null
cp $tmp/caps.om $tmp/caps.om.last 2>/dev/null
ut_end "prometheus: caps exits 0 on Ctrl-C" $p_pid
ut_end "openmetrics: caps exits 0 on Ctrl-C" $o_pid
ut_end "text: caps exits 0 on Ctrl-C" $t_pid
is "$(caps_totals $tmp/caps.out)" "$r_waits $r_capped" "installed caps counts tpause-loop's waits and capped waits exactly"
cmp_ok "$r_capped" -gt 0 "some waits were capped (the check is not vacuous)"
f=$tmp/caps.prom.last
is "$(series umwait_waits_total $f) $(series umwait_capped_total $f)" "$r_waits $r_capped" \
	"prometheus: the waits_total and capped_total of the sites are tpause-loop's"
is "$(grep '^umwait_waits_total{' $f 2>/dev/null | sed 's/offset="0x[0-9a-f]*",symbol="[^"]*",//' | sort)" \
	"$(printf '%s\n%s' "umwait_waits_total{exe=\"\",file=\"$tl\",insn=\"umwait\"} 0" \
		"umwait_waits_total{exe=\"tpause-loop\",file=\"$tl\",insn=\"tpause\"} $r_waits")" \
	"prometheus: a series per site (exe, file, offset, symbol, insn), no pid label: the TPAUSE's for tpause-loop, the UMWAIT no process ran with exe=\"\" and 0"
is "$(grep -c '^# EOF' $f 2>/dev/null)" 0 "prometheus: text 0.0.4, no # EOF"
is "$(ls -A $om)" "" "prometheus -o: the file is removed when caps ends (it would serve stale counts)"
is "$(cat $tmp/prom.out $tmp/om.out)" "" "-o: nothing on stdout"
f=$tmp/caps.om.last
is "$(grep "^umwait_waits_total{pid=\"$loop_pid\",comm=\"tpause-loop\",exe=\"tpause-loop\"," $f 2>/dev/null |
	awk '{ s += $NF } END { print s + 0 }')" "$r_waits" "openmetrics --per-pid: the process's series carry pid, comm and exe, and count its waits"
is "$(tail -n 1 $f 2>/dev/null)" "# EOF" "openmetrics: the exposition ends in # EOF"
echo "om-expect| caps pid=$loop_pid waits=$r_waits capped=$r_capped"
print_file om-caps $tmp/caps.prom.last
print_file om-caps-om $tmp/caps.om.last

# A program whose name holds what labels and JSON strings must escape or
# replace: spaces (in its directory too), double quotes, a backslash, a byte
# that is no UTF-8 (0xff) and two-byte characters, so that the 15 bytes of
# its comm cut the second of them in two. Two processes of it, one after the
# other, under caps as Prometheus text (per site), as OpenMetrics (--per-pid)
# and as JSON; the file after each process goes to the log for
# tests/host/45, which serves both in turn to a real Prometheus.
odd_dir="$tmp/odd dir"
mkdir -p "$odd_dir"
odd="$odd_dir/$(printf 'tl "q" \\ \377 x\303\251\303\251\303\251')"
cp $tl "$odd"
fffd=$(printf '\357\277\275')
# what the labels must say: 0xff and the cut character as U+FFFD, " and \ escaped
want_exe=$(printf 'tl \\"q\\" \\\\ %s x\303\251\303\251\303\251' "$fffd")
want_file="$tmp/odd dir/$want_exe"
want_comm=$(printf 'tl \\"q\\" \\\\ %s x\303\251%s' "$fffd" "$fffd")
# loop_counts PROG N: PROG (a tpause-loop) runs N 1M-cycle TPAUSEs; "WAITS CAPPED" as it counted them
loop_counts() {
	"$1" -i tpause -n "$2" -c 1000000 >$tmp/loop.run 2>&1
	sed -n 's/^tpause-loop: .*waits=\([0-9]*\) capped=\([0-9]*\) .*/\1 \2/p' $tmp/loop.run
}
# occurrences STRING: how often STRING occurs in the input, as bytes
occurrences() {
	S="$1" awk '{ while ((i = index($0, ENVIRON["S"])) > 0) { n++; $0 = substr($0, i + length(ENVIRON["S"])) } } END { print n + 0 }'
}
# waits_are FILE WAITS: whether FILE's umwait_waits_total add up to WAITS
waits_are() {
	[ "$(series umwait_waits_total "$1" 2>/dev/null)" = "$2" ]
}
ut_begin $tmp/oddp.out caps --format prometheus -o $om/odd.prom "$odd" 1
p_pid=$ut_pid
ut_begin $tmp/oddo.out caps --format openmetrics --per-pid -o $tmp/odd.om "$odd" 1
o_pid=$ut_pid
ut_begin $tmp/oddj.out caps --json "$odd"
j_pid=$ut_pid
set -- $(loop_counts "$odd" 20)
w1=${1:-0} c1=${2:-0}
until_true 60 waits_are $om/odd.prom $w1
cp $om/odd.prom $tmp/odd1.prom 2>/dev/null
set -- $(loop_counts "$odd" 30)
w2=${1:-0} c2=${2:-0}
until_true 60 waits_are $om/odd.prom $((w1 + w2))
until_true 60 waits_are $tmp/odd.om $((w1 + w2))
cp $om/odd.prom $tmp/odd2.prom 2>/dev/null
cp $tmp/odd.om $tmp/odd2.om 2>/dev/null
ut_end "odd name, prometheus: caps exits 0 on Ctrl-C" $p_pid
ut_end "odd name, openmetrics: caps exits 0 on Ctrl-C" $o_pid
ut_end "odd name, JSON: caps exits 0 on Ctrl-C" $j_pid
is "$w1 $w2" "20 30" "odd name: its two processes ran 20 and 30 TPAUSEs"
cmp_ok "$c2" -gt 0 "odd name: max_time capped some of the second's (the host's rate is not 0)"
is "$(series umwait_waits_total $tmp/odd1.prom) $(series umwait_capped_total $tmp/odd1.prom)" "$w1 $c1" \
	"odd name, prometheus: after the first process, its counts"
sel="exe=\"$want_exe\",file=\"$want_file\","
is "$(grep -F "umwait_capped_total{$sel" $tmp/odd2.prom 2>/dev/null | grep -F 'insn="tpause"} ' | awk '{ print $NF }')" \
	$((c1 + c2)) \
	"odd name, prometheus: one TPAUSE series whose exe and file labels hold \\\" and \\\\ escaped, 0xff as U+FFFD, and count both processes"
is "$(grep -F "umwait_waits_total{pid=" $tmp/odd2.om 2>/dev/null | grep -cF "comm=\"$want_comm\",$sel")" 2 \
	"odd name, openmetrics --per-pid: each process's comm label has the character its 15 bytes cut as U+FFFD"
json=$(caps_json_total $tmp/oddj.out)
is "$(echo "$json" | occurrences "\"comm\": \"$want_comm\", \"file\": \"$want_file\"")" 2 \
	"odd name, JSON: each process's comm and file strings escaped the same way"
echo "om-expect| odd w1=$w1 c1=$c1 w2=$w2 c2=$c2 dir=$tmp"
print_file om-odd1 $tmp/odd1.prom
print_file om-odd2 $tmp/odd2.prom
print_file om-odd-om $tmp/odd2.om
echo "om-odd-json| $json"
rm -rf "$odd_dir"

# A full file system under -o: caps says so once, tries again each interval,
# and loses no count: once there is room, the file has every wait. The
# clock is a second caps writing to where there is room (ut_rewritten).
full=$tmp/full
mkdir $full
mount -t tmpfs -o size=64k,mode=0755 full $full
dd if=/dev/zero of=$full/fill bs=4k 2>/dev/null
ut_begin $tmp/full.out caps --format prometheus -o $full/caps.prom $tl 1
f_pid=$ut_pid f_up=$ut_up
ut_begin $tmp/clock.out caps --format prometheus -o $om/clock.prom $tl 1
c_pid=$ut_pid c_up=$ut_up
set -- $(loop_counts $tl 40)
fw=${1:-0} fc=${2:-0}
[ $f_up = 1 ] && wait_for $tmp/full.out.err 'trying again each interval'
ut_up=$c_up
ut_check "full: the clock caps wrote its file three more times meanwhile" ut_rewritten $om/clock.prom 3
is "$(cat $tmp/full.out.err | sed -n '/^Attached/!p')" \
	"umwait-trace: warning: cannot write $full/caps.prom: No space left on device: trying again each interval" \
	"full: one line on stderr for the failed writes of several intervals, however many"
check "full: caps still runs" kill -0 $f_pid
is "$(ls $full)" fill "full: no file left behind by the failed writes"
rm $full/fill
[ $f_up = 1 ] && wait_for $tmp/full.out.err 'written again'
is "$(tail -n 1 $tmp/full.out.err)" "umwait-trace: warning: the metrics are written again" \
	"full: once there is room, one line says the metrics are written again"
[ $f_up = 1 ] && until_true 60 waits_are $full/caps.prom $fw
is "$(series umwait_waits_total $full/caps.prom) $(series umwait_capped_total $full/caps.prom)" "$fw $fc" \
	"full: the first file written has every wait and capped wait of the run ($fw, $fc) that ran while none could be"
ut_end "full: caps exits 0 on Ctrl-C" $f_pid
ut_end "full: the clock caps exits 0 on Ctrl-C" $c_pid
umount $full

# status with cpu2 changed behind the kernel's back: prometheus, openmetrics and JSON
msr write 2 0xe1 0x61a81
umwait-trace status --format prometheus -o $om/status.prom
is "$?" 1 "status --format prometheus: exit 1 when a CPU differs, as in text"
umwait-trace status --format openmetrics >$tmp/status.om
json=$(umwait-trace status --json)
msr write 2 0xe1 0x186a0
is "$(grep '^umwait_control_cpu{cpu="2"}' $om/status.prom)" 'umwait_control_cpu{cpu="2"} 400001' \
	"status prometheus: cpu2's raw value is what was written to it"
is "$(grep '^umwait_control_cpu_match{cpu="2"}' $om/status.prom)" 'umwait_control_cpu_match{cpu="2"} 0' \
	"status prometheus: cpu2 does not match"
check "status openmetrics: ends in # EOF" sh -c "tail -n 1 $tmp/status.om | grep -qx '# EOF'"
is "$(stat -c %a $om/status.prom)" 644 "status -o: the file is readable by the exporter's user (0644)"
echo "om-status-json| $json"
print_file om-status $om/status.prom
print_file om-status-om $tmp/status.om

is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "controls restored"
rm -rf $tmp
done_testing
