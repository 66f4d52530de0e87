#!/bin/sh
# NVML's cost to gpuprobe's trace on the H200 (issue 19's acceptance: at
# most 2 ms of NVML per GPU per second, no call that blocks), in one run.
# The call budget is in src/gpu/nvml.h; tests/e2e/trace-nvml-budget.sh
# counts the calls against the NVML double.
#
# gpuprobe's own CPU time (getrusage of the tracer alone: the target is
# not its child) tracing GEMM loops by PID with stacks off (a GEMM's host
# thread is hot, and its stacks' cost swamped NVML's in a run of one
# repeat: slopes of -34 and +32 ms/s, 2026-12-05), SHORT and LONG seconds, with
# NVML and with --no-nvml, REPEATS times each; the per-second cost is the
# slope between the medians of SHORT and LONG (start-up and NVML's init
# are in both), and NVML's share is the slope with it less the slope
# without, over the GPUs NVML lists.  Two targets: one GEMM process, and
# a tree of four (sh and three GEMM processes on GPU 0: the trace follows
# the children), which before the shared readers cost four times the
# calls.  Prints one table and the two "ms of NVML per GPU per second".
#   ../shared/tools/devbundle .devbundle src/gpuprobe
#   OUT=$OUT bench/h200-nvml-cost.sh       (about 5 minutes as set)
set -u
GPUPROBE=${GPUPROBE:-.devbundle/run}
OUT=${OUT:-./h200-nvml-cost-out}
SHORT=${SHORT:-5}
LONG=${LONG:-25}
REPEATS=${REPEATS:-2}
R=$(mktemp -d)
. "${0%/*}/h200-lib.sh"
h200_log h200-nvml-cost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$GPUS" -ge 1 ] 2>/dev/null || GPUS=1
echo "GPUs listed: $GPUS; $SHORT s and $LONG s traces, $REPEATS of each"
W=${SHAPES:-bench/workloads/gpu_shapes.py}   # SHAPES: a stand-in, for a run without a GPU
TARGET_S=$(( (SHORT + LONG) * REPEATS * 2 + 60 ))

