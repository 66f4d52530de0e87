#!/bin/sh
# Issue 19 on the H200: each row of its table (bench/workloads/gpu_shapes.py)
# under `gpuprobe trace -- python3 gpu_shapes.py SHAPE`, the host waiting
# in the driver's sync, with the truth beside it; a training loop; a
# kernel-free GPU under a blocked host; an Xid.  Then NVML's cost: a trace
# by PID of a GEMM loop with and without NVML, gpuprobe's own CPU time.
#   ../shared/tools/devbundle .devbundle src/gpuprobe
#   OUT=$OUT bench/h200-gpu-work.sh
set -u
GPUPROBE=${GPUPROBE:-.devbundle/run}
OUT=${OUT:-./h200-gpu-work-out}
R=$(mktemp -d)   # the raw files, sent back as one tarball ($OUT takes 8 files)
S=${SECONDS_EACH:-20}
H=${HANG_AFTER:-8}
. "${0%/*}/h200-lib.sh"
h200_log h200-gpu-work
nvidia-smi --query-gpu=name,driver_version,power.draw --format=csv,noheader 2>/dev/null
W="python3 bench/workloads/gpu_shapes.py"
v() {  # the verdict line of a result, and the work readings of its last sample
	python3 - "$1" <<'PY'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
v = next((l for l in L if l.get("type") == "verdict"), {})
w = [s["gpu"]["activity"]["work"] for s in L if s.get("type") == "sample"
     and "work" in s.get("gpu", {}).get("activity", {})]
last = w[-1] if w else {}
g = last.get("gpm", {})
print(f'| {v.get("class")} | {v.get("confidence")} | {last.get("power_w")} W / floor {last.get("floor_w")} | '
      f'SM {g.get("sm_util")} tensor {g.get("tensor")} fp32 {g.get("fp32")} DRAM {g.get("dram")} | '
      f'{v.get("summary", "")[:260]} |')
PY
}
echo "| shape | truth | class | confidence | power | GPM | summary |"
echo "|---|---|---|---|---|---|---|"
ROWS=${ROWS:-spin1 spin32 spinall fma chase gemv gemm idlewait}
for shape in $ROWS; do
	case $shape in spin*) truth=hang-gpu-spin ;; idlewait) truth=hang-blocked ;; *) truth=progress ;; esac
	row="$shape $truth"
	set -- $row
	timeout 120 $GPUPROBE trace -q --hang-after $H --seconds $S -o "$R/$1.jsonl" -- $W "$1" 600 \
		> "$R/$1.out" 2>&1
	echo "| $1 | $2 $(v "$R/$1.jsonl")"
done
if [ -z "${NO_TRAIN:-}" ]; then
	timeout 120 $GPUPROBE trace -q --hang-after $H -o "$R/train.jsonl" -- $W train 60 > "$R/train.out" 2>&1
	echo "| train 60 s | progress $(v "$R/train.jsonl")"
fi
if [ -z "${NO_XID:-}" ]; then
	timeout 60 $GPUPROBE trace -q --hang-after $H --seconds 15 -o "$R/xid.jsonl" -- $W xid 20 > "$R/xid.out" 2>&1
	echo "| xid | exited/undecided $(v "$R/xid.jsonl")"
	grep -c '"type":"kmsg"' "$R/xid.jsonl" | sed 's/^/xid: kmsg lines: /'
	grep '"type":"kmsg"' "$R/xid.jsonl" | grep -i xid | head -3
fi
# NVML's cost: gpuprobe's own CPU time tracing a GEMM loop by PID, with and
# without NVML (getrusage of the tracer alone: the target is not its child).
# One run each, as recorded on 2026-12-04; bench/h200-nvml-cost.sh repeats
# them, adds a tree of four GEMM processes and prints ms per GPU per second.
$W gemm 100 > "$R/cost-target.out" 2>&1 &
T=$!
until grep -q '^ready' "$R/cost-target.out"; do sleep 0.2; done
# The per-second cost is the slope between a 10 s and a 40 s trace (NVML's
# init, ~0.1 s, and the start-up are in both), with NVML and without.
for run in "nvml 10" "nvml 40" "no-nvml 10" "no-nvml 40"; do
	set -- $run
	flag=; [ $1 = no-nvml ] && flag=--no-nvml
	python3 - "$GPUPROBE" "$2" "$T" "$R/cost-$1-$2.jsonl" $flag <<'PY'
import resource, subprocess, sys
g, secs, pid, out, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
subprocess.run([g, "trace", "-q", "--seconds", secs, *flags, "-o", out, pid],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"cost {' '.join(flags) or 'with NVML'} over {secs} s: {(r.ru_utime + r.ru_stime) * 1000:.0f} ms CPU")
PY
done
kill $T
tar czf "$OUT/results.tar.gz" -C "$R" . && ls -la "$OUT/results.tar.gz"
