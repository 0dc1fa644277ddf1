# The positive control of the stock-QEMU suite (tests/guest-stock, which
# asserts that WAITPKG and everything built on it are absent): the same files
# run here, where the lab's model has WAITPKG, must fail, each on the
# assertion that names the absence. A stock suite that passes whatever the
# CPU has proves nothing about Debian's QEMU; this catches one.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

# fails_here FILE TEST: FILE's own run here fails, TEST among its failures
fails_here() {
	out=$(sh /lab/tests/guest-stock/$1 2>&1)
	rc=$?
	if [ "$rc" != 0 ] && echo "$out" | grep -q "^not ok [0-9]* - $2\$"; then
		pass "guest-stock/$1 fails where WAITPKG is present ('$2' among $(echo "$out" | grep -c '^not ok') failures)"
	else
		fail "guest-stock/$1 fails where WAITPKG is present, on '$2'" \
			"exit $rc; failures: $(echo "$out" | grep '^not ok' | head -n 3 | tr '\n' ';')"
	fi
}
fails_here 10-no-waitpkg.t "no waitpkg flag in /proc/cpuinfo"
fails_here 30-umwait-absent.t "no /sys/devices/system/cpu/umwait_control"
fails_here 40-umwait-trace-stock.t "one warning"
is "$(cat /sys/devices/system/cpu/online)" 0-3 "every CPU back online after them"
done_testing
