#!/bin/sh
# SIGKILL to gpuprobe: its command dies too (PR_SET_PDEATHSIG) within 2 s,
# and every complete line of the file is valid JSON.
. "${0%/*}/lib.sh"
require_jq
F=$TMP/t.jsonl

trace_spin 0.1
sleep 1.03
ok "spinner $pid alive before" alive "$pid"
say "SIGKILL to gpuprobe $GP"
kill -KILL $GP
wait $GP
gone() { ! alive "$pid"; }
ok "spinner $pid gone within 2 s" wait_until 2 gone
ok "every complete line is valid JSON" check_jsonl "$F" --partial
pass
