#!/bin/sh
# gpuprobe stacks on a CPython process: four threads in four Python
# functions (a lock wait, time.sleep, computing, reading a pipe) and the
# main thread in join.  Each thread's Python frames (function, file,
# line) must be the script's tagged lines, under the native frame of the
# evaluation loop.  stacks-python-pybt.sh compares them with gdb's py-bt.
# PYTHON: the interpreter (default /usr/bin/python3; SKIP when absent).
# gdb's attach and python3 start-up are slow on a loaded 2-CPU machine.
: "${E2E_TIMEOUT:=120}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_jq
require_python
SCRIPT=$top_srcdir/tests/real/py4threads.py
line_of() { grep -n "# LINE:$1\$" "$SCRIPT" | cut -d: -f1; }

"$PY" "$SCRIPT" > "$TMP/py.out" 2>&1 &
TPID=$!; bg_track $TPID
ready() { grep -q '^ready' "$TMP/py.out"; }
wait_until 10 ready || framework_failure "py4threads.py never became ready: $(cat "$TMP/py.out")"
tid_of() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$TMP/py.out"; }

F=$TMP/s.json
# snap FILE: a JSON snapshot in which every thread was unwound (on a
# loaded machine a stop can time out; a few tries).
snap() {
	for try in 1 2 3 4 5; do
		gp stacks --format json "$TPID" > "$1" 2> "$TMP/err"
		_rc=$?
		[ "$(jq '[.threads[] | select(.unwind != "ok")] | length' "$1")" = 0 ] && return $_rc
		say "try $try: a thread was not unwound ($(jq -c '[.threads[] | select(.unwind != "ok") | .unwind]' "$1"))"
	done
	return $_rc
}
snap "$F"
rc=$?
ok "exit 0 (got $rc)" [ $rc -eq 0 ]
ok "the line names Python $PY_VERSION" sh -c "jq -r .python.version '$F' | grep -q '^$PY_VERSION\.'"
ok "no thread left stopped" no_stopped "$TPID"

# youngest TID: "function:line" of the thread's youngest Python frame.
youngest() {
	jq -r --argjson t "$1" '.threads[] | select(.tid == $t) | [.frames[]?.python[]?][0] | "\(.function):\(.line)"' "$F"
}
check() {  # check NAME TID FUNCTION [LINE-TAG]
	want="$3:$(line_of "${4:-$3}")"
	got=$(youngest "$2")
	ok "$1 (tid $2): youngest Python frame $want (got $got)" [ "$got" = "$want" ]
}
check "lock wait" "$(tid_of wait_for_lock)" wait_for_lock
check "time.sleep" "$(tid_of nap)" nap
check "reading a pipe" "$(tid_of read_pipe)" read_pipe
got=$(youngest "$(tid_of compute)")
ok "computing: youngest Python frame in spin (got $got)" sh -c "echo '$got' | grep -q '^spin:'"
n=$(jq --argjson t "$(tid_of compute)" '[.threads[] | select(.tid == $t) | .frames[]?.python[]?
	| select(.function == "compute" and .line == '"$(line_of compute)"')] | length' "$F")
ok "computing: spin called from compute:$(line_of compute)" [ "$n" = 1 ]
n=$(jq --arg s "$SCRIPT" '[.threads[].frames[]? | select(.python) | select(.symbol | startswith("_PyEval_EvalFrameDefault") | not)] | length' "$F")
ok "Python frames hang only on _PyEval_EvalFrameDefault frames (others: $n)" [ "$n" = 0 ]
n=$(jq '[.threads[] | select(.python.gil == "held")] | length' "$F")
ok "at most one thread (the computing one) holds the GIL at its stop ($n)" [ "$n" -le 1 ]

# On a loaded machine a thread may not take its stop within 100 ms
# ("unwind":"timeout", and the others wait): a few tries.
want="File \"$SCRIPT\", line $(line_of read_pipe), in read_pipe"
for try in 1 2 3 4 5; do
	gp stacks "$TPID" > "$TMP/text" 2>&1
	grep -q "$want" "$TMP/text" && break
	say "try $try: no traceback line (a stop timed out?)"
done
cat "$TMP/text"
ok "text: traceback lines" grep -q "$want" "$TMP/text"
gp stacks --format json --no-python "$TPID" > "$TMP/nopy.json"
ok "--no-python: no Python frames" sh -c "[ \"\$(jq '[.. | objects | select(has(\"python\"))] | length' '$TMP/nopy.json')\" = 0 ]"

pass
