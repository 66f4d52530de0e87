#!/bin/sh
# The kernel counts socket bytes (issue 32, src/tracer/sockflow.h): a
# connection that opens, answers and closes between two samples left no
# socket for sock_diag to read, so a server answering short-lived
# connections read "idle"; a connect refused inside a retry loop left no
# trace at all.  Where BPF loads (root, BTF), the truth, exactly:
#   - a client traced alone, making 20 connections to a server outside the
#     trace: proc.sock.tx is 20 x 100 bytes and rx 20 x 1000, to the byte;
#   - the server traced alone: tx is what its clients received, and the
#     verdict is progress, "sent on sockets";
#   - a loop whose connects are refused: hang-blocked, saying "connect to
#     127.0.0.1:PORT refused N times", N within one of the loop's count;
#   - GPUPROBE_BPF=off: the exit record says sock_diag and why, and the
#     short connections are not seen (the old answer, kept as the control).
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/lib.sh"
# A test of the BPF path itself: on it even where the suite runs on the
# /proc path (.ci/run's sanitizer pass: GPUPROBE_BPF=off).
unset GPUPROBE_BPF
require_jq
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || skip "no python3"
[ "$(id -u)" = 0 ] || skip "not root: BPF does not load"
gp info | grep -q '^BPF *socket bytes' || skip "BPF not usable here: $(gp info | grep '^BPF')"
S=${0%/*}/sock-short.py
has() { printf '%s' "$1" | grep -q "$2"; }
verdict() { jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$1"; }

"$PY" "$S" serve > "$TMP/port" &
srv=$!
bg_track $srv
wait_until 5 test -s "$TMP/port" || framework_failure "the server did not start"
port=$(cat "$TMP/port")

# 1. the client, traced from its start: every byte, counted once
gp trace -q --seconds 8 -o "$TMP/client.jsonl" -- "$PY" "$S" client "$port" 20 \
	> "$TMP/client.out" 2>&1
say "client: $(grep "^sent" "$TMP/client.out")"
src=$(jq -r 'select(.type=="exit") | .sockets.source' "$TMP/client.jsonl")
ok "the exit record says the kernel counted ($src)" test "$src" = bpf
tx=$(jq -s '[.[] | select(.type=="sample") | .proc.sock.tx // 0] | max' "$TMP/client.jsonl")
rx=$(jq -s '[.[] | select(.type=="sample") | .proc.sock.rx // 0] | max' "$TMP/client.jsonl")
ok "20 requests of 100 bytes sent: tx $tx" test "$tx" -eq 2000
ok "20 answers of 1000 bytes received: rx $rx" test "$rx" -eq 20000

# 2. the server, traced alone while a client outside the trace asks
"$PY" "$S" client "$port" 40 > /dev/null &
cli=$!
bg_track $cli
sleep 0.5
gp trace -q --seconds 6 --hang-after 3 -o "$TMP/server.jsonl" "$srv" > /dev/null 2>&1
v=$(verdict "$TMP/server.jsonl")
say "server: $v"
ok "a server answering short connections makes progress" test "${v%% *}" = progress
ok "said as sent on sockets" has "$v" 'sent on sockets'
stx=$(jq -s '[.[] | select(.type=="sample") | .proc.sock.tx // 0] | max' "$TMP/server.jsonl")
ok "its answers counted: tx $stx (about 1000 bytes a connection, 5 a second)" test "$stx" -ge 15000

# 3. the control: without BPF the same server is not seen answering
GPUPROBE_BPF=off gp trace -q --seconds 5 --hang-after 3 -o "$TMP/off.jsonl" "$srv" > /dev/null 2>&1
why=$(jq -r 'select(.type=="exit") | "\(.sockets.source): \(.sockets.why)"' "$TMP/off.jsonl")
ok "GPUPROBE_BPF=off: the exit record says why ($why)" test "$why" = "sock_diag: GPUPROBE_BPF=off"
otx=$(jq -s '[.[] | select(.type=="sample") | .proc.sock.tx // 0] | max' "$TMP/off.jsonl")
say "without BPF: tx $otx, $(verdict "$TMP/off.jsonl" | cut -c1-60)"
kill -KILL $cli 2>/dev/null

# 4. a loop whose connects are refused (the server's port, once it is gone)
kill -KILL $srv
wait $srv 2>/dev/null
gp trace -q --seconds 7 --hang-after 3 -o "$TMP/refused.jsonl" -- "$PY" "$S" refused "$port" \
	> /dev/null 2>&1
v=$(verdict "$TMP/refused.jsonl")
say "refused: $v"
ok "a loop of refused connects is a hang" test "${v%% *}" = hang-blocked
ok "it names the address and the refusal" has "$v" "connect to 127.0.0.1:$port refused"
n=$(jq -s '[.[] | select(.type=="sample") | .proc.sock.connects.refused // 0] | max' "$TMP/refused.jsonl")
ok "the refusals counted: $n in 7 s at one per 0.3 s" test "$n" -ge 18 -a "$n" -le 25
pass
