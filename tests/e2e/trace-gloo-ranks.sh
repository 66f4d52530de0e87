#!/bin/sh
# Real ranks without a GPU (issue 19): two processes of a torch.distributed
# job, Debian's python3-torch with the gloo backend on the CPU
# (tests/workloads/gloo_ranks.py).  Rank 0 waits in all_reduce for rank 1,
# which never calls it (it sleeps in load_next_batch).  The verdict is
# hang-blocked and names both: rank 0's all_reduce line and rank 1's
# other frame.  Skips (77) only when torch cannot be imported.
#
# Wall time: importing torch takes 2-9 s (more on a loaded machine); the
# trace is stopped (SIGINT, as from a terminal) --hang-after plus a
# margin after both ranks said they were ready, not after a fixed time.
E2E_TIMEOUT=${E2E_TIMEOUT:-150}
. "${0%/*}/lib.sh"
require_jq
# Debian's torch is in /usr/lib/python3/dist-packages: its python3, not
# another one first on PATH (pyenv).
PY=
for p in python3 /usr/bin/python3; do
	# find_spec, not an import: importing torch costs seconds; a torch
	# that is there but broken fails the test below, it is no skip.
	if command -v "$p" > /dev/null 2>&1 \
	   && "$p" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)' 2> /dev/null; then
		PY=$(command -v "$p")
		break
	fi
done
[ -n "$PY" ] || skip "torch is not installed (apt-get install python3-torch; bootstrap.sh does)"
W=$top_srcdir/tests/workloads/gloo_ranks.py
HANG_AFTER=3
F=$TMP/t.jsonl
# sh is the job's launcher (not a rank); the ranks say "ready" into files.
"$GPUPROBE" trace -q --kill-after 1 --interval 0.5 --hang-after $HANG_AFTER -o "$F" -- \
	sh -c "'$PY' '$W' 0 '$TMP/init' > '$TMP/r0' 2>&1 & '$PY' '$W' 1 '$TMP/init' > '$TMP/r1' 2>&1 & wait" \
	> "$TMP/out" 2>&1 &
GP=$!
bg_track $GP
ready() { grep -q ready "$TMP/r0" 2>/dev/null && grep -q ready "$TMP/r1" 2>/dev/null; }
t0=$(now)
wait_until 120 ready || { cat "$TMP/r0" "$TMP/r1" "$TMP/out" 2>/dev/null; fail "the ranks were not ready after 120 s"; }
say "both ranks ready after $(elapsed "$t0") s"
sleep $((HANG_AFTER + 3))
kill -INT $GP || framework_failure "cannot signal gpuprobe"
gp_done() { ! kill -0 $GP 2>/dev/null; }
wait_until 15 gp_done || fail "gpuprobe still running 15 s after SIGINT"
wait $GP
say "traced for $(elapsed "$t0") s after the ranks' start"
cls=$(jq -r 'select(.type == "verdict") | .class' "$F")
s=$(jq -r 'select(.type == "verdict") | .summary' "$F")
say "verdict: $cls: $s"
ok "the class is hang-blocked" test "$cls" = hang-blocked
has() { printf '%s\n' "$s" | grep -qF "$1"; }
ok "rank 0's all_reduce and the line of the job that called it are named" \
	has "waits in all_reduce (distributed_c10d.py:"
ok "... called from reduce_grads (gloo_ranks.py:21)" has "called from reduce_grads (gloo_ranks.py:21)"
ok "rank 1's other frame is named" has "in load_next_batch (gloo_ranks.py:25)"

# The same job traced apart, as on two nodes (issue 29): each rank by a
# gpuprobe of its own, then `report A B`: rank 1 (no RANK in its
# environment: a rank by its gloo thread) is the one outside the
# collective, named with its file's host.
rm -f "$TMP/init" "$TMP/r0" "$TMP/r1"
for r in 0 1; do
	env --default-signal=INT "$GPUPROBE" trace -q --kill-after 1 --interval 0.5 --hang-after $HANG_AFTER \
		-o "$TMP/node$r.jsonl" -- "$PY" "$W" $r "$TMP/init" > "$TMP/r$r" 2>&1 &
	eval "GP$r=\$!"
	bg_track $!
done
wait_until 120 ready || { cat "$TMP/r0" "$TMP/r1" 2>/dev/null; fail "the ranks traced apart were not ready after 120 s"; }
sleep $((HANG_AFTER + 3))
kill -INT $GP0 $GP1 || framework_failure "cannot signal gpuprobe"
both_done() { ! kill -0 $GP0 2>/dev/null && ! kill -0 $GP1 2>/dev/null; }
wait_until 15 both_done || fail "gpuprobe still running 15 s after SIGINT"
wait $GP0 $GP1
host=$(jq -r 'select(.type == "header") | .host.hostname' "$TMP/node1.jsonl")
pid1=$(jq -r 'select(.type == "target") | .pid' "$TMP/node1.jsonl" | head -n 1)
s=$("$GPUPROBE" report --format text "$TMP/node0.jsonl" "$TMP/node1.jsonl" | head -n 1)
say "report of the two: $s"
ok "report names rank 1's frame as the odd one, with its host" \
	has "across the files: 2 ranks of gloo_ranks.py: pid $pid1 on $host (node1.jsonl) is in load_next_batch (gloo_ranks.py:25) while pid "
ok "... and rank 0's all_reduce" has "waits in all_reduce (distributed_c10d.py:"
ok "... the odd one out" has ": the odd one out"
pass
