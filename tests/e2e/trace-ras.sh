#!/bin/sh
# NCCL's RAS service (issue 19), without a GPU: tests/e2e/fake-ras.py
# speaks the client protocol as NCCL's source defines it.  Five traces
# of a sleeper, side by side (wall time: one trace plus the silent
# server's two bounded reads):
#   json     NCCL 2.29: rank 1's AllReduce count lags and does not move
#            while rank 0's does: the verdict names rank 1 and its pid
#   text     NCCL 2.26 (no JSON): the same from the text answer
#   silent   accepts and never answers: the trace ends on time (each read
#            bounded by 3 s, and asked once more only at the end)
#   garbage  an SSH banner: one clear line, exit 0
#   absent   nothing listens: said once (one `ras` line for three reads)
#   default  no --ras-port, no NCCL mapped: not asked, nothing said
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/lib.sh"
require_jq
command -v python3 > /dev/null 2>&1 || skip "no python3"
FAKE=$top_srcdir/tests/e2e/fake-ras.py
for m in json text silent garbage; do
	python3 -S "$FAKE" $m "$TMP/port-$m" &  # -S: no site, a faster start
	bg_track $!
done
has_port() { [ -s "$TMP/port-$1" ]; }
for m in json text silent garbage; do
	wait_until 40 has_port $m || framework_failure "fake-ras.py $m did not start"
done
# A port nobody listens on: one the kernel gave and took back.
free=$(python3 -S -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "$free" > "$TMP/port-absent"
SECONDS_=6
for m in json text silent garbage absent default; do
	# default: no --ras-port and no process mapping libnccl/librccl:
	# RAS is not asked at all.
	port=
	[ $m = default ] || port="--ras-port=$(cat "$TMP/port-$m")"
	( t0=$(now)
	  GP_TIMEOUT=30 gp trace -q --interval 0.5 --seconds $SECONDS_ --hang-after 1 \
		$port -o "$TMP/$m.jsonl" -- sleep 60 > "$TMP/$m.out" 2>&1
	  echo "$? $(elapsed "$t0")" > "$TMP/$m.rc" ) &
done
wait_all() { for m in json text silent garbage absent default; do [ -s "$TMP/$m.rc" ] || return 1; done; }
wait_until 45 wait_all || fail "a trace did not end"
summary() { jq -r 'select(.type == "verdict") | .summary' "$TMP/$1.jsonl"; }
for m in json text silent garbage absent; do
	read -r rc secs < "$TMP/$m.rc"
	say "$m: exit $rc after $secs s: $(summary $m)"
	ok "$m: exit 0" test "$rc" -eq 0
	ok "$m: valid JSON Lines" check_jsonl "$TMP/$m.jsonl"
done
has() { summary "$1" | grep -qF "$2"; }
ok "json: the lagging rank is named, with its pid and counts" \
	has json "NCCL RAS 2.29.1: rank 1 (pid 4243) is behind in AllReduce: 6, the others up to"
ok "json: its count did not move, the other's did" has json "its count did not move from +"
ok "text: the lagging rank from NCCL 2.26's text" \
	has text "NCCL RAS 2.26.2+cuda12.2: rank 1 (pid 4243) is behind in AllReduce: 6, the others up to 7; no count moved"
ok "two reads or more that read counts (start and end)" \
	test "$(jq -s '[.[] | select(.type == "ras" and .state == "ok")] | length' "$TMP/json.jsonl")" -ge 2
read -r rc secs < "$TMP/silent.rc"
# --seconds 6, plus at most two reads of 3 s, plus start-up.
ok "silent: the trace ended in $secs s, bounded" fcmp "$secs" '<' 16
ok "silent: said so" grep -qF "not seen: RAS on 127.0.0.1:$(cat "$TMP/port-silent"): no answer within 3.0 s" "$TMP/silent.out"
ok "garbage: one clear line" grep -qF 'not NCCL'"'"'s RAS: it said "SSH-2.0-OpenSSH_9.2p1 Debian-2"' "$TMP/garbage.out"
ok "absent: one line in the evidence" grep -qxF "  not seen: RAS: not listening on 127.0.0.1:$free" "$TMP/absent.out"
n=$(jq -s '[.[] | select(.type == "ras")] | length' "$TMP/absent.jsonl")
ok "absent: said once ($n ras line)" test "$n" -eq 1
n=$(jq -s '[.[] | select(.type == "ras")] | length' "$TMP/default.jsonl")
ok "default, no NCCL mapped: RAS not asked ($n ras lines)" test "$n" -eq 0
ok "default: nothing said of RAS" sh -c "! grep -q RAS '$TMP/default.out'"
pass
