#!/bin/bash
# umwait-trace's scanner and decoder on input that is wrong, on the host (no
# BPF, no root needed: umwait-trace sites):
# 1. bad files: a directory, a FIFO, an empty file, a text file, a 32-bit
#    and a non-x86 ELF file, real files cut short, headers that point past
#    the end, a section as large as the address space: each is one line on
#    stderr naming the file and the problem, exit 2, nothing on stdout;
# 2. bad command lines: unknown options, missing and malformed values
#    (negative, overflowing, non-numeric PIDs): one line, exit 2;
# 3. fuzzing: the scanner built with AddressSanitizer and UBSan under
#    libFuzzer (Debian's clang), every input in tests/fuzz/crashes replayed
#    (what fuzzing found once, kept), then a bounded run from a fixed seed
#    (the same inputs on every run) over mutated copies of real binaries:
#    the corpus's, stripped, without section headers, and Debian's libtbb.
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
ut=$top/build/tools/umwait-trace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$ut" ]; then
	fail "umwait-trace is built" "no $ut: run make tools"
	done_testing
	exit
fi

# refuses DESC WANT_LINE ARGS...: umwait-trace ARGS exits 2, prints WANT_LINE
# alone on stderr (a pattern: grep -x), nothing on stdout
refuses() {
	local desc=$1 want=$2 rc
	shift 2
	"$ut" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
		grep -qxE -- "$want" "$tmp/err"; then
		pass "$desc: exit 2, one line: $(cat "$tmp/err")"
	else
		fail "$desc: exit 2, one line matching '$want', nothing on stdout" \
			"exit $rc; stderr: $(head -c 600 "$tmp/err"); stdout: $(head -c 200 "$tmp/out")"
	fi
}

src=$top/build/tools/layouts-gcc-O2
lib=/usr/lib/x86_64-linux-gnu/libtbb.so.12
size=$(stat -c %s "$src")

# 1. bad files
mkdir "$tmp/dir"
mkfifo "$tmp/fifo"
: >"$tmp/empty"
echo "not an ELF file" >"$tmp/text"
printf '\177ELF\001\001\001\000\000\000\000\000\000\000\000\000' >"$tmp/elf32"
head -c 64 /dev/zero >>"$tmp/elf32"
cp "$src" "$tmp/arm" && printf '\267\000' | dd of="$tmp/arm" bs=1 seek=18 conv=notrunc status=none
refuses "a directory" "umwait-trace: $tmp/dir: not a regular file \(a directory\)" sites "$tmp/dir"
refuses "a FIFO (never waited on)" "umwait-trace: $tmp/fifo: not a regular file" sites "$tmp/fifo"
refuses "an empty file" "umwait-trace: $tmp/empty: not an ELF file" sites "$tmp/empty"
refuses "a text file" "umwait-trace: $tmp/text: not an ELF file" sites "$tmp/text"
refuses "a 32-bit ELF file" "umwait-trace: $tmp/elf32: not an x86-64 ELF file" sites "$tmp/elf32"
refuses "an ELF file for another machine (AArch64)" "umwait-trace: $tmp/arm: not an x86-64 ELF file" sites "$tmp/arm"
for n in 63 64 200 4096 $((size / 2)) $((size - 1)); do
	head -c $n "$src" >"$tmp/cut-$n"
done
refuses "the ELF header cut short (63 bytes)" "umwait-trace: $tmp/cut-63: a truncated ELF file \(63 bytes: its header alone is 64\)" sites "$tmp/cut-63"
for n in 64 200 4096 $((size / 2)) $((size - 1)); do
	refuses "a real binary cut at $n of $size bytes" \
		"umwait-trace: $tmp/cut-$n: a corrupt or truncated ELF file .*" sites "$tmp/cut-$n"
done
# section headers past the end; a huge count of them; an executable section
# as large as the address space
python3 - "$src" "$tmp" <<'PY'
import struct, sys
src, d = sys.argv[1], sys.argv[2]
b = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum = struct.unpack_from("<HH", b, 0x3a)
def put(name, data):
    open("%s/%s" % (d, name), "wb").write(data)
x = bytearray(b); struct.pack_into("<Q", x, 0x28, len(b) + 4096); put("shoff-past", x)
x = bytearray(b); struct.pack_into("<H", x, 0x3c, 0xfff0); put("shnum-huge", x)
x = bytearray(b)
for i in range(shnum):
    o = shoff + i * shentsize
    typ, flags = struct.unpack_from("<IQ", x, o + 4)
    if typ == 1 and flags & 4:           # PROGBITS, SHF_EXECINSTR
        struct.pack_into("<Q", x, o + 0x20, 0xffffffffffff0000)
