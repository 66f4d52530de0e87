#!/bin/sh
# Bad input to gpuprobe stacks, table-driven: exit 64 (usage) or 1
# (runtime), one "gpuprobe: ..." line on stderr, within 5 s.
. "${0%/*}/lib.sh"
sleep 30 & SELF=$!; bg_track $SELF
failed=0
check() { _want=$1; shift; bad_input "$_want" stacks "$@"; }   # check WANT-EXIT ARGS...
check 64
check 64 0
check 64 abc
check 64 $SELF $SELF
check 64 --format xml $SELF
check 64 --tid abc $SELF
check 64 --hot-threshold 101 $SELF
check 64 --hot-window -1 $SELF
check 64 --hot --hot-window 0 $SELF
check 1  4194305
check 1  --tid 1 $SELF
check 1  -o "$TMP/missing/dir/s.jsonl" $SELF
[ $failed -eq 0 ] || fail "some cases failed"
ok "--help exits 0 and names the command" sh -c "'$GPUPROBE' stacks --help | grep -q 'gpuprobe stacks'"
pass
