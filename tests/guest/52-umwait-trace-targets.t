# umwait-trace caps' targets as an analyst names them, each against the
# target's own count (tests/fixtures/ut-target.c):
#  1. -p with a thread's ID (what top -H and perf top show): the process,
#     said once, every thread's waits;
#  2. -t TID: that thread's waits alone, while its siblings wait too;
#  3. -p follows dlopen(): a library the process loads after the attach is
#     probed within a second or so, said once, and its waits counted;
#  4. anonymous executable memory (JIT code) in the process: counted, and
#     said once (not traced);
#  5. capabilities, not root: uid 1000 runs events with CAP_BPF and
#     CAP_PERFMON, and caps with CAP_SYS_ADMIN (Linux creates uprobes for it
#     alone), counting exactly; with one missing, one line names it.
# Every part prints its checks whether or not caps started (ut_begin,
# ut_end): 26 in all.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/target.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
ut=/lab/bin/ut-target
tmp=$(mktemp -d)
echo 100000 >$d/max_time

# 1. -p with the ID of a thread that is not the process's leader
target $tmp/p.run $ut --threads 3 -n 20
set -- $t_tids
tid=${2:-0}
ut_begin $tmp/p.out caps --residency off -p $tid
kill -USR1 $t_pid
wait $t_pid
ut_end "-p TID: caps exits 0 on Ctrl-C"
is "$(grep -c "^umwait-trace: $tid is a thread of process $t_pid: tracing the process" $tmp/p.out.err)" 1 \
	"-p TID: resolved to its process, said once"
is "$(own $tmp/p.run)" 60 "-p TID: the process's 3 threads ran 60 waits"
is "$(ut_waits $tmp/p.out)" 60 "-p TID: caps counted every thread's"

# 2. -t TID: one thread's waits, its two siblings waiting as much meanwhile
target $tmp/t.run $ut --threads 3 -n 15
set -- $t_tids
tid=${2:-0}
ut_begin $tmp/t.out caps --residency off -t $tid
kill -USR1 $t_pid
wait $t_pid
ut_end "-t TID: caps exits 0 on Ctrl-C"
is "$(grep -c "^umwait-trace: counting thread $tid of process $t_pid alone" $tmp/t.out.err)" 1 \
	"-t TID: said which thread of which process"
is "$(own $tmp/t.run $tid) $(own $tmp/t.run)" "15 45" "-t TID: the thread ran 15 waits, the process 45"
is "$(ut_waits $tmp/t.out)" 15 "-t TID: caps counted that thread's alone"

# 3. -p, then the process loads a library with sites (dlopen) and waits there
cp /lab/bin/libwait-sites.so $tmp/lib-d.so
target $tmp/d.run $ut --dlopen $tmp/lib-d.so -n 25
ut_begin $tmp/d.out caps --residency off -p $t_pid
kill -USR1 $t_pid
until_true 60 grep -q '^ut-target: loaded' $tmp/d.run
# found by a look at its mappings, each second
ut_check "dlopen: caps says it probes the library loaded after the attach" \
	until_true 60 grep -q "^umwait-trace: $tmp/lib-d.so mapped since caps attached: 2 sites probed" $tmp/d.out.err
kill -USR2 $t_pid
wait $t_pid
ut_end "dlopen: caps exits 0 on Ctrl-C"
is "$(grep -c "lib-d.so mapped since caps attached" $tmp/d.out.err)" 1 "dlopen: said once"
is "$(own $tmp/d.run) $(caps_waits_at $tmp/d.out $tmp/lib-d.so)" "25 25" \
	"dlopen: the library's 25 waits, counted by caps"

# 4. anonymous executable memory (JIT code) in the process; caps ends by
#    itself after its one interval
target $tmp/j.run $ut --jit -n 2
ut_begin $tmp/j.out caps --residency off --json -p $t_pid 1 1
tr_reap $ut_pid || diag "anonymous: $tr_why"
is "$tr_rc" 0 "anonymous: caps with an interval and a count of 1 ends by itself, exit 0"
kill -USR1 $t_pid
wait $t_pid
is "$(grep -c "^umwait-trace: warning: process $t_pid has 1 anonymous executable mapping (JIT code, say): TPAUSE/UMWAIT there is not traced" $tmp/j.out.err)" 1 \
	"anonymous: the process's one anonymous executable mapping, said once"
is "$(sed -n 's/.*"anon_exec_mappings": \([0-9]*\).*/\1/p' $tmp/j.out | sort -u | tr '\n' ' ')" "1 " \
	"anonymous: counted in each JSON object"

# 5. capabilities instead of root, uid 1000: events with CAP_BPF and
#    CAP_PERFMON; caps with CAP_SYS_ADMIN, since Linux creates uprobes for it
#    alone (perf_uprobe_event_init); with one missing, one line names it
tl=/lab/bin/tpause-loop
with-caps 1000 bpf umwait-trace events -d 1 >$tmp/c1.out 2>$tmp/c1.err
is "$?:$(cat $tmp/c1.err)" \
	"2:umwait-trace: needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN (root has them): missing CAP_PERFMON" \
	"capabilities: events with CAP_BPF alone: exit 2, one line naming CAP_PERFMON"
with-caps 1000 bpf,perfmon umwait-trace events -d 1 >$tmp/c2.out 2>$tmp/c2.err
is "$?:$(grep -c '^Tracing umwait events' $tmp/c2.err)" "0:1" \
	"capabilities: events as uid 1000 with CAP_BPF and CAP_PERFMON traces, and exits 0"
with-caps 1000 bpf,perfmon umwait-trace caps --residency off $tl >$tmp/c3.out 2>$tmp/c3.err
is "$?:$(cat $tmp/c3.err)" \
	"2:umwait-trace: needs CAP_SYS_ADMIN (root has it): this kernel creates uprobes for it alone, CAP_BPF and CAP_PERFMON are not enough" \
	"capabilities: caps with CAP_BPF and CAP_PERFMON: exit 2, one line naming CAP_SYS_ADMIN (the kernel refuses them a uprobe)"
# (with-caps execs umwait-trace: ut_pid is the tracer's)
UT_BIN=with-caps
ut_begin $tmp/c.out 1000 sys_admin umwait-trace caps --residency off $tl
unset UT_BIN
is "$(sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$ut_pid/status 2>/dev/null)" 1000 \
	"capabilities: caps runs as uid 1000 with CAP_SYS_ADMIN"
out=$($tl -n 30 -c 1000000)
ut_end "capabilities: caps as uid 1000 exits 0 on Ctrl-C"
eval "$(report tpause-loop "$out")"
is "$(ut_waits $tmp/c.out)" "${r_waits:-x}" "capabilities: and counts tpause-loop's ${r_waits:-?} waits exactly"

rm -rf $tmp
done_testing
