#!/bin/bash
# sockflow-cost.sh: what the BPF path (src/tracer/bpf/sockflow.bpf.c)
# costs the machine and gpuprobe, side by side in one run.
#
# 1. Every process's system calls: the program runs at every sys_exit of
#    the host while a trace is loaded.  A syscall loop (dd bs=1: one
#    read and one write a byte, COUNT of each) is timed with no gpuprobe,
#    with a trace of another (sleeping) process (the program filters it
#    out by number and by the watched map), and traced itself (its reads
#    and writes are looked up in its fd table: /dev/zero is no socket).
#    ns per call = wall time / (2 * COUNT); best of RUNS.
# 2. gpuprobe's own CPU on a server answering short connections (5 a
#    second, tests/e2e/sock-short.py), 10 s at 1 Hz: the exit record's
#    sampler.cpu_s with BPF and with GPUPROBE_BPF=off.
#
# Environment: COUNT (default 2000000), RUNS (3), GPUPROBE (src/gpuprobe).
set -u
. "$(dirname "$0")/lib.sh"
COUNT=${COUNT:-2000000}
RUNS=${RUNS:-3}
[ -x "$GPUPROBE" ] || die "$GPUPROBE: not built (make)"
[ "$(id -u)" = 0 ] || die "run as root: the BPF path needs it"
"$GPUPROBE" info | grep -q '^BPF *socket bytes' || die "BPF not usable: $("$GPUPROBE" info | grep '^BPF')"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sockflow-cost.XXXXXX") || die "mktemp"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT

echo "# sockflow-cost: $(nproc) CPUs, $(uname -r), $(date -u +%FT%TZ); COUNT=$COUNT RUNS=$RUNS"
best() { # best wall seconds of RUNS runs of "$@"
	local b=999999 t0 t1 d
	for _ in $(seq "$RUNS"); do
		t0=$(date +%s.%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s.%N)
		d=$(echo "$t1 - $t0" | bc -l)
		b=$(echo "if ($d < $b) $d else $b" | bc -l)
	done
	echo "$b"
}
loop() { dd if=/dev/zero of=/dev/null bs=1 count="$COUNT" status=none; }
ns() { echo "scale=1; $1 * 1000000000 / (2 * $COUNT)" | bc -l; }

base=$(best loop)
sleep 1000 &
other=$!
"$GPUPROBE" trace -q --seconds 600 -o "$WORK/o.jsonl" "$other" >/dev/null 2>&1 &
gpo=$!
sleep 2
loaded=$(best loop)
kill -INT $gpo; wait $gpo 2>/dev/null
self=$(best "$GPUPROBE" trace -q --seconds 600 -o "$WORK/s.jsonl" -- dd if=/dev/zero of=/dev/null bs=1 count="$COUNT" status=none)
selfoff=$(best env GPUPROBE_BPF=off "$GPUPROBE" trace -q --seconds 600 -o "$WORK/s2.jsonl" -- dd if=/dev/zero of=/dev/null bs=1 count="$COUNT" status=none)
printf '%-44s %10s %10s\n' "syscall loop (dd bs=1)" "wall s" "ns/call"
printf '%-44s %10.3f %10s\n' "no gpuprobe" "$base" "$(ns "$base")"
printf '%-44s %10.3f %10s\n' "gpuprobe tracing another process (BPF)" "$loaded" "$(ns "$loaded")"
printf '%-44s %10.3f %10s\n' "traced itself, BPF" "$self" "$(ns "$self")"
printf '%-44s %10.3f %10s\n' "traced itself, GPUPROBE_BPF=off" "$selfoff" "$(ns "$selfoff")"

py=${PYTHON:-python3}
"$py" "$(dirname "$0")/../tests/e2e/sock-short.py" serve > "$WORK/port" &
srv=$!
sleep 1
port=$(cat "$WORK/port")
"$py" "$(dirname "$0")/../tests/e2e/sock-short.py" client "$port" 1000 >/dev/null &
cli=$!
sleep 0.5
printf '\n%-44s %10s %10s %10s\n' "server, 5 short connections/s, 10 s at 1 Hz" "cpu_s" "tx" "class"
for mode in bpf off; do
	e=GPUPROBE_BPF=on
	[ "$mode" = off ] && e=GPUPROBE_BPF=off
	env "$e" "$GPUPROBE" trace -q --seconds 10 \
		-o "$WORK/$mode.jsonl" "$srv" >/dev/null 2>&1
	cpu=$(jq -r 'select(.type=="exit") | .sampler.cpu_s' "$WORK/$mode.jsonl")
	tx=$(jq -s '[.[] | select(.type=="sample") | .proc.sock.tx // 0] | max' "$WORK/$mode.jsonl")
	cls=$(jq -r 'select(.type=="verdict") | .class' "$WORK/$mode.jsonl")
	printf '%-44s %10.3f %10s %10s\n' "$mode" "$cpu" "$tx" "$cls"
done
kill $cli $srv 2>/dev/null
