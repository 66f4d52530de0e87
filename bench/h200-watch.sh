#!/bin/sh
# Issue 22 on the H200: `gpuprobe watch --gpu` catches the spinning-kernel
# hang of the spin-or-work issue (19), and its bundle holds the GPU
# evidence and the Python frame of the waiting thread.
#
# watch --gpu starts first, with nothing to follow; then, in three
# phases, processes it must pick up by their GPU (one GPU: the spinner and
# the GEMM time-slice it when together):
#   1. gpu_shapes.py gemm alone (a GEMM loop: truth progress): its GPU
#      works, no hang, no bundle;
#   2. gpu_shapes.py spin32 beside it (32 CTAs polling a flag nobody sets,
#      the host in cudaDeviceSynchronize: truth hang-gpu-spin).  On a
#      shared GPU device-wide readings cannot say whose work they show
#      (model/gpuwork.h; the H100 run of 2026-12-05 read the spinner
#      `progress` from the GEMM's tensor %): the spinner reads `busy`, no
#      hang yet, the GEMM still `work`;
#   3. the GEMM killed, the spinner alone: its GPU spins, and one bundle
#      comes within SHARED + HANG_AFTER + 15 s of the GEMM's end.
# Checked as well: the bundle's report.md says hang-gpu-spin; its gpu.json
# shows /dev/nvidia* fds and NVML rows for the pid; its stacks.txt and
# report.md show the waiting thread's Python frame, main (gpu_shapes.py,
# the synchronize() line); the metrics file at each phase's end.
# Run (the lead, on the H200 machine):
#   ../shared/tools/devbundle .devbundle src/gpuprobe
#   OUT=$OUT bench/h200-watch.sh
# Everything raw comes back in $OUT/watch.tar.gz; the checks in
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
SHARED=${SHARED:-20}
ready() { i=0; until grep -q '^ready' "$R/$1.out" || [ $i -ge 120 ]; do sleep 0.5; i=$((i + 1)); done; }
state() { # state PID METRIC -> the labelled state or value in the latest metrics
	grep "^$2{pid=\"$1\"" "$R/$3.prom" | sed 's/.*state="\([a-z]*\)"} 1$/\1/; s/.*} //' | head -1
}
sleep 2
$W gemm 600 > "$R/gemm.out" 2>&1 &
GEMM=$!
ready gemm
sleep $((H + 5))
cp "$R/gpuprobe.prom" "$R/phase1.prom"
check "phase 1, the GEMM alone: its GPU works ($(state $GEMM gpuprobe_process_gpu phase1))" \
	test "$(state $GEMM gpuprobe_process_gpu phase1)" = work
check "phase 1: the GEMM is no hang" test "$(state $GEMM gpuprobe_process_hang phase1)" = 0
$W spin32 600 > "$R/spin.out" 2>&1 &
SPIN=$!
ready spin
echo "spin32 pid $SPIN: $(head -1 "$R/spin.out"); gemm pid $GEMM: $(head -1 "$R/gemm.out")"
# The readings of the shared phase, kept for the record: a trace of each.
$GPUPROBE trace -q --stacks none --seconds 10 -o "$R/shared-spin.jsonl" $SPIN > "$R/shared-spin.out" 2>&1 &
$GPUPROBE trace -q --stacks none --seconds 10 -o "$R/shared-gemm.jsonl" $GEMM > "$R/shared-gemm.out" 2>&1 &
sleep "$SHARED"
cp "$R/gpuprobe.prom" "$R/phase2.prom"
grep "pid=\"\($SPIN\|$GEMM\)\"" "$R/phase2.prom"
check "phase 2, sharing the GPU: the spinner reads busy, not work or idle ($(state $SPIN gpuprobe_process_gpu phase2))" \
	test "$(state $SPIN gpuprobe_process_gpu phase2)" = busy
check "phase 2: the GEMM still works ($(state $GEMM gpuprobe_process_gpu phase2))" \
	test "$(state $GEMM gpuprobe_process_gpu phase2)" = work
check "phase 2: no bundle yet" sh -c "! ls '$R/bundles' 2>/dev/null | grep -q gpuprobe-bundle"
kill $GEMM
start=$(date +%s)
i=0
until ls "$R/bundles"/gpuprobe-bundle-$SPIN-*.tar.gz > /dev/null 2>&1 || [ $i -ge $((2 * (SHARED + H + 30))) ]; do
	sleep 0.5; i=$((i + 1))
done
took=$(( $(date +%s) - start ))
cp "$R/gpuprobe.prom" "$R/metrics-at-bundle.prom" 2>/dev/null
sleep 3
check "phase 3: one bundle of the spinner within $((SHARED + H + 15)) s of the GEMM's end (took ${took} s)" \
	test "$(ls "$R/bundles" | grep -c "^gpuprobe-bundle-$SPIN-.*\.tar\.gz\$")" = 1 -a "$took" -le $((SHARED + H + 15))
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
grep "pid=\"$SPIN\"" "$M"
check "metrics: the spinner's GPU spins" grep -q "^gpuprobe_process_gpu{pid=\"$SPIN\",comm=\"[^\"]*\",state=\"spin\"} 1" "$M"
check "metrics: the spinner is a hang" grep -q "^gpuprobe_process_hang{pid=\"$SPIN\",comm=\"[^\"]*\"} 1" "$M"
# watch's own cost over the run, with two GPU processes followed
awk '{ sub(/^.*\) /, ""); printf "watch CPU: %.2f s over the run\n", ($12 + $13) / 100 }' /proc/$WATCH/stat
grep VmHWM /proc/$WATCH/status
kill $SPIN
kill -TERM $WATCH
wait $WATCH
check "watch exits 0 on SIGTERM" test $? -eq 0
cat "$R/watch.log"
echo "fails: $fails"
tar czf "$OUT/watch.tar.gz" -C "$R" . && ls -la "$OUT/watch.tar.gz"
