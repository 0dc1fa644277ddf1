#!/bin/bash
# umwait-trace's site scanner (Zydis) against objdump -d: on Debian libraries
# that really contain TPAUSE/UMWAIT it must find exactly the instructions
# objdump shows, at the right file offsets; in a binary whose only 0F AE
# instructions are fences, CLWB, CLFLUSHOPT and UMONITOR it must find none.
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

# objdump_sites FILE: "VADDR INSN" for each tpause/umwait objdump decodes
objdump_sites() {
	objdump -d --no-show-raw-insn "$1" |
		awk '$2 == "tpause" || $2 == "umwait" { a = $1; sub(/:$/, "", a); print "0x" a, $2 }' |
		sort
}

# scanner_sites FILE: the same two columns from umwait-trace sites
scanner_sites() {
	"$ut" sites "$1" | awk '{ print $3, $4 }' | sort
}

# offset_of FILE VADDR: the file offset of VADDR, from the PT_LOAD that holds it
offset_of() {
	local type off vaddr paddr filesz rest va=$(($2))
	while read -r type off vaddr paddr filesz rest; do
		[ "$type" = LOAD ] || continue
		if [ "$va" -ge $((vaddr)) ] && [ "$va" -lt $((vaddr + filesz)) ]; then
			printf '0x%x\n' $((va - vaddr + off))
			return
		fi
	done < <(readelf -lW "$1")
	echo none
}

# insn_at FILE OFFSET: what the bytes at OFFSET encode: tpause, umwait or other
insn_at() {
	local b i=1
	read -ra b < <(od -An -tx1 -j $(($2)) -N 6 "$1")
	[[ ${b[1]} == 4? ]] && i=2	# REX
	if [ "${b[i]}" != 0f ] || [ "${b[i + 1]}" != ae ] || [ $((0x${b[i + 2]})) -lt $((0xf0)) ]; then
		echo other
		return
	fi
	case "${b[0]}" in 66) echo tpause ;; f2) echo umwait ;; *) echo other ;; esac
}

