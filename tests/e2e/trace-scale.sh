#!/bin/sh
# Issue 21, the seconds-long version of bench/scale.sh: 2 000 idle threads
# at 1 Hz with -o .jsonl.zst.  After the first sample every thread that did
# not run is a reference to its last record, so a sample line costs well
# under 60 bytes a thread; the .zst reads back (zstd and report), every
# sample holds every thread once resolved, and every tick is a sample or
# a counted late tick (all samples when the machine is not overloaded).
. "${0%/*}/lib.sh"
require_jq
require_workload sleepers
command -v zstd >/dev/null || skip "zstd not installed"
"$WORKLOADS/sleepers" 2000 &
T=$!
bg_track $T
full() { [ "$(awk '/^Threads:/ {print $2}' /proc/$T/status)" = 2001 ]; }
wait_until 20 full || framework_failure "sleepers did not start 2000 threads"
F=$TMP/t.jsonl.zst
GP_TIMEOUT=40 gp trace -q --interval 1 --seconds 3 --stacks none -o "$F" "$T" > /dev/null 2> "$TMP/err"
rc=$?
ok "exit 0 (got $rc)" [ $rc -eq 0 ]
ok "zstd reads the file" sh -c "zstd -dc '$F' > '$TMP/raw.jsonl'"
ok "report --format jsonl reads it" sh -c "'$GPUPROBE' report --format jsonl '$F' > '$TMP/full.jsonl'"
counts=$(jq -r 'select(.type=="sample") | .threads | length' "$TMP/full.jsonl" | sort -u | tr '\n' ' ')
ok "every sample holds all 2001 threads, resolved (counts: $counts)" [ "$counts" = "2001 " ]
# Bytes a thread in each sample line after the first, as written.
per=$(grep '^{"type":"sample"' "$TMP/raw.jsonl" | tail -n +2 | awk '{ b = length($0) / 2001; if (b > m) m = b } END { printf "%.1f", m }')
say "sample lines after the first: at most $per bytes a thread"
ok "at most 60 bytes a thread-sample after the first ($per)" awk -v b="$per" 'BEGIN { exit !(b > 0 && b <= 60) }'
n=$(count sample "$TMP/full.jsonl")
late=$(jq -r 'select(.type == "exit") | .late_ticks' "$TMP/full.jsonl")
ok "every tick a sample or a late tick ($n + $late = 4)" [ $((n + late)) -eq 4 ]
bytes=$(stat -c %s "$F")
ok "the .zst is at most 60 bytes a thread-sample ($bytes bytes, $n samples)" \
	awk -v b="$bytes" -v n="$n" 'BEGIN { exit !(n > 0 && b / (n * 2001) <= 60) }'
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v c="$(nproc)" 'BEGIN { exit !(l < c) }'; then
	ok "every sample taken (load $load < $(nproc) CPUs)" [ "$late" = 0 ]
else
	say "load $load on $(nproc) CPUs: late ticks ($late) not judged"
fi
# The references make report read the same verdict as from whole threads.
gp report --format json "$F" | jq -r '.. | .class? // empty' | head -n 1 > "$TMP/v1"
gp report --format json "$TMP/full.jsonl" | jq -r '.. | .class? // empty' | head -n 1 > "$TMP/v2"
ok "the same verdict from references and from whole threads ($(cat "$TMP/v1"))" \
	sh -c "[ -s '$TMP/v1' ] && cmp -s '$TMP/v1' '$TMP/v2'"
pass
