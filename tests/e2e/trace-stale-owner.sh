#!/bin/sh
# A cycle is certain only in fresh reads (issue 27, part 2).
# tests/workloads/mutex-stale: M1 changes hands while a waiter sleeps on,
# never running; a reading of its owner from before the hand-over, with
# the first holder's new wait, closes a cycle that is not there.  Before
# the fix (the waiter's edge carried over with its unchanged record), the
# trace said "deadlock: thread H (holder) waits for the mutex owned by
# thread B; thread B (queued-b) waits for the mutex owned by thread H",
# high, with --stacks none, and watch wrote a bundle for it.
# The truth: no deadlock in any --stacks mode, queued-b's edge names the
# owner that holds M1 now (queued-c), and watch writes no bundle; a true
# ABBA (tests/workloads/mutex-abba) is still a deadlock, high, both named.
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/lib.sh"
require_jq
require_workload mutex-stale
require_workload mutex-abba
has() { printf '%s' "$1" | grep -q "$2"; }
lacks() { ! has "$@"; }

for st in none hot all; do
	out=$TMP/stale-$st.jsonl
	gp trace -q --hang-after 4 --seconds 7 --stacks "$st" -o "$out" -- \
		"$WORKLOADS/mutex-stale" 1.5 > /dev/null 2>&1
	v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$out")
	say "--stacks $st: $v"
	ok "--stacks $st: not called a deadlock" lacks "$v" 'each waits on the next'
	# queued-b's last edge (delta records carry "on" when it changes;
	# comm only in whole ones): the owner that holds M1 now.
	owner=$(jq -s -r '[.[] | select(.type=="sample") | .threads[]?] as $r
		| ($r | map(select(.comm and .tid) | {key: (.tid | tostring), value: .comm})
		   | from_entries) as $c
		| $r | map(select(.tid and .on)) | group_by(.tid) | map(last)
		| map(select($c[.tid | tostring] == "queued-b")) | .[0]
		| "\(.on.how) \($c[.on.id | tostring])"' "$out")
	ok "--stacks $st: queued-b waits on M1's owner now, queued-c (got: ${owner:-nothing})" \
		test "$owner" = "mutex queued-c"
done

# watch: no bundle for it.
"$WORKLOADS/mutex-stale" 1.5 > /dev/null 2>&1 &
ms=$!
bg_track $ms
mkdir "$TMP/bundles"
gp watch --hang-after 3 --seconds 9 --bundle-every 0 --bundle-dir "$TMP/bundles" "$ms" \
	> "$TMP/watch.log" 2>&1
ok "watch: no bundle for a deadlock that is not there ($(ls "$TMP/bundles" | tr '\n' ' '))" \
	test -z "$(ls "$TMP/bundles")"
kill -KILL "$ms" 2>/dev/null

# A true ABBA of pthread mutexes: a deadlock, high, both holders named.
gp trace -q --hang-after 3 --seconds 5 --stacks none -o "$TMP/abba.jsonl" -- \
	"$WORKLOADS/mutex-abba" > /dev/null 2>&1
v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$TMP/abba.jsonl")
say "abba: $v"
ok "abba: hang-blocked, high" has "$v" '^hang-blocked high: '
ok "abba: a deadlock naming both lockers" has "$v" \
	'deadlock: thread [0-9]* (locker-a) .*thread [0-9]* (locker-b) .*each waits on the next'
pass