# objdump_symbol FILE VADDR: "name+0xoff" of the function whose extent
# [value, value + size) holds VADDR in objdump -t (.symtab), else in objdump -T
# (.dynsym); "-" when none does
objdump_symbol() {
	local f=$1 va=$(($2)) opt left right val size name best= bestval=-1
	for opt in -tw -Tw; do
		while IFS=$'\t' read -r left right; do
			[ "${left:23:1}" = F ] || continue
			read -r val _ <<<"$left"
			read -r size _ <<<"$right"
			name=${right##* }
			val=$((0x$val)) size=$((0x$size))
			if [ "$va" -ge "$val" ] && [ "$va" -lt $((val + size)) ] && [ "$val" -gt "$bestval" ]; then
				best=$name bestval=$val
			fi
		done < <(objdump "$opt" "$f" | grep -P '^[0-9a-f]{16} .{7} \S+\t')
		[ -n "$best" ] && break
	done
	if [ -z "$best" ]; then
		echo -
	elif [ "$va" -eq "$bestval" ]; then
		echo "$best"
	else
		printf '%s+0x%x\n' "$best" $((va - bestval))
	fi
}

# insn_len FILE OFFSET: the length of the TPAUSE/UMWAIT at OFFSET (REX or not)
insn_len() {
	local b
	read -ra b < <(od -An -tx1 -j $(($2)) -N 2 "$1")
	[[ ${b[1]} == 4? ]] && echo 5 || echo 4
}

# objdump_branches_to FILE HEXADDR: how many direct jumps, calls and loops
# target it (compared as strings: awk takes an address like 19e2 for 1900)
objdump_branches_to() {
	objdump -d --no-show-raw-insn "$1" |
		awk -v t="$2" '$2 ~ /^(j[a-z]+|call|loop[a-z]*)$/ && $3 "" == t "" { n++ } END { print n + 0 }'
}

# check_library LABEL FILE
check_library() {
	local label=$1 f=$2 want got line off vaddr insn bad=0
	if [ ! -e "$f" ]; then
		# each of its checks fails
		for c in "objdump shows TPAUSE/UMWAIT sites" "the scanner finds exactly objdump's sites" \
			"each site's file offset holds that instruction" "each site's count of direct branches" \
			"each site's symbol" "no probe caps places lies on a path into a TPAUSE or UMWAIT"; do
			fail "$label: $c" "$f not installed (vm/setup-host installs it)"
		done
		return
	fi
	want=$(objdump_sites "$f")
	got=$(scanner_sites "$f")
	cmp_ok "$(printf '%s' "$want" | grep -c .)" -gt 0 "$label: objdump shows TPAUSE/UMWAIT sites"
	is "$got" "$want" "$label: the scanner finds exactly objdump's sites (vaddr insn)"
	while read -r _ off vaddr insn _; do
		[ "$(offset_of "$f" "$vaddr")" = "$off" ] || {
			bad=1
			diag "  $vaddr: offset $off, program headers say $(offset_of "$f" "$vaddr")"
		}
		[ "$(insn_at "$f" "$off")" = "$insn" ] || {
			bad=1
			diag "  $off: the bytes there are not a $insn: $(od -An -tx1 -j $((off)) -N 6 "$f")"
		}
	done < <("$ut" sites "$f")
	is "$bad" 0 "$label: each site's file offset holds that instruction"
	# direct branches to the instruction after each site (sites -v: arrival lines)
	is "$("$ut" sites -v "$f" | awk '/^[^ ]/ { off = $2 } /^  arrival / { n[off]++ }
		END { for (o in n) print o, n[o] }' | sort)" \
		"$(while read -r _ off vaddr _ _; do
			n=$(objdump_branches_to "$f" $(printf '%x' $((vaddr + $(insn_len "$f" "$off")))))
			[ "$n" -gt 0 ] && echo "$off $n"
		done < <("$ut" sites "$f") | sort)" \
		"$label: each site's count of direct branches to the instruction after it is objdump's"
	is "$("$ut" sites "$f" | awk '{ print $3, $4, $5 }')" \
		"$("$ut" sites "$f" | while read -r _ _ vaddr insn sym; do
			want=$(objdump_symbol "$f" "$vaddr")
			# no symbol holds it: named by its function's unwind entry, as readelf shows it
			[ "$want" = - ] && [[ $sym == func@* ]] && fde_holds "$f" "${sym#func@}" "$vaddr" && want=$sym
			echo "$vaddr $insn $want"; done)" \
		"$label: each site's symbol is the one objdump -t/-T says holds it, else its unwind entry's start (readelf)"
	path_probes "$label" "$f"
}

