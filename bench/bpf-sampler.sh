#!/bin/bash
# bpf-sampler.sh: issue 30's first acceptance, measured.  10 000 idle
# threads (bench/workloads/threads) traced at 1 Hz for SECONDS_IDLE s
# (10), stacks off, as root, RUNS times (3), each run with:
#   - gpuprobe on the BPF path (a task iterator: src/tracer/taskiter.h),
#   - gpuprobe on the /proc path (GPUPROBE_BPF_SAMPLER=off), and
#   - pidstat -t -p PID 1 (the peer), on the same target in the same run.
# Each is run for SECONDS_IDLE s and for SHORT s (3): "all-in" is the long
# run's CPU (getrusage of the tool and its children: start, load of the
# BPF programs, the first sample's every thread, the end), "steady" the
# long run less the short one per sample taken (as scale.sh).  Samples
# taken and late ticks are read from the result's exit line; the verdict
# of both gpuprobe paths is printed side by side.  The machine's load
# average (uptime) is printed beside each run: a shared machine's
# wall-clock figures (late ticks) depend on it, CPU figures much less.
# Then bench/workloads/taskiter-floor: one iterator pass per thread
# against one pread of schedstat per thread.
set -u
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-3}
SECONDS_IDLE=${SECONDS_IDLE:-10}
SHORT=${SHORT:-3}
THREADS=${THREADS_IDLE:-10000}
FLOOR=${FLOOR:-$TOP_DIR/bench/workloads/taskiter-floor}

[ -x "$GPUPROBE" ] || die "$GPUPROBE: not built (make)"
command -v pidstat >/dev/null || die "pidstat not found (apt-get install sysstat)"
[ "$(id -u)" = 0 ] || die "run as root: the BPF path needs it"
path=$("$GPUPROBE" info --format json | jq -r '.sampler.path // "proc"')
[ "$path" = bpf ] || die "the BPF sampler does not load: $("$GPUPROBE" info --format json | jq -r '.sampler.why')"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bpf-sampler.XXXXXX") || die "mktemp"
trap 'stop_target; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

echo "# bpf-sampler: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r)"
echo "# gpuprobe: $GPUPROBE ($("$GPUPROBE" --version 2>/dev/null | head -n 1)); uid $(id -u); ulimit -n $(ulimit -n)"

exit_field() {
	jq -r "select(.type == \"exit\") | .$2 // \"?\"" "$1" 2>/dev/null | tail -n 1
}

# gp_one TAG SECONDS OUT [ENV...]: one trace of $TARGET_PID; prints
# "samples late cpu_s".
gp_one() {
	local tag=$1 secs=$2 out=$3 m
	shift 3
	m=$(measure "$WORK/$tag.log" env "$@" "$GPUPROBE" trace "$TARGET_PID" -q --interval 1 \
		--seconds "$secs" --stacks none --no-kernel-stacks -o "$out")
	set -- $m
	echo "$(exit_field "$out" samples) $(exit_field "$out" late_ticks) $(awk -v u="$1" -v s="$2" 'BEGIN { printf "%.3f", u + s }')"
}

pid_one() {
	local m
	m=$(measure "$WORK/pidstat.log" sh -c "exec pidstat -t -p $TARGET_PID 1 $1 >/dev/null")
	set -- $m
	awk -v u="$1" -v s="$2" 'BEGIN { printf "%.3f", u + s }'
}

THREADS=$THREADS start_target
sleep 1
n=$(target_threads)
echo
echo "## $n idle threads at 1 Hz for $SECONDS_IDLE s (stacks off), $RUNS runs"
echo
echo "| run | load (1/5/15 min) | tool | samples (late ticks) | CPU s, ${SECONDS_IDLE} s run (all-in) | all-in vs pidstat | steady ms/sample | steady vs pidstat | µs/thread-sample (steady) |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
for r in $(seq "$RUNS"); do
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	pl=$(pid_one "$SECONDS_IDLE")
	ps=$(pid_one "$SHORT")
	pst=$(awk -v a="$pl" -v b="$ps" -v nl="$SECONDS_IDLE" -v ns="$SHORT" 'BEGIN { printf "%.6f", (a - b) / (nl - ns) }')
	for tag in bpf proc; do
		env=()
		[ "$tag" = proc ] && env=(GPUPROBE_BPF_SAMPLER=off)
		L=$(gp_one "$tag-long-$r" "$SECONDS_IDLE" "$WORK/$tag-long-$r.jsonl" "${env[@]}")
		S=$(gp_one "$tag-short-$r" "$SHORT" "$WORK/$tag-short-$r.jsonl" "${env[@]}")
		awk -v L="$L" -v S="$S" -v pl="$pl" -v p="$pst" -v th="$n" -v run="$r" -v ld="$load" -v tag="gpuprobe ($tag)" 'BEGIN {
			split(L, l, " "); split(S, s, " ")
			d = l[1] - s[1]; st = d > 0 ? (l[3] - s[3]) / d : 0
			printf "| %s | %s | %s | %s (%s) | %.3f | %.4f× | %.2f | %.4f× | %.2f |\n", run, ld, tag, l[1], l[2],
			  l[3], (pl > 0 ? l[3] / pl : 0), st * 1000, (p > 0 ? st / p : 0), st * 1e6 / th }'
	done
	awk -v pl="$pl" -v p="$pst" -v th="$n" -v run="$r" -v ld="$load" 'BEGIN {
		printf "| %s | %s | pidstat -t 1 | - | %.3f | 1× | %.2f | 1× | %.2f |\n", run, ld, pl, p * 1000, p * 1e6 / th }'
done
echo
echo "Verdicts of the last run's ${SECONDS_IDLE} s traces:"
echo
for tag in bpf proc; do
	printf -- '- %s: `%s`, header sampler_path `%s`\n' "$tag" \
		"$(jq -r 'select(.type == "verdict") | .class' "$WORK/$tag-long-$RUNS.jsonl")" \
		"$(jq -r 'select(.type == "header") | .sampler_path' "$WORK/$tag-long-$RUNS.jsonl")"
done
same=$(for tag in bpf proc; do
	"$GPUPROBE" report --format jsonl "$WORK/$tag-long-$RUNS.jsonl" \
		| jq -c 'select(.type == "sample") | [.threads[] | del(.wait_ns)] | sort_by(.tid)' | sed 1d | sort -u | md5sum
done | uniq | wc -l)
echo "- the samples' thread records after the first (resolved, wait_ns aside) are $([ "$same" = 1 ] && echo the same || echo NOT the same) on both paths"
if [ -x "$FLOOR" ]; then
	echo
	echo "## The floor: one iterator pass against one pread of schedstat, per thread"
	echo
	echo '```'
	"$FLOOR" "$TARGET_PID" 20
	echo '```'
fi