put("exec-huge", x)
PY
for f in shoff-past shnum-huge exec-huge; do
	refuses "a binary whose headers point past its end ($f)" \
		"umwait-trace: $tmp/$f: a corrupt or truncated ELF file .*" sites "$tmp/$f"
done

# 2. bad command lines
refuses "an unknown option" "umwait-trace sites: unknown option, or an option without its value: '--frobnicate' \(see 'umwait-trace sites --help'\)" \
	sites --frobnicate "$src"
refuses "-p without its value" "umwait-trace sites: unknown option, or an option without its value: '-p' \(see 'umwait-trace sites --help'\)" \
	sites -p
for p in -5 0 abc 12x 4294967297 99999999999999999999; do
	refuses "-p $p" "umwait-trace sites: invalid PID '$p' \(a number from 1 to 4194304\) \(see 'umwait-trace sites --help'\)" sites -p "$p"
done
refuses "no FILE and no -p" "umwait-trace sites: give FILEs or -p PID \(see 'umwait-trace sites --help'\)" sites
refuses "a file that does not exist" "umwait-trace: cannot open $tmp/nonexistent: No such file or directory" sites "$tmp/nonexistent"
refuses "an unknown command" "umwait-trace: unknown command 'frobnicate' \(status, events, caps or sites; see 'umwait-trace --help'\)" frobnicate
is "$("$ut" sites --help >/dev/null; echo $?):$("$ut" sites --version)" "0:umwait-trace 1.0" \
	"--help and --version exit 0 (and do not go on to run)"

# 3. fuzzing, under AddressSanitizer and UBSan
fz=$top/build/fuzz
mkdir -p "$fz"
zydis=$(cat "$top/build/umwait-trace/zydis-dir" 2>/dev/null)
if clang -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DZYDIS_STATIC_BUILD -I"$zydis/include" -I"$top/tools/umwait-trace" -I"$top/build/umwait-trace" \
	-o "$fz/scan-fuzz" "$top/tests/fuzz/scan-fuzz.c" "$top/tools/umwait-trace/scan.c" \
	"$top/tools/umwait-trace/scan_code.c" "$zydis/lib/libZydis.a" -lelf -lz 2>"$tmp/cc.err"; then
	pass "the scanner builds under libFuzzer with ASan and UBSan"
else
	fail "the scanner builds under libFuzzer with ASan and UBSan" "$(tail -n 5 "$tmp/cc.err")"
	done_testing
	exit
fi
n=$(ls "$top/tests/fuzz/crashes" | wc -l)
"$fz/scan-fuzz" -runs=1 "$top"/tests/fuzz/crashes/* >"$tmp/replay.log" 2>&1
is "$?" 0 "the $n inputs fuzzing once crashed the scanner on are all scanned cleanly now"
mkdir -p "$tmp/seed" "$tmp/corpus"
cp "$top"/build/tools/layouts-* "$top/build/tools/wait-paths" "$top/build/tools/libwait-sites.so" "$lib" "$tmp/seed/"
for f in layouts-gcc-O2 layouts-clang-O0 wait-paths; do
	strip -o "$tmp/seed/$f.stripped" "$tmp/seed/$f"
	# no section headers: decoded by segments, functions from PT_GNU_EH_FRAME
	cp "$tmp/seed/$f.stripped" "$tmp/seed/$f.noshdr"
	printf '\0\0\0\0\0\0\0\0' | dd of="$tmp/seed/$f.noshdr" bs=1 seek=40 conv=notrunc status=none
	printf '\0\0\0\0' | dd of="$tmp/seed/$f.noshdr" bs=1 seek=60 conv=notrunc status=none
done
runs=${LAB_FUZZ_RUNS:-2000}
start=$(date +%s)
"$fz/scan-fuzz" -seed=1 -runs="$runs" -max_len=300000 -rss_limit_mb=2048 -timeout=60 \
	-artifact_prefix="$tmp/" "$tmp/corpus" "$tmp/seed" >"$tmp/fuzz.log" 2>&1
rc=$?
is "$rc" 0 "$runs fuzzed inputs from seed 1 (mutated real binaries): no crash, leak or undefined behaviour"
if [ "$rc" != 0 ]; then
	grep -E 'ERROR|SUMMARY|runtime error' "$tmp/fuzz.log" | head -n 5 | sed 's/^/#   /'
	diag "the input: $(ls "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* 2>/dev/null | head -n 1) (keep it in tests/fuzz/crashes)"
fi
diag "fuzzing: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$tmp/fuzz.log"), coverage $(grep -o 'cov: [0-9]*' "$tmp/fuzz.log" | tail -n 1); $(($(date +%s) - start)) s"
done_testing
