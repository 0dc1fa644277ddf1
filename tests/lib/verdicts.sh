# One TAP check per verdict that a check's script (python; tests/lib/verdict.py)
# wrote to a file, looked up by an id from the test file's own fixed list:
# the file's count is that list's length whatever the script did, and a
# verdict the script never wrote (it died, or never got that far) fails.
# Needs tap.sh.

# verdict FILE ID DESC: the check DESC by FILE's line for ID (what it saw,
# in parentheses after DESC)
verdict() {
	local line kind seen why
	line=$(awk -F'\t' -v id="$2" '$1 == id { print; exit }' "$1" 2>/dev/null)
	IFS=$'\t' read -r _ kind seen why <<<"$line"
	[ "$seen" = - ] && seen=
	case "$kind" in
	ok) pass "$3${seen:+ ($seen)}" ;;
	"not ok") fail "$3${seen:+ ($seen)}" "$why" ;;
	*) fail "$3" "no verdict '$2': the script never judged it (its input lacks it, or it died: $(tail -n 1 "$1.err" 2>/dev/null))" ;;
	esac
}

# verdicts_end FILE WHAT [PREFIX]: the script that wrote FILE (its stderr in
# FILE.err) ran to its end; and its diagnostics, as TAP comments (PREFIX
# before each)
verdicts_end() {
	awk -F'\t' -v p="${3:+$3: }" '$1 == "#" { print "# " p $2 }' "$1" 2>/dev/null
	[ -s "$1.err" ] && sed 's/^/#   stderr: /' "$1.err" | tail -n 20
	verdict "$1" END "$2 ran to its end"
}
