#!/bin/sh
# The GPU readers of issue 13 on the H200 machine (shared/DEVICE.md), run
# from the repository root there with the gpu-readers bundle:
#   /work/shared/tools/devbundle .gpubundle bench/workloads/gpu-readers   (here)
#   GR=.gpubundle/run OUT=/some/dir sh bench/h200-gpu-activity.sh      (there)
# A torch process runs one ~10 s GPU kernel (torch.cuda._sleep), sits idle
# 5 s, runs matmuls for 8 s, sleeps 3 s; gpu-readers reads its activity
# every 0.5 s (NVML per-process and device utilisation), then measures the
# cost per call back to back, then reads the kernel log.
set -u
GR=${GR:-.gpubundle/run}
OUT=${OUT:-./h200-gpu-out}
. "${0%/*}/h200-lib.sh"
h200_log h200-gpu-activity
nvidia-smi --query-gpu=name,driver_version,utilization.gpu --format=csv,noheader || true
python3 - > "$OUT/torch.log" 2>&1 <<'PY' &
import os, time, torch
x = torch.randn(8192, 8192, device="cuda")
torch.cuda.synchronize()
# cycles per second of torch.cuda._sleep's clock, from a short run
t = time.time(); torch.cuda._sleep(200_000_000); torch.cuda.synchronize()
rate = 200_000_000 / (time.time() - t)
print("ready", os.getpid(), "cycles/s %.3g" % rate, time.time(), flush=True)
time.sleep(1.5)
print("kernel-start", time.time(), flush=True)
torch.cuda._sleep(int(rate * 10)); torch.cuda.synchronize()
print("kernel-end", time.time(), flush=True)
time.sleep(5)
print("matmul-start", time.time(), flush=True)
t = time.time()
while time.time() - t < 8:
    y = x @ x
torch.cuda.synchronize()
print("matmul-end", time.time(), flush=True)
time.sleep(3)
print("exit", time.time(), flush=True)
PY
pid=$!
for i in $(seq 120); do grep -q ready "$OUT/torch.log" && break; sleep 0.5; done
echo "== torch pid $pid: $(head -1 "$OUT/torch.log")"
echo "== cost per call, back to back, 200 reads (torch idle between its phases)"
$GR / "$pid" 200 0
echo "== activity every 0.5 s ($(date +%s.%N))"
$GR / "$pid" 52 0.5 | sed -n '/^t=/,$p' | grep -v '^|' 
wait "$pid"
echo "== torch timeline"; cat "$OUT/torch.log"
echo "== kernel log (NVRM lines?), and a process with no GPU: cost"
GPU_READERS_KMSG=1 $GR / $$ 200 0
echo "# done $(date -u +%FT%TZ)"
