#!/bin/bash
# make bench's accuracy rows (tests/bench/accuracy) on a small recorded run
# whose rows are worked out by hand below: a guest's waits ("run" and "wait"
# lines of tests/guest-bench/run --accuracy) and a QEMU trace with records
# that must not be paired with them.
#
# Bugs it catches: a wait an interrupt ended (or that found its deadline past)
# counted in the accuracy rows; a wait paired with another vCPU's record, or
# with a kernel-mode TPAUSE (udelay) that ran between the guest's RDTSCs; the
# model's error of a capped wait measured from its deadline instead of the OS
# limit; a wait without a record, or whose CF differs, passing silently.
. "$(dirname "$0")/../lib/tap.sh"

acc=$(dirname "$0")/../bench/accuracy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# rec CPU CPL TSC_START DEADLINE LIMIT TSC_END REASON CF: a waitpkg_wait record
rec() {
	printf 'waitpkg_wait cpu %d insn tpause cpl %d req C0.2 used C0.2 tsc_start 0x%x deadline 0x%x limit 0x%x tsc_end 0x%x reason %s cf %d\n' "$@"
}

# Uncapped, 10000 cycles: two waits end at their deadline (guest +300 and
# +500, model +100 and +200), one an interrupt ends early, one finds its
# deadline past; each has a decoy record (another vCPU, kernel mode) between
# its RDTSCs.  Capped at 5000: both end at the OS limit (guest +400 and +300,
# model +50 and +30), long before their deadline.
cat >"$tmp/waits" <<-'EOF'
	run tpause 10000 uncapped 10000 1 2
	tpause-loop: insn=tpause state=c02 cycles=10000 waits=4 capped=0
	wait 1000000 10300 0
	wait 2000000 10500 0
	wait 3000000 4000 0
	wait 4000000 90000 0
	run tpause 10000 capped 5000 1 2
	tpause-loop: insn=tpause state=c02 cycles=10000 waits=2 capped=2
	wait 5000000 5400 1
	wait 6000000 5300 1
EOF
{
	echo "waitpkg_msr_write cpu 1 val 0x0"
	rec 1 3 1000050 1010000 0 1010100 deadline 0
	echo "waitpkg_wait_ctx cpu 1 tsc_start 0xf4272 rip 0x401000 cr3 0x1000"
	rec 0 3 1000060 1010060 0 1010160 deadline 0
	rec 1 0 2000020 2000500 0 2000510 deadline 0
	rec 1 3 2000040 2010000 0 2010200 deadline 0
	rec 1 3 3000030 3010000 0 3003900 interrupt 0
	rec 1 3 4000100 4000000 0 4000150 past 0
	rec 1 3 5000100 5010000 5000 5005150 oslimit 1
	rec 1 3 6000100 6010000 5000 6005130 oslimit 1
} >"$tmp/trace"

# value METRIC VARIANT: the sample "pair" printed for it
value() {
	awk -F'\t' -v m="$1" -v v="$2" '$1 == m && $2 == v { print $3 }' "$tmp/samples"
}

"$acc" pair 2 "$tmp/waits" "$tmp/trace" >"$tmp/samples"
is "$?" 0 "pair accepts the run"
u="tpause 10k uncapped smp2"
c="tpause 10k capped smp2"
for want in acc_waits:4 acc_excluded:2 acc_left_interrupt:1 acc_left_past:1 acc_left_other:0 \
	acc_mean:400 acc_p50:300 acc_p99:500 model_mean:150 model_p50:100 model_p99:200 \
	acc_entry:40 acc_exit:200 acc_all_mean:18700 acc_want:10000; do
	is "$(value "${want%%:*}" "$u")" "${want#*:}" "$u: ${want%%:*}"
done
for want in acc_waits:2 acc_excluded:0 acc_mean:350 model_mean:40 model_p50:30 model_p99:50 acc_want:5000; do
	is "$(value "${want%%:*}" "$c")" "${want#*:}" "$c: ${want%%:*}"
done

# the untraced view keeps every wait (no trace to leave one out by)
"$acc" untraced 2 "$tmp/waits" >"$tmp/samples"
is "$?" 0 "untraced accepts the run"
is "$(value untraced_mean "$u")" 18700 "$u: untraced_mean counts every wait"

# a wait with no record of its own, and a CF the record contradicts
sed 's/^wait 2000000 10500 0$/wait 2000000 30 0/' "$tmp/waits" >"$tmp/w1"
out=$("$acc" pair 2 "$tmp/w1" "$tmp/trace" 2>&1 >/dev/null)
is "$?" 1 "a wait with no trace record between its RDTSCs fails the pairing"
diag "$out"
sed 's/^wait 5000000 5400 1$/wait 5000000 5400 0/' "$tmp/waits" >"$tmp/w2"
out=$("$acc" pair 2 "$tmp/w2" "$tmp/trace" 2>&1 >/dev/null)
is "$?" 1 "a CF that differs from the record's fails the pairing"
diag "$out"
out=$("$acc" pair 4 "$tmp/waits" "$tmp/trace" 2>&1 >/dev/null)
is "$?" 1 "waits from a guest of another --smp than named fail"

