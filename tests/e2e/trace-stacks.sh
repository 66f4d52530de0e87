#!/bin/sh
# trace --stacks: hot threads stacked every tick (symbolized frames in a
# `stacks` line, the verdict names the hot frame); --stacks all stacks a
# blocked thread once per place it waits; --stacks none never does.
. "${0%/*}/lib.sh"
require_jq
require_workload spin
require_workload sleepers
F=$TMP/t.jsonl

# --hot-threshold 1: the spinner is hot whatever share of a CPU it gets
# (with two busy loops beside `make check` it fell under the default and
# the trace took 0 stacks lines, issue 12); sleeping threads run 0%.
gp trace -q --interval 0.5 --seconds 2.5 --hang-after 1 --hot-threshold 1 -o "$F" -- "$WORKLOADS/spin" 1 > "$TMP/out" 2> "$TMP/err"
ok "spin: exit 0" test $? -eq 0
n=$(jq -s '[.[] | select(.type == "stacks")] | length' "$F")
ok "spin: $n stacks lines >= 3 (one a tick once hot)" test "$n" -ge 3
fr=$(jq -r 'select(.type == "stacks") | .threads[] | select(.unwind == "ok") | .frames[0].symbol' "$F" | sort -u | head -3)
say "hot frames: $fr"
ok "spin: the hot frame is named" test -n "$fr"
ok "spin: the verdict names it" jq -e -s '.[-1].summary | test(" at ")' "$F"

gp trace -q --interval 0.5 --seconds 2.5 --stacks all -o "$F" -- "$WORKLOADS/sleepers" 4 > "$TMP/out" 2> "$TMP/err"
ok "sleepers --stacks all: exit 0" test $? -eq 0
# Each blocked thread is stacked once per place, not every tick (6 ticks
# here): a wake-up caught between two waits is a new place (so is a thread
# caught before its first wait, on a loaded machine), so allow 2.  The
# snapshot at the end (why "end") stacks every thread once more: not a tick's.
max=$(jq -s '[.[] | select(.type == "stacks" and .why != "end") | .threads[].tid] | group_by(.) | map(length) | max // 0' "$F")
cnt=$(jq -s '[.[] | select(.type == "stacks") | .threads[].tid] | unique | length' "$F")
ok "sleepers: $cnt threads stacked" test "$cnt" -ge 4
ok "sleepers: not every tick (max $max <= 2 of 6)" test "$max" -le 2

gp trace -q --interval 0.5 --seconds 1.5 --stacks none -o "$F" -- "$WORKLOADS/spin" 1 > "$TMP/out" 2> "$TMP/err"
ok "spin --stacks none: exit 0" test $? -eq 0
n=$(jq -s '[.[] | select(.type == "stacks")] | length' "$F")
ok "--stacks none: no stacks line ($n)" test "$n" -eq 0
gp trace -q --stacks sometimes -- true > "$TMP/out" 2> "$TMP/err"
ok "--stacks sometimes: usage error" test $? -eq 64
pass
