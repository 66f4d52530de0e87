#!/bin/bash
# scale.sh: issue 21's acceptance, measured.  Each part prints a Markdown
# table; run one part with PARTS="idle".
#
#   idle   10 000 idle threads (bench/workloads/threads) at 1 Hz for
#          SECONDS_IDLE s, kernel and user stacks off: samples taken and
#          late ticks (every sample taken: late_ticks 0), gpuprobe's steady
#          CPU per sample beside `pidstat -t`'s on the same process in the
#          same run (long run minus a SHORT-sample one, as trace-cost.sh),
#          and bytes on disk per thread-sample of -o FILE.jsonl and of
#          -o FILE.jsonl.zst.  GPUPROBE_BASE=path adds the same gpuprobe
#          rows for another build (before/after).
#   fast   1 000 idle threads at --interval 0.1 for SECONDS_FAST s: samples
#          taken, late ticks.
#   busy   10 000 threads, 1 000 computing and the rest waking every 10 ms
#          (bench/workloads/busy): gpuprobe's CPU per sample and per
#          thread-sample, samples taken, late ticks.
#   day    a 200-thread process (bench/workloads/busy 200 1 1000: one
#          thread computing, the rest waking once a second) traced for
#          DAY_SECONDS s (600) at --interval DAY_INTERVAL (0.05, the
#          shortest: 12 001 samples, past the series' 8192 points) with
#          -o .jsonl.zst: gpuprobe's RSS over time (polled each second)
#          and ru_maxrss, bytes a sample and a day at that rate; then a
#          day of samples (DAY_SAMPLES, 86 400) made of that run's
#          samples, 1 s apart, and `report` of it: wall time and RSS.
#
# The machine's CPU count and load average are printed: on a shared
# machine the wall-clock figures (late ticks) depend on them.
set -u
. "$(dirname "$0")/lib.sh"

PARTS=${PARTS:-idle fast busy day}
SECONDS_IDLE=${SECONDS_IDLE:-10}
SHORT=${SHORT:-3}
SECONDS_FAST=${SECONDS_FAST:-10}
SECONDS_BUSY=${SECONDS_BUSY:-10}
DAY_SAMPLES=${DAY_SAMPLES:-86400}
DAY_INTERVAL=${DAY_INTERVAL:-0.05}
DAY_SECONDS=${DAY_SECONDS:-600}
BUSY=${BUSY:-$BENCH_DIR/workloads/busy}
GPUPROBE_BASE=${GPUPROBE_BASE:-}

[ -x "$GPUPROBE" ] || die "$GPUPROBE: not built (make)"
# pidstat (idle) and /usr/bin/time, zstd (day) are checked by the parts
# that use them: the busy part runs where they are absent (the device host).
if [ ! -x "$BUSY" ] || [ "$BENCH_DIR/workloads/busy.c" -nt "$BUSY" ]; then
	${CC:-cc} -O2 -Wall -Wextra -pthread -o "$BUSY" "$BENCH_DIR/workloads/busy.c" \
		|| die "cannot build $BUSY"
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/scale.XXXXXX") || die "mktemp"
BUSY_PID=
stop_busy() { [ -n "$BUSY_PID" ] && kill "$BUSY_PID" 2>/dev/null; wait "$BUSY_PID" 2>/dev/null; BUSY_PID=; }
trap 'stop_target; stop_busy; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

echo "# scale: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# gpuprobe: $GPUPROBE ($("$GPUPROBE" --version 2>/dev/null | head -n 1)); uid $(id -u); ulimit -n $(ulimit -n)"

# The exit line's member $2 of result $1 (.jsonl or .jsonl.zst).
exit_field() {
	"$GPUPROBE" report --format jsonl "$1" 2>/dev/null \
		| sed -n "/\"type\":\"exit\"/s/.*\"$2\":\([0-9.]*\).*/\1/p" | tail -n 1
}

# start_busy N COMPUTING PERIOD_MS: sets BUSY_PID.
start_busy() {
	local fifo
	fifo=$(mktemp -u "$WORK/busy.XXXXXX")
	mkfifo "$fifo" || die "mkfifo"
	"$BUSY" "$@" >"$fifo" &
	read -r BUSY_PID <"$fifo"
	rm -f "$fifo"
	[ -n "$BUSY_PID" ] && [ -d "/proc/$BUSY_PID" ] || die "busy did not start"
	sleep 1
}

# gp_run NAME PID SECONDS INTERVAL OUT [ARGS]: one trace, measured; prints
# "samples late cpu_s wall_s bytes".
gp_run() {
	local name=$1 pid=$2 secs=$3 iv=$4 out=$5 bin=${GP_BIN:-$GPUPROBE}
	shift 5
	local m
	m=$(measure "$WORK/$name.log" "$bin" trace "$pid" -q --interval "$iv" --seconds "$secs" \
		--stacks none --no-kernel-stacks -o "$out" "$@")
	set -- $m
	local s l
	s=$(exit_field "$out" samples)
	l=$(exit_field "$out" late_ticks)
	echo "${s:-?} ${l:-?} $(awk -v u="$1" -v y="$2" 'BEGIN { printf "%.3f", u + y }') $3 $(stat -c %s "$out" 2>/dev/null || echo 0)"
}

