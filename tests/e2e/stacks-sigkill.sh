#!/bin/sh
# gpuprobe SIGKILLed at 30 random moments while it takes snapshots: after
# each, no thread of the target is left stopped (state t or T).  With
# PTRACE_ATTACH instead of SEIZE this fails within a few rounds.
: "${E2E_TIMEOUT:=120}"
. "${0%/*}/lib.sh"
. "${0%/*}/stacks-lib.sh"
start_stackload 30 2
rounds=${ROUNDS:-30}
i=0
while [ $i -lt $rounds ]; do
	i=$((i + 1))
	# --repeat keeps it snapshotting (stopping threads) until killed.
	"$GPUPROBE" stacks -q --hot-window 0 --repeat 100000 "$TPID" > /dev/null 2>&1 &
	gpp=$!
	d=$(awk -v s="$i$$" 'BEGIN { srand(s); printf "%.3f", 0.010 + rand() * 0.050 }')
	sleep "$d"
	kill -KILL $gpp 2>/dev/null
	wait $gpp 2>/dev/null
	kill -0 $gpp 2>/dev/null && fail "round $i: gpuprobe $gpp survived SIGKILL"
	no_stopped "$TPID" || fail "round $i (killed after $d s): a thread was left stopped"
	alive "$TPID" || fail "round $i: the target died"
done
say "ok: $rounds rounds, no thread left in t/T"
# The kills did land inside snapshots: the same run, not killed, stops threads.
out=$("$GPUPROBE" stacks -q --hot-window 0 --repeat 3 "$TPID" 2>&1 >/dev/null)
say "$out"
ok "snapshots stop threads one at a time" sh -c "echo '$out' | grep -q 'at most 1 stopped at once'"
pass
