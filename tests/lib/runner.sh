# The host side of the lab's test runners (bash; sourced by tests/run and
# tests/soak/run): boot a guest suite, tally its TAP output by file, check the
# boot's kernel log.  Uses the caller's top (the clone) and out (the results
# directory), and counts into its passed, failed and skipped.

# skip_allowed NAME REASON: tests/skips.allow lists this skip
skip_allowed() {
	local pat reason
	while IFS=$'\t' read -r pat reason; do
		case "$pat" in '' | '#'*) continue ;; esac
		# shellcheck disable=SC2254
		case "$1" in $pat) [ "$2" = "$reason" ] && return 0 ;; esac
	done <"${SKIPS_ALLOW:-$top/tests/skips.allow}"
	return 1
}

# not_ok TEXT: one failed test of the runner's own; its line is echoed and
# kept in $out/failures, which the summary lists
not_ok() {
	failed=$((failed + 1))
	echo "  not ok - $1"
	printf '%s\n' "$1" >>"$out/failures"
}

# tally NAME < TAP: count one test file's results, echo them with its name; a
# file without a plan line ("1..N"), or that ran other than N tests, fails
tally() {
	local name=$1 line nfail=0 nrun=0 plan=
	while IFS= read -r line; do
		case "$line" in
		1..[0-9]*)
			plan=${line#1..} ;;
		"ok "*"# SKIP"*)
			nrun=$((nrun + 1))
			if skip_allowed "$name" "${line#*# SKIP }"; then
				skipped=$((skipped + 1))
				echo "  $line"
				printf '%s: %s\n' "$name" "${line#*# SKIP }" >>"$out/allowed-skips"
			else
				nfail=$((nfail + 1))
				not_ok "$name skipped a test, and tests/skips.allow does not allow it: $line"
			fi ;;
		"ok "*)
			passed=$((passed + 1)); nrun=$((nrun + 1))
			echo "  $line" ;;
		"not ok "*)
			failed=$((failed + 1)); nfail=$((nfail + 1)); nrun=$((nrun + 1))
			echo "  $line"
			printf '%s: %s\n' "$name" "${line#not ok }" >>"$out/failures" ;;
		"# seconds: "*)
			printf '%s\t%s\n' "${line#\# seconds: }" "$name" >>"$out/file-seconds" ;;
		"# exit: "*)
			local rc=${line#\# exit: }
			if [ "$rc" != 0 ] && [ $nfail -eq 0 ]; then
				not_ok "$name exited $rc without a failing test"
			fi ;;
		"#"*) echo "  $line" ;;
		esac
	done
	if [ $nrun -eq 0 ]; then
		not_ok "$name ran no test"
	elif [ -z "$plan" ]; then
		not_ok "$name printed no plan (1..N): cut short?"
	elif [ "$plan" != "$nrun" ]; then
		not_ok "$name planned $plan tests and ran $nrun"
	fi
	[ -n "${counts_file:-}" ] && count_held "$name" "$nrun"
	return 0
}

# count_held NAME NRUN: test file NAME ran the number of checks that
# $counts_file (tests/counts: "NAME<TAB>CHECKS" a line) lists for it: a
# check that vanishes (an empty loop, a guarded check, a file cut short)
# or appears fails the run, whatever it printed. What ran is kept in
# $out/counts-ran (tests/lib/counts-update writes it into tests/counts).
count_held() {
	local want
	printf '%s\t%s\n' "$1" "$2" >>"$out/counts-ran"
	if [ ! -e "$counts_file" ]; then
		not_ok "$1 ran $2 checks and there is no tests/counts to hold it to (tests/lib/counts-update writes it)"
		return
	fi
	want=$(awk -F'\t' -v n="$1" '$1 == n { print $2; exit }' "$counts_file")
	if [ -z "$want" ]; then
		not_ok "$1 ran $2 checks and tests/counts does not list it: add it (tests/lib/counts-update)"
	elif [ "$want" != "$2" ]; then
		not_ok "$1 ran $2 checks, tests/counts lists $want"
	fi
}

# counts_summary: one line, the checks the files of this run ran against
# what tests/counts lists for them
counts_summary() {
	local ran want
	[ -s "$out/counts-ran" ] && [ -e "$counts_file" ] || return 0
	read -r ran want < <(awk -F'\t' 'NR == FNR { c[$1] = $2; next }
		{ r += $2; w += ($1 in c) ? c[$1] : 0 } END { print r, w }' "$counts_file" "$out/counts-ran")
	if [ "$ran" = "$want" ]; then
		echo "Counts: $(wc -l <"$out/counts-ran") files ran $ran checks, as tests/counts lists"
	else
		echo "Counts: $(wc -l <"$out/counts-ran") files ran $ran checks, tests/counts lists $want for them"
	fi
}

# split_suites LOG: feed each "# file: NAME" section of a guest log to tally
# (names get the caller's suite_prefix, if any: "6.12/guest/30-....t")
split_suites() {
	local log=$1 name= section=$out/section.tap pfx=${suite_prefix:-}
	: >"$section"
	while IFS= read -r line; do
		case "$line" in
		"# file: "*)
			[ -n "$name" ] && { echo "$name"; tally "$name" <"$section"; }
			name=$pfx${line#\# file: }
			printf '%s\n' "$name" >>"$out/ran"
			: >"$section" ;;
		"# suite done: "*)
			[ -n "$name" ] && { echo "$name"; tally "$name" <"$section"; }
			name= ;;
		*) [ -n "$name" ] && printf '%s\n' "$line" >>"$section" ;;
		esac
	done <"$log"
	[ -n "$name" ] && { echo "$name"; tally "$name" <"$section"; not_ok "$name: suite cut short"; }
}

