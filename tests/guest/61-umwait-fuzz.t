# Fuzz enable_c02 and max_time: 1000 random byte strings each (empty, huge,
# binary, signs, whitespace, 0x/0 prefixes, 2^32 and up, near-valid), one
# write(2) apiece; umwait-fuzz checks each errno, and the state after each
# write, against its model of 6.1's parsing (a rejected write changes nothing).
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
out=$(umwait-fuzz -n 1000 $d/enable_c02 $d/max_time 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
is "$rc" 0 "umwait-fuzz exits 0: every write as the model predicts"
for f in enable_c02 max_time; do
	line=$(echo "$out" | grep "file=$f ")
	is "$(echo "$line" | sed -n 's/.* writes=\([0-9]*\) .*/\1/p')" 1000 "$f: 1000 random strings written"
	is "$(echo "$line" | sed -n 's/.* other=\([0-9]*\) .*/\1/p')" 0 "$f: no errno but EINVAL and ERANGE"
	is "$(echo "$line" | sed -n 's/.* mismatches=\([0-9]*\)$/\1/p')" 0 \
		"$f: each result, and the state after it, as the model predicts"
	cmp_ok "$(echo "$line" | sed -n 's/.* EINVAL=\([0-9]*\) .*/\1/p')" -gt 0 "$f: some strings were rejected"
done
cmp_ok "$(echo "$out" | sed -n 's/.*file=max_time .* ERANGE=\([0-9]*\) .*/\1/p')" -gt 0 \
	"max_time: some values were out of range (ERANGE)"

echo 100000 >$d/max_time
echo 1 >$d/enable_c02
is "$(cat $d/max_time) $(cat $d/enable_c02)" "100000 1" "defaults restored"
done_testing