part_idle() {
	command -v pidstat >/dev/null || die "pidstat not found (apt-get install sysstat)"
	THREADS=10000 start_target
	local n P=$TARGET_PID
	n=$(target_threads)
	echo
	echo "## idle: $n threads at 1 Hz for $SECONDS_IDLE s (stacks off)"
	echo
	echo "| run | samples (late ticks) | CPU s long / short | steady ms/sample | µs/thread-sample | vs pidstat | bytes/thread-sample |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	local pl ps
	pl=$(measure "$WORK/pidstat.long" sh -c "exec pidstat -t -p $P 1 $SECONDS_IDLE >/dev/null")
	ps=$(measure "$WORK/pidstat.short" sh -c "exec pidstat -t -p $P 1 $SHORT >/dev/null")
	local pst
	pst=$(awk -v a="$pl" -v b="$ps" -v nl="$SECONDS_IDLE" -v ns="$SHORT" 'BEGIN {
		split(a, x, " "); split(b, y, " "); printf "%.6f", (x[1] + x[2] - y[1] - y[2]) / (nl - ns) }')
	local rows=("$GPUPROBE")
	[ -n "$GPUPROBE_BASE" ] && rows+=("$GPUPROBE_BASE")
	for bin in "${rows[@]}"; do
		local tag=gpuprobe
		[ "$bin" = "$GPUPROBE_BASE" ] && tag="gpuprobe (base: $GPUPROBE_BASE)"
		for suffix in jsonl jsonl.zst; do
			[ "$bin" = "$GPUPROBE_BASE" ] && [ "$suffix" = jsonl.zst ] && continue
			local L S
			L=$(GP_BIN=$bin gp_run idle-long "$P" "$SECONDS_IDLE" 1 "$WORK/idle.$suffix")
			S=$(GP_BIN=$bin gp_run idle-short "$P" "$SHORT" 1 "$WORK/idle-short.$suffix")
			awk -v L="$L" -v S="$S" -v p="$pst" -v th="$n" -v name="$tag -o .$suffix" 'BEGIN {
				split(L, l, " "); split(S, s, " ")
				d = l[1] - s[1]; st = d > 0 ? (l[3] - s[3]) / d : 0
				printf "| %s | %s (%s) | %.3f / %.3f | %.2f | %.2f | %s | %.1f |\n", name, l[1], l[2],
				  l[3], s[3], st * 1000, st * 1e6 / th, (p > 0 ? sprintf("%.3f×", st / p) : "-"),
				  (l[1] > 0 ? l[5] / (l[1] * th) : 0) }'
		done
	done
	awk -v p="$pst" -v th="$n" 'BEGIN { printf "| pidstat -t 1 | - | - | %.2f | %.2f | 1× | - |\n", p * 1000, p * 1e6 / th }'
	stop_target
}

part_fast() {
	THREADS=1000 start_target
	local n
	n=$(target_threads)
	local R
	R=$(gp_run fast "$TARGET_PID" "$SECONDS_FAST" 0.1 "$WORK/fast.jsonl.zst")
	echo
	echo "## fast: $n threads at --interval 0.1 for $SECONDS_FAST s"
	echo
	echo "| samples | expected | late ticks | CPU s | wall s | bytes/thread-sample (.zst) |"
	echo "|---:|---:|---:|---:|---:|---:|"
	set -- $R
	awk -v s="$1" -v l="$2" -v c="$3" -v w="$4" -v b="$5" -v th="$n" -v secs="$SECONDS_FAST" 'BEGIN {
		printf "| %s | %d | %s | %.2f | %.1f | %.2f |\n", s, secs * 10 + 1, l, c, w, (s > 0 ? b / (s * th) : 0) }'
	stop_target
}

part_busy() {
	start_busy 10000 1000 10
	local n
	n=$(awk '/^Threads:/ {print $2}' "/proc/$BUSY_PID/status")
	local R
	R=$(gp_run busy "$BUSY_PID" "$SECONDS_BUSY" 1 "$WORK/busy.jsonl.zst")
	echo
	echo "## busy: $n threads (1 000 computing, the rest waking every 10 ms) at 1 Hz for $SECONDS_BUSY s"
	echo
	echo "| samples (late ticks) | CPU s | ms/sample (all-in) | µs/thread-sample | bytes/thread-sample (.zst) |"
	echo "|---:|---:|---:|---:|---:|"
	set -- $R
	awk -v s="$1" -v l="$2" -v c="$3" -v b="$5" -v th="$n" 'BEGIN {
		printf "| %s (%s) | %.2f | %.1f | %.2f | %.2f |\n", s, l, c, (s > 0 ? c * 1000 / s : 0),
		  (s > 0 ? c * 1e6 / (s * th) : 0), (s > 0 ? b / (s * th) : 0) }'
	stop_busy
}

