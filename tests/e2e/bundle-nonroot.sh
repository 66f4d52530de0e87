#!/bin/sh
# A bundle of a process gpuprobe may not ptrace or read (gpuprobe as
# nobody, the target root's): it still completes, exit 0, and its
# MANIFEST says which parts are missing or cut, and why.
: "${E2E_TIMEOUT:=60}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_workload sleepers
[ "$(id -u)" = 0 ] || skip "needs root to drop to nobody"
command -v setpriv >/dev/null 2>&1 || skip "setpriv missing (util-linux)"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
nobody true 2>/dev/null || skip "setpriv cannot drop privileges here"
nobody test -x "$GPUPROBE" || skip "nobody cannot run $GPUPROBE"
"$WORKLOADS/sleepers" 2 > /dev/null &
T=$!; bg_track $T
O=$TMP/out
mkdir "$O" && chmod 1777 "$O" && chmod 711 "$TMP"

cd "$O" || framework_failure "cd $O"
start=$(now)
TMPDIR=$O nobody timeout 60 "$GPUPROBE" bundle "$T" --seconds 2 -o "$O/b.tar.gz" > "$TMP/stdout" 2> "$TMP/err"
rc=$?
took=$(elapsed "$start")
cat "$TMP/err"
ok "exit 0 (got $rc, ${took} s)" [ $rc -eq 0 ]
ok "the bundle is there" test -s "$O/b.tar.gz"
mkdir "$TMP/x" && tar -xzf "$O/b.tar.gz" -C "$TMP/x" || fail "tar cannot read the bundle"
M=$TMP/x/b/MANIFEST
ok "the folder in the archive is named as the archive (b)" test -f "$M"
cat "$M"
ok "MANIFEST says gpuprobe was not root" grep -q 'as uid 65534 (not root' "$M"
ok "MANIFEST says what each missing capability cost" grep -q "^capabilities: missing SYS_PTRACE (costs user stacks" "$M"
ok "MANIFEST: info and the trace completed" sh -c "grep -q '^info.txt  *ok ' '$M' && grep -q '^trace.jsonl  *ok ' '$M'"
ok "MANIFEST: the stacks say ptrace was denied" grep -qi 'stacks.txt:.*\(denied\|not permitted\|root\)' "$M"
ok "MANIFEST: the runtime libraries are missing, /proc/PID/maps unreadable" \
	grep -q "/proc/$T/maps: Permission denied" "$M"
ok "MANIFEST: the GPU fds unknown, and why" grep -q "/proc/$T/fd: Permission denied" "$M"
ok "MANIFEST lists what is missing" grep -q '^Missing, cut or skipped, and why:' "$M"
ok "no working directory left behind" sh -c "! ls '$O' | grep -q gpuprobe-bundle\\."
ok "the target was not left stopped" no_stopped "$T"
pass
