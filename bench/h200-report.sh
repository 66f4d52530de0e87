#!/bin/sh
# gpuprobe info and report on the H200 machine (shared/DEVICE.md): the CUDA
# driver version without cuInit, the real libcuda file and its build-id,
# the NVIDIA driver version from /proc; a CUDA process traced and rendered
# as Markdown and a plot (GPU memory from NVML).  From the repository root
# there, with the bundle:
#   GPUPROBE=.devbundle/run OUT=/some/dir bench/h200-report.sh
set -u
GPUPROBE=${GPUPROBE:-src/gpuprobe}
OUT=${OUT:-./h200-out}
. "${0%/*}/h200-lib.sh"
h200_log h200-report
echo "== info"
$GPUPROBE info
echo "rc=$?"
$GPUPROBE info --format json > "$OUT/info.json"
$GPUPROBE info --format markdown > "$OUT/info.md"
echo "== libcuda, for comparison"
ls -l /usr/lib/x86_64-linux-gnu/libcuda.so* 2>/dev/null | head -3
head -n 1 /proc/driver/nvidia/version
cc -O2 -o "$OUT/cuda-alloc" bench/workloads/cuda-alloc.c -ldl || exit 1
echo "== trace of 8 x 1 GiB cuMemAlloc, then asleep; report and plot"
$GPUPROBE trace -q --interval 0.5 --seconds 12 --hang-after 4 -o "$OUT/cuda.jsonl" \
	-- "$OUT/cuda-alloc" 8 0.5 8
echo "rc=$?"
$GPUPROBE report --plot "$OUT/cuda.png" "$OUT/cuda.jsonl" > "$OUT/cuda.md"
echo "rc=$?"
$GPUPROBE report --plot "$OUT/cuda.svg" --format text "$OUT/cuda.jsonl"
echo "rc=$?"
