#!/bin/sh
# Progress is work answered (issue 32): a server that answers over send()
# moves nothing through /proc/PID/io (send/recv are not in rchar/wchar),
# and read "idle" (or hang-busy-user, "no output seen") before sockets
# were read.  The truth: answering two requests a second is progress,
# said as "sent on sockets"; the same server with no client is idle.  And an asyncio server whose handler blocks the
# event loop (time.sleep) while clients pile up unaccepted read "idle,
# high: 1 on a timer": it is a hang, said with the connections waiting
# and the loop thread's frame.  A threaded server whose batcher thread
# died, handlers each waiting on a future, read "progress, high" (the new
# handler threads): requests read and never answered, more and more of
# them, are a hang.
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/lib.sh"
require_jq
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || skip "no python3"
S="${0%/*}/sock-server.py"

"$PY" "$S" > "$TMP/port" &
srv=$!
bg_track $srv
wait_until 5 test -s "$TMP/port" || framework_failure "the server did not start"
port=$(cat "$TMP/port")

gp trace -q --seconds 5 --hang-after 3 -o "$TMP/idle.jsonl" "$srv" > /dev/null 2>&1
v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/idle.jsonl")
say "no client: $v"
ok "a server with no client is idle" test "${v%% *}" = idle

"$PY" "$S" "$port" &
cli=$!
bg_track $cli
sleep 0.5
gp trace -q --seconds 6 --hang-after 3 -o "$TMP/busy.jsonl" "$srv" > /dev/null 2>&1
v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/busy.jsonl")
say "answering: $v"
ok "a server answering over send() makes progress" test "${v%% *}" = progress
ok "the summary says it sent on sockets" sh -c "printf '%s' \"\$1\" | grep -q 'sent on sockets'" _ "$v"
tx=$(jq -s '[.[] | select(.type=="sample") | .proc.sock.tx // 0] | max' "$TMP/busy.jsonl")
ok "the samples carry the bytes sent ($tx)" test "$tx" -ge 5000
wc=$(jq -s '[.[] | select(.type=="sample") | .proc.io.wchar // 0] | max - min' "$TMP/busy.jsonl")
say "wchar moved by $wc bytes meanwhile (send() is not in it)"
kill -KILL $cli $srv 2>/dev/null

B="${0%/*}/sock-blockloop.py"
"$PY" "$B" > "$TMP/bport" &
bsrv=$!
bg_track $bsrv
wait_until 5 test -s "$TMP/bport" || framework_failure "the asyncio server did not start"
"$PY" "$B" "$(cat "$TMP/bport")" 8 &
bcli=$!
bg_track $bcli
gp trace -q --seconds 9 --hang-after 4 -o "$TMP/loop.jsonl" "$bsrv" > /dev/null 2>&1
v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/loop.jsonl")
say "blocked loop: $v"
ok "a blocked event loop with clients waiting is a hang" test "${v%% *}" = hang-blocked
ok "the summary names the connections not accepted" sh -c "printf '%s' \"\$1\" | grep -q 'connections\{0,1\} not accepted'" _ "$v"
ok "and the loop thread's frame" sh -c "printf '%s' \"\$1\" | grep -q 'handle (sock-blockloop.py:1[0-9])'" _ "$v"
kill -KILL $bcli $bsrv 2>/dev/null

# Handlers that read each request and wait for a batcher that died.
T="${0%/*}/sock-batcher.py"
"$PY" "$T" > "$TMP/tport" &
tsrv=$!
bg_track $tsrv
wait_until 5 test -s "$TMP/tport" || framework_failure "the threaded server did not start"
"$PY" "$T" "$(cat "$TMP/tport")" &
tcli=$!
bg_track $tcli
gp trace -q --seconds 9 --hang-after 4 -o "$TMP/batch.jsonl" "$tsrv" > /dev/null 2>&1
v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/batch.jsonl")
say "dead batcher: $v"
ok "requests read and never answered are a hang (not progress)" test "${v%% *}" = hang-blocked
ok "the summary counts them" sh -c "printf '%s' \"\$1\" | grep -q '[0-9]* requests read and never answered (the oldest for [0-9]* s)'" _ "$v"
kill -KILL $tcli $tsrv 2>/dev/null
pass
