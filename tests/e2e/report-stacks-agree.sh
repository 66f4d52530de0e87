#!/bin/sh
# The verdict's words and the report's stacks section agree (issue 20):
# 50 threads of 50 names in one stack (a JVM's shape) were "31 of 51
# threads in ..." beside a stacks section that grouped 50; and a stopped
# process of the tree (cat SIGSTOPped in `yes | cat`) is marked stopped
# in the stacks section.
. "${0%/*}/lib.sh"
require_jq
require_workload sleepers
F=$TMP/t.jsonl
gp trace -q --seconds 2.5 --interval 0.5 --hang-after 1 -o "$F" -- "$WORKLOADS/sleepers" 50 --named > "$TMP/out" 2>&1
words=$(grep -o 'stacks at +[0-9.]* s: [0-9]* of [0-9]* threads in sleeper' "$TMP/out" | head -n 1)
say "verdict: $words"
n=$(printf '%s\n' "$words" | sed -n 's/.*: \([0-9]*\) of.*/\1/p')
ok "the verdict counts the 50 sleepers" test "$n" = 50
gp report "$F" > "$TMP/r.md" || fail "report exited $?"
g=$(grep -Eo '^[0-9]+ threads: [0-9]+ \(sleeper-' "$TMP/r.md" | cut -d' ' -f1)
say "stacks section: $g threads in the sleepers' block"
ok "the stacks section groups as many ($g) as the verdict counts ($n)" test "$g" = "$n"
ok "the report's verdict line says the same" grep -q "stacks at +[0-9.]* s: $n of 51 threads in sleeper" "$TMP/r.md"

# A stopped member of a pipeline, in a shell gpuprobe traces by pid.
sh -c 'yes | cat > /dev/null' &
SH=$!; bg_track $SH
cat_pid() { CAT=$(pgrep -x -P "$SH" cat); [ -n "$CAT" ]; }
wait_until 5 cat_pid || fail "no cat under $SH"
YES=$(pgrep -x -P "$SH" yes); bg_track $CAT $YES
kill -STOP "$CAT"
gp trace -q --seconds 1.5 --interval 0.5 --hang-after 1 -o "$TMP/p.jsonl" "$SH" > /dev/null 2>&1
kill -CONT "$CAT"
gp report "$TMP/p.jsonl" > "$TMP/p.md" || fail "report exited $?"
blk=$(awk -v c="$CAT" '$0 ~ "^1 thread: " c " \\(cat" { on = 1; next } on && /^```$/ { n++; if (n == 2) exit } on' "$TMP/p.md")
say "cat's block: $(printf '%s' "$blk" | head -n 3 | tr '\n' '|')"
ok "cat's stack block says it is stopped" sh -c "printf '%s\n' \"\$1\" | grep -q '^(stopped: state T'" - "$blk"
ok "no other block says stopped" test "$(grep -c '^(stopped' "$TMP/p.md")" = 1
pass
