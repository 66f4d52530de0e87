#!/bin/sh
# Per-thread CPU% accuracy (issue 6): threads at known duty cycles
# (bench/workloads/duty.c: 25, 50, 75, 100%), whose ground truth is each
# thread's own CPU clock read by the workload itself; gpuprobe's per-thread
# CPU% (gpuprobe trace at 1 Hz: schedstat run time) and pidstat -t's, in
# the same run over the same window.  Also the observer's own CPU.
#   bench/idle-accuracy.sh            (SECONDS_RUN=20 by default)
set -eu
cd "$(dirname "$0")/.."
GPUPROBE=${GPUPROBE:-src/gpuprobe}
S=${SECONDS_RUN:-20}
TMP=$(mktemp -d)
trap 'kill $wp 2>/dev/null; rm -rf "$TMP"' EXIT
cc -O1 -pthread -o "$TMP/duty" bench/workloads/duty.c
# 3 busy-ish threads: 25+50+75 = 1.5 cores fits on 2 CPUs; then the
# default set with a 100% thread (2.5 cores on 2 CPUs: contention).
for set in "25 50 75" "25 50 75 100"; do
	mkfifo "$TMP/out"
	"$TMP/duty" $set 2> "$TMP/pid" > "$TMP/out" &
	wp=$!
	exec 5< "$TMP/out"
	sleep 2
	kill -USR1 $wp
	$GPUPROBE trace $wp -q --interval 1 --seconds "$S" --stacks none -o "$TMP/t.jsonl" > /dev/null &
	gpid=$!
	LC_ALL=C pidstat -t -p $wp 1 "$S" > "$TMP/pidstat.txt" &
	ppid=$!
	/usr/bin/time -f "%U %S" -o "$TMP/gtime" sh -c "wait $gpid" 2>/dev/null || true
	wait $gpid || true
	wait $ppid || true
	kill -USR1 $wp
	sleep 0.2
	kill -TERM $wp
	wait $wp 2>/dev/null || true
	cat <&5 > "$TMP/truth"
	exec 5<&-
	rm -f "$TMP/out"
	echo "## duty set: $set (${S} s, $(nproc) CPUs)"
	echo
	echo "| thread | duty | truth (own CPU clock) | gpuprobe | error | pidstat -t | error |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	awk '/^at/ {n++; t[n]=$2; next} /^end/ {next} { c[n, $1] = $3; d[$1] = $2; tids[$1] = 1 }
	     END { for (id in tids) printf "%s %s %.3f\n", id, d[id], (c[2, id] - c[1, id]) / (t[2] - t[1]) * 100 }' \
		"$TMP/truth" | sort -k2n > "$TMP/truth.tab"
	while read -r tid duty truth; do
		g=$(jq -s --argjson t "$tid" '[.[] | select(.type == "sample") | .threads[] | select(.tid == $t) | .cpu_pct // empty] | .[1:] | add / length' "$TMP/t.jsonl")
		p=$(awk -v t="$tid" '$1 == "Average:" && $4 == t { print $(NF-2) }' "$TMP/pidstat.txt")
		[ -n "$p" ] || p=$(awk -v t="$tid" '$1 == "Average:" && $5 == t { print $(NF-2) }' "$TMP/pidstat.txt")
		awk -v tid="$tid" -v d="$duty" -v tr="$truth" -v g="$g" -v p="${p:-nan}" \
			'BEGIN { printf "| %s | %s%% | %.1f%% | %.1f%% | %+.1f | %s%% | %+.1f |\n", tid, d, tr, g, g - tr, p, p - tr }'
	done < "$TMP/truth.tab"
	echo
done
