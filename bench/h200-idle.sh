#!/bin/sh
# gpuprobe idle on the H200 machine (shared/DEVICE.md): a CUDA context left
# idle (DEVICE.md measured two runtime threads asleep in poll: quiet), the
# positive control (a kernel kept running while the host waits with
# CU_CTX_SCHED_SPIN: the waiting thread spins), the same with
# BLOCKING_SYNC, and the HSA runtime there (Ubuntu's libhsa-runtime64, no
# AMD GPU: a clear failure).  Run from the repository root:
#   GPUPROBE=.devbundle/run OUT=dir sh bench/h200-idle.sh
set -u
GPUPROBE=${GPUPROBE:-src/gpuprobe}
OUT=${OUT:-./h200-out}
mkdir -p "$OUT"
LOG=$OUT/h200-idle.log
{
echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus"
echo "== idle CUDA context, 10 s"
$GPUPROBE idle --runtime cuda --seconds 10 -o "$OUT/idle-cuda.jsonl"; echo "rc=$?"
echo "== --touch (1 MiB allocated and cleared), 10 s"
$GPUPROBE idle --runtime cuda --touch --seconds 10; echo "rc=$?"
echo "== positive control: --cuda-sched spin --busy-kernel, 8 s"
$GPUPROBE idle --runtime cuda --cuda-sched spin --busy-kernel --seconds 8 -o "$OUT/idle-cuda-spin.jsonl"; echo "rc=$?"
echo "== the same with --cuda-sched blocking, 8 s"
$GPUPROBE idle --runtime cuda --cuda-sched blocking --busy-kernel --seconds 8; echo "rc=$?"
echo "== HSA on this machine (no AMD GPU)"
$GPUPROBE idle --runtime hsa --seconds 2; echo "rc=$?"
$GPUPROBE pools --runtime hsa; echo "rc=$?"
echo "# done $(date -u +%FT%TZ)"
} > "$LOG" 2>&1
cat "$LOG"
