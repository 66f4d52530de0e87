#!/bin/bash
# watch-churn.sh: gpuprobe watch stays flat while the processes it
# follows come and go (issue 22: "watch --gpu-style following of 20
# short-lived processes a minute for an hour: RSS and fd count flat, CPU
# recorded").
#
# No GPU here, so the followed processes are picked by name, as --gpu
# picks them by their GPU files: every 3 s (20 a minute) one process named
# gpchurn starts (a copy of sleep(1), living 2-9 s); every 4th is a copy
# of python3 in an ABBA deadlock (tests/real/py-abba.py), killed after
# 12 s, so the hang path runs too: verdict, one bundle (rate-limited by
# --bundle-every 60, capped by --bundle-max 5M: the cap is reached and
# kept), the metrics file every tick.  Every SAMPLE seconds the watch's
# VmRSS, open fds, CPU seconds, the processes it follows and the bundles
# it wrote are appended to a CSV.  At the end a Markdown table of the
# first, middle and last rows, with the RSS and fd growth over the run.
#
# Usage: bench/watch-churn.sh [--minutes N] [--out FILE.md]
#   --minutes  how long (default 60)
#   --out      the Markdown result (default: standard output)
# Environment: GPUPROBE (default src/gpuprobe), SAMPLE (default 30).
set -u
. "$(dirname "$0")/lib.sh"

MINUTES=60
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) MINUTES=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) die "usage: watch-churn.sh [--minutes N] [--out FILE.md]" ;;
	esac
done
SAMPLE=${SAMPLE:-30}
[ -x "$GPUPROBE" ] || die "$GPUPROBE: not built (make)"
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || die "no $PY"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/watch-churn.XXXXXX") || die "mktemp"
cp /bin/sleep "$WORK/gpchurn"
cp "$PY" "$WORK/gpchurn-py" # its own name: the ABBA ones are followed by --name too
CSV=$WORK/samples.csv
KIDS=()
cleanup() {
	[ -n "${WATCH:-}" ] && kill -TERM "$WATCH" 2>/dev/null && wait "$WATCH" 2>/dev/null
	for k in "${KIDS[@]}"; do kill -KILL "$k" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
# The killed ABBA processes are the point, not news: no "Killed" lines.
set +m
trap 'exit 130' INT TERM

# gpchurn-py's comm is "gpchurn-py" (the file's name): two --name runs
# are one watch with one name, so the python copies are named gpchurn too
# through a directory of their own.
mkdir "$WORK/py" && cp "$PY" "$WORK/py/gpchurn" && rm "$WORK/gpchurn-py"
"$GPUPROBE" watch --name gpchurn --hang-after 5 --bundle-dir "$WORK/bundles" \
	--bundle-every 60 --bundle-max 5M --metrics "$WORK/m.prom" -q > "$WORK/watch.log" 2>&1 &
WATCH=$!
sleep 1
kill -0 "$WATCH" 2>/dev/null || die "watch did not start: $(cat "$WORK/watch.log")"

clk=$(getconf CLK_TCK)
echo "t_s,rss_kib,fds,cpu_s,followed,bundles,bundle_bytes" > "$CSV"
sample() {
	local rss fds cpu fol nb bb
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$WATCH/status")
	fds=$(ls "/proc/$WATCH/fd" | wc -l)
	cpu=$(awk -v c="$clk" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / c }' "/proc/$WATCH/stat")
	fol=$(awk '/^gpuprobe_watch_processes / { print $2 }' "$WORK/m.prom" 2>/dev/null)
	nb=$(ls "$WORK/bundles" 2>/dev/null | grep -c '\.tar\.gz$')
	bb=$(du -sb "$WORK/bundles" 2>/dev/null | cut -f1)
	echo "$1,$rss,$fds,$cpu,${fol:-0},$nb,${bb:-0}" >> "$CSV"
}

start=$(date +%s)
end=$((start + MINUTES * 60))
n=0
next_sample=$start
while [ "$(date +%s)" -lt "$end" ]; do
	now=$(date +%s)
	if [ "$now" -ge "$next_sample" ]; then
		sample $((now - start))
		next_sample=$((next_sample + SAMPLE))
	fi
	n=$((n + 1))
	if [ $((n % 4)) -eq 0 ]; then
		"$WORK/py/gpchurn" "$TOP_DIR/tests/real/py-abba.py" > /dev/null 2>&1 &
		p=$!
		( sleep 12; kill -KILL $p 2>/dev/null ) &
	else
		"$WORK/gpchurn" $((2 + RANDOM % 8)) &
		p=$!
	fi
	KIDS+=($p)   # the process itself: cleanup kills a deadlocked one still there
	[ ${#KIDS[@]} -gt 64 ] && KIDS=("${KIDS[@]:32}")
	sleep 3
	kill -0 "$WATCH" 2>/dev/null || die "watch died: $(tail -3 "$WORK/watch.log")"
done
sample $(( $(date +%s) - start ))
kill -TERM "$WATCH"
wait "$WATCH"
rc=$?
WATCH=

{
	echo "watch-churn: $MINUTES min, $n processes started (every 3 s; every 4th an ABBA python3 killed after 12 s)"
	echo "watch exit status after SIGTERM: $rc; metrics file left: $([ -e "$WORK/m.prom" ] && echo yes || echo no)"
	echo
	echo "| t (s) | RSS (KiB) | fds | CPU (s) | followed | bundles | bundle bytes |"
	echo "|---|---|---|---|---|---|---|"
	tail -n +2 "$CSV" | awk -F, '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }'
	echo
	tail -n +2 "$CSV" | awk -F, -v min="$MINUTES" '
		NR == 1 { r0 = $2; f0 = $3 } NR == 3 { r2 = $2; f2 = $3 }
		{ if ($2 > rmax) rmax = $2; if ($3 > fmax) fmax = $3; rl = $2; fl = $3; c = $4; t = $1 }
		END { printf "RSS first %d KiB, after 1 min %d KiB, last %d KiB, peak %d KiB; fds first %d, after 1 min %d, last %d, peak %d; CPU %.1f s in %d s (%.2f %% of a core)\n",
			r0, r2, rl, rmax, f0, f2, fl, fmax, c, t, t ? 100 * c / t : 0 }'
	echo
	echo "watch log (last lines):"
	echo '```'
	tail -n 5 "$WORK/watch.log"
	echo '```'
} > "${OUT:-/dev/stdout}"
