#!/bin/sh
# Issue 27 on the H200: stacks that change nothing in a real torch process.
# bench/workloads/torch_serve.py (a GEMM thread writing 64 KiB lines into a
# pipe a slow reader drains, an asyncio loop in epoll_wait answering a TCP
# client, CUDA's own threads in poll) runs alone, then under
# `trace --stacks all --interval 0.05`, with tests/workloads/stopwatch
# polling every thread's state; then `gpuprobe stacks` of it, and
# tests/workloads/wholewrite under trace.  The truth: every write whole
# (exit 0), no thread stopped longer than 300 ms, the threads in write()
# and epoll_wait unwound without a stop down to Python's frames.
#   ../shared/tools/devbundle .devbundle src/gpuprobe
#   OUT=$OUT bench/h200-nostop.sh
set -u
GPUPROBE=${GPUPROBE:-.devbundle/run}
OUT=${OUT:-./h200-nostop-out}
S=${SECONDS_EACH:-20}
. "${0%/*}/h200-lib.sh"
h200_log h200-nostop
gcc -O2 -o "$OUT/stopwatch" tests/workloads/stopwatch.c || exit 1
gcc -O2 -o "$OUT/wholewrite" tests/workloads/wholewrite.c || exit 1
W=bench/workloads/torch_serve.py
echo "== alone"
python3 "$W" 8 > "$OUT/alone.out" 2>&1
echo "rc=$?: $(tail -n 1 "$OUT/alone.out")"
echo "== trace --stacks all --interval 0.05"
$GPUPROBE trace -q --stacks all --interval 0.05 --hang-after 10 -o "$OUT/trace.jsonl" -- python3 "$W" "$S" \
	> "$OUT/trace.out" 2> "$OUT/trace.err" &
gp=$!
sleep 3
tpid=$(pgrep -f "^python3 $W $S" | head -n 1)
echo "target pid $tpid: $(tr "\\0" " " < /proc/$tpid/cmdline)"
"$OUT/stopwatch" "$tpid" $((S + 10)) 1 > "$OUT/watch.txt" &
wp=$!
( sleep 6; $GPUPROBE stacks "$tpid" > "$OUT/stacks.txt" 2>&1; echo "stacks rc=$?" > "$OUT/stacks.rc" ) &
wait $gp
echo "gpuprobe rc=$?"
wait $wp
cat "$OUT/watch.txt" "$OUT/stacks.rc"
grep torch_serve "$OUT/trace.out" "$OUT/trace.err" | head -n 3
python3 - "$OUT/trace.jsonl" <<'PY'
import json, sys, collections
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ex = [l for l in lines if l.get("type") == "exit"]
print("exit line:", ex[-1].get("status") if ex else None)
c = collections.Counter()
deep = collections.Counter()
for l in lines:
    if l.get("type") != "stacks":
        continue
    for t in l["threads"]:
        c[t.get("unwind")] += 1
        if t.get("unwind") == "nostop":
            deep[(t.get("syscall") or "?").split("(")[0], len(t.get("frames") or []) > 3,
                 any(f.get("python") for f in t.get("frames") or [])] += 1
print("unwind:", dict(c))
print("nostop (syscall, >3 frames, python frames):", dict(deep))
v = [l for l in lines if l.get("type") == "verdict"]
print("verdict:", v[-1]["class"], v[-1]["confidence"], v[-1]["summary"][:300] if v else None)
PY
grep -m 3 "nostop" "$OUT/stacks.txt"
echo "== wholewrite under trace"
for k in pipe unix tcp; do
	$GPUPROBE trace -q --stacks all --interval 0.05 -o "$OUT/ww-$k.jsonl" -- "$OUT/wholewrite" $k 8 1048576 65536 30 \
		> "$OUT/ww-$k.out" 2>&1
	echo "$k: rc=$? $(grep -h wholewrite "$OUT/ww-$k.out" | head -n 1)"
done
