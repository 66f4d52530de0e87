#!/bin/sh
# A PTRACE_SEIZE never waits long for the target's exec (issue 27, part
# 3): ptrace_attach takes the process's cred_guard_mutex, which execve
# holds until every other thread is released -- and a thread we trace
# that died is released only when we take its exit: a hang, seen for 10
# minutes (gpuprobe in ptrace_attach, a zombie thread traced by it, the
# exec'ing thread in begin_new_exec).
# tests/workloads/execloop "held": four workers, stacked at every tick
# (--stacks all --hot-threshold 1 --interval 0.05); the exec comes right
# after gpuprobe let go of one of them, so that its next SEIZE meets the
# exec, and a child of the program takes the exit of one more thread it
# traces only 1 s after the exec killed it, so the exec waits 1 s.
# Before, 6 of 20 snapshots took 1.0 s (the SEIZE waited for the whole
# exec); after, the SEIZE is interrupted every 5 ms, finds its thread
# gone, and gives up at 100 ms at the latest.
# Each trace ends at the next exec (src/tracer/sampler.c takes the
# exec's zombie leader for the end), so the program is traced again by
# PID until it is done.  A watcher polling /proc/PID/task/*/stat every
# millisecond never sees a thread stopped longer than 300 ms.
E2E_TIMEOUT=${E2E_TIMEOUT:-120}
. "${0%/*}/../e2e/lib.sh"
# About ptrace stops: sleeping threads read from their saved registers,
# with no stop (BPF, src/unwind/taskregs.h), would leave this test no
# stop to look at.  tests/e2e/stacks-bpf-regs.sh covers that path.
export GPUPROBE_BPF_REGS=off
require_jq
require_workload execloop
require_workload stopwatch
[ "$(id -u)" = 0 ] || skip "not root: the program's child may not trace its parent's thread"
MAX_MS=${HARM_MAX_MS:-300}
GENS=20
"$WORKLOADS/execloop" $GENS 4 300 0 held > "$TMP/prog.out" 2>&1 &
target=$!
bg_track $target
"$WORKLOADS/stopwatch" "$target" 60 1 > "$TMP/watch" &
w_pid=$!
done_() { grep -q 'execloop: done' "$TMP/prog.out"; }
n=0 bad=0
while ! done_ && kill -0 $target 2>/dev/null && [ $n -lt 60 ]; do
	n=$((n + 1))
	GP_TIMEOUT=10 gp trace -q --stacks all --hot-threshold 1 --interval 0.05 \
		-o "$TMP/$n.jsonl" "$target" > /dev/null 2> "$TMP/$n.err"
	rc=$?
	[ $rc -eq 0 ] || { say "trace $n: rc $rc: $(head -c 200 "$TMP/$n.err")"; bad=$((bad + 1)); }
done
wait $target
st=$?
wait $w_pid
ok "the program ran its $GENS generations (exit $st)" test "$st" -eq 0
r=$(grep -c 'exec after a release' "$TMP/prog.out")
ok "most execs came right after a release ($r of $GENS)" test "$r" -ge $((GENS / 2))
cat "$TMP"/[0-9]*.jsonl > "$TMP/all.jsonl"
u=$(jq -s -c '[.[] | select(.type=="stacks") | .threads[] | .unwind] | group_by(.) | map({(.[0]): length}) | add' "$TMP/all.jsonl")
say "stacks: $u"
w=$(jq -s '[.[] | select(.type=="stacks") | .cost.wall_ms] | max // 0' "$TMP/all.jsonl")
slow=$(jq -s '[.[] | select(.type=="stacks" and .cost.wall_ms > 300)] | length' "$TMP/all.jsonl")
ok "no snapshot waited for an exec ($slow over 300 ms; longest $w ms)" test "$slow" -eq 0
ok "every trace ended by itself ($bad of $n did not)" test "$bad" -eq 0
ms=$(sed -n 's/.*max_stopped_ms=\([0-9.]*\).*/\1/p' "$TMP/watch")
polls=$(sed -n 's/.*polls=\([0-9]*\).*/\1/p' "$TMP/watch")
ok "the watcher polled ($polls polls)" test "${polls:-0}" -gt 100
ok "no thread stopped longer than $MAX_MS ms (longest $ms ms)" fcmp "${ms:-99999}" '<=' "$MAX_MS"
pass
