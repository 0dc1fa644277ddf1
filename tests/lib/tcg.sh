# QEMU's tests/tcg harness for x86_64-softmmu, as vm/build-qemu keeps it in
# the cached QEMU build (OUTDIR/tcg: the sources and configure's files).
# Sourced by host tests after tests/lib/tap.sh; uses the caller's top.

# the QMP client of the tests that drive QEMU themselves
qmp=$top/vm/lib/qmp.py

# tcg_setup: make a scratch directory, tmp (removed at exit, with any
# background job killed), whose x86_64-softmmu is a build directory of the
# harness (the cache stays clean); sets tcg (the kept tree) and tcg_qemu (the
# binary and the firmware paths: LAB_QEMU runs another binary, as vm/run
# does).  Without a harness in the cache: one failed check, and exit.
tcg_setup() {
	local qdir
	tmp=$(mktemp -d)
	trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
	qdir=$("$top/vm/ensure" qemu 2>/dev/null)
	tcg=$qdir/tcg
	if [ -z "$qdir" ] || [ ! -r "$tcg/x86_64-softmmu/config-target.mak" ] ||
		[ ! -r "$tcg/src/tests/tcg/x86_64/system/x86.h" ]; then
		fail "QEMU's tests/tcg harness for x86_64-softmmu" \
			"none in the cached build '$qdir': vm/build-qemu keeps it in OUTDIR/tcg"
		done_testing
		exit
	fi
	mkdir "$tmp/x86_64-softmmu"
	cp "$tcg/config-host.mak" "$tmp/"
	cp "$tcg/x86_64-softmmu/config-target.mak" "$tmp/x86_64-softmmu/"
	ln -s "$tcg/src/tests/tcg/Makefile.target" "$tmp/x86_64-softmmu/Makefile"
	tcg_qemu="${LAB_QEMU:-$qdir/bin/qemu-system-x86_64} -L /usr/share/qemu -L /usr/share/seabios -net none"
}

# tcg_make TARGET...: make TARGETs in $tmp/x86_64-softmmu with the kept
# sources (a test's own .c copied there builds as QEMU's own do)
tcg_make() {
	make -s -C "$tmp/x86_64-softmmu" SRC_PATH="$tcg/src" QEMU="$tcg_qemu" \
		EXTRA_CFLAGS="-I$tcg/src/tests/tcg/x86_64/system" "$@"
}

# tcg_checks NAME FILE: one check, "NAME": every "ok: WHAT" or "FAIL: WHAT"
# line the test printed to FILE is ok, and there is one at least (each line
# a TAP comment before it, the FAIL lines again in its diagnostics); sets
# tcg_n to how many lines there were.
# One TAP line however many the program printed: a program that dies
# midway prints fewer, and fails here and in its "PASS: 0 failed" check.
tcg_checks() {
	local line bad=
	tcg_n=0
	while IFS= read -r line; do
		case "$line" in
		'ok: '*) tcg_n=$((tcg_n + 1)); diag "$1: $line" ;;
		'FAIL: '*' failed') ;;
		'FAIL: '*) tcg_n=$((tcg_n + 1)); diag "$1: $line"; bad="${bad:+$bad; }${line#FAIL: }" ;;
		esac
	done < <(cat "$2" 2>/dev/null)
	if [ -z "$bad" ] && [ $tcg_n -gt 0 ]; then
		pass "$1: every check the program printed passed ($tcg_n)"
	else
		fail "$1: every check the program printed passed" "$tcg_n checks; failed: ${bad:-none, but there were no checks}"
	fi
}

# tcg_fixture NAME: build tests/fixtures/NAME.c (and the headers it may
# include: tests/fixtures/tcg-*.h) in $tmp/x86_64-softmmu as QEMU's own
# system tests are built, after tcg_setup; sets prog to the program.  If it
# does not build: one failed check, and exit.
tcg_fixture() {
	tcg_setup
	prog=$tmp/x86_64-softmmu/$1
	cp "$top/tests/fixtures/$1.c" "$top"/tests/fixtures/tcg-*.h "$tmp/x86_64-softmmu/"
	if ! tcg_make "$1" >"$tmp/build-$1.log" 2>&1; then
		fail "tests/fixtures/$1.c builds with QEMU's tests/tcg harness" \
			"$(tail -n 3 "$tmp/build-$1.log")"
		done_testing
		exit
	fi
}

# tcg_start NAME ARGS...: run the program on QEMU in the background (at most
# 900 s), as QEMU's harness runs its system tests: its debug console in
# $tmp/NAME.out, QEMU's own output in $tmp/NAME.log, a QMP socket at
# $tmp/NAME.qmp; ARGS go before -kernel.  Its pid in tcg_pid.
tcg_start() {
	local name=$1
	shift
	# shellcheck disable=SC2086 # tcg_qemu is the binary and its options
	timeout 900 $tcg_qemu -display none -monitor none \
		-chardev "file,path=$tmp/$name.out,id=output" -device isa-debugcon,chardev=output \
		-device isa-debug-exit,iobase=0xf4,iosize=0x4 \
		-qmp "unix:$tmp/$name.qmp,server=on,wait=off" "$@" -kernel "$prog" \
		>"$tmp/$name.log" 2>&1 &
	tcg_pid=$!
}

# tcg_said NAME LINE: wait until the program of tcg_start NAME prints LINE,
# or its QEMU ends: one check, that it printed LINE (with the ends of its
# output if not); false if it did not
tcg_said() {
	until grep -qxF -- "$2" "$tmp/$1.out" 2>/dev/null; do
		kill -0 "$tcg_pid" 2>/dev/null || break
		sleep 0.1
	done
	if grep -qxF -- "$2" "$tmp/$1.out" 2>/dev/null; then
		pass "$1: the program reached '$2'"
		return 0
	fi
	fail "$1: the program reached '$2'" "$(tail -n 3 "$tmp/$1.out" "$tmp/$1.log" 2>&1)"
	return 1
}

# tcg_passed NAME: after tcg_start NAME's QEMU: its checks (tcg_checks), and
# one that the program ran to "PASS: 0 failed" and QEMU exited 0: two checks
tcg_passed() {
	local rc
	wait "$tcg_pid"
	rc=$?
	tcg_checks "$1" "$tmp/$1.out"
	if [ $rc -ne 0 ] || ! grep -qx 'PASS: 0 failed' "$tmp/$1.out" 2>/dev/null; then
		fail "$1: the program ran to 'PASS: 0 failed' (exit $rc, $tcg_n checks)" \
			"$(tail -n 3 "$tmp/$1.out" "$tmp/$1.log" 2>&1)"
	else
		pass "$1: the program ran to 'PASS: 0 failed' ($tcg_n checks)"
	fi
}
