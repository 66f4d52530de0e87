#!/bin/sh
# Issue 22 on the H200: `gpuprobe watch --gpu` catches the spinning-kernel
# hang of the spin-or-work issue (19), and its bundle holds the GPU
# evidence and the Python frame of the waiting thread.
#
# watch --gpu starts first, with nothing to follow; then two processes it
# must pick up by their GPU: gpu_shapes.py spin32 (32 CTAs polling a flag
# nobody sets, the host in cudaDeviceSynchronize: truth hang-gpu-spin) and
# gpu_shapes.py gemm (a GEMM loop: truth progress, no bundle).  Checked:
#   - one bundle for the spinner within HANG_AFTER + 15 s of its "ready";
#     none for the GEMM;
#   - the bundle's report.md says hang-gpu-spin; its gpu.json shows
#     /dev/nvidia* fds and NVML rows for the pid; its stacks.txt and
#     report.md show the waiting thread's Python frame, main
#     (gpu_shapes.py, the synchronize() line);
#   - the metrics file: gpuprobe_process_gpu{state="spin"} for the
#     spinner, state="work" for the GEMM, gpuprobe_process_hang 1 / 0.
# Run (the lead, on the H200 machine):
#   ../shared/tools/devbundle .devbundle src/gpuprobe
#   OUT=$OUT bench/h200-watch.sh
# Everything raw comes back in $OUT/results.tar.gz; the checks in
# $OUT/h200-watch.log, one "ok:" or "FAIL:" line each.
set -u
GPUPROBE=${GPUPROBE:-.devbundle/run}
OUT=${OUT:-./h200-watch-out}
H=${HANG_AFTER:-10}
R=$(mktemp -d)
. "${0%/*}/h200-lib.sh"
h200_log h200-watch
nvidia-smi --query-gpu=name,driver_version,power.draw --format=csv,noheader 2>/dev/null
W="python3 bench/workloads/gpu_shapes.py"
SYNC_LINE=$(grep -n 'Device().synchronize()  # never returns' bench/workloads/gpu_shapes.py | cut -d: -f1)
fails=0
check() {  # check DESCRIPTION CMD...
	d=$1; shift
	if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}

$GPUPROBE watch --gpu --hang-after "$H" --bundle-dir "$R/bundles" --metrics "$R/gpuprobe.prom" \
	> "$R/watch.log" 2>&1 &
WATCH=$!
sleep 2
$W gemm 600 > "$R/gemm.out" 2>&1 &
GEMM=$!
$W spin32 600 > "$R/spin.out" 2>&1 &
SPIN=$!
for f in gemm spin; do
	i=0
	until grep -q '^ready' "$R/$f.out" || [ $i -ge 120 ]; do sleep 0.5; i=$((i + 1)); done
done
echo "spin32 pid $SPIN: $(head -1 "$R/spin.out"); gemm pid $GEMM: $(head -1 "$R/gemm.out")"
start=$(date +%s)
i=0
until ls "$R/bundles"/gpuprobe-bundle-$SPIN-*.tar.gz > /dev/null 2>&1 || [ $i -ge $((2 * (H + 30))) ]; do
	sleep 0.5; i=$((i + 1))
done
took=$(( $(date +%s) - start ))
cp "$R/gpuprobe.prom" "$R/metrics-at-bundle.prom" 2>/dev/null
sleep 5   # the GEMM keeps running: a wrong bundle of it would show now
check "one bundle of the spinner within $((H + 15)) s of ready (took ${took} s)" \
	test "$(ls "$R/bundles" | grep -c "^gpuprobe-bundle-$SPIN-.*\.tar\.gz\$")" = 1 -a "$took" -le $((H + 15))
check "no bundle of the GEMM" sh -c "! ls '$R/bundles' | grep -q '^gpuprobe-bundle-$GEMM-'"
mkdir "$R/x"
tar -xzf "$R/bundles"/gpuprobe-bundle-$SPIN-*.tar.gz -C "$R/x" 2>/dev/null
D=$(echo "$R"/x/gpuprobe-bundle-$SPIN-*)
cat "$D/MANIFEST"
check "report.md says hang-gpu-spin" grep -q 'hang-gpu-spin' "$D/report.md"
check "gpu.json: the spinner holds /dev/nvidia* open" grep -q '"/dev/nvidia' "$D/gpu.json"
check "gpu.json: NVML lists the spinner's memory" grep -q '"nvml"' "$D/gpu.json"
check "stacks.txt: the waiting thread's Python frame (gpu_shapes.py line $SYNC_LINE, in main)" \
	grep -q "gpu_shapes.py\", line $SYNC_LINE, in main" "$D/stacks.txt"
check "report.md: the same Python frame" grep -q "gpu_shapes.py\", line $SYNC_LINE, in main" "$D/report.md"
check "runtime-libs.json: libcuda with a build-id" grep -q 'libcuda' "$D/runtime-libs.json"
M=$R/metrics-at-bundle.prom
grep "pid=\"\($SPIN\|$GEMM\)\"" "$M"
check "metrics: the spinner's GPU spins" grep -q "^gpuprobe_process_gpu{pid=\"$SPIN\",comm=\"[^\"]*\",state=\"spin\"} 1" "$M"
check "metrics: the spinner is a hang" grep -q "^gpuprobe_process_hang{pid=\"$SPIN\",comm=\"[^\"]*\"} 1" "$M"
check "metrics: the GEMM's GPU works" grep -q "^gpuprobe_process_gpu{pid=\"$GEMM\",comm=\"[^\"]*\",state=\"work\"} 1" "$M"
check "metrics: the GEMM is no hang" grep -q "^gpuprobe_process_hang{pid=\"$GEMM\",comm=\"[^\"]*\"} 0" "$M"
# watch's own cost over the run, with two GPU processes followed
awk '{ sub(/^.*\) /, ""); printf "watch CPU: %.2f s over the run\n", ($12 + $13) / 100 }' /proc/$WATCH/stat
grep VmHWM /proc/$WATCH/status
kill $SPIN $GEMM
kill -TERM $WATCH
wait $WATCH
check "watch exits 0 on SIGTERM" test $? -eq 0
cat "$R/watch.log"
echo "fails: $fails"
tar czf "$OUT/results.tar.gz" -C "$R" . && ls -la "$OUT/results.tar.gz"
