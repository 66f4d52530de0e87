#!/bin/sh
# watch PID follows a process, not a number (issue 27): `watch P Q`, P
# is killed, and a moment later (a tick between) its PID goes to a new
# process (ns_last_pid, in a private PID namespace so nothing else takes
# the number).  watch says P is no longer followed, goes on with Q, and
# never follows the newcomer (before: "following pid P (sleep)").
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/../e2e/lib.sh"
require_workload sleepers
[ "$(id -u)" -eq 0 ] || skip "needs root (ns_last_pid)"
command -v unshare >/dev/null 2>&1 || skip "no unshare(1)"
unshare --pid --fork --mount-proc sh -c 'echo 100 > /proc/sys/kernel/ns_last_pid' 2>/dev/null ||
	skip "no private PID namespace with a writable ns_last_pid here"
cat > "$TMP/inner.sh" <<'INNER'
GP=$1 W=$2 T=$3
"$W/sleepers" 1 > /dev/null & P=$!
"$W/sleepers" 1 > /dev/null & Q=$!
sleep 0.3
"$GP" watch --interval 0.2 --hang-after 30 --seconds 4 $P $Q > "$T/log" 2>&1 & G=$!
sleep 1
kill -KILL $P; wait $P 2>/dev/null
sleep 0.6                      # ticks see P gone
echo $((P - 1)) > /proc/sys/kernel/ns_last_pid
sleep 300 & N=$!
wait $G; echo $? > "$T/rc"
echo "$P $Q $N" > "$T/pids"
kill $N $Q
INNER
timeout -k 2 40 unshare --pid --fork --mount-proc sh "$TMP/inner.sh" "$GPUPROBE" "$WORKLOADS" "$TMP"
read P Q N < "$TMP/pids" || framework_failure "the inner script did not finish"
cat "$TMP/log"
[ "$P" = "$N" ] || skip "the PID was not reused ($P, then $N)"
say "pid $P killed, then reused by sleep"
ok "watch exit 0" test "$(cat "$TMP/rc")" -eq 0
ok "watch followed $P and $Q" sh -c "grep -q 'following pid $P (sleepers)' '$TMP/log' &&
	grep -q 'following pid $Q (sleepers)' '$TMP/log'"
ok "watch let $P go" grep -q "pid $P (sleepers): no longer followed" "$TMP/log"
ok "watch never followed the newcomer" sh -c "! grep -q 'following pid $P (sleep)' '$TMP/log'"
ok "watch said $P once: followed, then let go" [ "$(grep -c "pid $P " "$TMP/log")" -eq 2 ]
pass
