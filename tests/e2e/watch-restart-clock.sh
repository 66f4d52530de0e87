#!/bin/sh
# A watch restarted does not restart a hang's clock (issue 28): watch
# --metrics of a Python ABBA deadlock exports when its flat stretch began
# (gpuprobe_process_hang_since_timestamp_seconds, Unix time); watch is
# killed with SIGKILL, its file stays (last update no longer moves: the
# stale alert's case), and a new watch started 8 s later exports the same
# start within 2 s -- from how long no thread of the process had run
# (tracer/still.h), or, where the first watch's own stops ran every
# thread (the /proc path's ptrace stacks: GPUPROBE_BPF=off), from the
# hang the metrics file said when it started (metrics.h) -- and calls it
# hung at its first verdicts, not --hang-after later.  The alert rule over it is tested by promtool
# (tests/prometheus/hang-clock.test.yaml).
: "${E2E_TIMEOUT:=90}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_python
SCRIPT=$top_srcdir/tests/real/py-abba.py
NAME=$(printf 'gpclk%s' "$$" | cut -c 1-15)
ln -s "$PY" "$TMP/$NAME" || framework_failure "cannot link $PY"
M=$TMP/m/gpuprobe.prom
mkdir -m 700 "$TMP/m" "$TMP/b"

"$TMP/$NAME" "$SCRIPT" > "$TMP/py.out" &
ABBA=$!; bg_track $ABBA
wait_until 10 grep -q deadlocked "$TMP/py.out" || fail "the ABBA script did not deadlock"
watch_start() {
	"$GPUPROBE" watch --name "$NAME" --hang-after 10 --bundle-dir "$TMP/b" --metrics "$M" -q \
		> "$TMP/log$1" 2> "$TMP/err$1" &
	W=$!; bg_track $W
}
since() { sed -n "s/^gpuprobe_process_hang_since_timestamp_seconds{pid=\"$ABBA\"[^}]*} //p" "$M" 2> /dev/null; }
updated() { sed -n 's/^gpuprobe_watch_last_update_timestamp_seconds //p' "$M" 2> /dev/null; }
hung() { [ -n "$(since)" ]; }

watch_start 1
wait_until 30 hung || { cat "$TMP/err1"; fail "the first watch never exported the hang's start"; }
S1=$(since)
say "first watch: hung since $S1 (now $(date +%s.%N))"
kill -9 $W
sleep 1
U1=$(updated)
sleep 7
ok "after kill -9 the file stays and its last update stands still ($U1)" [ "$(updated)" = "$U1" ]
ok "its last update is the watch's last tick (within 3 s of the kill)" \
	fcmp "$(awk -v u="$U1" -v n="$(date +%s.%N)" 'BEGIN { print n - u }')" '<=' 11

T0=$(now)
watch_start 2
# a new file: its last update past the old one
fresh() { u=$(updated); [ -n "$u" ] && fcmp "$u" '>' "$U1" && hung; }
wait_until 20 fresh || { cat "$TMP/err2"; fail "the second watch never exported the hang"; }
took=$(elapsed "$T0")
S2=$(since)
say "second watch: hung since $S2, ${took} s after it started"
ok "the second watch calls it hung before --hang-after (10 s) passes (${took} s)" fcmp "$took" '<' 9
ok "the same start of the hang ($S1, then $S2: within 2 s)" \
	awk -v a="$S1" -v b="$S2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 2) }'
ok "the hang's start is before the first watch's verdict (it began at the deadlock)" \
	fcmp "$S1" '<' "$(date +%s)"
kill $W
pass
