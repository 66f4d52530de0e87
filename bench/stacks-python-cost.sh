#!/bin/sh
# gpuprobe stacks of a CPython process against eu-stack -p (and gdb's
# py-bt where present), with and without the interpreter's debug info.
# Target: tests/real/py4threads.py (5 threads: a lock wait, time.sleep,
# a computing thread, a pipe read, main in join).
# "Without debug info": a copy of the interpreter with --strip-all and
# without .note.gnu.build-id / .gnu_debuglink, so that neither tool can
# find /usr/lib/debug for it (libc's debug info stays, for both).
# Usage: bench/stacks-python-cost.sh [ROUNDS] [PYTHON]   (after make)
# EU_STACK=path (default: eu-stack on PATH); rows of a missing tool are left out;
# NO_GDB=1 leaves gdb's py-bt out (50 s a round on a loaded 2-CPU machine).
set -u
top=$(cd "${0%/*}/.." && pwd)
GP=${GPUPROBE:-$top/src/gpuprobe}
EU=${EU_STACK:-eu-stack}
R=${1:-10}
PY=${2:-/usr/bin/python3}
tmp=$(mktemp -d); T=
trap '[ -n "$T" ] && kill $T 2>/dev/null; rm -rf "$tmp"' EXIT

# Tools run interleaved (round i runs each once), so that the load of a
# shared machine weighs on each alike; median and mean per tool.
TOOLS=
tool() {  # tool NAME CMD...: registers a tool
	[ -n "$TOOLS" ] && TOOLS="$TOOLS
"
	TOOLS="$TOOLS$*"
}
runall() {  # runall ROUNDS: one table row per registered tool
	rounds=$1
	n=$(echo "$TOOLS" | wc -l)
	: > "$tmp/times"
	i=0; while [ $i -lt "$rounds" ]; do
		k=1; while [ $k -le "$n" ]; do
			line=$(echo "$TOOLS" | sed -n "${k}p")
			name=${line%%|*}; cmd=${line#*|}
			a=$(date +%s%N); sh -c "$cmd" > /dev/null 2>&1; rc=$?; b=$(date +%s%N)
			echo "$k $rc $(( (b - a) / 1000 ))" >> "$tmp/times"
			k=$((k + 1))
		done
		i=$((i + 1))
	done
	k=1; while [ $k -le "$n" ]; do
		line=$(echo "$TOOLS" | sed -n "${k}p")
		awk -v k=$k '$1 == k { print $3 / 1000, $2 }' "$tmp/times" | sort -n |
			awk -v name="${line%%|*}" '{ v[NR] = $1; s += $1; if ($2 != 0) bad++ }
			END { printf "| %s | %.1f | %.1f | %.1f | %.1f |%s\n", name, v[int((NR + 1) / 2)], s / NR, v[1], v[NR],
				bad ? " (" bad " runs failed)" : "" }'
		k=$((k + 1))
	done
}
target() {  # target PYTHON: starts py4threads.py, sets T
	"$1" "$top/tests/real/py4threads.py" > "$tmp/out" 2>&1 &
	T=$!
	n=0; until grep -q '^ready' "$tmp/out"; do sleep 0.05; n=$((n + 1)); [ $n -gt 400 ] && { cat "$tmp/out"; exit 1; }; done
}
one() {  # one LABEL PYTHON
	target "$2"
	echo "### $1: $("$2" -c 'import sys; print(sys.version.split()[0])') ($2), pid $T, $(ls /proc/$T/task | wc -l) threads"
	echo
	echo "| tool | wall ms median | mean | min | max |"
	echo "|---|---:|---:|---:|---:|"
	TOOLS=
	tool "gpuprobe stacks --hot-window 0|$GP stacks -q --hot-window 0 --format json $T"
	tool "gpuprobe stacks (default)|$GP stacks -q --format json $T"
	tool "gpuprobe stacks --no-python|$GP stacks -q --no-python --format json $T"
	command -v "$EU" > /dev/null 2>&1 && tool "eu-stack -p|$EU -p $T"
	runall "$R"
	TOOLS=
	tool "gpuprobe stacks --all-lines|$GP stacks -q --all-lines --format json $T"
	[ -z "${NO_GDB:-}" ] && command -v gdb > /dev/null 2>&1 &&
		tool "gdb -batch thread apply all py-bt|gdb -q -batch -ex 'thread apply all py-bt' -p $T"
	runall $(( R < 3 ? R : 3 ))
	echo
	"$GP" stacks -q --format json $T > "$tmp/s.json"
	if command -v jq > /dev/null; then
		echo "one snapshot: $(jq -c '.cost' "$tmp/s.json"); python: $(jq -c '.python' "$tmp/s.json")"
		echo "modules: $(jq -c '[.modules[] | "\(.soname)=\(.debug)"]' "$tmp/s.json")"
	fi
	echo
	echo "kept session, $((R * 10)) snapshots (what trace does), twice each, alternating:"
	for k in 1 2; do
		echo "    with Python frames: $("$GP" stacks -q --hot-window 0 --repeat $((R * 10)) $T 2>&1 > /dev/null)"
		echo "    --no-python:        $("$GP" stacks -q --hot-window 0 --no-python --repeat $((R * 10)) $T 2>&1 > /dev/null)"
	done
	echo
	kill $T; wait $T 2>/dev/null; T=
}
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $R rounds each"
echo
real=$(readlink -f "$PY")
bid=$(readelf -n "$real" 2>/dev/null | awk '/Build ID/ { print $3 }')
if [ -n "$bid" ] && [ -e "/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug" ]; then
	one "with debug info" "$PY"
else
	one "as installed (no separate debug info found)" "$PY"
fi
if command -v objcopy > /dev/null 2>&1; then
	cp "$real" "$tmp/python3-nodebug"
	objcopy --strip-all --remove-section=.note.gnu.build-id --remove-section=.gnu_debuglink \
		"$tmp/python3-nodebug" 2> /dev/null
	one "without debug info (stripped copy, no build-id)" "$tmp/python3-nodebug"
fi
