#!/bin/sh
# --name finds a uniquely named process; an unknown name is a runtime
# error (exit 1) with one "gpuprobe: " line.
. "${0%/*}/lib.sh"
require_jq
require_workload spin
F=$TMP/t.jsonl
NAME=gpspin$$            # unique, and within comm's 15 characters
NAME=$(printf '%.15s' "$NAME")
cp "$WORKLOADS/spin" "$TMP/$NAME" || framework_failure "cannot copy spin"

"$TMP/$NAME" 1 &
pid=$!; bg_track $pid
found() { [ "$(pgrep -x "$NAME")" = "$pid" ]; }
wait_until 3 found || framework_failure "$NAME ($pid) never showed up"
gp trace -q --interval 0.5 --seconds 1 -o "$F" --name "$NAME" > "$TMP/out" 2> "$TMP/err"
rc=$?
ok "--name $NAME: exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
tg=$(jq -c 'select(.type == "target") | {pid, comm, how}' "$F")
ok "target $tg" test "$tg" = "{\"pid\":$pid,\"comm\":\"$NAME\",\"how\":\"name\"}"
kill -KILL $pid

gp trace -q --seconds 1 --name "nosuch$$" > "$TMP/out" 2> "$TMP/err"
rc=$?
say "unknown name: exit $rc, stderr: $(cat "$TMP/err")"
ok "unknown name: exit code 1" test $rc -eq 1
ok "unknown name: exactly one stderr line" test "$(wc -l < "$TMP/err")" -eq 1
ok "unknown name: it starts with 'gpuprobe: '" grep -q '^gpuprobe: ' "$TMP/err"
ok "unknown name: nothing on stdout" test ! -s "$TMP/out"
pass
