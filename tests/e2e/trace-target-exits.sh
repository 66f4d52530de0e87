#!/bin/sh
# A PID target that exits after 1.5 s: reason exited, and the trace ends
# within about one interval (1 s) after.
. "${0%/*}/lib.sh"
require_jq
F=$TMP/t.jsonl

t0=$(now)
sleep 1.5 &
pid=$!; bg_track $pid
gp trace -q -o "$F" "$pid" > "$TMP/out" 2> "$TMP/err"
rc=$?
el=$(elapsed "$t0")
say "gpuprobe exited $rc, $el s after the target started"
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
ex=$(jq -r 'select(.type == "exit") | .reason' "$F")
ok "reason '$ex' is 'exited'" test "$ex" = exited
ok "ended within ~1 s of the exit ($el <= 2.8)" fcmp "$el" '<=' 2.8
pass
