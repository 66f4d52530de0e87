#!/bin/sh
# Issue 18 item 8 on the H200 machine (shared/DEVICE.md): what its
# libnvidia-ml writes through each process-list name with 40 CUDA
# processes on GPU 0 (more than the 13 from which a 32-byte list overran
# the old 24-byte reader), and whether gpuprobe's reader finds a 41st
# among them.  From the repository root there (needs only gcc, python3
# and this tree's bench/workloads/{nvml-stride,cuda-alloc}.c,
# src/gpu/nvmlproc.[ch], src/common/strbuf.[ch]):
#   /work/shared/tools/devbundle .devbundle src/gpuprobe   (here, optional:
#                                    the gpuprobe trace at the end)
#   OUT=/some/dir sh bench/h200-nvml-stride.sh             (there)
# Results: bench/results/2026-12-04-nvml-stride.md (run without the
# bundle: the probe alone).
set -u
OUT=${OUT:-./h200-nvml-stride-out}
. "${0%/*}/h200-lib.sh"
h200_log h200-nvml-stride
B=$OUT/bin
mkdir -p "$B/cfg" && : > "$B/cfg/config.h"
gcc -O2 -Wall -I"$B/cfg" -Isrc/gpu -Isrc/common -o "$B/nvml-stride" \
	bench/workloads/nvml-stride.c src/gpu/nvmlproc.c src/common/strbuf.c -ldl || exit 1
gcc -O2 -o "$B/cuda-alloc" bench/workloads/cuda-alloc.c -ldl || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

# 40 processes, each a CUDA context and no allocation, held 90 s.
: > "$OUT/ours.txt"
for i in $(seq 40); do
	"$B/cuda-alloc" 0 0 90 2>/dev/null &
	echo $! >> "$OUT/ours.txt"
done
for t in $(seq 240); do
	n=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)
	[ "$n" -ge 40 ] && break
	sleep 0.25
done
echo "== nvidia-smi lists $n compute processes after $t polls"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader > "$OUT/smi.txt"
"$B/nvml-stride" | tee "$OUT/probe.txt"

# Every list read at its stride names exactly nvidia-smi's pids.
python3 - "$OUT" <<'PY'
import sys
out = sys.argv[1]
smi = sorted(int(l.split(',')[0]) for l in open(out + '/smi.txt') if l.strip())
ours = sorted(int(l) for l in open(out + '/ours.txt') if l.strip())
print("== ours in nvidia-smi:", all(p in smi for p in ours), len(ours), "of", len(smi))
sym = None
for l in open(out + '/probe.txt'):
    if l.startswith('nvmlDevice'):
        sym = l.split(':')[0]
    elif l.startswith('  pids:') and 'Compute' in sym:
        got = sorted(int(p) for p in l.split(':')[1].split())
        print("== %s: %d pids, %s nvidia-smi's" % (sym, len(got), "the same as" if got == smi else "NOT"))
PY

# gpuprobe trace of a 41st process that allocates 1 GiB: its row found.
if [ -x .devbundle/run ]; then
	.devbundle/run trace -q --interval 0.5 --seconds 6 -o "$OUT/trace.jsonl" \
		-- "$B/cuda-alloc" 1 0.5 20 > "$OUT/trace.out" 2>&1
	echo "== gpuprobe trace: exit $?"
	python3 - "$OUT/trace.jsonl" <<'PY'
import json, sys
rows = unknown = samples = 0
best = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("type") != "sample":
        continue
    samples += 1
    g = o.get("gpu", {})
    if "nvml_unknown" in g:
        unknown += 1
        print("   unknown:", g["nvml_unknown"])
    for r in g.get("nvml", []):
        rows += 1
        best = max(best, r.get("used_bytes") or 0)
print("== %d samples, %d nvml rows, %d unknown, largest %d MiB" % (samples, rows, unknown, best >> 20))
PY
fi
for p in $(cat "$OUT/ours.txt"); do kill "$p" 2>/dev/null; done
wait
