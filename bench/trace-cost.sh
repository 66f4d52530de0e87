#!/bin/bash
# trace-cost.sh: CPU that gpuprobe trace spends per sample of a
# 1000-thread target, side by side in one run with pidstat and top.
#
# Every tool samples the same target (bench/workloads/threads, N sleeping
# threads) one after another, never two at once.  Each is run twice: a
# long run (SECONDS_PER_RUN samples at 1 Hz) and a short one (SHORT_SAMPLES
# samples); "steady" columns are (long - short) / (samples difference), the
# cost of one more sample with start-up (opening files, first kernel
# stacks, loading libraries) taken out.  "all-in" columns divide the long
# run's whole CPU by its samples.
#
# Environment:
#   SECONDS_PER_RUN  samples (seconds) of each 1 Hz run       (default 30)
#   FAST_SECONDS     seconds of the 10 Hz gpuprobe run         (default SECONDS_PER_RUN)
#   SHORT_SAMPLES    samples of the short runs                 (default 3)
#   THREADS          threads of the target                     (default 1000)
#   GPUPROBE         the binary                                (default src/gpuprobe)
#   ONLY             space-separated row names to run          (default all)
set -u
. "$(dirname "$0")/lib.sh"

SECONDS_PER_RUN=${SECONDS_PER_RUN:-30}
FAST_SECONDS=${FAST_SECONDS:-$SECONDS_PER_RUN}
SHORT_SAMPLES=${SHORT_SAMPLES:-3}
ONLY=${ONLY:-}

[ -x "$GPUPROBE" ] || die "$GPUPROBE: not built (make)"
command -v pidstat >/dev/null || die "pidstat not found (apt-get install sysstat)"
command -v top >/dev/null || die "top not found (apt-get install procps)"
[ "$SECONDS_PER_RUN" -gt "$SHORT_SAMPLES" ] || die "SECONDS_PER_RUN must exceed SHORT_SAMPLES"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/trace-cost.XXXXXX") || die "mktemp"
start_target
trap 'stop_target; rm -rf "$WORK"' EXIT
nthreads=$(target_threads)

echo "# trace-cost: target pid $TARGET_PID, $nthreads threads; $(nproc) CPUs, $(uname -r)"
echo "# 1 Hz runs: $SECONDS_PER_RUN samples (short runs: $SHORT_SAMPLES); 10 Hz run: $FAST_SECONDS s"
echo "# gpuprobe: $GPUPROBE ($("$GPUPROBE" --version 2>/dev/null | head -n 1)); uid $(id -u)"

# gpuprobe's sample count, from its summary line "... N samples over ...".
gp_samples() { sed -n 's/.*: \([0-9][0-9]*\) samples over.*/\1/p' "$1" | head -n 1; }

# run_row NAME KIND SAMPLES_LONG ARGS_LONG... -- ARGS_SHORT...
# KIND: gp (sample count read from the summary) or fixed.
rows=()
run_row() {
	local name=$1 kind=$2 want_long=$3
	shift 3
	local long=() short=()
	while [ "$1" != "--" ]; do long+=("$1"); shift; done
	shift
	short=("$@")
	if [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]]; then
		return
	fi
	echo "# $name: ${long[*]}" >&2
	local ml ms nl ns
	ml=$(measure "$WORK/$name.long" "${long[@]}")
	ms=$(measure "$WORK/$name.short" "${short[@]}")
	if [ "$kind" = gp ]; then
		nl=$(gp_samples "$WORK/$name.long")
		ns=$(gp_samples "$WORK/$name.short")
		[ -n "$nl" ] && [ -n "$ns" ] || { cat "$WORK/$name.long" >&2; die "$name: no summary"; }
	else
		nl=$want_long
		ns=$SHORT_SAMPLES
	fi
	[ -d "/proc/$TARGET_PID" ] || die "the target died"
	rows+=("$name $nl $ml $ns $ms")
	printf '# %-22s long: %s samples, user/sys/wall %s | short: %s samples, %s\n' \
		"$name" "$nl" "$ml" "$ns" "$ms" >&2
	printf '%s\n' "${long[*]}" >"$WORK/$name.cmd"
}

