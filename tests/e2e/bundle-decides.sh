#!/bin/sh
# `gpuprobe bundle PID` with its defaults decides (issue 28): of a Python
# ABBA deadlocked for 40 s its 10 s trace says hang-blocked -- no thread
# had run for 40 s when it began (still_s), so it does not say
# "undecided, 20 s short of --hang-after 30" -- and of a process asleep
# in time.sleep for as long it says no hang.  The bundle itself: each
# MANIFEST time is the part's own (not every part the trace's 10 s), the
# folder inside is named as the archive, and env.txt keeps the variables
# maintainers ask for (NCCL_*, CUDA_*...) and never the others.
: "${E2E_TIMEOUT:=150}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_jq
require_python
SCRIPT=$top_srcdir/tests/real/py-abba.py
STILL=${STILL:-40}

NCCL_DEBUG=INFO CUDA_VISIBLE_DEVICES=0 GP_SECRET_TOKEN=do-not-ship \
	"$PY" "$SCRIPT" > "$TMP/abba.out" 2>&1 &
A=$!; bg_track $A
GP_SECRET_TOKEN=do-not-ship "$PY" -c 'import time; time.sleep(600)' &
S=$!; bg_track $S
start=$(now)
wait_until 10 grep -q deadlocked "$TMP/abba.out" || fail "the ABBA did not start"
say "waiting until both have been still for $STILL s"
sleep "$STILL"

cd "$TMP" || framework_failure "cd $TMP"
GP_TIMEOUT=60 gp bundle "$A" -o "$TMP/abba.tar.gz" > /dev/null 2> "$TMP/abba.err" &
BA=$!
GP_TIMEOUT=60 gp bundle "$S" -o "$TMP/sleeper.tar.gz" > /dev/null 2> "$TMP/sleeper.err"
rs=$?
wait $BA
ra=$?
ok "both bundles exit 0 (abba $ra, sleeper $rs)" [ $ra -eq 0 ] && [ $rs -eq 0 ]
for b in abba sleeper; do
	mkdir "$TMP/$b.x" && tar -xzf "$TMP/$b.tar.gz" -C "$TMP/$b.x" || fail "tar cannot read the $b bundle"
	ok "$b: the folder inside is named as the archive ($b/)" test -f "$TMP/$b.x/$b/MANIFEST"
done
DA=$TMP/abba.x/abba; DS=$TMP/sleeper.x/sleeper
verdict() { jq -c 'select(.type=="verdict") | {class, still_before_s, confidence}' "$1/trace.jsonl"; }
say "abba: $(verdict "$DA")"
say "sleeper: $(verdict "$DS")"
cls() { jq -r 'select(.type=="verdict").class' "$1/trace.jsonl"; }
ok "the deadlock's bundle says hang-blocked" [ "$(cls "$DA")" = hang-blocked ]
still=$(jq -r 'select(.type=="verdict") | (.still_before_s // 0)' "$DA/trace.jsonl")
ok "from how long no thread had run before its trace (still_before_s $still, >= $((STILL - 5)))" \
	fcmp "$still" '>=' "$((STILL - 5))"
ok "its report says hang-blocked too" grep -q 'Verdict: `hang-blocked`' "$DA/report.md"
ok "the sleeper's bundle says no hang ($(cls "$DS"))" sh -c "! cls_=\$(jq -r 'select(.type==\"verdict\").class' '$DS/trace.jsonl') || case \$cls_ in hang-*) exit 1 ;; esac"
cat "$DA/MANIFEST"
secs() { awk -v f="$1" '$1 == f { print $3; exit }' "$DA/MANIFEST"; }
ok "MANIFEST: info.txt took its own time ($(secs info.txt) s), not the trace's" fcmp "$(secs info.txt)" '<' 5
ok "MANIFEST: the trace took about 10 s ($(secs trace.jsonl) s)" fcmp "$(secs trace.jsonl)" '>=' 9.5
ok "env.txt keeps NCCL_DEBUG and CUDA_VISIBLE_DEVICES" \
	sh -c "grep -qx 'NCCL_DEBUG=INFO' '$DA/env.txt' && grep -qx 'CUDA_VISIBLE_DEVICES=0' '$DA/env.txt'"
ok "MANIFEST names the variables kept" grep -q '^Environment kept .*NCCL_DEBUG' "$DA/MANIFEST"
ok "no other variable is anywhere in the bundles" sh -c "! grep -rq 'do-not-ship\\|GP_SECRET_TOKEN' '$TMP/abba.x' '$TMP/sleeper.x'"
ok "PATH is not in env.txt" sh -c "! grep -q '^PATH=' '$DA/env.txt'"
ok "the deadlock was not left stopped" no_stopped "$A"
ok "the sleeper was not left stopped" no_stopped "$S"
say "took $(elapsed "$start") s"
pass
