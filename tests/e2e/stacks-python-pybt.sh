#!/bin/sh
# gpuprobe's Python frames against gdb's py-bt: the same five threads of
# tests/real/py4threads.py, frame by frame (file, line, function), through
# the interpreter's own gdb extension (Debian's python3-dbg installs it
# with the debug info).  SKIP without gdb or a py-bt that prints frames.
# PYTHON: the interpreter (default /usr/bin/python3; SKIP when absent).
# gdb's attach and python3 start-up are slow on a loaded 2-CPU machine.
: "${E2E_TIMEOUT:=150}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_jq
require_python
command -v gdb > /dev/null 2>&1 || skip "no gdb (bootstrap.sh installs gdb and python3-dbg)"
SCRIPT=$top_srcdir/tests/real/py4threads.py

"$PY" "$SCRIPT" > "$TMP/py.out" 2>&1 &
TPID=$!; bg_track $TPID
ready() { grep -q '^ready' "$TMP/py.out"; }
wait_until 10 ready || framework_failure "py4threads.py never became ready: $(cat "$TMP/py.out")"

# A snapshot in which every thread was unwound (a stop can time out on a
# loaded machine) and the main thread already in join, then py-bt of the
# same process.  "ready" is printed before join: on a loaded machine the
# main thread can still be at the print line, waiting for the GIL back
# from the computing thread after its write (seen on CI: <module>:60).
F=$TMP/s.json
for try in 1 2 3 4 5 6 7 8; do
	gp stacks --format json "$TPID" > "$F" 2> "$TMP/err"
	if [ "$(jq '[.threads[] | select(.unwind != "ok")] | length' "$F")" != 0 ]; then
		say "try $try: a thread was not unwound"
	elif [ "$(jq --argjson m "$TPID" '[.threads[] | select(.tid == $m) | (.frames[]?.python[]?, .python.unplaced[]?) | select(.function | test("join"))] | length' "$F")" = 0 ]; then
		say "try $try: the main thread is not in join yet"
	else
		break
	fi
	sleep 0.5
done
timeout 90 gdb -q -batch -p "$TPID" -ex 'thread apply all py-bt' > "$TMP/pybt" 2>&1
grep -q '^  File "' "$TMP/pybt" || skip "gdb's py-bt printed no Python frame (no python3-dbg for $PY?)"
for f in /proc/$TPID/task/*/stat; do
	read -r line < "$f" 2>/dev/null || continue
	st=${line##*) }; st=${st%% *}
	case $st in t|T) fail "thread ${f#/proc/$TPID/task/} left in state $st" ;; esac
done
"$PY" "$top_srcdir/tests/e2e/pystacks-compare.py" "$F" "$TMP/pybt" "$SCRIPT"
ok "every thread's Python frames agree with py-bt" [ $? -eq 0 ]
pass
