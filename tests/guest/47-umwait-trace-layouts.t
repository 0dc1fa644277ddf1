# umwait-trace caps on the layout corpus (tests/fixtures/layouts.c: the wait
# shapes real libraries use, by gcc and clang at -O0, -O2 and -O3): each
# binary runs once without caps and once with caps attached to it, at
# max_time 5000 with waits of 20000 cycles (capped unless something delays
# their start past 15000 cycles), and once more with caps --hist-perturbing (a probe on
# each wait itself: the observer check's negative control).  Here: each run
# ends, caps counts; the per-site truth is QEMU's trace, against which
# tests/host/24-layouts-qemu-trace.t checks caps per site (exact, capped
# exact or inexact, as sites -v says) and, with caps attached and without,
# the cycles from each wait's deadline's RDTSC (the deadline less the
# layout's reported cycles=) to the wait's start.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/guest.sh
. /lab/tests/lib/checks.sh
. /lab/tests/lib/caps.sh
. /lab/tests/lib/clients.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
old=$(cat $d/max_time)
for b in layouts-gcc-O0 layouts-gcc-O2 layouts-gcc-O3 layouts-clang-O0 layouts-clang-O2 layouts-clang-O3; do
	l=lay-${b#layouts-}
	client_bare 5000 $l-bare $b -r 30
	echo "# client $l-bare: target: $b"
	client_caps /lab/bin/$b 5000 $l $b -r 30
	echo "# client $l: target: $b"
	# how caps counts each site: "# layout-sites LABEL: OFFSET SYMBOL EXACT"
	umwait-trace sites -v /lab/bin/$b | awk -v l=$l '
		/^\// { off = $2; sym = $5; next }
		/^  exact / { print "# layout-sites " l ": " off, sym, $2 }' | sed 's/:$//'
done
# the negative control: a probe on the wait itself delays every wait's start
b=layouts-gcc-O2 l=lay-gcc-O2-hist
CAPS_ARGS=--hist-perturbing client_caps /lab/bin/$b 5000 $l $b -r 30
echo "# client $l: target: $b"
echo "$old" >$d/max_time
is "$(cat $d/max_time)" "$old" "max_time restored"
done_testing
