#!/bin/sh
# The watchdog: a pin that never returns (the double blocks above a size)
# ends its arm with status `timeout` and where the thread waits; gpuprobe
# exits within --timeout plus a little, and leaves no process behind.
E2E_TIMEOUT=40
. "${0%/*}/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_jq
F=$TMP/big
mkfile "$F" 4
export GPUPROBE_FAKE_HSA_HANG_ABOVE=$((2 * 1048576))
# Below the size: returns.
gp lock -q --lib "$FAKE_HSA" "$F" --size 1M --timeout 2 --format json > "$TMP/j" || fail "small lock should return"
ok "below the hang size: success" test "$(jq -r .status "$TMP/j")" = HSA_STATUS_SUCCESS
# Above: the arms stop at the first hang (pool all: cpu-fine hangs).
t0=$(now)
GP_TIMEOUT=20 gp lock -q --lib "$FAKE_HSA" "$F" --pool all --timeout 2 -o "$TMP/r" > "$TMP/out" 2> "$TMP/err" &
pid=$!; bg_track $pid
wait $pid; rc=$?
# The arm's own lock_s (below) says the watchdog fired at --timeout; the
# wall clock only has to show the call was abandoned, not waited for --
# start-up and the hung thread's teardown are slower on a loaded box.
lock_hung $rc "$t0" 8 "returned: within --timeout + 6 s, not at GP_TIMEOUT's kill" "$TMP/r" cpu-fine
ok "no gpuprobe left behind" sh -c "! kill -0 $pid 2>/dev/null"
ok "status_code null" test "$(armf "$TMP/r" cpu-fine status_code)" = null
ok "lock_s is the timeout" test "$(armf "$TMP/r" cpu-fine lock_s)" = 2
ok "stuck thread: tid" fcmp "$(armf "$TMP/r" cpu-fine stuck.tid)" '>' 0
ok "stuck thread: in read(2)" sh -c "jq -r 'select(.type==\"arm\") | .stuck.syscall' '$TMP/r' | grep -q '^read(fd '"
if [ "$(id -u)" = 0 ]; then
	ok "stuck thread: wchan names the pipe" sh -c "jq -r 'select(.type==\"arm\") | .stuck.wchan' '$TMP/r' | grep -q pipe"
	ok "stuck thread: kernel stack" sh -c "jq -r 'select(.type==\"arm\") | .stuck.kernel[]' '$TMP/r' | grep -q read"
fi
ok "the table shows the timeout" grep -q "> 2.000 s (watchdog)  *timeout: stuck in " "$TMP/out"
ok "one clear line on stderr" grep -q "^gpuprobe: cpu-fine: hsa_amd_memory_lock_to_pool did not return within 2 s" "$TMP/err"
ok "arms after the hang did not run" test "$(count arm "$TMP/r")" = 1
pass
