#!/bin/sh
# Issue 29 on real GPUs (nvidia-h100-x2 or -x2 H200): a 2-rank NCCL job
# (bench/nccl_job.py) where rank 1 sleeps in its data loader while rank 0
# waits in all_reduce, its NCCL kernel spinning on the GPU.
#   1. one trace of the job: the odd rank named, its frame, the timeline,
#      NCCL RAS's counts (NCCL_RAS_ENABLE, NCCL >= 2.24), the GPUs' UUIDs;
#   2. each rank traced apart (two "nodes"), then report of both: the odd
#      rank across the files, aligned by wall clock;
#   3. watch --gpu of the job: the metrics' gpu_info UUIDs and the odd
#      rank's wait signature, and its bundle.
# Usage (on the device, from .devbundle): OUT=dir sh bench/device-nccl-odd.sh
set -u
GP=${GP:-.devbundle/run}
OUT=${OUT:-/tmp/nccl-odd}
mkdir -p "$OUT"
PY=${PY:-python3}
J=$(dirname "$0")/nccl_job.py
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=2 NCCL_RAS_ENABLE=1
nvidia-smi -L > "$OUT/gpus.txt" 2>&1
$PY -c 'import torch; print(torch.__version__, torch.cuda.nccl.version(), torch.cuda.device_count())' > "$OUT/versions.txt" 2>&1
cat "$OUT/gpus.txt" "$OUT/versions.txt"

job() { # PORT: both ranks in one shell (the launcher)
	echo "MASTER_PORT=$1 RANK=0 $PY $J sleep 1 > $OUT/r0.$1 2>&1 & MASTER_PORT=$1 RANK=1 $PY $J sleep 1 > $OUT/r1.$1 2>&1 & wait"
}

echo "== 1. one trace of the job"
t0=$(date +%s)
timeout -s INT 75 $GP trace --interval 1 --hang-after 10 --seconds 60 -o "$OUT/one.jsonl" -- sh -c "$(job 29501)" \
	> "$OUT/one.txt" 2>&1
echo "trace rc=$? $(( $(date +%s) - t0 )) s"
$GP report "$OUT/one.jsonl" > "$OUT/one.md" 2>&1
grep -A2 '^verdict' "$OUT/one.txt" | cut -c1-1500
pkill -f "nccl_job.py sleep" 2>/dev/null; sleep 2

echo "== 2. each rank traced apart"
t0=$(date +%s)
MASTER_PORT=29502 RANK=0 $PY "$J" sleep 1 > "$OUT/r0.apart" 2>&1 &
A=$!
MASTER_PORT=29502 RANK=1 $PY "$J" sleep 1 > "$OUT/r1.apart" 2>&1 &
B=$!
for i in $(seq 60); do grep -q ready "$OUT/r0.apart" && grep -q ready "$OUT/r1.apart" && break; sleep 1; done
echo "ready after $(( $(date +%s) - t0 )) s"
sleep 5
$GP trace $A --interval 1 --hang-after 10 --seconds 15 -o "$OUT/node0.jsonl" > "$OUT/node0.txt" 2>&1 &
$GP trace $B --interval 1 --hang-after 10 --seconds 15 -o "$OUT/node1.jsonl" > "$OUT/node1.txt" 2>&1
wait $! 2>/dev/null; sleep 1
$GP report --format json "$OUT/node0.jsonl" "$OUT/node1.jsonl" > "$OUT/nodes.json" 2>&1
$GP report "$OUT/node0.jsonl" "$OUT/node1.jsonl" > "$OUT/nodes.md" 2>&1
python3 -c "import json,sys; d=json.load(open('$OUT/nodes.json')); print('across_files:', d.get('across_files')); [print(r['verdict']['class'], r['verdict']['summary'][:600]) for r in d['results']]" 2>&1

echo "== 3. watch --gpu of the same job"
timeout -s TERM 40 $GP watch --gpu --hang-after 10 --interval 1 --metrics "$OUT/m.prom" --bundle-dir "$OUT/bundles" \
	> "$OUT/watch.log" 2> "$OUT/watch.err" &
W=$!
sleep 30
cp "$OUT/m.prom" "$OUT/m.prom.at30s" 2>/dev/null
wait $W
kill $A $B 2>/dev/null
grep -E "gpu_info|wait_signature|hang_since|last_update" "$OUT/m.prom.at30s" | head -20
cat "$OUT/watch.log" | cut -c1-600
ls -la "$OUT/bundles" 2>/dev/null
