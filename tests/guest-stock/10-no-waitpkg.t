# Debian's stock qemu: no WAITPKG. tpause-loop must refuse cleanly, never SIGILL.
. /lab/tests/lib/tap.sh

check "no waitpkg flag in /proc/cpuinfo" sh -c '! grep -qw waitpkg /proc/cpuinfo'
is "$(grep -c ^processor /proc/cpuinfo)" 4 "4 CPUs"
check "no umwait_control directory" test ! -e /sys/devices/system/cpu/umwait_control

out=$(tpause-loop -n 10 -c 1000 2>&1)
rc=$?
is "$rc" 2 "tpause-loop exits 2 without WAITPKG"
is "$(echo "$out" | wc -l)" 1 "with one line"
case "$out" in
*"lacks WAITPKG"*) pass "the line says the CPU lacks WAITPKG" ;;
*) fail "the line says the CPU lacks WAITPKG" "got: $out" ;;
esac
done_testing
