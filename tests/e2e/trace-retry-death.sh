#!/bin/sh
# Children are not output, their failures and deaths are evidence (issue
# 32).  `until curl -sf URL; do sleep 1; done` with nothing listening read
# "progress, high" (79 short-lived children's library reads counted as
# output); a frontend whose engine process was SIGKILLed read "idle".
# The truth: the retry loop is a hang that is retrying, said with what is
# retried and how it fails; the engine's death is named in the verdict.
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/lib.sh"
require_jq
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || skip "no python3"
has() { printf '%s' "$1" | grep -q "$2"; }

# A port nothing listens on: bind one, then close it.
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if command -v curl >/dev/null 2>&1; then
	cmd="until curl -sf http://127.0.0.1:$port/; do sleep 1; done"
	what='curl exits 7'
else
	cmd="until $PY -c 'import socket; socket.create_connection((\"127.0.0.1\", $port))' 2>/dev/null; do sleep 1; done"
	what='exits 1'
fi
gp trace -q --seconds 9 --hang-after 4 -o "$TMP/retry.jsonl" -- sh -c "$cmd" > /dev/null 2>&1
v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/retry.jsonl")
say "retry loop: $v"
ok "a retry loop is not progress" test "${v%% *}" != progress
ok "nor idle: a hang that retries" test "${v%% *}" = hang-blocked
if [ "$(jq -s 'any(.[]; .type=="sample" and .died != null)' "$TMP/retry.jsonl")" = true ]; then
	ok "the verdict says what is retried and how it fails ($what)" has "$v" "retrying: .*$what, [0-9]* times"
else
	say "no process connector here (not root): the children's exits are not seen"
fi

"$PY" "${0%/*}/sock-engine.py" > "$TMP/eng" &
fe=$!
bg_track $fe
wait_until 5 test -s "$TMP/eng" || framework_failure "the frontend did not start"
read -r eport epid < "$TMP/eng"
"$PY" "${0%/*}/sock-engine.py" "$eport" &
cl=$!
bg_track $cl
(sleep 3; kill -KILL "$epid") &
gp trace -q --seconds 10 --hang-after 4 -o "$TMP/eng.jsonl" "$fe" > /dev/null 2>&1
v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/eng.jsonl")
say "engine killed: $v"
ok "the frontend whose engine died is a hang" test "${v%% *}" = hang-blocked
ok "the engine's death is named" has "$v" "pid $epid (python3) was killed by SIGKILL"
ok "its answers before are progress" has "$v" "before that .*sent on sockets"
kill -KILL $cl $fe 2>/dev/null
pass
