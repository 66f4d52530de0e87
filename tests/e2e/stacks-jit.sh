#!/bin/sh
# JIT frames (issue 20): node's code that V8 wrote lies between node's own
# mappings (node maps part of its file again, high, beside its code
# space), so libdwfl's module for node spans it and the frame read
# `node+0x7ff29afc6d84`.  A pc in an anonymous executable mapping is
# `[jit] 0x...` now, in `stacks` and in a trace's report.
. "${0%/*}/lib.sh"
require_jq
NODE=$(command -v node) || skip "no node"
cat > "$TMP/hot.js" <<'JS'
function hot(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i) * Math.sin(i); return s; }
setTimeout(() => process.exit(0), 20000);
for (;;) hot(1e6);
JS
"$NODE" "$TMP/hot.js" &
NP=$!; bg_track $NP
sleep 1.5   # V8 compiles hot() within the first second
alive "$NP" || fail "node did not start"
gp stacks --format json "$NP" > "$TMP/s.json" || fail "stacks exited $?"
jit=$(jq '[.threads[] | select(.tid == '"$NP"') | .frames[]? | select(.jit == true)] | length' "$TMP/s.json")
say "main thread: $jit JIT frames"
ok "the JIT frames are marked jit" test "$jit" -ge 1
ok "a JIT frame has no module, offset or symbol" \
	jq -e '[.threads[].frames[]? | select(.jit == true) | select(.module != null or .offset != null or .symbol != null)] | length == 0' "$TMP/s.json" > /dev/null
# No frame of node's module at an offset past its file's end.
size=$(stat -c %s "$(readlink -f "$NODE")")
bad=$(jq -r --arg m "$(readlink -f "$NODE")" '.threads[].frames[]? | select(.module == $m) | .offset' "$TMP/s.json" |
	while read -r off; do [ $((off)) -gt "$size" ] && echo "$off"; done | head -n 3)
say "node frames past its file's size ($size): ${bad:-none}"
gp stacks "$NP" > "$TMP/s.txt" || fail "stacks (text) exited $?"
ok "stacks text: [jit] 0x..." grep -Eq '#[0-9]+ +\[jit\] 0x[0-9a-f]+$' "$TMP/s.txt"
ok "stacks text: no node+0x7f... frame" sh -c "! grep -Eq 'node\+0x7f[0-9a-f]{10}' '$TMP/s.txt'"

# A trace's report: the same frames in its stacks section.
gp trace -q --seconds 1 --interval 0.5 --stacks all --hot-threshold 1 -o "$TMP/t.jsonl" "$NP" > /dev/null 2>&1
gp report "$TMP/t.jsonl" > "$TMP/r.md" || fail "report exited $?"
ok "report: [jit] 0x... in the stacks section" grep -Eq '^#[0-9]+ +\[jit\] 0x[0-9a-f]+$' "$TMP/r.md"
pass
