#!/bin/sh
# A lock tried, not waited for (issue 32): SQLite's busy handler sleeps
# and asks for a non-blocking fcntl lock again and again while another
# process holds it.  No thread waits in the lock, so no wait edge names
# the holder: the trace read "idle, high: 1 on a timer".  Where the
# kernel counts the refusals (BPF: root, BTF), the truth:
#   - the poller traced while a holder outside the trace keeps the lock:
#     hang-blocked, "retrying: a lock on FILE refused N times ... held by
#     pid HOLDER (lock-holder)", for fcntl and for flock alike, N within
#     two of the poller's own count of tries in the trace's span;
#   - the same poller whose lock comes free (the holder killed at +3 s)
#     takes it and exits: no retry is claimed after that.
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/lib.sh"
require_jq
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || skip "no python3"
[ "$(id -u)" = 0 ] || skip "not root: BPF does not load"
gp info | grep -q '^BPF *socket bytes' || skip "BPF not usable here: $(gp info | grep '^BPF')"
L=${0%/*}/lock-poll.py
has() { printf '%s' "$1" | grep -q "$2"; }

holder() { # holder HOW: starts the holder as "lock-holder"; sets $hp
	"$PY" "$L" hold "$TMP/db" "$1" > "$TMP/held" &
	hp=$!
	bg_track $hp
	wait_until 5 test -s "$TMP/held" || framework_failure "the holder did not take the lock"
}

for how in fcntl flock; do
	: > "$TMP/db"
	rm -f "$TMP/held"
	holder $how
	gp trace -q --seconds 6 --hang-after 3 -o "$TMP/$how.jsonl" -- "$PY" "$L" poll "$TMP/db" $how 1000 \
		> /dev/null 2>&1
	v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/$how.jsonl")
	say "$how: $v"
	ok "$how: a poller behind a held lock is a hang" test "${v%% *}" = hang-blocked
	ok "$how: the lock's file and refusals are named" has "$v" "retrying: a lock on $TMP/db refused"
	ok "$how: its holder is named" has "$v" "held by pid $hp (lock-holder)"
	n=$(jq -s '[.[] | select(.type=="sample") | .proc.lock_tries.refused // 0] | max' "$TMP/$how.jsonl")
	# 6 s at one try per 0.2 s: about 30 (the first sample's start-up aside)
	ok "$how: the refusals counted ($n)" test "$n" -ge 22 -a "$n" -le 32
	kill -KILL $hp
	wait $hp 2>/dev/null
done

# The lock comes free at +3 s: the poller takes it and ends.
: > "$TMP/db"
rm -f "$TMP/held"
holder fcntl
(sleep 3; kill -KILL $hp) &
gp trace -q --seconds 8 --hang-after 3 -o "$TMP/free.jsonl" -- "$PY" "$L" poll "$TMP/db" fcntl 1000 \
	> "$TMP/free.out" 2>&1
v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/free.jsonl")
say "freed: $v"
ok "the poller got the lock and exited (not a hang)" test "${v%% *}" = exited
ok "no retry claimed" sh -c "! printf '%s' '$v' | grep -q retrying"
pass
