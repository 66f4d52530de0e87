#!/bin/sh
# A thread killed by another thread's exec is gone, not "denied" (issue 27,
# part 3): tests/workloads/execloop, three threads that compute and sleep
# while a fourth execs the program again every 30 ms, stacked at every
# tick of --stacks all --interval 0.05, as root.  A SEIZE that waited for
# the exec (cred_guard_mutex) fails with EPERM on the dead task; that was
# taken for a refusal: every later stack of the process read "denied",
# with the hint to run as root (2 of 3 traces).
# (Four traces: a trace may end early at an exec, see the last check.)
# The truth: no stack reads "denied", no hint; the program runs its 150
# generations to the end; a watcher polling /proc/PID/task/*/stat every
# millisecond never sees a thread stopped for longer than 300 ms.
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/../e2e/lib.sh"
# About ptrace stops: sleeping threads read from their saved registers,
# with no stop (BPF, src/unwind/taskregs.h), would leave this test no
# stop to look at.  tests/e2e/stacks-bpf-regs.sh covers that path.
export GPUPROBE_BPF_REGS=off
require_jq
require_workload execloop
require_workload stopwatch
[ "$(id -u)" = 0 ] || skip "not root: a refusal would be a true one"
MAX_MS=${HARM_MAX_MS:-300}
total=0
for run in 1 2 3 4; do
	out=$TMP/$run.jsonl
	"$WORKLOADS/execloop" 150 3 30 > "$TMP/$run.out" 2>&1 &
	target=$!
	bg_track $target
	"$WORKLOADS/stopwatch" "$target" 20 1 > "$TMP/$run.watch" &
	w_pid=$!
	GP_TIMEOUT=30 gp trace -q --stacks all --interval 0.05 -o "$out" "$target" \
		> "$TMP/$run.gp" 2>&1
	gp_rc=$?
	wait $target
	st=$?
	wait $w_pid
	ok "$run: gpuprobe ended by itself (rc $gp_rc)" test "$gp_rc" -eq 0
	ok "$run: the program ran to its end (exit $st)" test "$st" -eq 0
	u=$(jq -s -c '[.[] | select(.type=="stacks") | .threads[] | .unwind] | group_by(.) | map({(.[0]): length}) | add' "$out")
	say "$run: stacks $u"
	# As root nothing is refused: not a SEIZE that met the exec, nor
	# libdwfl's report of a process in its exec (ENOEXEC, ESRCH: "failed",
	# src/unwind/stacks.c report_failed_thread; "denied" before, 2 of 29
	# sanitizer-build traces, and the CI's run 3 of 4).
	n=$(jq -s '[.[] | select(.type=="stacks") | .threads[] | select(.unwind=="denied")] | length' "$out")
	ok "$run: no stack reads denied ($n)" test "$n" -eq 0
	total=$((total + $(jq -s '[.[] | select(.type=="stacks") | .threads[] | select(.unwind=="ok")] | length' "$out")))
	ok "$run: no hint to run as root" sh -c "! grep -q CAP_SYS_PTRACE '$TMP/$run.gp'"
	ms=$(sed -n 's/.*max_stopped_ms=\([0-9.]*\).*/\1/p' "$TMP/$run.watch")
	polls=$(sed -n 's/.*polls=\([0-9]*\).*/\1/p' "$TMP/$run.watch")
	ok "$run: the watcher polled ($polls polls)" test "${polls:-0}" -gt 100
	ok "$run: no thread stopped longer than $MAX_MS ms (longest $ms ms)" \
		fcmp "${ms:-99999}" '<=' "$MAX_MS"
done
# A trace can end early, taking the exec's zombie leader for the end
# (src/tracer/sampler.c): enough stacks overall, or the test tried little.
# (107 under a loaded CI machine; 20 and 30 seen when every trace ended at
# an early exec under a load of 5: the point is that stacks kept coming,
# three a trace at the least)
ok "stacks were taken throughout ($total ok)" test "$total" -ge 12
pass
