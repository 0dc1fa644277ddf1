# A short run of make soak's scenario (tests/guest-soak/soak.sh): writers,
# CPU hotplug, tpause-loop on every CPU, a reader and umwait-trace events at
# once; the events, the final MSRs and the kernel log checked afterwards.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/guest-soak/soak.sh

soak 20
done_testing
