#!/bin/sh
# A process name is any 15 bytes its owner chose (issue 27): here ESC and
# a colour sequence, a byte that is not UTF-8, a backslash, a quote and a
# newline before a forged line ("FAKE"), set by exec'ing a file of that
# name.  watch --metrics writes a file node_exporter reads (promtool
# passes it: valid UTF-8, each sample one line), and the watch's log,
# trace, stacks and report (text and Markdown) write no raw control
# character and no byte that is not UTF-8: the name shows as
# n\xff\x1b[31m\"\nFAKE, on one line.
: "${E2E_TIMEOUT:=60}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_workload sleepers
command -v python3 > /dev/null || skip "python3 missing"
NAME=$(printf 'n\377\033[31m\\"\nFAKE')
mkdir "$TMP/bin" "$TMP/textfile" || framework_failure "mkdir"
cp "$WORKLOADS/sleepers" "$TMP/bin/$NAME" || framework_failure "cannot make a file of that name"
"$TMP/bin/$NAME" 2 > /dev/null 2>&1 &
T=$!; bg_track $T
wait_until 5 test -e /proc/$T/comm || framework_failure "no target"
comm_is() { [ "$(od -An -tx1 /proc/$T/comm | tr -d ' \n')" = 6eff1b5b33316d5c220a46414b450a ]; }
wait_until 5 comm_is || framework_failure "the target's comm is not the hostile name: $(od -c /proc/$T/comm)"

# clean FILE: no ESC or other control character but newlines, valid
# UTF-8, and no line that the name's newline began.
clean() {
	python3 - "$1" <<'PY' || return 1
import sys
b = open(sys.argv[1], 'rb').read()
try:
    t = b.decode('utf-8')
except UnicodeDecodeError as e:
    sys.exit('%s: not UTF-8: %s' % (sys.argv[1], e))
bad = [c for c in t if (ord(c) < 0x20 and c != '\n') or 0x7f <= ord(c) <= 0x9f]
if bad:
    sys.exit('%s: control characters %r' % (sys.argv[1], sorted(set(bad))))
if any(l.startswith('FAKE') for l in t.split('\n')):
    sys.exit('%s: a line begun by the name\'s newline' % sys.argv[1])
PY
}

"$GPUPROBE" watch "$T" --interval 0.2 --hang-after 1 --metrics "$TMP/textfile/gpuprobe.prom" \
	> "$TMP/watch.log" 2>&1 &
W=$!; bg_track $W
have() { grep -q "gpuprobe_process_class{pid=\"$T\"" "$TMP/textfile/gpuprobe.prom" 2>/dev/null; }
wait_until 10 have || { cat "$TMP/watch.log"; fail "no metrics for pid $T within 10 s"; }
cp "$TMP/textfile/gpuprobe.prom" "$TMP/copy.prom"
grep "pid=\"$T\"" "$TMP/copy.prom" | head -n 2
ok "the metrics file is clean" clean "$TMP/copy.prom"
ok "the comm label is the name's safe text" \
	grep -qF "comm=\"n\\\\xff\\\\x1b[31m\\\\\\\"\\\\nFAKE\"" "$TMP/copy.prom"
if PROMTOOL=$(command -v promtool); then
	"$PROMTOOL" check metrics < "$TMP/copy.prom" > "$TMP/lint" 2>&1
	rc=$?
	cat "$TMP/lint"
	ok "promtool check metrics passes (exit $rc)" [ $rc -eq 0 ]
else
	say "promtool missing (bootstrap.sh installs prometheus): its check skipped"
fi

gp trace -s 1.5 -i 0.25 -o "$TMP/r.jsonl" "$T" > "$TMP/trace.out" 2>&1
ok "trace's output is clean" clean "$TMP/trace.out"
ok "trace names the target as safe text" grep -qF '(n\xff\x1b[31m\"\nFAKE)' "$TMP/trace.out"
ok "trace's command line keeps the argument whole" grep -qF "\\nFAKE' 2" "$TMP/trace.out"
gp stacks "$T" > "$TMP/stacks.out" 2>&1
ok "stacks' output is clean" clean "$TMP/stacks.out"
gp stacks --format markdown "$T" > "$TMP/stacks.md" 2>&1
ok "stacks' Markdown is clean" clean "$TMP/stacks.md"
gp report --format text "$TMP/r.jsonl" > "$TMP/report.txt" 2>&1
ok "report's text is clean" clean "$TMP/report.txt"
gp report "$TMP/r.jsonl" > "$TMP/report.md" 2>&1
ok "report's Markdown is clean" clean "$TMP/report.md"

kill -TERM $W
wait $W
cat "$TMP/watch.log"
ok "the watch's log is clean" clean "$TMP/watch.log"
ok "the watch's log names the target on one line" \
	grep -qF "following pid $T (n\\xff\\x1b[31m\\\"\\nFAKE)" "$TMP/watch.log"
pass
