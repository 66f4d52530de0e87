#!/bin/sh
# gpuprobe stacks vs eu-stack -p vs gdb 'thread apply all bt', on a
# 40-thread target with spinners that record their own stop gaps.
# Usage: bench/stacks-cost.sh [ROUNDS] [NTHREADS] [NSPIN]   (after make)
set -u
top=$(cd "${0%/*}/.." && pwd)
GP=${GPUPROBE:-$top/src/gpuprobe}
R=${1:-10}; N=${2:-40}; S=${3:-4}
out=$(mktemp); trap 'kill $T 2>/dev/null; rm -f "$out"' EXIT
"$top/bench/workloads/gapspin" "$N" "$S" > "$out" &
T=$!
until grep -q ready "$out"; do sleep 0.05; done
gaps() {  # prints "max_us mean_us gaps" over all spinners since the last call
	: > "$out.tmp"; n0=$(grep -c '^end' "$out")
	kill -USR1 $T
	while [ "$(grep -c '^end' "$out")" -le "$n0" ]; do sleep 0.02; done
	awk -v n0="$n0" '/^end/ { e++; next } e == n0 && /^spinner/ { if ($6 > m) m = $6; s += $4 * $8; c += $4 }
		END { printf "%.0f %.1f %d", m, c ? s / c : 0, c }' "$out"
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
run() {  # run NAME CMD...: R rounds; wall per snapshot and the gaps it caused
	name=$1; shift
	gaps > /dev/null
	tot=0; min=999999; max=0
	i=0; while [ $i -lt "$R" ]; do
		a=$(date +%s%N); "$@" > /dev/null 2>&1; b=$(date +%s%N)
		t=$(ms "$a" "$b"); tot=$(awk -v x="$tot" -v y="$t" 'BEGIN { print x + y }')
		min=$(awk -v x="$min" -v y="$t" 'BEGIN { print (y < x) ? y : x }')
		max=$(awk -v x="$max" -v y="$t" 'BEGIN { print (y > x) ? y : x }')
		i=$((i + 1))
	done
	set -- $(gaps)
	printf '| %s | %.1f | %s | %s | %s | %s | %s |\n' "$name" \
		"$(awk -v x="$tot" -v r="$R" 'BEGIN { print x / r }')" "$min" "$max" "$1" "$2" "$3"
}
echo "target: gapspin $N threads, $S spinners (pid $T); $R rounds each; $(nproc) CPUs; $(uname -r)"
echo
echo "| tool | wall ms mean | min | max | spinner max gap us | mean gap us | gaps > 20 us |"
echo "|---|---:|---:|---:|---:|---:|---:|"
run "baseline: sleep 0.1 (no tool)" sleep 0.1
run "gpuprobe stacks --hot-window 0" "$GP" stacks -q --hot-window 0 --format json $T
run "gpuprobe stacks (default CPU window)" "$GP" stacks -q --format json $T
run "eu-stack -p" eu-stack -p $T
command -v gdb > /dev/null && run "gdb -batch thread apply all bt" gdb -q -batch -ex 'thread apply all bt' -p $T
echo
gaps > /dev/null
rep=$("$GP" stacks -q --hot-window 0 --repeat "$((R * 10))" $T 2>&1 > /dev/null)
set -- $(gaps)
echo "kept session (gpuprobe stacks --repeat $((R * 10))): $rep"
echo "  spinners during it: max gap $1 us, mean gap $2 us, $3 gaps > 20 us"
