# umwait-trace caps: one file, one set of probes, whatever paths it is seen
# through and however those paths change (tests/fixtures/ut-target.c counts
# its own waits; every check compares caps with it):
#  1. one lower file through two overlay mounts (a container's layers):
#     attached once, each wait counted once;
#  2. the same path in two mount namespaces, one overlay each (two
#     containers of one image), under --all as the service runs it: one
#     series, each label set once, each wait counted once;
#  3. --all, the first process that maps a library exits the moment caps
#     opens it: the library is still probed, another process's waits count;
#  4. --all, the library is renamed over the moment caps opens it: the
#     probes go on the file scanned, never on the one renamed there (whose
#     code at those offsets runs: nothing counted);
#  5. --all does not open a file it knows again, however many looks;
#  6. --all, a library whose probes could not be placed (a limit on open
#     files) is tried again at the next look, and counted exactly;
#  7. --all forgets a file no process maps any more, with its series.
# Needs overlayfs and inotify in the kernel (vm/kernel.config); on a kernel
# without them the checks that use them fail and say why. Every part prints
# its checks whether or not caps started (ut_begin, ut_end): 35 in all.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/target.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
ut=/lab/bin/ut-target
lib=/lab/bin/libwait-sites.so
tmp=$(mktemp -d)
echo 100000 >$d/max_time

# gone PID: PID has ended; ended PID: its exit status once it ends by itself
# (60 s at most: then it is killed, 137)
gone() {
	! tr_alive "$1"
}
ended() {
	until_true 60 gone "$1" || kill -KILL "$1" 2>/dev/null
	wait "$1"
}

# series PROM FILE: the umwait_waits_total samples of FILE's sites in PROM, summed
series() {
	caps_series "$1" umwait_waits_total "file=\"$2\""
}

# nseries PROM FILE: how many umwait_waits_total series FILE's sites have in
# PROM (nothing when PROM is missing)
nseries() {
	grep -c "^umwait_waits_total{.*file=\"$2\"" "$1" 2>/dev/null
}

# dup_labels PROM: the label sets written more than once (none: an empty
# line); a missing or empty PROM says so, and fails the check
dup_labels() {
	[ -s "$1" ] || { echo "($1 is missing or empty)"; return; }
	grep '^umwait_' "$1" | sed 's/ [^ ]*$//' | sort | uniq -d | head -n 3
}

# 1. two overlay mounts of one lower directory, a process through each
check "overlayfs is in the kernel (vm/kernel.config)" grep -qw overlay /proc/filesystems
mkdir -p $tmp/lower $tmp/u1 $tmp/u2 $tmp/m1 $tmp/m2
cp $ut $tmp/lower/ut
mount -t tmpfs tmpfs $tmp/u1 && mkdir $tmp/u1/u $tmp/u1/w
mount -t tmpfs tmpfs $tmp/u2 && mkdir $tmp/u2/u $tmp/u2/w
ov() {
	mount -t overlay overlay -o lowerdir=$tmp/lower,upperdir=$tmp/$1/u,workdir=$tmp/$1/w "$2"
}
ov u1 $tmp/m1
ov u2 $tmp/m2
# (a mount that failed leaves no file there: nothing to stat)
dev1=$(stat -c %d $tmp/m1/ut 2>/dev/null) dev2=$(stat -c %d $tmp/m2/ut 2>/dev/null)
check "overlay: stat() through the two mounts gives two devices for the one lower file (${dev1:-none}, ${dev2:-none})" \
	test -n "$dev1" -a -n "$dev2" -a "$dev1" != "$dev2"
ut_begin $tmp/ov.out caps --residency off $tmp/m1/ut $tmp/m2/ut
is "$(grep -c '^Attached 1 site in 1 file' $tmp/ov.out.err)" 1 \
	"overlay: the file named through both mounts is attached once (1 site in 1 file)"
target $tmp/t1.run $tmp/m1/ut -n 40 && run_to_end
target $tmp/t2.run $tmp/m2/ut -n 30 && run_to_end
ut_end "overlay: caps exits 0 on Ctrl-C"
is "$(own $tmp/t1.run) $(own $tmp/t2.run)" "40 30" "overlay: the processes through each mount ran 40 and 30 waits"
is "$(ut_waits $tmp/ov.out)" 70 "overlay: caps counted each of their 70 waits once"