# the host's floor (tools/host-spin): its rows are apart from the guest's,
# each cell the median of the runs and its % of the requested length. Bugs:
# host rows mixed into the model's table, a size label that does not line up
# with the rows make bench lists, bad arguments taken as a zero-length wait.
"$acc" pair 2 "$tmp/waits" "$tmp/trace" >"$tmp/samples"
printf 'host_want\tspin 10k\t10000\nhost_mean\tspin 10k\t%s\nhost_p50\tspin 10k\t%s\nhost_p99\tspin 10k\t%s\n' \
	300 20 900 100 40 2000 200 60 3000 >>"$tmp/samples"
table=$("$acc" table "$tmp/samples")
is "$(echo "$table" | grep -c '^spin ')" 1 "the table has one host row"
is "$(echo "$table" | grep '^spin 10k' | tr -s ' ')" "spin 10k 200 2.0% 40 0.4% 2000 20.0%" \
	"the host row: the median of 3 runs of each column, and its % of 10k cycles"
is "$(echo "$table" | sed -n '/^HOST/,$p' | sed '/^TAILS/,$d' | grep -c '^tpause')" 0 "no guest row in the host table"

# TAILS: the model's p99 over the p99 of the host's plain sleep beside the
# same boots, per --smp. Bugs: the ratio upside down, the spin row taken
# for the sleep one, another --smp's sleep row.
printf '%s\t%s\t%s\n' acc_waits "tpause 100k uncapped smp2" 10 acc_want "tpause 100k uncapped smp2" 100000 \
	model_p99 "tpause 100k uncapped smp2" 1500 untraced_p99 "tpause 100k uncapped smp2" 3000 \
	host_want "sleep 100k smp2" 100000 host_p99 "sleep 100k smp2" 1000 \
	host_want "sleep 100k smp4" 100000 host_p99 "sleep 100k smp4" 7000 \
	host_want "spin 100k" 100000 host_p99 "spin 100k" 10 >>"$tmp/samples"
table=$("$acc" table "$tmp/samples")
is "$(echo "$table" | sed -n '/^TAILS/,$p' | grep '^tpause 100k uncapped smp2' | tr -s ' ')" \
	"tpause 100k uncapped smp2 1500 3000 1000 1.50 3.00" \
	"the TAILS row: model and guest p99 over the smp2 sleep's p99"
hs=$(dirname "$0")/../../build/tools/host-spin
# not built: each check below fails (the commands do not run)
check "host-spin is built (make tools)" test -x "$hs"
out=$("$hs" 10000 20)
is "$(echo "$out" | cut -f1,2 | tr '\t\n' ' ')" \
	"host_want spin 10k host_mean spin 10k host_p50 spin 10k host_p99 spin 10k " \
	"host-spin labels its rows as make bench lists them"
is "$(echo "$out" | sed -n 's/^host_want\tspin 10k\t//p')" 10000 "host-spin reports the length it was asked for"
"$hs" 0 5 >/dev/null 2>&1
is "$?" 2 "host-spin refuses a wait of 0 cycles (exit 2)"
"$hs" 10k 5 >/dev/null 2>&1
is "$?" 2 "host-spin refuses a length that is not a number (exit 2)"
# --sleep and --wake, which make bench runs beside the boots: their
# labels, and a --wake that ends (its two threads once deadlocked when
# the signalling one took the lock first)
out=$("$hs" --sleep --tag smp2 100000 5)
is "$(echo "$out" | cut -f1,2 | tr '\t\n' ' ')" \
	"host_want sleep 100k smp2 host_mean sleep 100k smp2 host_p50 sleep 100k smp2 host_p99 sleep 100k smp2 " \
	"host-spin --sleep --tag smp2 labels its rows as make bench lists them"
for i in 1 2 3 4 5; do
	out=$(timeout 60 "$hs" --wake 100000 20) || break
done
is "$(echo "$out" | cut -f1,2 | tr '\t\n' ' ')" \
	"host_want wake 100k host_mean wake 100k host_p50 wake 100k host_p99 wake 100k " \
	"host-spin --wake ends, 5 times in a row, and labels its rows"
cmp_ok "$(echo "$out" | sed -n 's/^host_p50\twake 100k\t//p')" -gt 0 \
	"host-spin --wake measures a wake-up that takes time"
done_testing
