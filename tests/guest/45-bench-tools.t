# The helpers make bench relies on: write-rate's count of writes is exact (the
# tracepoint sees each one, the last value written is the one left), it stops
# at the first refused write, and bench-floor attaches at a real site without
# disturbing the waits there, and refuses an offset outside the file.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/events.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
t=/sys/kernel/tracing
tl=/lab/bin/tpause-loop
tmp=$(mktemp -d)

# recorded: the umwait_control_update events the instance took, kept or
# overwritten: its ring buffer's entries plus its overruns on every CPU, so
# that the count is exact however many writes a fast host makes in the
# time write-rate writes (a count of the buffer's lines loses the oldest
# once it is full)
recorded() {
	cat $ev_dir/per_cpu/cpu*/stats | awk '/^(entries|overrun):/ { s += $2 } END { print s + 0 }'
}

# write-rate: N alternating writes, N update events, the Nth value stays.
# The top-level buffer stops for the burst (tests/guest/31 reads the boot's
# records there).
echo 100000 >$d/max_time
ev_open g45 umwait:umwait_control_update
echo 0 >$t/tracing_on
out=$(write-rate -d 0.5 $d/max_time 200000 100000)
is "$?" 0 "write-rate exits 0"
echo 1 >$t/tracing_on
n=$(echo "$out" | sed -n 's/^write-rate: writes=\([0-9]*\) seconds=[0-9.]* rate=[0-9]*$/\1/p')
cmp_ok "${n:-0}" -gt 0 "write-rate reports its writes ($out)"
is "$(recorded)" "${n:-none}" "one umwait_control_update event per write (the instance's entries and overruns)"
[ $((${n:-0} % 2)) = 1 ] && want=200000 || want=100000
is "$(cat $d/max_time)" $want "max_time holds the last value written"
ev_clear

# a refused value: exit 1, one line naming the value and the errno, nothing changed
out=$(write-rate -d 1 $d/max_time 3 2>&1)
is "$?:$out" "1:write-rate: writing '3' to $d/max_time: Invalid argument" \
	"write-rate stops at a refused write with one line"
is "$(cat $d/max_time) $(recorded)" "$want 0" "max_time unchanged by the refused write, no event"
ev_close
echo 100000 >$d/max_time

# bench-floor at tpause-loop's TPAUSE: live until SIGINT, waits unaffected
off=$(umwait-trace sites $tl | awk '$4 == "tpause" { print $2 }')
bench-floor $tl $off 2>$tmp/floor.err &
pid=$!
i=0
until grep -q '^Attached 1 uprobe' $tmp/floor.err || [ $i -ge 600 ] || ! kill -0 $pid 2>/dev/null; do
	i=$((i + 1))
	sleep 0.1
done
check "bench-floor attaches at the TPAUSE site ($off)" grep -q "^Attached 1 uprobe at $tl $off\." $tmp/floor.err
is "$($tl -n 50 -c 10000 | sed -n 's/.* waits=\([0-9]*\) .*/\1/p')" 50 \
	"tpause-loop under bench-floor still runs its 50 waits"
kill -INT $pid
wait $pid
is "$?" 0 "bench-floor exits 0 on SIGINT"

out=$(bench-floor $tl 0x7fffffff 2>&1)
rc=$?
is "$rc:$(echo "$out" | grep -c '^bench-floor: cannot attach')" "2:1" \
	"bench-floor refuses an offset outside the file: exit 2 and its own line"
rm -rf $tmp
done_testing
