# ABI of the umwait trace events (field lines of each tracefs format file against
# tests/golden/umwait/EVENT.format) and of /sys/kernel/debug/x86/umwait/control
# (Documentation/ABI/testing/debugfs-umwait): its mode, its format, that it reads
# every MSR on its CPU, and that only root can read it.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

t=/sys/kernel/tracing
golden=/lab/tests/golden/umwait
dbgfs=/sys/kernel/debug
dbg=$dbgfs/x86/umwait/control
cpus=$(grep -c ^processor /proc/cpuinfo)

# fields FORMAT_FILE: the event's own field lines, verbatim (not the common_* ones)
fields() {
	grep 'field:' "$1" | grep -v 'field:[^;]* common_'
}

# 1. trace event ABI: the set of events and the fields of each
is "$(ls $t/events/umwait | grep -v '^enable$' | grep -v '^filter$' | sort | tr '\n' ' ')" \
	"$(ls $golden | sed 's/\.format$//' | sort | tr '\n' ' ')" \
	"events/umwait/ has exactly the events of tests/golden/umwait"
for g in $golden/*.format; do
	ev=$(basename "$g" .format)
	f=$t/events/umwait/$ev/format
	if [ ! -r "$f" ]; then
		fail "$ev: format matches the golden copy" "no $f"
		continue
	fi
	got=$(fields "$f")
	want=$(cat "$g")
	if [ "$got" = "$want" ]; then
		pass "$ev: field lines match tests/golden/umwait/$ev.format"
	else
		fail "$ev: field lines match tests/golden/umwait/$ev.format"
		diag "expected:"
		echo "$want" | sed 's/^/#     /'
		diag "got:"
		echo "$got" | sed 's/^/#     /'
	fi
done

# 2. the debugfs file: mode, owner, one line per online CPU (possible CPUs
#    that are not present, and offline ones, have none)
check "$dbg exists" test -f $dbg
is "$(stat -c '%a %U' $dbg)" "400 root" "$dbg is mode 0400, owned by root"
possible=$(cat /sys/devices/system/cpu/possible)
nposs=$(( ${possible#*-} + 1 ))
is "$(wc -l <$dbg)" $((cpus + 1)) "one line for the cache and one per online CPU ($cpus; possible: $possible)"
is "$(sed -n 1p $dbg)" "cached 0x000186a0 max_time=100000 c02=on" "first line: the cached default"
bad=$(sed 1d $dbg | grep -vE '^cpu[0-9]+ 0x[0-9a-f]{8} max_time=[0-9]+ c02=(on|off) (ok|MISMATCH)$')
is "$bad" "" "every CPU line has the documented format"
got= want=
for n in $(seq 0 $((cpus - 1))); do
	got="$got|$(grep "^cpu$n " $dbg)" want="$want|cpu$n 0x000186a0 max_time=100000 c02=on ok"
done
n=$cpus
while [ $n -lt "$nposs" ]; do
	# possible, not present
	got="$got|$(grep -c "^cpu$n " $dbg)" want="$want|0"
	n=$((n + 1))
done
is "$got" "$want" "each CPU's line: the default on every online CPU, no line for the others"
last=$((cpus - 1))
echo 0 >/sys/devices/system/cpu/cpu$last/online
is "$(wc -l <$dbg) $(grep -c "^cpu$last " $dbg)" "$cpus 0" "cpu$last offline: its line is gone, the others stay"
echo 1 >/sys/devices/system/cpu/cpu$last/online
is "$(grep "^cpu$last " $dbg)" "cpu$last 0x000186a0 max_time=100000 c02=on ok" "cpu$last back online: listed again, holding the default"

# 3. each MSR is read on its CPU, not taken from the cache: change one behind the
#    kernel's back through /dev/cpu/1/msr
check "msr write 1 0xe1 0x61a80" msr write 1 0xe1 0x61a80
is "$(grep '^cpu1 ' $dbg)" "cpu1 0x00061a80 max_time=400000 c02=on MISMATCH" "cpu1 shows its own value: MISMATCH"
is "$(grep '^cpu0 ' $dbg)" "cpu0 0x000186a0 max_time=100000 c02=on ok" "cpu0 still ok"
is "$(sed -n 1p $dbg)" "cached 0x000186a0 max_time=100000 c02=on" "the cache is unchanged"
check "msr write 1 0xe1 0x186a1" msr write 1 0xe1 0x186a1
is "$(grep '^cpu1 ' $dbg)" "cpu1 0x000186a1 max_time=100000 c02=off MISMATCH" "a C0.2 difference alone is a MISMATCH"
check "msr write 1 0xe1 0x186a0 (restore)" msr write 1 0xe1 0x186a0
is "$(grep '^cpu1 ' $dbg)" "cpu1 0x000186a0 max_time=100000 c02=on ok" "cpu1 ok again"

# 4. only root can read it: with the debugfs root opened up (mode 0755), the
#    file's own mode must keep an unprivileged user out
check "root can read it" sh -c "cat $dbg >/dev/null"
mode=$(stat -c %a $dbgfs)
check "debugfs root remounted with mode 0755 for the check" mount -o remount,mode=0755 $dbgfs
is "$(stat -c %a $dbgfs)" 755 "debugfs root opened up to 0755 for the check"
out=$(su lab -s /bin/sh -c "cat $dbg" 2>&1)
rc=$?
cmp_ok $rc -ne 0 "user 'lab' cannot read $dbg"
case "$out" in
*"Permission denied"*) pass "the read fails with EACCES" ;;
*) fail "the read fails with EACCES" "got: '$out'" ;;
esac
is "$(su lab -s /bin/sh -c "id -u")" 1000 "(su really runs as uid 1000)"
check "user 'lab' can list the directory" su lab -s /bin/sh -c "ls $dbgfs/x86/umwait >/dev/null"
mount -o remount,mode=0$mode $dbgfs
is "$(stat -c %a $dbgfs)" "$mode" "debugfs root mode restored"
done_testing