# fde_holds FILE 0xSTART+0xOFF VADDR: an FDE of FILE (readelf) starts at
# START, covers VADDR, and START + OFF is VADDR
fde_holds() {
	local start=${2%%+*} off=${2#*+} lo hi
	[ $((start + off)) -eq $(($3)) ] || return 1
	while read -r lo hi; do
		[ $((0x$lo)) -eq $((start)) ] && [ $((0x$lo)) -le $(($3)) ] && [ $(($3)) -lt $((0x$hi)) ] && return 0
	done < <(readelf --debug-dump=frames "$1" 2>/dev/null | sed -n 's/.* FDE .* pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\)$/\1 \2/p')
	return 1
}

# on_path_probes FILE [ARGS]: the probes sites -v ARGS lists for FILE from
# which a path reaches a TPAUSE or UMWAIT, by objdump's disassembly, as
# "0xPROBE->0xWAIT": from the instruction after the probe (a JMP has none),
# both ways of every conditional branch (Jcc, LOOP, JRCXZ), direct JMPs
# (to another function too: tail jumps), fall-through over calls up to a
# function's end (a symbol objdump names, or an unwind entry readelf lists);
# not past RET, UD2, HLT, INT3, an indirect jump, or the instruction after a
# wait (a site's counting probe: a wait beyond it is delayed by that probe
# anyway). A site's own counting probe is its measurement, not a path probe.
on_path_probes() {
	local f=$1
	shift
	python3 - "$f" <(objdump -d --no-show-raw-insn "$f") <("$ut" sites -v "$@" "$f") \
		<(readelf --debug-dump=frames "$f" 2>/dev/null) <<-'PY'
		import re, sys
		insns, order, bounds = {}, [], set()
		for line in open(sys.argv[2]):
		    h = re.match(r"([0-9a-f]+) <.*>:$", line)
		    if h:
		        bounds.add(int(h.group(1), 16))
		        continue
		    m = re.match(r"\s*([0-9a-f]+):\s+(?:(?:notrack|bnd|rex\S*|data16|cs|ds|repz|repnz|rep|lock)\s+)*(\S+)\s*(\S*)", line)
		    if m:
		        a = int(m.group(1), 16)
		        insns[a] = (m.group(2), m.group(3))
		        order.append(a)
		for line in open(sys.argv[4]):
		    m = re.search(r" FDE .* pc=([0-9a-f]+)\.\.([0-9a-f]+)$", line)
		    if m:
		        bounds.update((int(m.group(1), 16), int(m.group(2), 16)))
		# fall-through: to the next instruction objdump shows, in the same function
		nxt = {order[i]: order[i + 1] for i in range(len(order) - 1) if order[i + 1] not in bounds}
		waits = {a for a, (mn, _) in insns.items() if mn in ("tpause", "umwait")}
		after = {nxt[a] for a in waits if a in nxt}
		exits, jumps = set(), set()
		for line in open(sys.argv[3]):
		    m = re.match(r"  probe 0x[0-9a-f]+ 0x([0-9a-f]+) (exit|jump)", line)
		    if m:
		        (exits if m.group(2) == "exit" else jumps).add(int(m.group(1), 16))
		def ways(a):
		    mn, op = insns[a]
		    direct = re.match(r"[0-9a-f]+$", op)
		    if mn in ("ret", "ud2", "hlt", "int3") or (mn.startswith("j") and not direct):
		        return []
		    out = [int(op, 16)] if mn.startswith(("j", "loop")) and direct else []
		    if mn != "jmp" and a in nxt:
		        out.append(nxt[a])
		    return out
		for p in sorted(jumps - exits):
		    mn, op = insns.get(p, ("?", ""))
		    todo = [nxt[p]] if mn != "jmp" and p in nxt else []
		    seen, hit = set(todo), None
		    while todo and hit is None:
		        a = todo.pop()
		        if a not in insns or a in after:
		            continue
		        if a in waits:
		            hit = a
		            break
		        for b in ways(a):
		            if b not in seen:
		                seen.add(b)
		                todo.append(b)
		    if hit is not None:
		        print("0x%x->0x%x" % (p, hit))
	PY
}

# path_probes LABEL FILE: no probe on a wait's own path by default (a
# script that fails says so: its silence would pass)
path_probes() {
	local out
	out=$(on_path_probes "$2") || out="$out (the path check's script failed: exit $?)"
	is "$(paste -sd' ' - <<<"$out")" "" \
		"$1: no probe caps places lies on a path into a TPAUSE or UMWAIT (objdump, both ways of each branch)"
}

lib=/usr/lib/x86_64-linux-gnu
check_library libtbb12 $lib/libtbb.so.12
check_library librte-eal23 $lib/librte_eal.so.23
check_library libomp5-14 /usr/lib/llvm-14/lib/libomp.so.5
check_library tpause-loop "$top/build/tools/tpause-loop"
check_library wait-paths "$top/build/tools/wait-paths"
check_library libwait-sites "$top/build/tools/libwait-sites.so"
for b in gcc-O0 gcc-O2 gcc-O3 clang-O0 clang-O2 clang-O3; do
	check_library layouts-$b "$top/build/tools/layouts-$b"
done
# Scanners with the old defaults (tests/mutants): the path check above
# catches each. scan-probe-path probes the branches on a wait's own path;
# scan-straight-path follows only fall-through and JMPs inside the function
# (the rule before the control-flow graph), and so probes the layouts' skip
# before an early-return guard (its wait behind the guard's taken Jcc) and
# the skip before a tail jump (its wait in the function jumped to): gcc and
# clang build both shapes at -O2 and -O3; at -O0 those waits are reached by
# fall-through, or by a call (each wait named by the function objdump -t
# says holds it).
mutants_seen() {
	local b f
	ut=$top/build/tools/umwait-trace-mutant-scan-probe-path on_path_probes $lib/librte_eal.so.23
	for b in gcc-O0 gcc-O2 gcc-O3 clang-O0 clang-O2 clang-O3; do
		f=$top/build/tools/layouts-$b
		echo "$b:" $(ut=$top/build/tools/umwait-trace-mutant-scan-straight-path on_path_probes "$f" |
			while IFS='>' read -r _ w; do objdump_symbol "$f" "$w" | sed 's/+0x[0-9a-f]*$//'; done)
	done
}
is "$(mutants_seen)" "0x3d3e3->0x3d3ef
gcc-O0:
gcc-O2: early tail_wait
gcc-O3: early tail_wait
clang-O0:
clang-O2: early tail_wait
clang-O3: early tail_wait" \
	"mutants: the path check sees scan-probe-path's probe on DPDK's jne between UMONITOR and UMWAIT, scan-straight-path's before the layouts' early-return guard and tail jump"
# --exact does probe the wait's own path: the check above would see it
is "$(on_path_probes $lib/librte_eal.so.23 --exact)" "0x3d3e3->0x3d3ef" \
	"librte-eal23 --exact: the one probe it adds is the jne between UMONITOR and UMWAIT (the path check sees it)"
cmp_ok "$(for b in gcc-O2 clang-O2; do on_path_probes "$top/build/tools/layouts-$b" --exact; done | grep -c .)" -ge 2 \
	"layouts --exact: the guard's and the monitor's branches on the wait's path are probed (the path check sees them)"

# The fixtures are a PIE and a shared library whose code's file offsets are
# not its addresses: caps must probe by offset (checked in the guest).
for f in wait-paths libwait-sites.so; do
	is "$(readelf -hW "$top/build/tools/$f" | awk '$1 == "Type:" { print $2 }')" DYN "$f: position-independent (ELF type DYN)"
	n=0
	while read -r type off vaddr _ _ _ flags; do
		[ "$type" = LOAD ] && [[ $flags == *E* ]] && [ $((off)) -ne $((vaddr)) ] && n=$((n + 1))
	done < <(readelf -lW "$top/build/tools/$f")
	cmp_ok $n -ge 1 "$f: an executable segment's file offset differs from its address"
done

# Same opcode group (0F AE), same prefixes, not a wait: must not be listed.
cat >"$tmp/fences.c" <<'EOF'
static char line[64] __attribute__((aligned(64)));

__attribute__((noinline)) void fences(void)
{
	asm volatile("mfence; lfence; sfence" ::: "memory");
	asm volatile("clwb %0" : "+m"(line));			/* 66 0F AE /6, memory */
	asm volatile("clflushopt %0" : "+m"(line));		/* 66 0F AE /7, memory */
	asm volatile("umonitor %0" :: "r"(line));		/* F3 0F AE /6, register */
	asm volatile(".byte 0x0f, 0xae, 0xf0");			/* MFENCE spelled with F0 */
}

#ifdef WITH_TPAUSE
__attribute__((noinline)) unsigned char wait_once(unsigned long long t)
{
	unsigned char cf;

	asm volatile("tpause %%edi; setb %0" : "=r"(cf) : "D"(0), "a"((unsigned)t),
		     "d"((unsigned)(t >> 32)) : "cc");
	return cf;
}
#endif

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 5)
		fences();
	return 0;
}
EOF
if gcc -O2 -o "$tmp/fences" "$tmp/fences.c" 2>"$tmp/cc.err" &&
	gcc -O2 -DWITH_TPAUSE -o "$tmp/fences-tpause" "$tmp/fences.c" 2>>"$tmp/cc.err"; then
	is "$(objdump -d "$tmp/fences" | grep -cE '\s(mfence|lfence|sfence|clwb|clflushopt|umonitor)(\s|$)')" 7 \
		"control binary: objdump shows its 7 fence/flush/monitor instructions"
	out=$("$ut" sites "$tmp/fences" 2>"$tmp/err")
	rc=$?
	is "$out" "" "no site in a binary with only MFENCE/CLWB/CLFLUSHOPT/UMONITOR"
	is "$rc" 1 "sites exits 1 when there is no site"
	is "$(cat "$tmp/err")" "umwait-trace: no TPAUSE/UMWAIT site in: $tmp/fences" \
		"and says which files it scanned"
	is "$(scanner_sites "$tmp/fences-tpause")" "$(objdump_sites "$tmp/fences-tpause")" \
		"the same binary with one TPAUSE added: the scanner finds it, as objdump does"
	sym=$(nm "$tmp/fences-tpause" | awk '$3 == "wait_once" { print $1 }')
	va=$("$ut" sites "$tmp/fences-tpause" | awk '{ print $3 }')
	is "$("$ut" sites "$tmp/fences-tpause" | awk '{ print $4, $5 }')" \
		"tpause wait_once+0x$(printf %x $((va - 0x$sym)))" "and names the function it is in"
