#!/bin/bash
# trace-memory.sh: gpuprobe's memory stays bounded on a long trace.
#
# A 1000-thread target (bench/workloads/threads) sampled 3600 times
# (--interval 0.05 --seconds 180), every sample written to a file in
# $TMPDIR.  gpuprobe's resident memory is read from /proc/PID/status once
# a second (VmRSS, VmHWM); its peak is also taken from wait4's ru_maxrss
# (/usr/bin/time -f %M), which sees the very end.  Pass: peak < LIMIT_MIB.
# The result file's size is reported, then the file is deleted.
#
# Environment:
#   INTERVAL   seconds between samples   (default 0.05)
#   DURATION   seconds of the trace      (default 180)
#   LIMIT_MIB  the bound                 (default 64)
#   THREADS, GPUPROBE as in lib.sh; KEEP=1 keeps the result file.
set -u
. "$(dirname "$0")/lib.sh"

INTERVAL=${INTERVAL:-0.05}
DURATION=${DURATION:-180}
LIMIT_MIB=${LIMIT_MIB:-64}
KEEP=${KEEP:-0}

[ -x "$GPUPROBE" ] || die "$GPUPROBE: not built (make)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/trace-memory.XXXXXX") || die "mktemp"
OUTFILE=$WORK/trace.jsonl
start_target
trap 'stop_target; [ "$KEEP" = 1 ] || rm -rf "$WORK"' EXIT
nthreads=$(target_threads)

echo "# trace-memory: target pid $TARGET_PID, $nthreads threads; --interval $INTERVAL --seconds $DURATION"
cmd=("$GPUPROBE" trace "$TARGET_PID" --interval "$INTERVAL" --seconds "$DURATION" -q -o "$OUTFILE")
echo "# ${cmd[*]}"

/usr/bin/time -f '%M %U %S %e' -o "$WORK/time" "${cmd[@]}" >"$WORK/summary" 2>&1 &
tpid=$!
# The gpuprobe process is /usr/bin/time's child.
gp=
for _ in $(seq 100); do
	gp=$(pgrep -P "$tpid" | head -n 1)
	[ -n "$gp" ] && break
	sleep 0.05
done
[ -n "$gp" ] || die "gpuprobe did not start"

# 1 Hz polling: t, VmRSS, VmHWM (KiB), result file size.
: >"$WORK/rss"
t0=$(date +%s)
while [ -r "/proc/$gp/status" ]; do
	rss=$(awk '/^VmRSS:/ {r=$2} /^VmHWM:/ {h=$2} END {if (r != "") print r, h}' "/proc/$gp/status" 2>/dev/null)
	[ -n "$rss" ] && echo "$(($(date +%s) - t0)) $rss $(stat -c %s "$OUTFILE" 2>/dev/null || echo 0)" >>"$WORK/rss"
	sleep 1
done
wait "$tpid"
rc=$?
[ "$rc" = 0 ] || { cat "$WORK/summary" >&2; die "gpuprobe exited $rc"; }

read -r maxrss user sys wall <"$WORK/time"
samples=$(sed -n 's/.*: \([0-9][0-9]*\) samples over.*/\1/p' "$WORK/summary" | head -n 1)
lines=$(wc -l <"$OUTFILE")
late=$(tail -n 1 "$OUTFILE" | sed -n 's/.*"late_ticks":\([0-9]*\).*/\1/p')
size=$(stat -c %s "$OUTFILE")
last_hwm=$(tail -n 1 "$WORK/rss" | awk '{print $3}')
poll_max=$(awk 'BEGIN {m = 0} $2 > m {m = $2} END {print m}' "$WORK/rss")

echo
echo "RSS over time (KiB; every 15 s of the 1 Hz polling):"
echo "| t s | VmRSS KiB | VmHWM KiB | file MiB |"
echo "|---:|---:|---:|---:|"
awk '$1 % 15 == 0 || $1 < 2 {printf "| %d | %d | %d | %.0f |\n", $1, $2, $3, $4 / 1048576}' "$WORK/rss"
echo
awk -v s="$samples" -v l="$late" -v th="$nthreads" -v m="$maxrss" -v pm="$poll_max" -v hw="$last_hwm" \
    -v sz="$size" -v u="$user" -v sy="$sys" -v w="$wall" -v lim="$LIMIT_MIB" -v lines="$lines" 'BEGIN {
	printf "| metric | value |\n|---|---:|\n"
	printf "| samples taken | %d (late ticks skipped: %s) |\n", s, l == "" ? "?" : l
	printf "| threads per sample | %d |\n", th
	printf "| peak RSS (ru_maxrss, at exit) | %.1f MiB |\n", m / 1024
	printf "| last VmHWM seen by 1 Hz polling | %.1f MiB |\n", hw / 1024
	printf "| max VmRSS seen by 1 Hz polling | %.1f MiB |\n", pm / 1024
	printf "| result file | %.1f MiB, %d lines (%.0f KiB a sample) |\n", sz / 1048576, lines, s ? sz / 1024 / s : 0
	printf "| CPU user+sys / wall | %.2f + %.2f s / %.1f s (%.1f ms a sample) |\n", u, sy, w, s ? (u + sy) * 1000 / s : 0
	printf "| verdict | %s (limit %d MiB) |\n", m / 1024 < lim ? "PASS" : "FAIL", lim
}'
[ "$KEEP" = 1 ] && echo "kept: $OUTFILE" || echo "(result file deleted)"
awk -v m="$maxrss" -v lim="$LIMIT_MIB" 'BEGIN { exit !(m / 1024 < lim) }'
