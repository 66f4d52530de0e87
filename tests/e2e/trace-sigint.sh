#!/bin/sh
# SIGINT to gpuprobe (alone) during a trace of a spinner: gpuprobe exits
# 0 soon, the file is valid with reason "interrupted", no orphan left.
. "${0%/*}/lib.sh"
require_jq
F=$TMP/t.jsonl

trace_spin 0.5   # SIGINT at its default, as from a terminal
say "gpuprobe pid $GP, spinner pid $pid; SIGINT to gpuprobe after 2 s"
sleep 2
t0=$(now)
kill -INT $GP || framework_failure "cannot signal gpuprobe"
gp_done() { ! kill -0 $GP 2>/dev/null; }
wait_until 3 gp_done || fail "gpuprobe still running 3 s after SIGINT"
wait $GP; rc=$?
say "gpuprobe exited $rc after $(elapsed "$t0") s"
cat "$TMP/err"
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
n=$(count sample "$F")
ok "samples kept: $n >= 3" test "$n" -ge 3
exit_is "$F" 'reason, signal' '{"reason":"interrupted","signal":2}'   # the spinner died of SIGINT
vc=$(jq -r 'select(.type == "verdict") | .class' "$F")
ok "a verdict line after Ctrl-C: $vc" test -n "$vc"
ok "the verdict is printed too" grep -q '^verdict: ' "$TMP/out"
ok "no orphan: spinner $pid is gone" sh -c "! ps -o stat= -p $pid | grep -qv Z"
pass
