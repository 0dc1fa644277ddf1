# umwait-trace caps and containers: --cgroup PATH (libbpf-tools' convention,
# a cgroup v2 directory: its tasks and its descendants' count, filtered in
# BPF), and the cgroup label that tells containers apart on each series, each
# label set written once, in every format; the series of a cgroup removed go
# a few reports later. Two processes of one program (tests/fixtures/ut-target.c),
# one in each of two cgroups, each counting its own waits.
# Needs cgroup v2 in the kernel (vm/kernel.config: CONFIG_CGROUPS). Every
# part prints its checks whether or not caps started (ut_begin, ut_end): 17
# in all.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/target.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
cg=/sys/fs/cgroup
tmp=$(mktemp -d)
echo 100000 >$d/max_time
# the cgroups go before state_guard unmounts a cgroup2 this file mounted
state_also="rmdir $cg/ut-a $cg/ut-b 2>/dev/null"

# in_cgroup NAME OUT N: a ut-target of N waits in cgroup NAME, ready (its PID in t_pid)
in_cgroup() {
	: >"$2"
	$tmp/ut -n "$3" >"$2" 2>&1 &
	t_pid=$!
	until_true 60 grep -q '^ut-target: ready' "$2"
	echo $t_pid >$cg/$1/cgroup.procs
}

# label PROM CGROUP: the sum of the umwait_waits_total series of that cgroup label
label() {
	caps_series "$1" umwait_waits_total ",cgroup=\"$2\"}"
}

grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg 2>$tmp/mount.err
mkdir -p $cg/ut-a $cg/ut-b 2>/dev/null
[ -s $tmp/mount.err ] && diag "mount -t cgroup2: $(cat $tmp/mount.err)"
check "cgroup v2 on $cg, with this file's cgroups ut-a and ut-b" \
	test -f $cg/ut-a/cgroup.procs -a -f $cg/ut-b/cgroup.procs
cp /lab/bin/ut-target $tmp/ut

# 1. --cgroup: only the tasks of ut-a count
ut_begin $tmp/f.out caps --residency off --cgroup $cg/ut-a $tmp/ut
check "--cgroup: the attach line names the cgroup" grep -q "^Attached 1 site in 1 file (all processes) in cgroup $cg/ut-a\." $tmp/f.out.err
in_cgroup ut-a $tmp/fa.run 20
a=$t_pid
in_cgroup ut-b $tmp/fb.run 30
b=$t_pid
kill -USR1 $a $b
wait $a $b
ut_end "--cgroup: caps exits 0 on Ctrl-C"
is "$(own $tmp/fa.run) $(own $tmp/fb.run)" "20 30" "--cgroup: the processes in ut-a and ut-b ran 20 and 30 waits"
is "$(ut_waits $tmp/f.out)" 20 "--cgroup: caps counted ut-a's 20 alone"

# 2. the cgroup label: OpenMetrics and JSON at once, the same two processes
prom=$tmp/cg.om
ut_begin $tmp/m.out caps --residency off --format openmetrics -o $prom $tmp/ut 1
m_pid=$ut_pid
ut_begin $tmp/j.out caps --residency off --json $tmp/ut
j_pid=$ut_pid
in_cgroup ut-a $tmp/ma.run 20
a=$t_pid
in_cgroup ut-b $tmp/mb.run 30
b=$t_pid
kill -USR1 $a $b
wait $a $b
until_true 60 sh -c "[ \"\$(grep '^umwait_waits_total{' $prom 2>/dev/null | awk '{ s += \$NF } END { print s + 0 }')\" -ge 50 ]"
cp $prom $tmp/cg.last 2>/dev/null
ut_end "label: caps --json exits 0 on Ctrl-C" $j_pid
is "$(label $tmp/cg.last /ut-a) $(label $tmp/cg.last /ut-b)" "20 30" \
	"label: a series per cgroup (cgroup=\"/ut-a\", \"/ut-b\"), each with its process's waits"
is "$(grep -c '^umwait_waits_total{' $tmp/cg.last 2>/dev/null) $(grep '^umwait_' $tmp/cg.last 2>/dev/null | sed 's/ [^ ]*$//' | sort | uniq -d | head -n 3)" "2 " \
	"label: the site's two series (one per cgroup), no label set written twice (OpenMetrics)"
is "$(grep '"type": "total"' $tmp/j.out | grep -o "\"pid\": [0-9]*, \"comm\": \"ut\", [^}]*\"cgroup\": \"/ut-[ab]\"" |
	sed 's/"pid": \([0-9]*\),.*"cgroup": "\(.*\)"/\1 \2/' | sort -n | tr '\n' ' ')" \
	"$(printf '%s %s\n%s %s\n' $a /ut-a $b /ut-b | sort -n | tr '\n' ' ')" \
	"label: JSON names each process's cgroup"
# 3. the series of a cgroup removed are forgotten a few reports later
had=$(grep -c 'cgroup="/ut-b"' $prom 2>/dev/null)
rmdir $cg/ut-b
until_true 120 sh -c "! grep -q 'cgroup=\"/ut-b\"' $prom"
is "$had $(grep -c 'cgroup="/ut-b"' $prom 2>/dev/null)" "$had 0" \
	"label: ut-b removed, its series (${had:-no} lines) are gone from the metrics a few reports later"
cmp_ok "${had:-x}" -gt 0 "label: ut-b had series before it was removed"
ut_end "label: caps --format openmetrics exits 0 on Ctrl-C" $m_pid
mkdir -p $cg/ut-b

# 4. bad input: one line, exit 2
umwait-trace caps --cgroup $tmp $tmp/ut >$tmp/o 2>$tmp/e
is "$?:$(cat $tmp/e)" "2:umwait-trace: $tmp: not a cgroup v2 directory (mount -t cgroup2 puts one on /sys/fs/cgroup)" \
	"--cgroup on a directory that is no cgroup: exit 2, one line"
umwait-trace caps --cgroup $cg/nonexistent $tmp/ut >$tmp/o 2>$tmp/e
is "$?:$(cat $tmp/e)" "2:umwait-trace: cannot open cgroup $cg/nonexistent: No such file or directory" \
	"--cgroup on a path that does not exist: exit 2, one line"

rmdir $cg/ut-a $cg/ut-b 2>/dev/null
rm -rf $tmp
done_testing
