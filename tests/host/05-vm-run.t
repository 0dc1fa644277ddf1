#!/bin/bash
# vm/run as a user meets it: a user's own static program with --add, exit
# status and stdout/stderr passed through, a hang ends at --timeout with 124,
# --qemu-trace-events narrows the QEMU trace.
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/.." && pwd)/..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/hello.c" <<'C'
#include <stdio.h>
int main(int argc, char **argv)
{
	printf("hello from %s with %d args\n", argv[0], argc - 1);
	fprintf(stderr, "to stderr\n");
	return 7;
}
C
gcc -static -O2 -o "$tmp/my-static-prog" "$tmp/hello.c"
# a user's library where a user puts one (/lib/x86_64-linux-gnu: through the
# guest's /lib -> usr/lib link) and a dynamic program that needs it
cat >"$tmp/lib.c" <<'C'
int lab_answer(void) { return 42; }
C
cat >"$tmp/dyn.c" <<'C'
#include <stdio.h>
int lab_answer(void);
int main(void)
{
	printf("dyn: %d\n", lab_answer());
	return 0;
}
C
gcc -shared -fPIC -o "$tmp/liblabadd.so" "$tmp/lib.c" &&
	gcc -O2 -o "$tmp/dyn" "$tmp/dyn.c" -L"$tmp" -llabadd

out=$("$top/vm/run" --no-build --smp 2 --timeout 300 --add "$tmp/my-static-prog" \
	--add "$tmp/my-static-prog:/opt/bin/prog2" \
	--add "$tmp/liblabadd.so:/lib/x86_64-linux-gnu/liblabadd.so" --add "$tmp/dyn:/opt/bin/dyn" \
	-- '/my-static-prog a b; echo "rc=$?"; /opt/bin/prog2 2>/dev/null; /opt/bin/dyn; echo "dyn rc=$?";
	    [ -L /lib ] && echo "/lib: a link to $(readlink /lib)"; exit 3' 2>"$tmp/err")
rc=$?
is "$rc" 3 "vm/run exits with the command's status"
is "$(echo "$out" | head -n 2)" "$(printf 'hello from /my-static-prog with 2 args\nrc=7')" \
	"--add HOST_PATH runs the user's static program as /NAME, its output on stdout"
is "$(echo "$out" | sed -n 3p)" "hello from /opt/bin/prog2 with 0 args" "--add HOST:GUEST puts it at GUEST"
is "$(echo "$out" | sed -n 4,6p | tr '\n' '|')" "dyn: 42|dyn rc=0|/lib: a link to usr/lib|" \
	"--add of a library under /lib: placed through the merged-/usr link, which stays; a dynamic program using it runs"
is "$(grep -c 'to stderr' "$tmp/err")" 1 "the guest command's stderr arrives on stderr"

out=$("$top/vm/run" --no-build --smp 1 --timeout 40 -- 'sleep 600' 2>"$tmp/err")
rc=$?
is "$rc" 124 "a command that outlives --timeout: exit 124"
check "and the last console lines are shown" grep -q 'did not finish within 40 s' "$tmp/err"

"$top/vm/run" --no-build --smp 9 -- true 2>"$tmp/err"
is "$?" 2 "--smp 9: exit 2"
is "$(cat "$tmp/err")" "vm/run: --smp takes 1 to 8, not '9'" "with one line saying what is wrong"

"$top/vm/run" --no-build --kernel 5.10 -- true 2>"$tmp/err"
is "$?" 2 "--kernel 5.10: exit 2"
is "$(cat "$tmp/err")" "vm/run: --kernel takes 6.1, 6.12, 7.2, base, distro, distro-5.10, distro-6.12 or distro-7.2, not '5.10'" "with one line naming the kernels it has"

LAB_QEMU=/nonexistent/qemu "$top/vm/run" --no-build -- true 2>"$tmp/err"
is "$?" 2 "LAB_QEMU naming no executable: exit 2"
is "$(cat "$tmp/err")" "vm/run: LAB_QEMU: '/nonexistent/qemu' is not an executable" "with one line naming it"

# make bench traces only waitpkg_wait: a UMONITOR record's log write would
# push a 1k-cycle UMWAIT past its deadline
"$top/vm/run" --no-build --smp 1 --timeout 300 --qemu-trace "$tmp/trace" --qemu-trace-events waitpkg_wait \
	-- 'tpause-loop -i umwait -n 3 -c 1000 >/dev/null' 2>"$tmp/err"
is "$?" 0 "--qemu-trace-events waitpkg_wait: the guest ran its UMWAITs"
cmp_ok "$(grep -c '^waitpkg_wait .*insn umwait cpl 3 ' "$tmp/trace")" -ge 3 "the trace has their waitpkg_wait records"
is "$(grep -v -c '^waitpkg_wait ' "$tmp/trace")" 0 "and no other event (no waitpkg_umonitor, no waitpkg_wait_ctx)"
"$top/vm/run" --no-build --qemu-trace "$tmp/trace" --qemu-trace-events 'waitpkg wait' -- true 2>"$tmp/err"
is "$?" 2 "--qemu-trace-events naming no waitpkg_* or x86_pmu_* event: exit 2"
is "$(cat "$tmp/err")" "vm/run: --qemu-trace-events takes a pattern of waitpkg_* or x86_pmu_* events, not 'waitpkg wait'" \
	"with one line saying so"

"$top/vm/run" --no-build --snapshots 2>"$tmp/err" </dev/null
is "$?" 2 "--snapshots without a COMMAND: exit 2"
is "$(cat "$tmp/err")" "vm/run: --snapshots needs a COMMAND" "with one line saying so"
done_testing
