#!/bin/sh
# PID reuse, live: the target is killed and its PID handed to a new
# process before gpuprobe's next tick (ns_last_pid, in a private PID
# namespace so nothing else takes the number).  trace must end with what
# it gathered (reason "exited" or "pid reused") and never sample the
# newcomer as if it were the target; stacks of a reused PID must not
# unwind the newcomer under the old session.
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/../e2e/lib.sh"
require_jq
require_workload sleepers
[ "$(id -u)" -eq 0 ] || skip "needs root (ns_last_pid)"
command -v unshare >/dev/null 2>&1 || skip "no unshare(1)"
unshare --pid --fork --mount-proc sh -c 'echo 100 > /proc/sys/kernel/ns_last_pid' 2>/dev/null ||
	skip "no private PID namespace with a writable ns_last_pid here"
cat > "$TMP/inner.sh" <<'INNER'
GP=$1 W=$2 T=$3
"$W/sleepers" 4 & P=$!
sleep 0.3
"$GP" trace -q -i 1 -s 20 --stacks all -o "$T/r.jsonl" $P > "$T/out" 2> "$T/err" & G=$!
sleep 1.5                      # ticks at 0 and 1; the next at 2
kill -KILL $P; wait $P 2>/dev/null
echo $((P - 1)) > /proc/sys/kernel/ns_last_pid
sleep 300 & N=$!
kt=$(date +%s.%N)
wait $G; echo $? > "$T/rc"
echo "$P $N $kt $(date +%s.%N)" > "$T/pids"
kill $N
INNER
timeout -k 2 40 unshare --pid --fork --mount-proc sh "$TMP/inner.sh" "$GPUPROBE" "$WORKLOADS" "$TMP"
read P N KT END < "$TMP/pids" || framework_failure "the inner script did not finish"
[ "$P" = "$N" ] || skip "the PID was not reused ($P, then $N)"
say "target $P killed, its PID reused by sleep; trace ended $(awk -v a=$KT -v b=$END 'BEGIN{printf "%.2f", b-a}') s later"
ok "trace exit 0" test "$(cat "$TMP/rc")" -eq 0
ok "the result is valid JSON Lines" check_jsonl "$TMP/r.jsonl"
reason=$(jq -r 'select(.type=="exit") | .reason' "$TMP/r.jsonl")
say "exit reason: $reason"
ok "ended because the target went (exited or pid reused)" sh -c "echo '$reason' | grep -Eq '^(exited|pid reused)$'"
ok "ended within 2 ticks of the reuse" fcmp "$(awk -v a=$KT -v b=$END 'BEGIN{print b-a}')" '<' 2.5
"$GPUPROBE" report --format jsonl "$TMP/r.jsonl" > "$TMP/full.jsonl" # references resolved
ok "every sample is of the target (each thread's comm is sleepers, never sleep)" \
	sh -c "[ \$(jq -r 'select(.type==\"sample\") | .threads[].comm' '$TMP/full.jsonl' | grep -vc '^sleepers$') -eq 0 ]"
ok "samples were taken" sh -c "[ \$(jq -r 'select(.type==\"sample\") | .t' '$TMP/r.jsonl' | wc -l) -ge 2 ]"
pass
