#!/bin/sh
# One thread held by another tracer (strace -p TID holds just that one):
# `stacks` and `trace` stack every other thread, and that one reads
# "traced by PID N (strace)" -- before issue 18 the SEIZE's EPERM marked
# the whole process denied, every thread read `denied`, and the hint told
# root to "run as root or grant CAP_SYS_PTRACE"; trace stayed denied.
. "${0%/*}/lib.sh"
# About ptrace stops: sleeping threads read from their saved registers,
# with no stop (BPF, src/unwind/taskregs.h), would leave this test no
# stop to look at.  tests/e2e/stacks-bpf-regs.sh covers that path.
export GPUPROBE_BPF_REGS=off
. "${0%/*}/stacks-lib.sh"
require_jq
command -v strace > /dev/null 2>&1 || skip "strace missing (bootstrap.sh installs it)"
start_stackload 3 0
tid=$(ls "/proc/$TPID/task" | grep -v "^$TPID\$" | head -n 1)
[ -n "$tid" ] || framework_failure "no second thread in stackload"
strace -q -o /dev/null -p "$tid" 2> "$TMP/strace.err" &
SPID=$!; bg_track $SPID
tracer() { awk '/^TracerPid:/ { print $2 }' "/proc/$TPID/task/$tid/status"; }
held() { [ "$(tracer)" = "$SPID" ]; }
wait_until 5 held || skip "strace could not attach here ($(cat "$TMP/strace.err"))"

gp stacks --format json "$TPID" > "$TMP/s.json" 2> "$TMP/err"
rc=$?
cat "$TMP/err"
ok "stacks: exit 0 (got $rc)" [ $rc -eq 0 ]
u=$(jq -r --argjson t "$tid" '.threads[] | select(.tid == $t) | .unwind' "$TMP/s.json")
ok "stacks: the held thread reads traced (got $u)" [ "$u" = traced ]
why=$(jq -r --argjson t "$tid" '.threads[] | select(.tid == $t) | .unwind_error' "$TMP/s.json")
ok "stacks: it names its tracer ($why)" [ "$why" = "traced by PID $SPID (strace)" ]
# ok: stopped and unwound; nostop: unwound without a stop (a thread in a
# read of a pipe, tests/faults/harm-transfer.sh).
others=$(jq -r --argjson t "$tid" '[.threads[] | select(.tid != $t) | .unwind | sub("nostop"; "ok")] | unique | join(",")' "$TMP/s.json")
ok "stacks: every other thread unwound (got $others)" [ "$others" = ok ]
ok "stacks: no hint to run as root" sh -c "! grep -q 'run as root' '$TMP/err'"

gp trace -q --stacks all --seconds 2 -o "$TMP/t.jsonl" "$TPID" > /dev/null 2> "$TMP/terr"
rc=$?
ok "trace: exit 0 (got $rc)" [ $rc -eq 0 ]
others=$(jq -r --argjson t "$tid" 'select(.type == "stacks") | .threads[] | select(.tid != $t) | .unwind | sub("nostop"; "ok")' \
	"$TMP/t.jsonl" | sort -u | tr '\n' ,)
ok "trace: every other thread unwound (got $others)" [ "$others" = ok, ]
held_u=$(jq -r --argjson t "$tid" 'select(.type == "stacks") | .threads[] | select(.tid == $t) | .unwind' \
	"$TMP/t.jsonl" | sort -u | tr '\n' ,)
ok "trace: the held thread reads traced (got $held_u)" [ "$held_u" = traced, ]
kill "$SPID"
pass
