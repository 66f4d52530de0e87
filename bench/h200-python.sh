#!/bin/sh
# Python frames of torch processes on the H200 machine (shared/DEVICE.md;
# python3 3.12 with torch and safetensors there): a process loading
# safetensors shards to the GPU, and one waiting on a long GPU kernel.
# For each: gpuprobe stacks (text, Markdown, JSON), its time per snapshot
# against eu-stack -p in the same run (interleaved rounds), a kept
# session (--repeat, what trace does), and a trace + report.
# Run from the repository root there, with the bundles built here:
#   ../shared/tools/devbundle .devbundle src/gpuprobe
#   ../shared/tools/devbundle .eubundle /usr/bin/eu-stack     (optional)
#   GPUPROBE=.devbundle/run EU_STACK=.eubundle/run OUT=$OUT bench/h200-python.sh
# Logs and results go to $OUT (h200-python.log is the summary).
set -u
GPUPROBE=${GPUPROBE:-.devbundle/run}
EU=${EU_STACK:-.eubundle/run}
OUT=${OUT:-./h200-python-out}
PY=${PYTHON:-python3}
ROUNDS=${ROUNDS:-10}
mkdir -p "$OUT"
exec > "$OUT/h200-python.log" 2>&1
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" -c 'import sys, torch, safetensors; print("python", sys.version.split()[0], "torch", torch.__version__, "safetensors", safetensors.__version__)'
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
[ -x "$EU" ] || { echo "no eu-stack bundle at $EU: eu-stack rows left out"; EU=; }
T=
trap '[ -n "$T" ] && kill $T 2>/dev/null' EXIT

start() {  # start NAME SCRIPT ARGS...: runs it, sets T once it says ready
	name=$1; shift
	"$PY" "$@" > "$OUT/$name.out" 2>&1 &
	T=$!
	n=0
	until grep -q '^ready' "$OUT/$name.out"; do
		sleep 0.2; n=$((n + 1))
		if [ $n -gt 900 ] || ! kill -0 $T 2>/dev/null; then
			echo "$name never became ready:"; tail -20 "$OUT/$name.out"; T=; return 1
		fi
	done
	echo "== $name: pid $T, $(ls /proc/$T/task | wc -l) threads"
}

# Per thread with Python frames: tid, comm, GIL, the youngest Python frames.
summary() {
	"$PY" - "$1" <<'PYEOF'
import json, sys
line = [json.loads(l) for l in open(sys.argv[1]) if '"stacks"' in l][-1]
print("python:", json.dumps(line.get("python")), " cost:", json.dumps(line.get("cost")))
for t in line["threads"]:
    py = [p for f in t.get("frames") or [] for p in f.get("python") or []]
    py += (t.get("python") or {}).get("unplaced") or []
    if not py:
        continue
    gil = (t.get("python") or {}).get("gil")
    print("  tid %d %-16s gil=%-8s %s" % (t["tid"], t["comm"], gil, " <- ".join(
        "%s (%s:%s)" % (p["function"], (p["file"] or "?").rsplit("/", 1)[-1], p["line"]) for p in py[:4])))
PYEOF
}

cost() {  # interleaved rounds: gpuprobe default / --no-python / eu-stack
	: > "$OUT/$1-times"
	i=0
	while [ $i -lt "$ROUNDS" ]; do
		for tool in gp gpnopy eu; do
			case $tool in
			gp) cmd="$GPUPROBE stacks -q --format json $T" ;;
			gpnopy) cmd="$GPUPROBE stacks -q --no-python --format json $T" ;;
			eu) [ -n "$EU" ] || continue; cmd="$EU -p $T" ;;
			esac
			a=$(date +%s%N); $cmd > /dev/null 2>&1; rc=$?; b=$(date +%s%N)
			echo "$tool $rc $(( (b - a) / 1000 ))" >> "$OUT/$1-times"
		done
		i=$((i + 1))
	done
	echo "| tool | wall ms median | mean | min | max | failed |"
	echo "|---|---:|---:|---:|---:|---:|"
	for tool in gp gpnopy eu; do
		awk -v t=$tool '$1 == t { print $3 / 1000, $2 }' "$OUT/$1-times" | sort -n | awk -v t=$tool '
			{ v[NR] = $1; s += $1; if ($2 != 0) bad++ }
			END { if (!NR) exit
			      n = t == "gp" ? "gpuprobe stacks" : t == "gpnopy" ? "gpuprobe stacks --no-python" : "eu-stack -p"
			      printf "| %s | %.1f | %.1f | %.1f | %.1f | %d |\n", n, v[int((NR + 1) / 2)], s / NR, v[1], v[NR], bad }'
	done
}

probe() {  # probe NAME
	$GPUPROBE stacks "$T" > "$OUT/stacks-$1.txt" 2>&1
	echo "stacks rc=$?"
	$GPUPROBE stacks -q --format markdown "$T" > "$OUT/stacks-$1.md" 2>&1
	$GPUPROBE stacks -q -o "$OUT/stacks-$1.jsonl" "$T" > /dev/null 2>&1
	summary "$OUT/stacks-$1.jsonl"
	echo "-- time per one-shot snapshot, $ROUNDS interleaved rounds"
	cost "$1"
	echo "-- kept session: $($GPUPROBE stacks -q --hot-window 0 --repeat 50 "$T" 2>&1 > /dev/null)"
	echo "-- kept session, --no-python: $($GPUPROBE stacks -q --hot-window 0 --no-python --repeat 50 "$T" 2>&1 > /dev/null)"
	echo "-- no thread left stopped: $(grep -lE '^State:[[:space:]]+[tT]' /proc/$T/task/*/status 2>/dev/null | wc -l) stopped"
}

# run_case NAME FUNCTION: the probes, then a trace of $T and its report,
# which must show Python frames and FUNCTION among them; stops $T.
run_case() {
	sleep 3
	probe "$1"
	$GPUPROBE trace "$T" --interval 0.5 --seconds 6 --stacks all -q -o "$OUT/trace-$1.jsonl" > "$OUT/trace-$1.txt" 2>&1
	echo "trace rc=$?"
	$GPUPROBE report "$OUT/trace-$1.jsonl" > "$OUT/report-$1.md" 2>&1
	echo "report: $(grep -c 'File "' "$OUT/report-$1.md") Python frame lines; $2: $(grep -c "in $2" "$OUT/report-$1.md")"
	tail -2 "$OUT/$1.out"
	kill $T; wait $T 2>/dev/null; T=
}

if start load bench/workloads/py-safetensors-load.py "${SHARD_DIR:-/tmp/gp-shards}" 4 512; then
	run_case load load_shard
fi
if start gpuwait bench/workloads/py-gpu-wait.py; then
	run_case gpuwait wait_for_kernel
fi
echo "# done $(date -u +%FT%TZ)"
