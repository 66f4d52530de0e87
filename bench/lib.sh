# Shared helpers for the bench/ scripts (sourced, not run).

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP_DIR=$(cd "$BENCH_DIR/.." && pwd)
GPUPROBE=${GPUPROBE:-$TOP_DIR/src/gpuprobe}
THREADS=${THREADS:-1000}
WORKLOAD=${WORKLOAD:-$BENCH_DIR/workloads/threads}

die() { echo "${0##*/}: $*" >&2; exit 1; }

# Builds the workload when missing or older than its source.
build_workload() {
	local src=$BENCH_DIR/workloads/threads.c
	if [ ! -x "$WORKLOAD" ] || [ "$src" -nt "$WORKLOAD" ]; then
		${CC:-cc} -O2 -Wall -Wextra -pthread -o "$WORKLOAD" "$src" \
			|| die "cannot build $WORKLOAD"
	fi
}

TARGET_PID=
# Starts the N-thread target; sets TARGET_PID once every thread sleeps.
start_target() {
	build_workload
	local fifo
	fifo=$(mktemp -u "${TMPDIR:-/tmp}/bench-target.XXXXXX")
	mkfifo "$fifo" || die "mkfifo $fifo"
	"$WORKLOAD" "$THREADS" >"$fifo" &
	read -r TARGET_PID <"$fifo"
	rm -f "$fifo"
	[ -n "$TARGET_PID" ] && [ -d "/proc/$TARGET_PID" ] || die "the target did not start"
	trap stop_target EXIT
	trap 'exit 130' INT TERM
}

stop_target() {
	if [ -n "$TARGET_PID" ]; then
		kill "$TARGET_PID" 2>/dev/null
		wait "$TARGET_PID" 2>/dev/null
		TARGET_PID=
	fi
}

target_threads() {
	awk '/^Threads:/ {print $2}' "/proc/$TARGET_PID/status"
}

# "0m1.234s" -> 1.234
secs_of() {
	awk -v t="$1" 'BEGIN { split(t, a, /[ms]/); printf "%.6f", a[1] * 60 + a[2] }'
}

# measure OUTFILE CMD...: runs CMD (stdout+stderr to OUTFILE) and prints
# "user sys wall" in seconds: the CPU of CMD and its children, from the
# shell's `times` (getrusage(RUSAGE_CHILDREN), microsecond resolution,
# printed to the millisecond) in a subshell that runs only CMD.
measure() {
	local out=$1
	shift
	local t0 t1 tl
	t0=$(date +%s.%N)
	tl=$( "$@" >"$out" 2>&1; times )
	t1=$(date +%s.%N)
	tl=$(printf '%s\n' "$tl" | tail -n 1)
	printf '%s %s %s\n' "$(secs_of "${tl%% *}")" "$(secs_of "${tl##* }")" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
}
