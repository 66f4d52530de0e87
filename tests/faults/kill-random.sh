#!/bin/sh
# gpuprobe killed at random moments while it unwinds every thread of a
# multi-threaded target (trace --stacks all at 20 Hz, stopping threads
# one at a time):
#   SIGKILL: the target is never left stopped (no thread in state t/T);
#   SIGINT/SIGTERM: exit 0, every complete line of the result is a JSON
#   object, and the exit line is there.
# KILL_ROUNDS (default 8) rounds of each.
E2E_TIMEOUT=${E2E_TIMEOUT:-120}
. "${0%/*}/../e2e/lib.sh"
require_jq
require_workload sleepers
[ "$(id -u)" -eq 0 ] || skip "needs root (ptrace of another process)"
ROUNDS=${KILL_ROUNDS:-8}
"$WORKLOADS/sleepers" 8 --churn 50 & T=$!; bg_track $T
wait_until 5 test -e /proc/$T/task || framework_failure "no target"
# stopped PID: the threads of PID in state t or T, if any.
stopped() {
	for s in /proc/$1/task/*/stat; do
		sed -n 's/^.*) \([tT]\) .*/\1/p' "$s" 2>/dev/null
	done | head -n 1
}
rand() { awk -v s="$1$$" 'BEGIN { srand(s); printf "%.2f", 0.05 + rand() * 0.9 }'; }
failed=0
i=0
while [ $i -lt "$ROUNDS" ]; do
	i=$((i + 1))
	for sig in KILL INT TERM; do
		d=$(rand "$i$sig")
		"$GPUPROBE" trace -q --stacks all -i 0.05 -s 30 -o "$TMP/r.jsonl" $T > /dev/null 2> "$TMP/e" &
		P=$!
		sleep "$d"
		kill -s $sig $P
		wait $P; rc=$?
		sleep 0.1
		st=$(stopped $T)
		if [ -n "$st" ]; then
			say "FAIL: SIG$sig at +${d}s left a thread of $T in state $st"; failed=1
			kill -CONT $T
			continue
		fi
		case $sig in
		KILL)
			[ $rc -eq 137 ] || { say "FAIL: SIGKILL: exit $rc"; failed=1; }
			check_jsonl "$TMP/r.jsonl" --partial >/dev/null ||
				{ say "FAIL: SIGKILL at +${d}s: a complete line is not JSON"; failed=1; } ;;
		*)
			if [ $rc -ne 0 ]; then
				say "FAIL: SIG$sig at +${d}s: exit $rc: $(head -n 1 "$TMP/e")"; failed=1
			elif ! check_jsonl "$TMP/r.jsonl" >/dev/null; then
				say "FAIL: SIG$sig at +${d}s: the result is not valid JSON Lines"; failed=1
			elif [ "$(count exit "$TMP/r.jsonl")" -ne 1 ]; then
				say "FAIL: SIG$sig at +${d}s: no exit line"; failed=1
			fi ;;
		esac
	done
	say "round $i: SIGKILL, SIGINT, SIGTERM at random moments: target never left stopped"
done
alive $T || fail "the target died"
[ $failed -eq 0 ] || fail "some rounds failed"
pass "$((ROUNDS * 3)) kills"
