# umwait-trace caps --all, as the service runs it: every executable file any
# process maps, found again each interval. A program started after caps, and
# a library a running program loads with dlopen, are found, probed and
# counted (their waits from the interval they were found: at most what they
# ran, more than none); the metrics file is removed at exit. And what caps
# keeps does not grow with processes: 10,000 short-lived processes of one
# program leave its RSS within 64 MiB and its series at one per site.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
tmp=$(mktemp -d)
prom=$tmp/all.prom
echo 100000 >$d/max_time

# sum_for FILE_PATTERN: the waits of the series of files matching it
sum_for() {
	caps_series $prom umwait_waits_total "/$1\""
}

# until_counted PATTERN: until caps' file counts waits for such a file (60 s at most)
until_counted() {
	_i=0
	until [ "$(sum_for "$1")" -gt 0 ] || [ $_i -ge 600 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
	[ "$(sum_for "$1")" -gt 0 ]
}

cp /lab/bin/tpause-loop $tmp/tl-new
cp /lab/bin/libwait-sites.so $tmp/libnew.so
ut_begin $tmp/all.out caps --all --format prometheus -o $prom 1
check "--all: the attach line says every file any process maps" grep -q '(every file any process maps, looked for each interval)' $tmp/all.out.err
# a program that did not exist when caps started
$tmp/tl-new -i tpause -n 1000000 -c 200000 -p 1 --until-signal >$tmp/new.out 2>&1 &
new=$!
ut_check "--all: a program started later is found, probed and counted" until_counted tl-new
kill -USR1 $new
wait $new
mine=$(sed -n 's/^tpause-loop: .* waits=\([0-9]*\) .*/\1/p' $tmp/new.out)
# caps found it after it started: an interval's file written after it
# ended holds all caps counted of it, which is less than it ran
ut_check "--all: caps wrote its file twice after the program ended" ut_rewritten $prom 2
got=$(sum_for tl-new)
cmp_ok "$got" -le "${mine:-x}" "--all: never more than the program ran ($got of ${mine:-?})"
# a library loaded with dlopen by a program that runs on
/lab/bin/wait-paths --lib $tmp/libnew.so -n 100000 -c 20000 >/dev/null 2>&1 &
lib=$!
ut_check "--all: a library loaded with dlopen is found, probed and counted" until_counted libnew.so
kill -TERM $lib
wait $lib
ut_end "--all: caps exits 0 on Ctrl-C"
check "--all -o: the file is removed at exit" test ! -e $prom

# 10,000 processes of one program, each one wait, under caps by file. Each
# borrows its parent's memory until it exits (--spawn: clone with CLONE_VM):
# a process of its own to caps (its PID, its exit), without the copy of
# page tables that makes a fork cost 4 ms under TCG
wp=/lab/bin/wait-paths
ut_begin $tmp/many.out caps --format prometheus -o $prom $wp 5
rss0=$(awk '/^VmRSS:/ { print $2 }' /proc/$ut_pid/status 2>/dev/null)
$wp --spawn 10000 -c 1000 >$tmp/fork.out 2>&1
# the next interval's file, once it holds every process's wait
want=$(sed -n 's/^wait-paths: site=tpause waits=\([0-9]*\) .*/\1/p' $tmp/fork.out)
_i=0
until [ "$ut_up" = 0 ] || [ "$(sum_for wait-paths)" = "$want" ] || [ $_i -ge 300 ]; do
	_i=$((_i + 1))
	sleep 0.1
done
rss1=$(awk '/^VmRSS:/ { print $2 }' /proc/$ut_pid/status 2>/dev/null)
series=$(grep -c '^umwait_waits_total{exe="wait-paths",' $prom 2>/dev/null)
ut_end "10,000 processes: caps exits 0 on Ctrl-C"
diag "10,000 processes: caps' RSS $rss0 kB before, $rss1 kB after; $series series"
is "${want:-x}" 10000 "the fixture ran 10,000 processes, a wait each"
check "10,000 processes: caps' RSS read before and after" test -n "$rss0" -a -n "$rss1"
cmp_ok "${rss1:-x}" -le 65536 "10,000 processes: caps' RSS stays within 64 MiB (${rss1:-?} kB)"
cmp_ok "$(calc "${rss1:-x} - ${rss0:-x}")" -le 8192 "10,000 processes: and grows by less than 8 MiB ($(calc "${rss1:-x} - ${rss0:-x}") kB)"
is "$series" 1 "10,000 processes: one series for the TPAUSE they ran (a site of one executable), not one per process"
echo 100000 >$d/max_time
rm -rf $tmp
done_testing
