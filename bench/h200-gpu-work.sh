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
for row in "spin1 hang-gpu-spin" "spin32 hang-gpu-spin" "spinall hang-gpu-spin" "fma progress" \
	   "chase progress" "gemv progress" "gemm progress" "idlewait hang-blocked"; do
	set -- $row
	timeout 120 $GPUPROBE trace -q --hang-after $H --seconds $S -o "$OUT/$1.jsonl" -- $W "$1" 600 \
		> "$OUT/$1.out" 2>&1
	echo "| $1 | $2 $(v "$OUT/$1.jsonl")"
done
timeout 120 $GPUPROBE trace -q --hang-after $H -o "$OUT/train.jsonl" -- $W train 60 > "$OUT/train.out" 2>&1
echo "| train 60 s | progress $(v "$OUT/train.jsonl")"
timeout 60 $GPUPROBE trace -q --hang-after $H --seconds 15 -o "$OUT/xid.jsonl" -- $W xid 20 > "$OUT/xid.out" 2>&1
echo "| xid | exited/undecided $(v "$OUT/xid.jsonl")"
grep -c '"type":"kmsg"' "$OUT/xid.jsonl" | sed 's/^/xid: kmsg lines: /'
grep '"type":"kmsg"' "$OUT/xid.jsonl" | grep -i xid | head -3
# NVML's cost: gpuprobe's own CPU time tracing a GEMM loop by PID, with and
# without NVML (getrusage of the tracer alone: the target is not its child).
$W gemm 100 > "$OUT/cost-target.out" 2>&1 &
T=$!
until grep -q '^ready' "$OUT/cost-target.out"; do sleep 0.2; done
for mode in nvml no-nvml; do
	flag=; [ $mode = no-nvml ] && flag=--no-nvml
	python3 - "$GPUPROBE" $flag "$T" "$OUT/cost-$mode.jsonl" <<'PY'
import resource, subprocess, sys
g, args = sys.argv[1], sys.argv[2:]
pid, out = args[-2], args[-1]
flags = args[:-2]
subprocess.run([g, "trace", "-q", "--seconds", "30", *flags, "-o", out, pid],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"cost {' '.join(flags) or 'with NVML'}: {(r.ru_utime + r.ru_stime) * 1000:.0f} ms CPU over 30 s")
PY
done
kill $T
cd "$OUT" && tar czf results.tar.gz ./*.jsonl ./*.out && ls -la results.tar.gz