# cpu_ms SECONDS PID [--no-nvml]: gpuprobe's CPU time for one trace, ms.
cpu_ms() {
	python3 - "$GPUPROBE" "$1" "$2" "$R/t-$2-$1-${3:-nvml}.jsonl" ${3:-} <<'PY'
import resource, subprocess, sys
g, secs, pid, out, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
subprocess.run([g, "trace", "-q", "--stacks", "none", "--seconds", secs, *flags, "-o", out, pid],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{(r.ru_utime + r.ru_stime) * 1000:.1f}")
PY
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME PID: the table rows of one target and its NVML ms/GPU/s.
measure() {
	[ -n "${ONLY_TIMED:-}" ] && return	# ONLY_TIMED=1: the timed calls alone
	for mode in nvml --no-nvml; do
		flag=; [ "$mode" = --no-nvml ] && flag=--no-nvml
		for secs in $SHORT $LONG; do
			: > "$R/$1-$mode-$secs"
			i=0
			while [ $i -lt "$REPEATS" ]; do
				cpu_ms "$secs" "$2" $flag >> "$R/$1-$mode-$secs"
				i=$((i + 1))
			done
		done
		s=$(median < "$R/$1-$mode-$SHORT") l=$(median < "$R/$1-$mode-$LONG")
		slope=$(echo "$s $l" | awk -v a="$SHORT" -v b="$LONG" '{ printf "%.2f", ($2 - $1) / (b - a) }')
		echo "$slope" > "$R/$1-$mode.slope"
		echo "| $1 | $mode | $(tr '\n' ' ' < "$R/$1-$mode-$SHORT")| $(tr '\n' ' ' < "$R/$1-$mode-$LONG")| $slope |"
	done
}

start() { # NAME COMMAND: starts it, waits for its GEMM processes' "ready"
	name=$1; shift
	"$@" > "$R/$name.target.out" 2>&1 &
	echo $! > "$R/$name.pid"
	n=$(echo "$*" | grep -o 'gemm' | wc -l)
	t=0
	until [ "$(grep -c '^ready' "$R/$name.target.out")" -ge "$n" ] || [ $t -ge 600 ]; do
		sleep 0.2; t=$((t + 1))
	done
}

# timed NAME PID: one LONG-second trace with NVML loaded through
# bench/workloads/nvml-timer.so (built beside this script, or by cc here),
# which sums the time inside each NVML call: the cost itself, not a
# difference of two noisy slopes.  Prints the calls table and the figure.
TIMER=${TIMER:-bench/workloads/nvml-timer.so}
[ -f "$TIMER" ] || cc -O2 -shared -fPIC -o "$TIMER" bench/workloads/nvml-timer.c -ldl 2>/dev/null
timed() {
	[ -f "$TIMER" ] || { echo "$1: no $TIMER (no cc): calls not timed"; return; }
	: > "$R/$1.times"
	GPUPROBE_NVML_LIB=$PWD/$TIMER GPUPROBE_NVML_TIMES=$R/$1.times \
		"$GPUPROBE" trace -q --stacks none --seconds "$LONG" -o "$R/timed-$1.jsonl" "$2" > /dev/null 2>&1
	echo "| $1: NVML function | calls in $LONG s | wall ms | CPU ms |"
	echo "|---|---|---|---|"
	awk '{ printf "| %s | %s | %.2f | %.2f |\n", $1, $2, $3, $4 }' "$R/$1.times"
	# Start-up calls (made once: init, handles, names, GPM buffers,
	# shutdown) apart from the steady ones, which the budget is about.
	awk -v s="$LONG" -v g="$GPUS" '
		/^nvml(Init|Shutdown|DeviceGetCount|DeviceGetHandleByIndex|DeviceGetName|DeviceGetArchitecture|DeviceGetNumGpuCores|GpmQueryDeviceSupport|GpmSampleAlloc|GpmSampleFree)/ {
			o += $3; next }
		{ w += $3; c += $4 } END {
		printf "%s: NVML calls timed: %.2f ms wall (%.2f ms CPU) per GPU per second, steady, over %d s (budget 2); start-up %.1f ms once\n",
			name, w / s / g, c / s / g, s, o }' name="$1" "$R/$1.times"
}

echo "| target | NVML | CPU ms, ${SHORT} s traces | CPU ms, ${LONG} s traces | slope ms/s |"
echo "|---|---|---|---|---|"
start one python3 $W gemm $TARGET_S
measure one "$(cat "$R/one.pid")"
timed one "$(cat "$R/one.pid")"
kill "$(cat "$R/one.pid")" 2>/dev/null
start four sh -c "python3 $W gemm $TARGET_S & python3 $W gemm $TARGET_S & python3 $W gemm $TARGET_S & wait"
measure four "$(cat "$R/four.pid")"
timed four "$(cat "$R/four.pid")"
pkill -P "$(cat "$R/four.pid")" 2>/dev/null; kill "$(cat "$R/four.pid")" 2>/dev/null
for name in one four; do
	[ -n "${ONLY_TIMED:-}" ] && break
	echo "$name: NVML $(awk -v g="$GPUS" 'NR == 1 { a = $1 } NR == 2 { printf "%.2f", (a - $1) / g }' \
		"$R/$name-nvml.slope" "$R/$name---no-nvml.slope") ms per GPU per second" \
		"(slope with NVML $(cat "$R/$name-nvml.slope") less without $(cat "$R/$name---no-nvml.slope"), over $GPUS GPU(s); budget 2)"
done
# Every process of the tree was read (else the four-process case proves nothing).
[ -n "${ONLY_TIMED:-}" ] || python3 - "$R"/t-"$(cat "$R/four.pid")"-$LONG-nvml.jsonl <<'PY'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
s = [x for x in L if x.get("type") == "sample"][-1]
procs = [s] + s.get("procs", [])
print("four: processes read by NVML in the last sample:",
      sum(1 for p in procs if "nvml" in p.get("gpu", {}).get("activity", {})), "of", len(procs))
PY
tar czf "$OUT/nvml-cost.tar.gz" -C "$R" . && ls -la "$OUT/nvml-cost.tar.gz"
