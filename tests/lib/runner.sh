# The host side of the lab's test runners (bash; sourced by tests/run and
# tests/soak/run): boot a guest suite, tally its TAP output by file, check the
# boot's kernel log.  Uses the caller's top (the clone) and out (the results
# directory), and counts into its passed, failed and skipped.

# tally NAME < TAP: count one test file's results, echo them with its name; a
# file without a plan line ("1..N"), or that ran other than N tests, fails
tally() {
	local name=$1 line nfail=0 nrun=0 plan=
	while IFS= read -r line; do
		case "$line" in
		1..[0-9]*)
			plan=${line#1..} ;;
		"ok "*"# SKIP"*)
			skipped=$((skipped + 1)); nrun=$((nrun + 1))
			echo "  $line" ;;
		"ok "*)
			passed=$((passed + 1)); nrun=$((nrun + 1))
			echo "  $line" ;;
		"not ok "*)
			failed=$((failed + 1)); nfail=$((nfail + 1)); nrun=$((nrun + 1))
			echo "  $line" ;;
		"# exit: "*)
			local rc=${line#\# exit: }
			if [ "$rc" != 0 ] && [ $nfail -eq 0 ]; then
				failed=$((failed + 1))
				echo "  not ok - $name exited $rc without a failing test"
			fi ;;
		"#"*) echo "  $line" ;;
		esac
	done
	if [ $nrun -eq 0 ]; then
		failed=$((failed + 1))
		echo "  not ok - $name ran no test"
	elif [ -z "$plan" ]; then
		failed=$((failed + 1))
		echo "  not ok - $name printed no plan (1..N): cut short?"
	elif [ "$plan" != "$nrun" ]; then
		failed=$((failed + 1))
		echo "  not ok - $name planned $plan tests and ran $nrun"
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
			: >"$section" ;;
		"# suite done: "*)
			[ -n "$name" ] && { echo "$name"; tally "$name" <"$section"; }
			name= ;;
		*) [ -n "$name" ] && printf '%s\n' "$line" >>"$section" ;;
		esac
	done <"$log"
	[ -n "$name" ] && { echo "$name"; tally "$name" <"$section"; echo "  not ok - $name: suite cut short"; failed=$((failed + 1)); }
}

# kernel_clean NAME CONSOLE_LOG: one test that the boot left no kernel warning
kernel_clean() {
	local name=$1 log=$2 bad
	if [ ! -s "$log" ]; then
		failed=$((failed + 1))
		echo "  not ok - $name: no kernel console log ($log): cannot tell whether it is clean"
		return
	fi
	# lockdep reports start with "WARNING:" or "BUG:"; RCU stalls say "detected stall"
	bad=$(grep -E -f "$top/tests/lib/kernel-reports" "$log" | head -5)
	if [ -z "$bad" ]; then
		passed=$((passed + 1))
		echo "  ok - $name: kernel log has no WARNING/BUG/lockdep/sleeping-function report"
	else
		failed=$((failed + 1))
		echo "  not ok - $name: kernel log has a report:"
		printf '%s\n' "$bad" | sed 's/^/  #   /'
	fi
}

# boot NAME VMRUN_ARGS... -- CMD: run a guest suite and account for it
boot() {
	local name=$1 rc
	shift
	echo "== boot: $name"
	"$top/vm/run" --no-build --console "$out/console-$name.log" "$@" \
		>"$out/guest-$name.log" 2>"$out/guest-$name.err"
	rc=$?
	split_suites "$out/guest-$name.log"
	if ! grep -q '^# suite done' "$out/guest-$name.log"; then
		failed=$((failed + 1))
		echo "  not ok - boot $name did not finish its suite (vm/run exit $rc):"
		sed 's/^/  #   /' "$out/guest-$name.err" | tail -n 40
	fi
	kernel_clean "$name" "$out/console-$name.log"
}
