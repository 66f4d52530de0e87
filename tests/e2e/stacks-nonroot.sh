#!/bin/sh
# Without permission (gpuprobe as nobody, target root's): exit 0, the
# /proc data that is readable, no user frames, and exactly one hint that
# says what to change.
. "${0%/*}/lib.sh"
. "${0%/*}/stacks-lib.sh"
require_jq
[ "$(id -u)" = 0 ] || skip "needs root to drop to nobody"
command -v setpriv >/dev/null 2>&1 || skip "setpriv missing (util-linux)"
setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null || skip "setpriv cannot drop privileges here"
setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$GPUPROBE" || skip "nobody cannot run $GPUPROBE"
start_stackload 3 0
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

nobody timeout 15 "$GPUPROBE" stacks --format json "$TPID" > "$TMP/s.json" 2> "$TMP/err"
rc=$?
cat "$TMP/err"
ok "exit 0 (got $rc)" [ $rc -eq 0 ]
ok "exactly one hint line" sh -c "[ \$(grep -c 'gpuprobe: hint:' '$TMP/err') = 1 ]"
ok "the hint says run as root" grep -q 'hint: .*root' "$TMP/err"
ok "4 threads listed with comm and state" sh -c \
	"[ \"\$(jq '[.threads[] | select(.comm == \"stackload\" and (.state | length) == 1)] | length' '$TMP/s.json')\" = 4 ]"
ok "no user frames" sh -c "[ \"\$(jq '[.threads[] | select(.frames != null)] | length' '$TMP/s.json')\" = 0 ]"
ok "unwind says denied" sh -c "[ \"\$(jq -r '[.threads[].unwind] | unique | join(\",\")' '$TMP/s.json')\" = denied ]"
ok "no thread left stopped" no_stopped "$TPID"

nobody timeout 15 "$GPUPROBE" stacks "$TPID" > "$TMP/out" 2> "$TMP/err2"
ok "text: one hint too" sh -c "[ \$(grep -c 'hint' '$TMP/err2') = 1 ]"
ok "text: the 4 threads are listed, grouped" grep -q '^4 threads in state S' "$TMP/out"
pass