# kernel_clean NAME CONSOLE_LOG: one test that the boot left no kernel warning
kernel_clean() {
	local name=$1 log=$2 bad
	if [ ! -s "$log" ]; then
		not_ok "$name: no kernel console log ($log): cannot tell whether it is clean"
		return
	fi
	# lockdep reports start with "WARNING:" or "BUG:"; RCU stalls say "detected stall"
	bad=$(grep -E -f "$top/tests/lib/kernel-reports" "$log" | head -5)
	if [ -z "$bad" ]; then
		passed=$((passed + 1))
		echo "  ok - $name: kernel log has no WARNING/BUG/lockdep/sleeping-function report"
	else
		not_ok "$name: kernel log has a report:"
		printf '%s\n' "$bad" | sed 's/^/  #   /'
	fi
}

# cpu_seconds FILE: the CPU seconds (user and system) of the children a
# shell waited for, from what bash's times builtin wrote to FILE
cpu_seconds() {
	awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
		printf "%d", t + 0.5 }' "$1" 2>/dev/null
}

# stage NAME CMD...: run CMD, note how long it took and the CPU time it used
# in $out/stages ("NAME SECONDS [cached] CPU": cached when a vm/ensure built
# nothing); CMD's stdout is the stage's; its status is returned
stage() {
	local name=$1 t0 rc note= err
	shift
	err=$out/stage-$(printf '%s' "$name" | tr -c 'a-z0-9.' _).err
	t0=$(date +%s)
	( "$@"; rc=$?; times >"$err.cpu"; exit $rc ) 2>"$err"
	rc=$?
	cat "$err" >&2
	grep -q 'ensure: building' "$err" || case "$*" in *vm/ensure*) note=" cached" ;; esac
	printf '%s\t%s\t%s\t%s\n' "$name" $(($(date +%s) - t0)) "$note" "$(cpu_seconds "$err.cpu")" >>"$out/stages"
	return $rc
}

# expect_ran NAME...: each test file NAME must have printed a section
expect_ran() {
	local f
	for f in "$@"; do
		grep -qxF -- "$f" "$out/ran" 2>/dev/null && continue
		not_ok "$f never ran (its boot ended before it, or it printed no '# file:' line)"
	done
}

# boot NAME VMRUN_ARGS... -- CMD: run a guest suite and account for it
boot() {
	boot_start "$@"
	boot_end "$1"
}

# boot_start NAME VMRUN_ARGS... -- CMD: start a guest suite in the background
# (its vm/run's status goes to $out/rc-NAME); boot_end NAME accounts for it
boot_start() {
	local name=$1
	shift
	(
		t0=$(date +%s)
		"$top/vm/run" --no-build --console "$out/console-$name.log" "$@" \
			>"$out/guest-$name.log" 2>"$out/guest-$name.err"
		echo $? >"$out/rc-$name"
		times >"$out/cpu-$name"
		printf 'boot %s\t%s\t\t%s\n' "$name" $(($(date +%s) - t0)) "$(cpu_seconds "$out/cpu-$name")" >>"$out/stages"
	) &
	eval "boot_pid_${name//[^a-zA-Z0-9]/_}=$!"
}

boot_end() {
	local name=$1 var rc
	var=boot_pid_${name//[^a-zA-Z0-9]/_}
	# (a boot started in a subshell was waited for there)
	[ -n "${!var:-}" ] && wait "${!var}"
	rc=$(cat "$out/rc-$name" 2>/dev/null || echo '?')
	echo "== boot: $name"
	split_suites "$out/guest-$name.log"
	if ! grep -q '^# suite done' "$out/guest-$name.log"; then
		not_ok "boot $name did not finish its suite (vm/run exit $rc):"
		sed 's/^/  #   /' "$out/guest-$name.err" | tail -n 40
	fi
	kernel_clean "$name" "$out/console-$name.log"
}

# summary: the failures again, so that the end of a long log names them, and
# the closing line; returns 0 when nothing failed
summary() {
	[ -n "${counts_file:-}" ] && counts_summary
	if [ -s "$out/failures" ]; then
		echo "Failed:"
		sed 's/^/  /' "$out/failures"
	fi
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}
