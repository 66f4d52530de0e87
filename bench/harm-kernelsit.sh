#!/bin/sh
# Issue 18's reproducer, before and after: a thread that computes 50 ms,
# then sits ~0.3 s in one kernel call (tests/workloads/kernelsit: mmap
# MAP_POPULATE sized to take 0.25 s or more), traced for SECONDS (default
# 60) with --stacks hot and all, as -- CMD and by PID, at --interval 0.5
# and 4, by each gpuprobe binary given.  A watcher polls every thread's
# /proc stat every millisecond (tests/workloads/stopwatch).  One Markdown
# row per run: how the trace ended, the command's status, whether it
# printed its last line, the longest stop seen, and the stacks taken.
#
#   bench/harm-kernelsit.sh [-s SECONDS] GPUPROBE...
# Needs a built tree (make check builds tests/workloads).
set -u
S=60
[ "${1:-}" = -s ] && { S=$2; shift 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
W=$top/tests/workloads
[ -x "$W/kernelsit" ] && [ -x "$W/stopwatch" ] || { echo "build tests/workloads first (make check)" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "| binary | target | stacks | interval | trace ended | command status | last line | longest stop | stacks ok / timeout |"
echo "|---|---|---|---|---|---|---|---|---|"
for G in "$@"; do
	for mode in cmd pid; do
		for st in hot all; do
			for iv in 0.5 4; do
				out=$T/o.jsonl
				rm -f "$out" "$T/cmd.out"
				if [ $mode = cmd ]; then
					timeout -k 2 $((S + 60)) "$G" trace -q --stacks $st --interval $iv -o "$out" \
						-- "$W/kernelsit" "$S" 7 > "$T/cmd.out" 2> /dev/null &
					gp=$!
					i=0
					while ! grep -qs '"type":"target"' "$out" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
					tp=$(jq -r 'select(.type=="target") | .pid' "$out" | head -n 1)
					"$W/stopwatch" "$tp" $((S + 10)) 1 > "$T/watch" &
					wp=$!
					wait $gp
					wait $wp
					status=$(jq -r 'select(.type=="exit") | .status' "$out")
				else
					"$W/kernelsit" $((S + 2)) 7 > "$T/cmd.out" 2>&1 &
					tp=$!
					"$W/stopwatch" "$tp" $((S + 12)) 1 > "$T/watch" &
					wp=$!
					timeout -k 2 $((S + 60)) "$G" trace -q --stacks $st --interval $iv --seconds "$S" \
						-o "$out" "$tp" > /dev/null 2>&1
					wait $tp
					status=$?
					wait $wp
				fi
				ended=$(jq -r 'select(.type=="exit") | "\(.reason) at +\(.t | . * 10 | round / 10) s"' "$out")
				last=$(grep -q 'kernelsit: done' "$T/cmd.out" && echo yes || echo "**no**")
				ms=$(sed -n 's/.*max_stopped_ms=\([0-9.]*\).*/\1/p' "$T/watch")
				okn=$(jq -s '[.[] | select(.type=="stacks") | .threads[] | select(.unwind=="ok")] | length' "$out")
				ton=$(jq -s '[.[] | select(.type=="stacks") | .threads[] | select(.unwind=="timeout")] | length' "$out")
				echo "| $(basename "$(dirname "$(dirname "$G")")") | $mode | $st | $iv | $ended | $status | $last | $ms ms | $okn / $ton |"
			done
		done
	done
done
