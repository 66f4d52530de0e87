#!/bin/sh
# Issues 11, 13, 14 on the H200 machine (shared/DEVICE.md), one script:
#   GPUPROBE=.devbundle/run OUT=$OUT bench/h200-trees.sh
# Each case with its truth; logs and results under $OUT.  Record what it
# measured in bench/results/.
set -u
GPUPROBE=${GPUPROBE:-src/gpuprobe}
OUT=${OUT:-./h200-out}
W=bench/workloads
. "${0%/*}/h200-lib.sh"
h200_log h200-trees
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
DATA=${DATA:-/tmp/gp-st}
mkdir -p "$DATA"
verdict() { grep '"type":"verdict"' "$1" | python3 -c 'import json,sys; v=json.loads(sys.stdin.read()); print("VERDICT", v["class"], "since", round(v["since_s"],1), v["confidence"], "|", v["summary"][:400])'; }
gpu_series() { python3 - "$1" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    try: j = json.loads(l)
    except Exception: continue
    if j.get("type") != "sample": continue
    mem = sum(d.get("used_bytes", 0) for d in (j.get("gpu") or {}).get("nvml", []) or [])
    for p in j.get("procs") or []:
        mem += sum(d.get("used_bytes", 0) for d in (p.get("gpu") or {}).get("nvml", []) or [])
    print("t=%6.1f rss_file=%6.0f MiB gpu=%6.0f MiB" % (j["t"], j["proc"].get("rss_file", 0) / 2**20, mem / 2**20))
PY
}

CASES=${CASES:-A B C D E}
has() { case " $CASES " in *" $1 "*) return 0;; esac; return 1; }
if has A || has B; then
echo "== make 12 GiB safetensors (one file) and 4 shards of 3 GiB"
t=$(date +%s)
python3 $W/st_make.py "$DATA/big.safetensors" 12 >/dev/null || exit 1
python3 $W/st_make.py "$DATA/shard.safetensors" 12 4 >/dev/null || exit 1
echo "made in $(( $(date +%s) - t )) s"; ls -la "$DATA"
sync; echo 3 > /proc/sys/vm/drop_caches

fi
if has A; then
echo "== A: 12 GiB load to cuda:0, default options, then 45 s asleep"
echo "   truth: progress while loading (GPU memory rising), then idle (main thread on a timer)"
$GPUPROBE trace -o "$OUT/load12.jsonl" -- python3 $W/st_load.py 45 "$DATA/big.safetensors"
echo "rc=$? (0: the trace ran; 134 would be the old crash)"
verdict "$OUT/load12.jsonl"
gpu_series "$OUT/load12.jsonl" | awk 'NR % 3 == 1'
$GPUPROBE report --format text "$OUT/load12.jsonl" --hang-after 30 | grep -A3 '^verdict' || true

echo "== A2: the same load, cut at +8 s (mid-load): progress"
sync; echo 3 > /proc/sys/vm/drop_caches
$GPUPROBE trace --seconds 8 -o "$OUT/load12-mid.jsonl" -- python3 $W/st_load.py 5 "$DATA/big.safetensors"
echo "rc=$?"; verdict "$OUT/load12-mid.jsonl"

fi
if has B; then
echo "== B: 4-shard load, default options, 5 s asleep after (the old abort was mid-load)"
sync; echo 3 > /proc/sys/vm/drop_caches
$GPUPROBE trace -o "$OUT/load4.jsonl" -- python3 $W/st_load.py 5 "$DATA"/shard-*.safetensors
echo "rc=$?"; verdict "$OUT/load4.jsonl"

fi
has C && for mode in ${WAIT_MODES-spin blocking}; do
	echo "== C-$mode: one 70 s GPU kernel, $mode sync; truth: waiting-gpu (not a host hang)"
	$GPUPROBE trace --hang-after 20 -o "$OUT/wait-$mode.jsonl" -- python3 $W/gpu_wait.py 70 $mode
	echo "rc=$?"; verdict "$OUT/wait-$mode.jsonl"
done

if has D; then
echo "== D: a deadlock after CUDA init; truth: hang-blocked, GPU idle"
$GPUPROBE trace --hang-after 10 --seconds 25 -o "$OUT/cuda-deadlock.jsonl" -- python3 $W/cuda_deadlock.py
echo "rc=$?"; verdict "$OUT/cuda-deadlock.jsonl"

fi
if has E && [ -f bench/h200-python.sh ]; then
	echo "== E: Python frames (issue 14)"
	GPUPROBE=$GPUPROBE EU_STACK=${EU_STACK:-} OUT=$OUT ROUNDS=${ROUNDS:-5} sh bench/h200-python.sh
fi
rm -rf "$DATA"
echo "# done $(date -u +%FT%TZ)"
