#!/bin/sh
# Issue 18 on the H200, with the real call: bench/workloads/pin_loop.py
# (a Python thread spinning 50 ms, then cudaHostRegister of 8 GiB, ~0.4 s
# in the kernel, in a loop) run alone, then under `trace -- python3 ...`
# with --stacks hot and all, and traced by PID at --interval 4 and 0.5,
# each with a watcher polling every thread's state every millisecond
# (tests/workloads/stopwatch, built here with gcc).  The truth: the
# program ends by itself with status 7 and its last line, no thread is
# stopped longer than 300 ms.
#   ../shared/tools/devbundle .devbundle src/gpuprobe
#   OUT=$OUT bench/h200-harm.sh
set -u
GPUPROBE=${GPUPROBE:-.devbundle/run}
OUT=${OUT:-./h200-harm-out}
S=${SECONDS_EACH:-20}
. "${0%/*}/h200-lib.sh"
h200_log h200-harm
gcc -O2 -o "$OUT/stopwatch" tests/workloads/stopwatch.c || exit 1
W=$OUT/stopwatch
PIN="python3 bench/workloads/pin_loop.py"
echo "== alone"
t0=$(date +%s.%N)
$PIN "$S" > "$OUT/alone.out" 2>&1
echo "rc=$? in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s: $(tail -n 1 "$OUT/alone.out")"
# No jq there: the result read with python3.
q() {  # q FILE WHAT: target (its pid), exit (status), ended, unwinds (ok / timeout)
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
what = sys.argv[2]
ex = [l for l in lines if l.get("type") == "exit"]
if what == "target":
    print(next(l["pid"] for l in lines if l.get("type") == "target"))
elif what == "exit":
    print(ex[0].get("status") if ex else "none")
elif what == "ended":
    print(f'{ex[0]["reason"]} at +{ex[0]["t"]:.1f} s' if ex else "no exit line")
else:
    u = [t.get("unwind") for l in lines if l.get("type") == "stacks" for t in l["threads"]]
    print(f'{u.count("ok")} / {u.count("timeout")}')
PY
}
row() {  # row NAME OUTFILE.jsonl CMDOUT STATUS WATCH
	last=$(grep -o 'pin_loop: done.*' "$3" || echo "**no last line**")
	echo "| $1 | $(q "$2" ended) | $4 | $last | $(sed -n 's/.*max_stopped_ms=\([0-9.]*\).*/\1/p' "$5") ms | $(q "$2" unwinds) |"
}
echo "| run | trace ended | status | last line | longest stop | stacks ok / timeout |"
echo "|---|---|---|---|---|---|"
for st in hot all; do
	o=$OUT/cmd-$st.jsonl
	timeout 120 $GPUPROBE trace -q --stacks $st -o "$o" -- $PIN "$S" > "$OUT/cmd-$st.out" 2> "$OUT/cmd-$st.err" &
	g=$!
	n=0; while ! grep -qs '"type":"target"' "$o" && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	tp=$(q "$o" target)
	"$W" "$tp" $((S + 60)) 1 > "$OUT/cmd-$st.watch" &
	w=$!
	wait $g; wait $w
	row "trace --stacks $st -- python3" "$o" "$OUT/cmd-$st.out" "$(q "$o" exit)" "$OUT/cmd-$st.watch"
done
for iv in 4 0.5; do
	$PIN "$S" > "$OUT/pid-$iv.out" 2>&1 &
	tp=$!
	until grep -q '^ready' "$OUT/pid-$iv.out"; do sleep 0.2; done
	"$W" "$tp" $((S + 30)) 1 > "$OUT/pid-$iv.watch" &
	w=$!
	timeout 120 $GPUPROBE trace -q --stacks all --interval $iv --seconds $((S - 2)) -o "$OUT/pid-$iv.jsonl" "$tp" \
		> /dev/null 2> "$OUT/pid-$iv.err"
	wait $tp; st=$?; wait $w
	row "trace --stacks all --interval $iv PID" "$OUT/pid-$iv.jsonl" "$OUT/pid-$iv.out" "$st" "$OUT/pid-$iv.watch"
done
