#!/bin/sh
# gpuprobe trace -- COMMAND records the command's exit status.
. "${0%/*}/lib.sh"
require_jq
F=$TMP/t.jsonl

gp trace -q --interval 0.5 -o "$F" -- sh -c 'sleep 2; exit 3' > "$TMP/out" 2> "$TMP/err"
rc=$?
say "gpuprobe exit code $rc"
[ $rc -eq 0 ] || { cat "$TMP/err"; fail "gpuprobe exited $rc, want 0"; }
ok "valid JSON Lines" check_jsonl "$F"
for t in header target sample exit; do
	ok "a '$t' line" test "$(count $t "$F")" -ge 1
done
n=$(count sample "$F")
ok "samples: $n >= 2" test "$n" -ge 2
exit_is "$F" 'status, signal, reason' '{"status":3,"signal":null,"reason":"exited"}'
ok "the last two lines are exit, verdict" \
	test "$(tail -n 2 "$F" | jq -r .type | tr '\n' ' ')" = "exit verdict "
v=$(jq -c 'select(.type == "verdict") | {class, before}' "$F")
say "verdict: $v"
ok "verdict class exited" test "$(echo "$v" | jq -r .class)" = exited
pass
