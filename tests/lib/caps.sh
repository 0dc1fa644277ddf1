# umwait-trace caps' output as the guest tests read it (busybox sh and awk):
# its text blocks, its JSON objects and its metrics files.  One parser per
# format, so that a change of the output touches one place.  Each prints
# nothing (or 0 where it counts) when OUT lacks what it looks for: a check
# of its result then fails.
#
# Text (caps FILE..., stdout in OUT):
#   caps_totals OUT [K]        "WAITS CAPPED" of the K-th last "total:" line
#   ut_waits OUT               the waits of the last "total:" line (0 if none)
#   caps_rows OUT              the process rows of the last "Totals since attach"
#                              block: "PID COMM INSN WAITS CAPPED CAPPED% FILE
#                              OFFSET SYMBOL" (the C0.x residency rows after it
#                              are CPUs: left out)
#   caps_waits_at OUT FILE     the waits of those rows at FILE's sites, summed
#   caps_count OUT WHAT        the count of the "unended:" or "unpaired:" line
#                              (0 when caps printed none)
#   caps_outcomes OUT FILE     "capped=N deadline=N early=N past=N" of the last
#                              "outcomes at FILE ..." line
#   caps_advice OUT FILE       the advice line under it ("advice: ...")
#   caps_by_site OUT           every site's outcomes and notes, of any file:
#                              "outcomes OFFSET capped=N deadline=N early=N
#                              past=N", then "note OFFSET advice: ..." or
#                              "note OFFSET warning: ..." for each under it
#   caps_ohist OUT KIND FILE   the waits in the last --hist histogram KIND
#                              ("denied" or "late") of FILE
#   caps_whist OUT [KIND]      the waits in --hist-perturbing's "wait time at"
#                              histograms of the last block: KIND "capped",
#                              "not capped", or both
# JSON (caps --json):
#   caps_json_total OUT        the last {"type": "total", ...} object
#   caps_json_num JSON KEY     the first number KEY has in JSON ("waits" ...)
#   caps_json_site JSON FILE   the by_site entries of JSON from FILE's first
#                              site on (the readers above then read FILE's)
#   caps_json_advice JSON      the first site advice object, {...}
# Metrics (caps --format prometheus|openmetrics -o FILE):
#   caps_series FILE SAMPLE [LABELS]  the sum of SAMPLE's samples in FILE,
#                              of the series whose labels hold LABELS
# Residency:
#   caps_res_window JSON_LINE  "TSC_BEGIN TSC_END" of its residency
#   caps_res_cpu JSON_LINE CPU "CYCLES C01 C02 C0_WAIT SCALED RUNNING CONSISTENT
#                              TSC_BEGIN TSC_END TSC_ERR" of a counted CPU, or
#                              "not-counted REASON"
#   caps_res_row TEXT_FILE CPU the last text row of CPU in a residency block

caps_totals() {
	grep '^total:' "$1" 2>/dev/null | tail -n "${2:-1}" | head -n 1 |
		sed -n 's/^total: waits=\([0-9]*\) capped=\([0-9]*\) .*/\1 \2/p'
}

ut_waits() {
	set -- $(caps_totals "$1")
	echo "${1:-0}"
}

caps_rows() {
	awk '/^Totals since attach/ { n = 0; on = 1; next }
		/^C0\.x residency/ { on = 0 }
		on && /^[0-9]/ { row[++n] = $0 }
		END { for (i = 1; i <= n; i++) print row[i] }' "$1" 2>/dev/null
}

caps_waits_at() {
	caps_rows "$1" | awk -v f="$2" '$7 == f { s += $4 } END { print s + 0 }'
}

caps_count() {
	_cp_n=$(sed -n "s/^$2: \([0-9]*\) .*/\1/p" "$1" 2>/dev/null | tail -n 1)
	echo "${_cp_n:-0}"
}

caps_outcomes() {
	grep "^outcomes at $2 " "$1" 2>/dev/null | tail -n 1 | sed -n 's/.*: \(capped=[0-9]* deadline=[0-9]* early=[0-9]* past=[0-9]*\)$/\1/p'
}

caps_advice() {
	awk -v f="$2" 'index($0, "outcomes at " f " ") == 1 { on = 1; next }
		on && /^  advice: / { a = $0; sub(/^  /, "", a) }
		{ on = 0 } END { print a }' "$1" 2>/dev/null
}

caps_by_site() {
	awk '/^outcomes at / {
			off = $4; sub(/:$/, "", off); o = $0; sub(/.*: capped=/, "capped=", o)
			print "outcomes " off " " o; next
		}
		/^  (advice|warning): / && off != "" { n = $0; sub(/^  /, "", n); print "note " off " " n }' "$1" 2>/dev/null
}

caps_ohist() {
	awk -v k="$2" -v f="$3" 'index($0, k " at " f " ") == 1 { n = 0; on = 1; next }
		on && / -> / { n += $5; next }
		on && /: count/ { next }
		{ on = 0 } END { print n + 0 }' "$1" 2>/dev/null
}

caps_whist() {
	awk -v want="${2:-}" '
		/^Totals since attach/ { delete s }
		/^wait time at .*, capped \(CF=1\):$/ { k = "capped"; next }
		/^wait time at .*, not capped \(CF=0\):$/ { k = "not capped"; next }
		k != "" && / -> / { s[k] += $5; next }
		k != "" && /: count/ { next }
		{ k = "" }
		END { print (want == "" ? s["capped"] + s["not capped"] : s[want]) + 0 }' "$1" 2>/dev/null
}

caps_json_total() {
	grep '^{"type": "total"' "$1" 2>/dev/null | tail -n 1
}

caps_json_num() {
	echo "$1" | awk -v k="\"$2\": " '{ i = index($0, k); if (!i) exit
		s = substr($0, i + length(k)); if (match(s, /^-?[0-9]+/)) print substr(s, 1, RLENGTH); exit }'
}

caps_json_site() {
	echo "$1" | awk -v f="\"file\": \"$2\"" '{ i = index($0, "\"by_site\": ["); if (!i) exit
		s = substr($0, i); j = index(s, f); if (j) print substr(s, j) }'
}

caps_json_advice() {
	echo "$1" | grep -o '"advice": {[^}]*}' | head -n 1
}

caps_series() {
	grep "^$2{" "$1" 2>/dev/null | grep -F -- "${3:-}" | awk '{ s += $NF } END { print s + 0 }'
}

caps_res_window() {
	echo "$1" | sed -n 's/.*"tsc_begin": \([0-9]*\), "tsc_end": \([0-9]*\),.*/\1 \2/p'
}

caps_res_cpu() {
	_cp_o=$(echo "$1" | grep -o "{\"cpu\": $2, [^}]*}")
	case "$_cp_o" in
	*'"counted": true'*)
		echo "$_cp_o" | sed 's/[{}",]//g; s/: /=/g' | awk '{
			for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print v["cycles"], v["c01"], v["c02"], v["c0_wait"], v["scaled"], v["running"],
				v["consistent"], v["tsc_begin"], v["tsc_end"], v["tsc_err"] }' ;;
	*) echo "not-counted $(echo "$_cp_o" | sed -n 's/.*"reason": "\([^"]*\)".*/\1/p')" ;;
	esac
}

caps_res_row() {
	sed -n '/^C0.x residency, system-wide/,/^CYCLES: unhalted/p' "$1" 2>/dev/null | grep "^$2 " | tail -n 1
}
