# A short run of make soak's scenario (tests/guest-soak/soak.sh): writers,
# CPU hotplug, tpause-loop on every CPU, a reader and umwait-trace events at
# once; the events, the final MSRs and the kernel log checked afterwards.
# Its many writes go to umwait-trace events (BPF), not to the top-level
# tracefs buffer, which stops meanwhile (tests/guest/31 reads the boot's
# records there, and they must not be overwritten).
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/guest-soak/soak.sh
. /lab/tests/lib/state.sh
state_guard

t=/sys/kernel/tracing
echo 0 >$t/tracing_on
soak 20
echo 1 >$t/tracing_on
done_testing
