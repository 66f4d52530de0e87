#!/bin/sh
# The BPF path on the GPU machine (issues 30 and 32): a real torch process
# (bench/workloads/torch_serve.py: a GEMM thread writing into a pipe a slow
# reader drains, an asyncio loop answering a TCP client, CUDA's threads)
# traced with --stacks all --interval 0.05 with BPF and with
# GPUPROBE_BPF_REGS=off, a watcher polling every thread's state.  The
# truth: every write whole (exit 0); with BPF, sleeping threads are
# unwound from saved registers (regs_from bpf), none stopped, CUDA's
# threads included, and the socket bytes counted by the kernel.
#   ../shared/tools/devbundle .devbundle src/gpuprobe
#   OUT=$OUT bench/h200-bpf.sh
set -u
GPUPROBE=${GPUPROBE:-.devbundle/run}
OUT=${OUT:-./h200-bpf-out}
S=${SECONDS_EACH:-15}
. "${0%/*}/h200-lib.sh"
h200_log h200-bpf
gcc -O2 -o "$OUT/stopwatch" tests/workloads/stopwatch.c || exit 1
W=bench/workloads/torch_serve.py
$GPUPROBE info | grep -E '^(BPF|OS|GPUs|User)'
for mode in bpf ptrace; do
	echo "== $mode: trace --stacks all --interval 0.05"
	e=GPUPROBE_BPF_REGS=on
	[ $mode = ptrace ] && e=GPUPROBE_BPF_REGS=off
	env $e $GPUPROBE trace -q --stacks all --interval 0.05 --hang-after 10 -o "$OUT/$mode.jsonl" \
		-- python3 "$W" "$S" > "$OUT/$mode.out" 2> "$OUT/$mode.err" &
	gp=$!
	sleep 4
	tpid=$(pgrep -f "^python3 $W $S" | head -n 1)
	"$OUT/stopwatch" "$tpid" $((S + 5)) 1 > "$OUT/$mode.watch" &
	wp=$!
	wait $gp
	echo "gpuprobe rc=$?"
	wait $wp
	cat "$OUT/$mode.watch"
	python3 - "$OUT/$mode.jsonl" <<'PY'
import json, sys, collections
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ex = [l for l in lines if l.get("type") == "exit"]
print("exit status:", ex[-1].get("status") if ex else None, "sockets:", ex[-1].get("sockets") if ex else None)
c = collections.Counter(); regs = collections.Counter(); cost = collections.Counter()
for l in lines:
    if l.get("type") != "stacks":
        continue
    for k in ("stopped", "nostop"):
        cost[k] += (l.get("cost") or {}).get(k, 0)
    for t in l["threads"]:
        c[t.get("unwind")] += 1
        if t.get("regs_from"):
            regs[(t.get("comm"), any(f.get("python") for f in t.get("frames") or []))] += 1
print("unwind:", dict(c))
print("stops:", dict(cost))
print("from saved registers (comm, python frames):", dict(regs.most_common(8)))
tx = max([((l.get("proc") or {}).get("sock") or {}).get("tx", 0) for l in lines if l.get("type") == "sample"] or [0])
print("sock tx max:", tx)
v = [l for l in lines if l.get("type") == "verdict"]
print("verdict:", v[-1]["class"], v[-1]["confidence"], v[-1]["summary"][:240] if v else None)
PY
done
