#!/bin/sh
# A live process whose main thread exited shows state Z in /proc/PID/stat:
# it is traced until --seconds, not taken for an exited process; its live
# thread's stack is not taken for a refusal.
. "${0%/*}/lib.sh"
require_jq
require_workload zombie-leader
F=$TMP/t.jsonl

"$WORKLOADS/zombie-leader" &
pid=$!; bg_track $pid
wait_until 5 grep -q '^State:.*Z' "/proc/$pid/status" || framework_failure "leader never became Z"
gp trace -q --interval 0.5 --seconds 1.5 -o "$F" "$pid" > "$TMP/out" 2> "$TMP/err"
rc=$?
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ex=$(jq -r 'select(.type == "exit") | .reason' "$F")
ok "reason '$ex' is 'time limit'" test "$ex" = "time limit"
n=$(jq -s '[.[] | select(.type == "sample")] | length' "$F")
ok "$n samples >= 3" test "$n" -ge 3
# Its memory map cannot be read (the leader has no mm: libdwfl's report
# fails with ESRCH): that is no refusal.  The live thread read "denied",
# with the hint to run as root or grant CAP_SYS_PTRACE, even as root.
gp stacks --format json "$pid" > "$TMP/s.json" 2> "$TMP/s.err"
rc=$?
ok "stacks exit code $rc is 0" test $rc -eq 0
u=$(jq -r '[.threads[] | select(.state != "Z") | .unwind] | unique | join(",")' "$TMP/s.json")
ok "the live thread reads failed, not denied ($u)" test "$u" = failed
ok "no hint about user stacks" sh -c "! grep -q 'hint: no user stacks' '$TMP/s.err'"
pass
