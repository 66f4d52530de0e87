#!/bin/sh
# Ranks (issue 19): three python3 processes of one job, two waiting for a
# peer (a read on a pipe nobody writes: the shape of a collective whose
# peer never came) and one asleep elsewhere.  The verdict names the odd
# one out and both frames, Python lines included; with two ranks, both
# are named.  Before, the summary named only the frame most threads wait
# in.
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
run() { # name ranks...: `sh -c` starts them (sh is the parent, not a rank)
	name=$1; shift
	cmd=
	for role in "$@"; do cmd="$cmd python3 $TMP/rank.py $role &"; done
	gp trace -q --interval 0.5 --seconds 12 --hang-after 3 -o "$TMP/$name.jsonl" -- sh -c "$cmd wait" \
		> "$TMP/$name.out" 2>&1
	jq -r 'select(.type == "verdict") | .summary' "$TMP/$name.jsonl"
}
s=$(run three peer peer late)
say "three: $s"
ok "three ranks: the odd one out is named" sh -c "echo '$s' | grep -q 'is in stall (rank.py:7): the odd one out'"
ok "three ranks: the others' frame too" sh -c "echo '$s' | grep -q 'wait in wait_for_peer (rank.py:4)'"
s=$(run two peer late)
say "two: $s"
ok "two ranks: both frames are named" sh -c "echo '$s' | grep -q 'the two python3 processes differ'"
pass
