#!/bin/sh
# gpuprobe trace on the H200 machine (shared/DEVICE.md): no DRM fdinfo
# there, so a CUDA process's GPU memory comes from NVML alone.  Run from
# the repository root on that machine, with the gpuprobe bundle:
#   GPUPROBE=.devbundle/run OUT=/some/dir bench/h200-trace.sh
# Logs and results go to $OUT.
set -u
GPUPROBE=${GPUPROBE:-src/gpuprobe}
OUT=${OUT:-./h200-out}
. "${0%/*}/h200-lib.sh"
h200_log h200-trace
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
cc -O2 -o "$OUT/cuda-alloc" bench/workloads/cuda-alloc.c -ldl || exit 1

echo "== trace: 8 x 1 GiB cuMemAlloc, one every 0.5 s, then 10 s asleep"
$GPUPROBE trace --interval 0.5 --seconds 16 --hang-after 4 -o "$OUT/trace-nvml.jsonl" \
	-- "$OUT/cuda-alloc" 8 0.5 10
echo "rc=$?"
echo "== GPU memory per sample (NVML)"
if command -v jq >/dev/null; then
	jq -c 'select(.type=="sample") | [.t, (.gpu.nvml // [] | map(.used_bytes) | add), (.threads | length)]' "$OUT/trace-nvml.jsonl"
else
	grep -o '"t":[0-9.]*\|"used_bytes":[0-9]*' "$OUT/trace-nvml.jsonl" | paste -sd' ' | fold -w 400
fi
echo "== report of the saved result"
$GPUPROBE report "$OUT/trace-nvml.jsonl"
echo "== the CUDA threads, asleep (seed: two runtime threads in poll)"
grep -o '"comm":"cuda[^"]*","state":"[A-Z]","wchan":"[a-z_]*"' "$OUT/trace-nvml.jsonl" | sort | uniq -c | head

echo "== stacks of a CUDA process (libcuda is stripped: module + offset + build-id)"
"$OUT/cuda-alloc" 2 0.2 8 &
cp=$!
sleep 3
$GPUPROBE stacks "$cp" -o "$OUT/stacks-cuda.jsonl"
echo "rc=$?"
$GPUPROBE stacks "$cp" --format markdown > "$OUT/stacks-cuda.md"
kill $cp; wait $cp 2>/dev/null

echo "== cost: trace of a 1000-thread target, 10 Hz, 10 s"
cc -O2 -pthread -o "$OUT/threads" bench/workloads/threads.c || exit 1
"$OUT/threads" 1000 > "$OUT/threads.pid" &
tp=$!
sleep 2
/usr/bin/time -v $GPUPROBE trace "$tp" -q -o /dev/null --interval 0.1 --seconds 10 2> "$OUT/time.txt" >/dev/null
grep -E "User time|System time|Maximum resident" "$OUT/time.txt"
kill $tp
echo "# done $(date -u +%FT%TZ)"
