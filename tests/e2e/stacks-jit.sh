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
// A busy loop never yields to a timer: it ends itself after 20 s.
const end = Date.now() + 20000;
while (Date.now() < end) hot(1e5);
JS
"$NODE" "$TMP/hot.js" &
NP=$!; bg_track $NP
# V8 compiles hot() within the first second (more on a loaded machine);
# a snapshot may catch the thread where no JIT frame is on its stack (in
# the interpreter, or in C++ called from it with no frame to unwind
# through): up to 10 snapshots, 0.3 s apart.
sleep 1
jit=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	alive "$NP" || fail "node did not start"
	gp stacks --format json "$NP" > "$TMP/s.json" || fail "stacks exited $?"
	jit=$(jq '[.threads[] | select(.tid == '"$NP"') | .frames[]? | select(.jit == true)] | length' "$TMP/s.json")
	[ "$jit" -ge 1 ] && break
	sleep 0.3
done
say "main thread: $jit JIT frames (snapshot $i)"
ok "the JIT frames are marked jit" test "$jit" -ge 1
ok "a JIT frame has no module, offset or symbol" \
	jq -e '[.threads[].frames[]? | select(.jit == true) | select(.module != null or .offset != null or .symbol != null)] | length == 0' "$TMP/s.json" > /dev/null
# No frame of node's module at an offset past its file's end.
size=$(stat -c %s "$(readlink -f "$NODE")")
bad=$(jq -r --arg m "$(readlink -f "$NODE")" '.threads[].frames[]? | select(.module == $m) | .offset' "$TMP/s.json" |
	while read -r off; do [ $((off)) -gt "$size" ] && echo "$off"; done | head -n 3)
say "node frames past its file's size ($size): ${bad:-none}"
text_jit() {
	gp stacks "$NP" > "$TMP/s.txt" || return 1
	grep -Eq '#[0-9]+ +\[jit\] 0x[0-9a-f]+$' "$TMP/s.txt"
}
ok "stacks text: [jit] 0x..." wait_until 5 text_jit
ok "stacks text: no node+0x7f... frame" sh -c "! grep -Eq 'node\+0x7f[0-9a-f]{10}' '$TMP/s.txt'"

# A trace's report: the same frames in its stacks section.
gp trace -q --seconds 2 --interval 0.25 --stacks all --hot-threshold 1 -o "$TMP/t.jsonl" "$NP" > /dev/null 2>&1
gp report "$TMP/t.jsonl" > "$TMP/r.md" || fail "report exited $?"
# The report's stacks section shows the end snapshot (the verdict's).
endjit=$(jq -s '[.[] | select(.type == "stacks" and .why == "end") | .threads[].frames[]? | select(.jit == true)] | length' "$TMP/t.jsonl")
anyjit=$(jq -s '[.[] | select(.type == "stacks") | .threads[].frames[]? | select(.jit == true)] | length' "$TMP/t.jsonl")
say "trace: $anyjit JIT frames in its stacks lines, $endjit in the end snapshot"
ok "trace: JIT frames in its stacks lines" test "$anyjit" -ge 1
if [ "$endjit" -ge 1 ]; then
	ok "report: [jit] 0x... in the stacks section" grep -Eq '^#[0-9]+ +\[jit\] 0x[0-9a-f]+$' "$TMP/r.md"
fi
ok "report: no node+0x7f... frame" sh -c "! grep -Eq 'node\+0x7f[0-9a-f]{10}' '$TMP/r.md'"
pass
