#!/bin/sh
# Bad input, table-driven: each case exits 64 (usage) or 1 (runtime),
# says so on stderr starting with "gpuprobe", within 5 s, never crashes.
. "${0%/*}/lib.sh"

sleep 30 & SELF=$!; bg_track $SELF     # a live PID nobody else traces
failed=0
check() { _want=$1; shift; bad_input "$_want" trace -q "$@"; }   # check WANT-EXIT ARGS...
check 1  4194305
check 64 0
check 64 -1
check 64 abc
check 64 1e3
check 64 --interval 0.01 $SELF
check 64 --interval -1 $SELF
check 64 --interval abc $SELF
check 64 --interval nan $SELF
check 64 --seconds 0 $SELF
check 64 --
check 1  -o "$TMP/missing/dir/t.jsonl" $SELF
check 1  -o "$TMP/missing/dir/t.jsonl" -- sleep 10.$$
check 64 $SELF $SELF
check 64 --name sleep $SELF
check 64 $SELF -- sleep 1
check 64
[ $failed -eq 0 ] || fail "some cases failed"
# The command of the -o case was never left behind.
ok "no 'sleep 10.$$' left behind" sh -c "! pgrep -f -x 'sleep 10.$$' >/dev/null"
pass
