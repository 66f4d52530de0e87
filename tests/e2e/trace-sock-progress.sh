#!/bin/sh
# Progress is work answered (issue 32): a server that answers over send()
# moves nothing through /proc/PID/io (send/recv are not in rchar/wchar),
# and read "idle" (or hang-busy-user, "no output seen") before sockets
# were read.  The truth: answering two requests a second is progress,
# said as "sent on sockets"; the same server with no client is idle.  An
# asyncio server whose handler blocks the event loop (time.sleep) while
# clients pile up unaccepted read "idle, high: 1 on a timer": it is a
# hang, said with the connections waiting and the loop thread's frame.  A
# threaded server whose batcher thread died, handlers each waiting on a
# future, read "progress, high" (the new handler threads): requests read
# and never answered, more and more of them, are a hang.
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/lib.sh"
require_jq
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || skip "no python3"
has() { printf '%s' "$1" | grep -q "$2"; }

# serve SCRIPT: starts the server, sets $srv and $port (it prints its port).
serve() {
	"$PY" "${0%/*}/$1" > "$TMP/$1.port" &
	srv=$!
	bg_track $srv
	wait_until 5 test -s "$TMP/$1.port" || framework_failure "$1 did not start"
	port=$(cat "$TMP/$1.port")
}
# clients SCRIPT ARGS...: its client side, in the background.
clients() {
	s=$1
	shift
	"$PY" "${0%/*}/$s" "$port" "$@" &
	cli=$!
	bg_track $cli
}
# judge NAME SECONDS: traces $srv; sets $v ("class confidence: summary").
judge() {
	gp trace -q --seconds "$2" --hang-after "${3:-3}" -o "$TMP/$1.jsonl" "$srv" > /dev/null 2>&1
	v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/$1.jsonl")
	say "$1: $v"
}

serve sock-server.py
judge no-client 5
ok "a server with no client is idle" test "${v%% *}" = idle
clients sock-server.py
sleep 0.5
judge answering 6
ok "a server answering over send() makes progress" test "${v%% *}" = progress
ok "the summary says it sent on sockets" has "$v" 'sent on sockets'
tx=$(jq -s '[.[] | select(.type=="sample") | .proc.sock.tx // 0] | max' "$TMP/answering.jsonl")
ok "the samples carry the bytes sent ($tx)" test "$tx" -ge 5000
wc=$(jq -s '[.[] | select(.type=="sample") | .proc.io.wchar // 0] | max - min' "$TMP/answering.jsonl")
say "wchar moved by $wc bytes meanwhile (send() is not in it)"
kill -KILL $cli $srv 2>/dev/null

serve sock-blockloop.py
clients sock-blockloop.py 8
judge blocked-loop 9 4
ok "a blocked event loop with clients waiting is a hang" test "${v%% *}" = hang-blocked
ok "the summary names the connections not accepted" has "$v" 'connections\{0,1\} not accepted'
ok "and the loop thread's frame" has "$v" 'handle (sock-blockloop.py:1[0-9])'
kill -KILL $cli $srv 2>/dev/null

# Handlers that read each request and wait for a batcher that died.
serve sock-batcher.py
clients sock-batcher.py
judge dead-batcher 9 4
ok "requests read and never answered are a hang (not progress)" test "${v%% *}" = hang-blocked
ok "the summary counts them" has "$v" '[0-9]* requests read and never answered (the oldest for [0-9]* s)'
kill -KILL $cli $srv 2>/dev/null
pass
