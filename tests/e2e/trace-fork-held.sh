#!/bin/sh
# A mutex whose holder does not exist in its process (issue 32, Words:
# "for a lock inherited held across fork, say that its holder does not
# exist in that process").  tests/workloads/fork-held:
#   fork    the worker's lock names its parent's logger thread as owner:
#           hang-blocked, the worker and the owner named, the owner "a
#           thread of its parent", "inherited held across fork";
#   exit    a thread ended holding the lock; main waits on it for ever:
#           hang-blocked, "does not exist in that process";
#   atfork  the same fork with pthread_atfork handlers: the worker takes
#           the lock and exits, the parent exits 0 -- no orphan claimed.
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/lib.sh"
require_jq
W=$top_builddir/tests/workloads/fork-held
[ -x "$W" ] || framework_failure "no $W (make check builds it)"
has() { printf '%s' "$1" | grep -q -- "$2"; }
verdict() { jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$1"; }

gp trace -q --seconds 6 --hang-after 3 -o "$TMP/fork.jsonl" -- "$W" fork > /dev/null 2>&1
v=$(verdict "$TMP/fork.jsonl")
say "fork: $v"
ok "fork: a hang" test "${v%% *}" = hang-blocked
ok "fork: the worker and the owner named" \
	has "$v" "thread [0-9]* of pid [0-9]* (worker) waits on a mutex held by tid [0-9]*, a thread of its parent, pid [0-9]* (fork-held)"
ok "fork: said to be inherited held across fork" has "$v" "inherited held across fork, whose holder does not exist in pid"

gp trace -q --seconds 6 --hang-after 3 -o "$TMP/exit.jsonl" -- "$W" exit > /dev/null 2>&1
v=$(verdict "$TMP/exit.jsonl")
say "exit: $v"
ok "exit: a hang" test "${v%% *}" = hang-blocked
ok "exit: its holder does not exist" has "$v" "which is no thread of pid [0-9]*: its holder does not exist in that process"

gp trace -q --seconds 6 --hang-after 3 -o "$TMP/atfork.jsonl" -- "$W" atfork > /dev/null 2>&1
v=$(verdict "$TMP/atfork.jsonl")
say "atfork: $v"
ok "atfork: exited 0" has "$v" "^exited .*exited with status 0"
ok "atfork: no orphan claimed" sh -c "! printf '%s' '$v' | grep -q 'does not exist'"
pass
