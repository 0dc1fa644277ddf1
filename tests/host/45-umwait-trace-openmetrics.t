#!/bin/bash
# Host side of tests/guest/48-umwait-trace-installed.t: the caps and status
# metrics the installed umwait-trace wrote in the guest ("om-*| " lines of the
# log): the Prometheus text files pass Prometheus's own promtool check
# metrics, and a real node exporter (textfile collector, on 127.0.0.1) serves
# our series with the values tpause-loop counted and status --json reported;
# the OpenMetrics ones pass a strict OpenMetrics parser that is not ours
# (Debian's python3-prometheus-client), which refuses the text format.
. "$(dirname "$0")/../lib/tap.sh"

log=${LAB_RESULTS:-}/guest-main.log
need_input "$log" '^om-caps\| ' tests/guest/48-umwait-trace-installed.t
for tool in promtool prometheus-node-exporter curl /usr/bin/python3; do
	command -v $tool >/dev/null || {
		fail "$tool is installed (vm/setup-host)"
		done_testing
		exit
	}
done

tmp=$(mktemp -d)
exporter=
cleanup() {
	[ -n "$exporter" ] && kill "$exporter" 2>/dev/null && wait "$exporter" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$tmp/textfile"
sed -n 's/^om-caps| //p' "$log" >"$tmp/textfile/umwait-caps.prom"
sed -n 's/^om-status| //p' "$log" >"$tmp/textfile/umwait-status.prom"
eval "$(sed -n 's/^om-expect| caps //p' "$log")"	# pid waits capped
json=$(sed -n 's/^om-status-json| //p' "$log")

for f in caps status; do
	out=$(promtool check metrics <"$tmp/textfile/umwait-$f.prom" 2>&1)
	rc=$?
	is "$rc" 0 "promtool check metrics accepts the $f metrics (--format prometheus)"
	[ -n "$out" ] && diag "promtool ($f): $out"
done

# openmetrics FILE: what a strict OpenMetrics parser says of FILE: "ok N"
# (N families) or "refused: why"
openmetrics() {
	/usr/bin/python3 - "$1" <<-'PY'
		import sys
		from prometheus_client.openmetrics.parser import text_string_to_metric_families
		try:
		    n = len(list(text_string_to_metric_families(open(sys.argv[1], encoding="utf-8").read())))
		    print("ok", n)
		except Exception as e:
		    print("refused:", e)
	PY
}
for f in caps status; do
	sed -n "s/^om-$f-om| //p" "$log" >"$tmp/umwait-$f.om"
	need_input "$tmp/umwait-$f.om" '^# EOF' "tests/guest/48 (--format openmetrics)"
	is "$(openmetrics "$tmp/umwait-$f.om" | sed 's/ [0-9]*$//')" ok \
		"a strict OpenMetrics 1.0 parser accepts the $f metrics (--format openmetrics): $(openmetrics "$tmp/umwait-$f.om")"
done
case "$(openmetrics "$tmp/textfile/umwait-caps.prom")" in
refused:*) pass "and refuses the text format 0.0.4 (--format prometheus) as OpenMetrics: the parser is strict" ;;
*) fail "the strict parser refuses the text format as OpenMetrics" "it accepted it: the check above is vacuous" ;;
esac

# a free port: bound and released by the kernel's choice
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$tmp/textfile" >"$tmp/exporter.log" 2>&1 &
exporter=$!
i=0
until curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -ge 300 ] || ! kill -0 "$exporter" 2>/dev/null; then
		fail "node exporter serves /metrics on 127.0.0.1:$port" "$(tail -5 "$tmp/exporter.log")"
		done_testing
		exit
	fi
	sleep 0.1
done
pass "node exporter serves /metrics on 127.0.0.1:$port"
diag "node exporter: $(grep -c '^umwait_' "$tmp/metrics") umwait_ samples of $(grep -vc '^#' "$tmp/metrics")"

# value NAME LABEL-REGEX: the value of the scraped sample(s) of NAME whose labels
# match, as an integer (the exporter prints 1000000 as 1e+06)
value() {
	grep -E "^$1(\{[^}]*$2[^}]*\})? " "$tmp/metrics" | awk '{ printf "%.0f\n", $NF }'
}

is "$(value node_textfile_scrape_error)" 0 "node exporter read both files without error"
for f in caps status; do
	cmp_ok "$(value node_textfile_mtime_seconds "file=\"[^\"]*umwait-$f.prom\"" | wc -l)" -eq 1 \
		"node exporter lists umwait-$f.prom"
done
grep -E '^umwait_(waits|capped)_total' "$tmp/metrics" | sed 's/^/# scraped: /'
sel="exe=\"tpause-loop\""
is "$(value umwait_waits_total "$sel" | awk '{ s += $1 } END { print s + 0 }')" "$waits" \
	"scraped umwait_waits_total of tpause-loop's sites add up to its own count"
is "$(value umwait_capped_total "$sel" | awk '{ s += $1 } END { print s + 0 }')" "$capped" \
	"scraped umwait_capped_total add up to its capped count"
is "$(grep '^# TYPE umwait_waits_total ' "$tmp/metrics")" "# TYPE umwait_waits_total counter" \
	"umwait_waits_total is a counter for the exporter too"
is "$(grep -c '^umwait_waits_total{.*insn="tpause".*symbol="[^"]*".*' "$tmp/metrics")" 1 \
	"the series carries insn and symbol labels"

# status: the same values status --json gave
cached=$(sed -n 's/^{"cached": {"value": \([0-9]*\),.*/\1/p' <<<"$json")
is "$(value umwait_control_cached)" "$cached" "scraped umwait_control_cached is status --json's cached value ($cached)"
for cpu in $(grep -o '{"cpu": [0-9]*, "online": true, "value": [0-9]*' <<<"$json" | awk '{ print $2 }' | tr -d ,); do
	want=$(grep -o "{\"cpu\": $cpu, \"online\": true, \"value\": [0-9]*" <<<"$json" | awk '{ print $NF }')
	is "$(value umwait_control_cpu "cpu=\"$cpu\"")" "$want" "scraped umwait_control_cpu{cpu=\"$cpu\"} is status --json's $want"
done
is "$(value umwait_control_cpus_mismatched)" 1 "scraped umwait_control_cpus_mismatched is 1 (cpu2 was changed)"
done_testing
