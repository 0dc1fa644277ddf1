#!/bin/bash
# Host side of tests/guest/48-umwait-trace-installed.t: the caps and status
# metrics the installed umwait-trace wrote in the guest ("om-*| " lines of the
# log): the Prometheus text files pass Prometheus's own promtool check
# metrics, and a real node exporter (textfile collector, on 127.0.0.1) serves
# our series with the values tpause-loop counted and status --json reported;
# the OpenMetrics ones pass a strict OpenMetrics parser that is not ours
# (Debian's python3-prometheus-client), which refuses the text format. Then
# the chain a fleet runs, on loopback: a real Prometheus server scrapes the
# node exporter while the file of a program with an odd name (quotes, a
# backslash, spaces, a byte that is no UTF-8, a comm cut inside a character)
# changes from after its first process to after its second, and PromQL over
# Prometheus's HTTP API answers with the programs' own counts: the series by
# its escaped labels, sum(umwait_capped_total), and irate at the scrape that
# saw the second process.
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
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	[ -n "$exporter" ] && kill "$exporter" 2>/dev/null && wait "$exporter" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$tmp/textfile"
sed -n 's/^om-caps| //p' "$log" >"$tmp/textfile/umwait-caps.prom"
sed -n 's/^om-status| //p' "$log" >"$tmp/textfile/umwait-status.prom"
eval "$(sed -n 's/^om-expect| caps //p' "$log")"	# pid waits capped
json=$(sed -n 's/^om-status-json| //p' "$log")
need_input "$log" '^om-odd2\| ' "tests/guest/48 (the program with an odd name)"
eval "$(sed -n 's/^om-expect| odd //p' "$log")"	# w1 c1 w2 c2 dir
for n in 1 2; do
	sed -n "s/^om-odd$n| //p" "$log" >"$tmp/odd$n.prom"
done
sed -n 's/^om-odd-om| //p' "$log" >"$tmp/odd.om"

cp "$tmp/odd1.prom" "$tmp/textfile/umwait-odd.prom"
for f in caps status odd; do
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

