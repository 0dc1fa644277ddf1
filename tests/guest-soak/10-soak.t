# make soak: the soak scenario for SOAK_SECONDS (default 120), see soak.sh.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/guest-soak/soak.sh

soak "${SOAK_SECONDS:-120}"
done_testing