# 2. two containers of one image: each mount namespace has the overlay at
#    the same path; caps --all as the service runs it, one series for both
prom=$tmp/all.prom
ctr() {
	unshare -m sh -c "mount -t overlay overlay -o lowerdir=$tmp/lower,upperdir=$tmp/$1/u2,workdir=$tmp/$1/w2 $tmp/c &&
		exec $tmp/c/ut -n $2" >$tmp/$1.run 2>&1 &
	eval "${1}_pid=\$!"
}
mkdir -p $tmp/c $tmp/u1/u2 $tmp/u1/w2 $tmp/u2/u2 $tmp/u2/w2
ctr u1 25
ctr u2 35
until_true 60 grep -q '^ut-target: ready' $tmp/u1.run
until_true 60 grep -q '^ut-target: ready' $tmp/u2.run
ut_begin $tmp/all.out caps --all --residency off --format openmetrics -o $prom 1
until_true 60 sh -c "grep -q '^umwait_waits_total{.*file=\"$tmp/c/ut\"' $prom 2>/dev/null"
kill -USR1 $u1_pid $u2_pid
wait $u1_pid $u2_pid
want=$(($(own $tmp/u1.run) + $(own $tmp/u2.run)))
until_true 60 sh -c "[ \"\$(grep '^umwait_waits_total{.*file=\"$tmp/c/ut\"' $prom 2>/dev/null | awk '{ s += \$NF } END { print s + 0 }')\" -ge $want ]"
ut_rewritten $prom 2
cp $prom $tmp/all.last 2>/dev/null
ut_end "containers: caps --all exits 0 on Ctrl-C"
is "$want" 60 "containers: the two ran 25 and 35 waits"
is "$(series $tmp/all.last $tmp/c/ut)" 60 "containers: caps counted each wait once"
is "$(nseries $tmp/all.last $tmp/c/ut)" 1 "containers: one series for the one file at one path"
is "$(dup_labels $tmp/all.last)" "" "containers: no label set written twice"

# 3. the first process that maps a library exits as caps opens it (before
#    caps attaches); another process maps it too and waits after the attach
# (the first, the lowest PID, maps it first; it watches for opens once the
# other has mapped it too)
cp $lib $tmp/lib-a.so
target $tmp/a.run $ut --watch $tmp/lib-a.so --on-open exit
a_pid=$t_pid
target $tmp/b.run $ut --dlopen $tmp/lib-a.so -n 30
b_pid=$t_pid
kill -USR1 $b_pid
until_true 60 grep -q '^ut-target: loaded' $tmp/b.run
kill -USR1 $a_pid
until_true 60 grep -q '^ut-target: watching' $tmp/a.run
ut_begin $tmp/first.out caps --all --residency off 1
ended $a_pid
is "$(tail -n 1 $tmp/a.run)" "ut-target: opened, exiting" \
	"first exits: the first process mapping the library exited when caps opened it"
kill -USR2 $b_pid
wait $b_pid
ut_end "first exits: caps --all exits 0 on Ctrl-C"
is "$(own $tmp/b.run)" 30 "first exits: the other process ran 30 waits in the library after the attach"
is "$(caps_waits_at $tmp/first.out $tmp/lib-a.so)" 30 "first exits: caps counted them all"

# 4. the library is renamed over as caps opens it: a slide of NOPs now has
#    its name, and runs; the probes must be on the file caps scanned
cp $lib $tmp/lib-r.so
cp /lab/bin/libut-sled.so $tmp/sled.so
target $tmp/r.run $ut --watch $tmp/lib-r.so --on-open rename:$tmp/sled.so
r_pid=$t_pid
kill -USR1 $r_pid
until_true 60 grep -q '^ut-target: watching' $tmp/r.run
ut_begin $tmp/ren.out caps --all --residency off 1
until_true 60 grep -q '^ut-target: opened, renamed' $tmp/r.run
$ut --sled $tmp/lib-r.so 1000 >$tmp/sled.run 2>&1
rc=$?
ut_end "renamed over: caps --all exits 0 on Ctrl-C"
is "$rc $(cat $tmp/sled.run)" "0 ut-target: sled=1000" \
	"renamed over: the library now at that name ran its 1000 slides and exited 0"
# (a caps that printed no totals fails it too: it counted nothing either)
is "$(caps_totals $tmp/ren.out | wc -w) $(caps_waits_at $tmp/ren.out $tmp/lib-r.so) $(caps_count $tmp/ren.out unpaired)" "2 0 0" \
	"renamed over: caps' totals count no arrival there (no probe of the file scanned landed in the other)"
