#!/bin/sh
# Issue 29 and 28 on one real GPU (H100 or H200), logs under $OUT:
#   1. turn 3's CUDA IPC shape (bench/ipc_flag.py): A spins on the GPU for a
#      flag B holds through CUDA IPC and never sets; B sleeps.  What does
#      the trace of A's tree say, and is B named?
#   2. a 2-rank torch.distributed job on the GPU (gloo: one GPU cannot hold
#      two NCCL ranks), rank 1 asleep in its data loader: the odd rank, its
#      frame, the timeline; NVML rows with the GPU's UUID;
#   3. watch --gpu --metrics of the IPC pair: gpu_info{UUID}, the hang's
#      start, the bundle.
set -u
GP=${GP:-.devbundle/run}
OUT=${OUT:-/tmp/odd-1gpu}
mkdir -p "$OUT"
PY=${PY:-python3}
B=$(dirname "$0")
nvidia-smi -L > "$OUT/gpus.txt" 2>&1; cat "$OUT/gpus.txt"

echo "== 1. CUDA IPC: A spins, B sleeps"
t0=$(date +%s)
timeout -s INT 70 $GP trace --interval 1 --hang-after 8 --seconds 40 -o "$OUT/ipc.jsonl" -- $PY "$B/ipc_flag.py" \
	> "$OUT/ipc.txt" 2>&1
echo "trace rc=$? $(( $(date +%s) - t0 )) s"
grep -A1 '^verdict' "$OUT/ipc.txt" | cut -c1-2000
pkill -f ipc_flag.py 2>/dev/null; pkill -f multiprocessing.spawn 2>/dev/null; sleep 2

echo "== 2. two ranks (gloo on CUDA tensors), rank 1 asleep"
GJ=$(pwd)/tests/workloads/gloo_job.py
if [ -f "$GJ" ] && [ "${RUN_GLOO:-0}" = 1 ]; then
	t0=$(date +%s)
	timeout -s INT 90 $GP trace --interval 1 --hang-after 8 --seconds 60 -o "$OUT/gloo.jsonl" -- sh -c \
		"MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 RANK=0 WORLD_SIZE=2 $PY $GJ sleep 1 $OUT/init > $OUT/g0 2>&1 & MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 RANK=1 WORLD_SIZE=2 $PY $GJ sleep 1 $OUT/init > $OUT/g1 2>&1 & wait" \
		> "$OUT/gloo.txt" 2>&1
	echo "trace rc=$? $(( $(date +%s) - t0 )) s"
	grep -A1 '^verdict' "$OUT/gloo.txt" | cut -c1-1500
	pkill -f gloo_job.py 2>/dev/null; sleep 1
fi

echo "== 3. watch --gpu --metrics of the IPC pair"
$PY "$B/ipc_flag.py" > "$OUT/ipc2.out" 2>&1 &
P=$!
timeout -s TERM 45 $GP watch --gpu --hang-after 8 --interval 1 --metrics "$OUT/m.prom" --bundle-dir "$OUT/bundles" \
	> "$OUT/watch.log" 2> "$OUT/watch.err" &
W=$!
sleep 35
cp "$OUT/m.prom" "$OUT/m.prom.at35s" 2>/dev/null
wait $W
pkill -f ipc_flag.py 2>/dev/null; pkill -f multiprocessing.spawn 2>/dev/null
grep -E "gpu_info|wait_signature|hang_since|last_update|process_class" "$OUT/m.prom.at35s" | head -20
cut -c1-800 "$OUT/watch.log"
ls -la "$OUT/bundles" 2>/dev/null
