#!/bin/sh
# A Python ABBA deadlock traced by gpuprobe: the stacks taken during the
# hang, and the report rendered from the saved file, name both acquire
# lines of the user's script (File "py-abba.py", line N, in a_then_b /
# b_then_a) -- what a Python user reads first.
# PYTHON: the interpreter (default /usr/bin/python3; SKIP when absent).
# gdb's attach and python3 start-up are slow on a loaded 2-CPU machine.
: "${E2E_TIMEOUT:=120}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_jq
require_python
SCRIPT=$top_srcdir/tests/real/py-abba.py
line_of() { grep -n "# LINE:$1\$" "$SCRIPT" | cut -d: -f1; }
LA=$(line_of a_then_b); LB=$(line_of b_then_a)
F=$TMP/abba.jsonl

GP_TIMEOUT=25 gp trace --interval 0.5 --seconds 5 --hang-after 2 --stacks all -o "$F" -- "$PY" "$SCRIPT" \
	> "$TMP/out" 2>&1
rc=$?
ok "trace ran (exit $rc)" [ $rc -eq 0 ]
ok "result is JSON Lines" check_jsonl "$F"
ok "verdict hang-blocked" sh -c "jq -r 'select(.type==\"verdict\").class' '$F' | grep -qx hang-blocked"
has() {  # has FUNCTION LINE: a stacks line shows that Python frame
	n=$(jq --arg f "$1" --argjson l "$2" --arg s "$SCRIPT" 'select(.type=="stacks") |
		[.threads[].frames[]?.python[]? | select(.function == $f and .line == $l and .file == $s)] | length' "$F" |
		awk '{ s += $1 } END { print s + 0 }')
	[ "$n" -ge 1 ]
}
ok "stacks: a_then_b waits at line $LA" has a_then_b "$LA"
ok "stacks: b_then_a waits at line $LB" has b_then_a "$LB"

gp report "$F" > "$TMP/report.md" 2> "$TMP/report.err"
rc=$?
ok "report exit 0 (got $rc)" [ $rc -eq 0 ]
ok "report: File \"$SCRIPT\", line $LA, in a_then_b" grep -qF "File \"$SCRIPT\", line $LA, in a_then_b" "$TMP/report.md"
ok "report: File \"$SCRIPT\", line $LB, in b_then_a" grep -qF "File \"$SCRIPT\", line $LB, in b_then_a" "$TMP/report.md"
gp report --format text "$F" > "$TMP/report.txt" 2>&1
ok "report --format text exit 0" [ $? -eq 0 ]
pass