kill -TERM $r_pid
wait $r_pid

# 5. a file caps knows is not opened again at each look
cp $lib $tmp/lib-k.so
target $tmp/k.run $ut --watch $tmp/lib-k.so
k_pid=$t_pid
kill -USR1 $k_pid
until_true 60 grep -q '^ut-target: watching' $tmp/k.run
ut_begin $tmp/known.out caps --all --residency off --format prometheus -o $tmp/k.prom 1
# the file rewritten four times: three looks after the one that found it
ut_check "known: caps wrote its file four times" ut_rewritten $tmp/k.prom 4
ut_end "known: caps --all exits 0 on Ctrl-C"
kill -TERM $k_pid
wait $k_pid
is "$(tail -n 1 $tmp/k.run)" "ut-target: opens=1" "known: opened once, by the look that found it"

# 6. a library whose probes cannot be placed (a limit on open files: each
#    probe is one) is tried again at the next look once they can be. caps
#    starts with no limit; at rest (the target's own sites placed) its limit
#    is lowered to 10 descriptors above the highest it holds: room for a
#    look (it takes three at once), not for the 22 probes of the library
#    the target then loads. Raised again, the next look places them.
cp $lib $tmp/lib-f.so
placed=0 retried=0 fixture_ok= counted= lim=
target $tmp/f.run $ut --dlopen $tmp/lib-f.so
ut_begin $tmp/f.out caps --all --residency off 1
if [ "$ut_up" = 1 ]; then
	# (the highest descriptor, not how many: the next open takes the lowest free)
	top=$(ls /proc/$ut_pid/fd | sort -n | tail -n 1)
	lim=$((top + 1 + 10))
	$ut --prlimit $ut_pid $lim
	kill -USR1 $t_pid
	# the look that finds it either places its probes or cannot
	until_true 60 grep -q "lib-f.so: \(its probes could not be placed\|mapped since caps attached\)" $tmp/f.out.err
	if grep -q "lib-f.so: its probes could not be placed" $tmp/f.out.err; then
		retried=1
		$ut --prlimit $ut_pid 1024
		until_true 60 grep -q "lib-f.so: its probes are placed now" $tmp/f.out.err && placed=1
		/lab/bin/wait-paths --lib $tmp/lib-f.so -n 3 -c 20000 >$tmp/f.wp 2>&1
		ut_dump $ut_pid $tmp/f.out
		fixture_ok=$(sed -n 's/^wait-paths: site=[a-z]* waits=\([0-9]*\) .*/\1/p' $tmp/f.wp | awk '{ s += $1 } END { print s + 0 }')
		counted=$(caps_waits_at $tmp/f.out $tmp/lib-f.so)
	fi
fi
diag "retry: caps' open-file limit lowered to ${lim:-?}, then raised to 1024"
is "$retried" 1 "retry: under a limit on open files, a library's probes could not all be placed (said)"
is "$placed" 1 "retry: the next look, the limit raised, placed them (said)"
is "${counted:-x}" "${fixture_ok:-y}" "retry: and caps counts the library's waits exactly (wait-paths' own count)"
ut_end "retry: caps --all exits 0 on Ctrl-C"
kill -TERM $t_pid
wait $t_pid

# 7. a file no process maps any more is forgotten, with its series
cp $ut $tmp/gone
target $tmp/g.run $tmp/gone -n 5
ut_begin $tmp/gone.out caps --all --residency off --format prometheus -o $tmp/g.prom 1
until_true 60 sh -c "grep -q '^umwait_waits_total{.*file=\"$tmp/gone\"' $tmp/g.prom 2>/dev/null"
had=$(nseries $tmp/g.prom $tmp/gone)
run_to_end
until_true 120 sh -c "! grep -q 'file=\"$tmp/gone\"' $tmp/g.prom"
now=$(nseries $tmp/g.prom $tmp/gone)
ut_end "forgotten: caps --all exits 0 on Ctrl-C"
is "$had" 1 "forgotten: while a process maps it, the file has its series"
is "$now" 0 "forgotten: once none does, a few looks later, its series are gone"

umount $tmp/m1 $tmp/m2 2>/dev/null
umount $tmp/u1 $tmp/u2 2>/dev/null
rm -rf $tmp
done_testing
