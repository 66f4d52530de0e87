#!/bin/sh
# A PID target that exits after 1.5 s: reason exited, and the trace ends
# within about one interval (1 s) after the target's exit.
. "${0%/*}/lib.sh"
require_jq
F=$TMP/t.jsonl

t0=$(now)
sleep 1.5 &
pid=$!; bg_track $pid
gp trace -q -o "$F" "$pid" > "$TMP/out" 2> "$TMP/err" &
gpid=$!
# Measured from the target's exit, not from before gpuprobe started: on a
# loaded box start-up alone can take a second (issue 12).
wait $pid
tx=$(now)
wait $gpid
rc=$?
el=$(elapsed "$tx")
say "gpuprobe exited $rc, $el s after the target exited ($(elapsed "$t0") s after it started)"
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
ex=$(jq -r 'select(.type == "exit") | .reason' "$F")
ok "reason '$ex' is 'exited'" test "$ex" = exited
ok "ended within one interval (1 s) of the exit, plus 1 s of slack ($el <= 2)" fcmp "$el" '<=' 2
pass
