#!/bin/bash
# The test runner itself (tests/run, tests/lib/runner.sh) must not report a
# pass for what did not run: a filter that matches no file, a TAP file that
# stops before its plan or runs other than it planned, a boot without a
# console log.
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$top/tests/run" -k no-such-test-file 2>&1)
rc=$?
is "$rc:$out" "2:tests/run: no test file matches 'no-such-test-file'" \
	"tests/run -k matching no file: exit 2 and one line"

# counts NAME < TAP: "passed failed skipped" after runner.sh's tally
counts() {
	(
		passed=0 failed=0 skipped=0 out=$tmp top=$top
		. "$top/tests/lib/runner.sh"
		tally "$1" >"$tmp/tally.out"
		echo "$passed $failed $skipped"
	)
}

is "$(printf 'ok 1 - a\nok 2 - b\n1..2\n# exit: 0\n' | counts planned)" "2 0 0" \
	"tally: two passes and their plan: 2 passed"
is "$(printf 'ok 1 - a\nok 2 - b\n# exit: 0\n' | counts no-plan)" "2 1 0" \
	"tally: no plan line: one failure more"
is "$(printf 'ok 1 - a\n1..3\n# exit: 0\n' | counts short)" "1 1 0" \
	"tally: planned 3, ran 1: one failure more"
is "$(printf 'ok 1 - a # SKIP why\n1..1\n# exit: 0\n' | counts skipped)" "0 0 1" \
	"tally: a skip with its plan: 1 skipped"

clean() {
	(
		passed=0 failed=0 skipped=0 out=$tmp top=$top
		. "$top/tests/lib/runner.sh"
		kernel_clean boot "$1" >"$tmp/clean.out"
		echo "$passed $failed"
	)
}
printf 'Linux version 6.1\nRun /init as init process\n' >"$tmp/console.log"
is "$(clean "$tmp/console.log")" "1 0" "kernel_clean: a clean console log passes"
printf 'WARNING: CPU: 0 PID: 1 at kernel/foo.c:1\n' >>"$tmp/console.log"
is "$(clean "$tmp/console.log")" "0 1" "kernel_clean: a WARNING fails"
is "$(clean "$tmp/missing.log")" "0 1" "kernel_clean: a missing console log fails"
: >"$tmp/empty.log"
is "$(clean "$tmp/empty.log")" "0 1" "kernel_clean: an empty console log fails"
done_testing