P=$TARGET_PID
S=$SECONDS_PER_RUN
Q=$SHORT_SAMPLES
GP=("$GPUPROBE" trace "$P" -q -o /dev/null)

run_row gpuprobe-1Hz gp "$S" "${GP[@]}" --interval 1 --seconds "$S" -- \
	"${GP[@]}" --interval 1 --seconds "$Q"
run_row gpuprobe-1Hz-reopen gp "$S" "${GP[@]}" --interval 1 --seconds "$S" --reopen-files -- \
	"${GP[@]}" --interval 1 --seconds "$Q" --reopen-files
run_row gpuprobe-1Hz-nosockets gp "$S" env GPUPROBE_BENCH_NO_SOCKETS=1 "${GP[@]}" --interval 1 --seconds "$S" -- \
	env GPUPROBE_BENCH_NO_SOCKETS=1 "${GP[@]}" --interval 1 --seconds "$Q"
run_row gpuprobe-1Hz-nobpf gp "$S" env GPUPROBE_BPF=off "${GP[@]}" --interval 1 --seconds "$S" -- \
	env GPUPROBE_BPF=off "${GP[@]}" --interval 1 --seconds "$Q"
run_row gpuprobe-1Hz-nokstack gp "$S" "${GP[@]}" --interval 1 --seconds "$S" --no-kernel-stacks -- \
	"${GP[@]}" --interval 1 --seconds "$Q" --no-kernel-stacks
run_row gpuprobe-10Hz gp 0 "${GP[@]}" --interval 0.1 --seconds "$FAST_SECONDS" -- \
	"${GP[@]}" --interval 0.1 --seconds "$(awk -v q="$Q" 'BEGIN { print q / 10 }')"
run_row pidstat-1Hz fixed "$S" sh -c "exec pidstat -t -p $P 1 $S >/dev/null" -- \
	sh -c "exec pidstat -t -p $P 1 $Q >/dev/null"
run_row top-1Hz fixed "$S" sh -c "exec top -H -b -d 1 -n $S -p $P >/dev/null" -- \
	sh -c "exec top -H -b -d 1 -n $Q -p $P >/dev/null"

end_threads=$(target_threads)
[ "$end_threads" = "$nthreads" ] || echo "# warning: the target went from $nthreads to $end_threads threads" >&2

# The table.  pidstat's steady cost is the reference for the ratio.
printf '%s\n' "${rows[@]}" | awk -v thr="$nthreads" '
	{ name[NR] = $1; nl[NR] = $2; cl[NR] = $3 + $4; wl[NR] = $5
	  ns[NR] = $6; cs[NR] = $7 + $8
	  d = nl[NR] - ns[NR]
	  st[NR] = d > 0 ? (cl[NR] - cs[NR]) / d : 0
	  if ($1 == "pidstat-1Hz") { ref = st[NR]; refall = cl[NR] / nl[NR] } }
	END {
	  printf "| run | samples | CPU s (user+sys) | all-in ms/sample | steady ms/sample | steady µs/thread-sample | steady vs pidstat | all-in vs pidstat |\n"
	  printf "|---|---:|---:|---:|---:|---:|---:|---:|\n"
	  for (i = 1; i <= NR; i++) {
	    all = cl[i] / nl[i]
	    printf "| %s | %d | %.3f | %.2f | %.2f | %.1f | %s | %s |\n", name[i], nl[i], cl[i],
	      all * 1000, st[i] * 1000, st[i] * 1e6 / thr,
	      (ref > 0 ? sprintf("%.2f×", st[i] / ref) : "-"),
	      (refall > 0 ? sprintf("%.2f×", all / refall) : "-")
	  }
	}'
echo
echo "Commands (PID = $P):"
for f in "$WORK"/*.cmd; do
	[ -e "$f" ] || continue
	echo "- \`$(sed "s|$TOP_DIR/||; s|$P|PID|g" "$f")\`"
done
