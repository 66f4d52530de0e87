#!/bin/sh
# Siblings compared (issues 19, 29): python3 processes of one program,
# two waiting for a peer (a read on a pipe nobody writes: the shape of a
# collective whose peer never came) and one asleep elsewhere.
#  - With RANK and WORLD_SIZE in their environment (as torchrun, srun or
#    mpirun give them) they are a job's ranks: the rank apart is named
#    with its rank and frame, and the others' frame too; of two ranks,
#    neither in a collective, both are named.  The tree is at rest (idle:
#    every thread waits for input or a timer), so none is called "the odd
#    one out": at rest, a rank apart is no culprit (a server's rank 0
#    waits for requests while the others wait for it).
#  - Without, they are only processes of one program at rest: nothing is
#    said of them, never "ranks" nor "the odd one out" (issue 32, "Words").
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/lib.sh"
require_jq
command -v python3 > /dev/null 2>&1 || skip "no python3"
cat > "$TMP/rank.py" <<'PY'
import os, sys, time

def wait_for_peer(fd):
    return os.read(fd, 1)     # the peer never writes

def stall():
    time.sleep(1000)          # this rank never reaches the collective

r, w = os.pipe()
if sys.argv[1] == "late":
    stall()
else:
    wait_for_peer(r)
PY
run() { # name env(yes|no) roles...: `sh -c` starts them (sh is the parent, not a rank)
	name=$1 env=$2; shift 2
	cmd= n=$# i=0
	for role in "$@"; do
		[ "$env" = yes ] && cmd="$cmd RANK=$i WORLD_SIZE=$n"
		cmd="$cmd python3 $TMP/rank.py $role &"
		i=$((i + 1))
	done
	gp trace -q --interval 0.5 --seconds 7 --hang-after 3 -o "$TMP/$name.jsonl" -- sh -c "$cmd wait" \
		> "$TMP/$name.out" 2>&1
	jq -r 'select(.type == "verdict") | .class + ": " + .summary' "$TMP/$name.jsonl"
}
has() { printf '%s\n' "$s" | grep -qF "$1"; }
hasnt() { ! has "$1"; }
s=$(run three yes peer peer late)
say "three ranks: $s"
ok "three ranks: the rank apart is named with its rank and frame" \
	has "3 ranks of rank.py: rank 2 (pid "
ok "... in stall (rank.py:7)" has ") is in stall (rank.py:7) while ranks 0, 1 wait in wait_for_peer (rank.py:4)"
ok "... at rest, no odd one out" sh -c "printf '%s\n' \"\$0\" | grep -q '^idle: ' && ! printf '%s\n' \"\$0\" | grep -qF 'odd one out'" "$s"
s=$(run two yes peer late)
say "two ranks: $s"
ok "two ranks: both frames are named" has "the 2 ranks of rank.py differ: rank 0 (pid "
ok "... rank 1's too" has "rank 1 (pid "
s=$(run plain no peer peer late)
say "three processes, no job: $s"
ok "no job: never as a rank" hasnt "rank "
ok "... nor as ranks" hasnt "ranks"
ok "... nor as the odd one out" hasnt "odd one"
pass
