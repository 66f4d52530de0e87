#!/bin/sh
# SIGKILL to gpuprobe: its command dies too (PR_SET_PDEATHSIG) within 2 s,
# and every complete line of the file is valid JSON.
. "${0%/*}/lib.sh"
require_jq
require_workload spin
F=$TMP/t.jsonl

"$GPUPROBE" trace -q --interval 0.1 -o "$F" -- "$WORKLOADS/spin" 1 > "$TMP/out" 2>&1 &
GP=$!; bg_track $GP
wait_target "$F"
bg_track "$pid"
sleep 1.03
ok "spinner $pid alive before" alive "$pid"
say "SIGKILL to gpuprobe $GP"
kill -KILL $GP
wait $GP
gone() { ! alive "$pid"; }
ok "spinner $pid gone within 2 s" wait_until 2 gone
ok "every complete line is valid JSON" check_jsonl "$F" --partial
pass