else
	for c in "control binary: objdump shows its 7 fence/flush/monitor instructions" \
		"no site in a binary with only MFENCE/CLWB/CLFLUSHOPT/UMONITOR" "sites exits 1 when there is no site" \
		"and says which files it scanned" "the same binary with one TPAUSE added: the scanner finds it" \
		"and names the function it is in"; do
		fail "$c" "the control binaries do not compile: $(cat "$tmp/cc.err")"
	done
fi

# A FILE without '/': the file of that name in the current directory, or else
# the one libbpf would find for it ($PATH; library directories for a .so),
# named by its absolute path: the scanner must look where the uprobe goes.
mkdir -p "$tmp/cwd" "$tmp/bin"
cp "$top/build/tools/tpause-loop" "$tmp/cwd/tpause-loop"
cp "$tmp/fences-tpause" "$tmp/bin/tpause-loop"
if [ -e $lib/libtbb.so.12 ]; then
	is "$(cd "$tmp/cwd" && "$ut" sites libtbb.so.12 2>&1)" \
		"$("$ut" sites $lib/libtbb.so.12 | sed "s#^[^ ]*#$(realpath $lib/libtbb.so.12)#")" \
		"bare library name: found in the library directories, as libbpf would, and named by its real path"
else
	fail "bare library name" "$lib/libtbb.so.12 not installed (vm/setup-host installs it)"