# free_port: a port on 127.0.0.1 the kernel chose free (bound and released)
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# until_up WHAT URL PID LOG [OUT]: until URL answers (body to OUT), 60 s at
# most; if it never does or PID dies, a failed test with LOG's tail, and the
# file ends
until_up() {
	i=0
	until curl -sf "$2" >"${5:-/dev/null}" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 600 ] || ! kill -0 "$3" 2>/dev/null; then
			fail "$1" "$(tail -5 "$4")"
			done_testing
			exit
		fi
		sleep 0.1
	done
}
port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$tmp/textfile" >"$tmp/exporter.log" 2>&1 &
exporter=$!
until_up "node exporter serves /metrics on 127.0.0.1:$port" "http://127.0.0.1:$port/metrics" \
	"$exporter" "$tmp/exporter.log" "$tmp/metrics"
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
is "$(grep -c '^umwait_waits_total{exe="tpause-loop",.*insn="tpause".*symbol="[^"]*".*' "$tmp/metrics")" 1 \
	"the series carries insn and symbol labels"

# status: the same values status --json gave
cached=$(sed -n 's/^{"cached": {"value": \([0-9]*\),.*/\1/p' <<<"$json")
is "$(value umwait_control_cached)" "$cached" "scraped umwait_control_cached is status --json's cached value ($cached)"
# the main boot's 4 vCPUs, all online when tests/guest/48 ran
for cpu in 0 1 2 3; do
	want=$(grep -o "{\"cpu\": $cpu, \"online\": true, \"value\": [0-9]*" <<<"$json" | awk '{ print $NF }')
	is "$(value umwait_control_cpu "cpu=\"$cpu\"")" "${want:-none online in status --json}" \
		"scraped umwait_control_cpu{cpu=\"$cpu\"} is status --json's ${want:-value}"
done
is "$(value umwait_control_cpus_mismatched)" 1 "scraped umwait_control_cpus_mismatched is 1 (cpu2 was changed)"

# the odd name: what the guest's labels and JSON must decode to, from the
# bytes the guest named the file with (tests/guest/48), by parsers not ours
# odd WHAT: python3 on the odd name's outputs; prints what WHAT says
odd() {
	/usr/bin/python3 - "$1" "$log" "$tmp/odd.om" "$dir" <<-'PY'
		import json, sys
		from prometheus_client.openmetrics.parser import text_string_to_metric_families
		what, log, om, tmpdir = sys.argv[1:5]
		raw = 'tl "q" \\ \udcff x\u00e9\u00e9\u00e9'.encode("utf-8", "surrogateescape")
		exe = raw.decode("utf-8", "replace")
		comm = raw[:15].decode("utf-8", "replace")
		path = tmpdir + "/odd dir/" + exe
		if what == "exe":
		    # as a PromQL string: its lexer takes a literal U+FFFD for an
		    # invalid byte, so non-ASCII goes as \u escapes
		    print(json.dumps(exe))
		elif what == "json":
		    # the line's bytes must be UTF-8: a strict decode, then a JSON parser
		    line = [l for l in open(log, "rb").read().split(b"\n") if l.startswith(b"om-odd-json| ")][0]
		    try:
		        rows = json.loads(line[len(b"om-odd-json| "):].rstrip(b"\r").decode("utf-8"))["sites"]
		        print(sum(1 for r in rows if r["comm"] == comm and r["file"] == path), "of", len(rows))
		    except Exception as e:
		        print("refused:", e)
		elif what == "om":
		    try:
		        n = 0
		        for fam in text_string_to_metric_families(open(om, encoding="utf-8").read()):
		            for smp in fam.samples:
		                if smp.name == "umwait_waits_total" and smp.labels.get("insn") == "tpause":
		                    n += smp.labels["comm"] == comm and smp.labels["exe"] == exe and smp.labels["file"] == path
		        print(n)
		    except Exception as e:
		        print("refused:", e)
	PY
}
is "$(odd json)" "2 of 2" \
	"odd name, JSON: a strict UTF-8 decode and JSON parser give each process's comm and file as named, invalid bytes as U+FFFD"
is "$(odd om)" 2 "odd name, OpenMetrics --per-pid: the strict parser gives both processes' comm, exe and file labels as named"

# a real Prometheus server scraping the exporter every second
pport=$(free_port)
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
server=$!
until_up "Prometheus is ready on 127.0.0.1:$pport" "http://127.0.0.1:$pport/-/ready" \
	"$server" "$tmp/prometheus.log"
pass "Prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') is ready on 127.0.0.1:$pport, scraping the exporter"

# promql QUERY [TIME]: Prometheus's answer over its HTTP API, one line per
# series ("VALUE" of an instant vector, "TIME VALUE" per sample of a range),
# or "error: ..."
promql() {
	/usr/bin/python3 - "$pport" "$1" "${2:-}" <<-'PY'
		import json, sys, urllib.error, urllib.parse, urllib.request
		port, q, t = sys.argv[1:4]
		args = {"query": q}
		if t:
		    args["time"] = t
		try:
		    r = json.load(urllib.request.urlopen("http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode(args))))
		except urllib.error.HTTPError as e:
		    print("error:", e, e.read().decode("utf-8", "replace"))
		    sys.exit()
		except Exception as e:
		    print("error:", e)
		    sys.exit()
		if r.get("status") != "success":
		    print("error:", r)
		for s in r["data"]["result"]:
		    if "values" in s:
		        for tv in s["values"]:
		            print(tv[0], tv[1])
		    else:
		        print(s["value"][1])
	PY
}
# answer_is QUERY VALUE: whether PromQL answers VALUE
answer_is() {
	[ "$(promql "$1")" = "$2" ]
}
# the series selected by its exe label, escaped as a PromQL string
sel="{exe=$(odd exe),insn=\"tpause\"}"
until_true 60 answer_is "umwait_waits_total$sel" "$w1"
is "$(promql "umwait_waits_total$sel")" "$w1" \
	"PromQL selects the odd name's series by its exe label (quotes, backslash, U+FFFD) and answers its first process's $w1 waits"
# the second process's file in its place, renamed in as caps does
cp "$tmp/odd2.prom" "$tmp/textfile/.odd.tmp"
mv "$tmp/textfile/.odd.tmp" "$tmp/textfile/umwait-odd.prom"
until_true 60 answer_is "umwait_waits_total$sel" $((w1 + w2))
is "$(promql "umwait_waits_total$sel")" $((w1 + w2)) "and, once scraped again, both processes' $((w1 + w2))"
# the samples Prometheus stored: the last of the first file's, then the first of the second's
samples=$(promql "umwait_capped_total$sel[10m]")
read -r t0 v0 t1 v1 <<<"$(awk -v a=$c1 -v b=$((c1 + c2)) '$2 == b && p2 == a { print p1, p2, $1, $2; exit } { p1 = $1; p2 = $2 }' <<<"$samples")"
cmp_ok "${t1:-0}" '>' 0 "Prometheus stored a sample of $c1 capped (after the first process) followed by one of $((c1 + c2)) ($v0, $v1)"
# (without that pair of samples the three below fail: no time to ask at)
if [ -n "${t1:-}" ]; then
	rate=$(promql "irate(umwait_capped_total$sel[10m])" "$t1")
	is "$(awk -v r="$rate" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", r * (b - a) }')" "$c2.000" \
		"irate(umwait_capped_total) at that scrape ($rate/s), times the $t0..$t1 interval, is the second process's $c2 capped waits"
	is "$(promql 'sum(umwait_capped_total)' "$t1")" $((capped + c1 + c2)) \
		"sum(umwait_capped_total) is tpause-loop's $capped and the odd name's $c1 + $c2 capped waits"
	is "$(promql 'sum(umwait_waits_total)' "$t1")" $((waits + w1 + w2)) \
		"sum(umwait_waits_total) is tpause-loop's $waits and the odd name's $w1 + $w2 waits"
else
	fail "irate(umwait_capped_total) at that scrape is the second process's $c2 capped waits" "no such pair of samples"
	fail "sum(umwait_capped_total) is tpause-loop's $capped and the odd name's $c1 + $c2 capped waits" "no such pair of samples"
	fail "sum(umwait_waits_total) is tpause-loop's $waits and the odd name's $w1 + $w2 waits" "no such pair of samples"
fi
done_testing
