#!/bin/sh
# watch --metrics FILE as a fleet reads it: Debian's promtool (package
# prometheus) passes the file, and Debian's prometheus-node-exporter,
# started here with its textfile collector on a free localhost port,
# serves gpuprobe's gauges over HTTP.  SIGTERM removes the file (no stale
# gauges) and exits 0.
: "${E2E_TIMEOUT:=40}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_workload sleepers
PROMTOOL=$(command -v promtool) || skip "promtool missing (bootstrap.sh installs prometheus)"
NODEEXP=$(command -v prometheus-node-exporter) || skip "prometheus-node-exporter missing (bootstrap.sh)"
command -v python3 > /dev/null || skip "python3 missing"
D=$TMP/textfile
mkdir "$D"

"$WORKLOADS/sleepers" 2 > /dev/null &
T=$!; bg_track $T
"$GPUPROBE" watch "$T" --interval 0.2 --hang-after 2 --metrics "$D/gpuprobe.prom" -q \
	> "$TMP/log" 2>&1 &
W=$!; bg_track $W
have() { grep -q "gpuprobe_process_class{pid=\"$T\"" "$D/gpuprobe.prom" 2>/dev/null; }
wait_until 5 have || { cat "$TMP/log"; fail "no metrics for pid $T within 5 s"; }
cp "$D/gpuprobe.prom" "$TMP/copy.prom"
cat "$TMP/copy.prom"
"$PROMTOOL" check metrics < "$TMP/copy.prom" > "$TMP/lint" 2>&1
rc=$?
cat "$TMP/lint"
ok "promtool check metrics passes (exit $rc)" [ $rc -eq 0 ]
ok "promtool has nothing to say" [ ! -s "$TMP/lint" ]

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$NODEEXP" --web.listen-address="127.0.0.1:$PORT" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$D" > "$TMP/ne.log" 2>&1 &
NE=$!; bg_track $NE
fetch() {
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())' \
		"http://127.0.0.1:$PORT/metrics" > "$TMP/scrape" 2>/dev/null
}
wait_until 10 fetch || { cat "$TMP/ne.log"; fail "node_exporter did not answer on port $PORT"; }
grep '^gpuprobe_' "$TMP/scrape"
ok "node_exporter serves gpuprobe_watch_up 1" grep -q '^gpuprobe_watch_up 1$' "$TMP/scrape"
ok "node_exporter serves the process's class" grep -q "^gpuprobe_process_class{class=\"[a-z-]*\",comm=\"sleepers\",pid=\"$T\"} 1\$" "$TMP/scrape"
ok "node_exporter serves seconds since progress" grep -q "^gpuprobe_process_seconds_since_progress{comm=\"sleepers\",pid=\"$T\"} " "$TMP/scrape"
ok "node_exporter read the file without error" grep -q '^node_textfile_scrape_error 0$' "$TMP/scrape"

kill -TERM $W
wait $W
rc=$?
ok "SIGTERM: exit 0 (got $rc)" [ $rc -eq 0 ]
ok "SIGTERM: the metrics file is removed" [ ! -e "$D/gpuprobe.prom" ]
ok "SIGTERM: no temporary file left" [ ! -e "$D/gpuprobe.prom.tmp" ]
pass