fi
is "$(cd "$tmp/cwd" && PATH=$tmp/bin:$PATH "$ut" sites tpause-loop | awk '{ print $1, $2 }' | sort -u | sed "s#^$tmp/##")" \
	"$("$ut" sites "$tmp/cwd/tpause-loop" | awk '{ print $1, $2 }' | sort -u | sed "s#^$tmp/##")" \
	"bare name present in the current directory: that file (not the one in \$PATH), by its absolute path"
is "$(cd "$tmp" && PATH=$tmp/bin:$PATH "$ut" sites tpause-loop | awk '{ print $1, $2, $4 }' | sed "s#^$tmp/##")" \
	"$("$ut" sites "$tmp/bin/tpause-loop" | awk '{ print $1, $2, $4 }' | sed "s#^$tmp/##")" \
	"bare name absent from the current directory: the one in \$PATH, by its absolute path"
out=$(cd "$tmp" && PATH=/nonexistent "$ut" sites no-such-tool 2>&1)
is "$?:$out" "2:umwait-trace: cannot find no-such-tool: not in the current directory nor in \$PATH, /usr/bin, /usr/sbin" \
	"bare name found nowhere: exit 2 and one line"

out=$("$ut" sites /nonexistent 2>&1)
rc=$?
is "$rc:$out" "2:umwait-trace: cannot open /nonexistent: No such file or directory" \
	"an unreadable file: exit 2 and one line"
out=$("$ut" sites "$tmp/fences.c" 2>&1)
is "$?:$out" "2:umwait-trace: $tmp/fences.c: not an ELF file" "a non-ELF file: exit 2 and one line"
done_testing