part_day() {
	[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
	command -v zstd >/dev/null || die "zstd not found (apt-get install zstd)"
	start_busy 200 1 1000
	local n out=$WORK/run.jsonl.zst
	n=$(awk '/^Threads:/ {print $2}' "/proc/$BUSY_PID/status")
	/usr/bin/time -f '%M %U %S %e' -o "$WORK/day.time" "$GPUPROBE" trace "$BUSY_PID" -q \
		--interval "$DAY_INTERVAL" --seconds "$DAY_SECONDS" --stacks none -o "$out" >"$WORK/day.log" 2>&1 &
	local tpid=$! gp= _
	for _ in $(seq 100); do
		gp=$(pgrep -P "$tpid" | head -n 1)
		[ -n "$gp" ] && break
		sleep 0.05
	done
	# VmRSS every second, with the samples written so far (lines of the file).
	: >"$WORK/rss"
	local t=0 r
	while [ -n "$gp" ] && [ -r "/proc/$gp/status" ]; do
		r=$(awk '/^VmRSS:/ {print $2}' "/proc/$gp/status" 2>/dev/null)
		[ -n "$r" ] && echo "$t $r" >>"$WORK/rss"
		sleep 1
		t=$((t + 1))
	done
	wait "$tpid" || { cat "$WORK/day.log" >&2; die "the day run failed"; }
	stop_busy
	local maxrss s l size
	read -r maxrss _ _ _ <"$WORK/day.time"
	s=$(exit_field "$out" samples)
	l=$(exit_field "$out" late_ticks)
	size=$(stat -c %s "$out")
	# A day of samples from the real ones: the run's samples again and
	# again (the first, whole, once), 1 s apart, recompressed by zstd -9
	# (gpuprobe's level; it also flushes each line, so the real file is
	# what the size row projects from).
	"$GPUPROBE" report --format jsonl "$out" | grep -v '^{"type":"sample"' \
		| grep -v '^{"type":"\(exit\|verdict\)"' >"$WORK/day.head"
	zstd -dc "$out" 2>/dev/null | grep '^{"type":"sample"' >"$WORK/run.samples"
	awk -v want="$DAY_SAMPLES" '
		{ line[NR] = $0 }
		END {
			for (i = 0; i < want; i++) {
				k = i < NR ? i + 1 : 2 + (i - 1) % (NR - 1)
				l = line[k]
				sub(/"t":[0-9.e+-]*/, "\"t\":" i ".0", l)
				print l
			}
		}' "$WORK/run.samples" | cat "$WORK/day.head" - | zstd -9 -q -o "$WORK/day.jsonl.zst" -f
	local dsize
	dsize=$(stat -c %s "$WORK/day.jsonl.zst")
	rm -f "$WORK/run.samples"
	/usr/bin/time -f '%e %M' -o "$WORK/report.time" "$GPUPROBE" report "$WORK/day.jsonl.zst" >"$WORK/report.md" 2>&1
	local rc=$? rwall rrss
	read -r rwall rrss <"$WORK/report.time"
	echo
	echo "## day: $n threads (one computing, the rest waking once a second)"
	echo
	echo "A real run of $s samples at --interval $DAY_INTERVAL (late ticks: $l), then $DAY_SAMPLES samples (a day at 1 Hz) made of its samples again."
	echo
	echo "RSS of the real run over time (VmRSS, polled each second):"
	echo
	echo "| s | VmRSS MiB |"
	echo "|---:|---:|"
	awk 'NR % 60 == 1 { printf "| %d | %.1f |\n", $1, $2 / 1024 } END { printf "| %d | %.1f |\n", $1, $2 / 1024 }' "$WORK/rss"
	echo
	echo "| metric | value | bound |"
	echo "|---|---:|---:|"
	awk -v s="$s" -v sz="$size" -v m="$maxrss" -v rw="$rwall" -v ds="$dsize" -v want="$DAY_SAMPLES" \
	    -v rr="$rrss" -v rc="$rc" -v th="$n" 'BEGIN {
		printf "| real run: -o .jsonl.zst | %.1f MB, %.1f bytes/sample, %.2f bytes/thread-sample | - |\n", sz / 1e6, (s > 0 ? sz / s : 0), (s > 0 ? sz / (s * th) : 0)
		printf "| a day at that rate (86 400 samples) | %.1f MB | 200 MB |\n", (s > 0 ? sz / s * 86400 / 1e6 : 0)
		printf "| real run: gpuprobe peak RSS (ru_maxrss) | %.1f MiB | 64 MiB |\n", m / 1024
		printf "| the day file (zstd -9 of the same lines) | %.1f MB | 200 MB |\n", ds / 1e6
		printf "| report of the day file: wall | %.1f s (exit %d) | 60 s |\n", rw, rc
		printf "| report of the day file: peak RSS | %.1f MiB | - |\n", rr / 1024
	}'
	sed -n 's/^\*\*Verdict: \(.*\)/verdict: \1/p' "$WORK/report.md" | cut -c1-200
	grep -m1 'samples over' "$WORK/report.md" | cut -c1-200
}

for p in $PARTS; do
	"part_$p"
done
