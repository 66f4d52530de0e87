#!/bin/sh
# A test leaves no process behind, however it ends (issue 27): a small
# test of lib.sh's starts, in a session of its own (setsid, as
# tests/real/run.sh starts each case), tests/real/pool-rest.py (a
# multiprocessing Pool, which replaces a killed worker within 0.1 s), and
# a sleeper in its process group, then ends: it passes, fails, times out,
# is sent SIGTERM (make interrupted), or its shell is SIGKILLed (as
# timeout -k does).  Each time, once it returned, tests/leftovers.sh finds
# nothing in its folder (cwd or command line), and finds and kills what a
# stranger of that folder left (its exit status 1, then 0).
# Before: lib.sh killed the pids a test gave bg_track, one by one; the
# pool (5 processes) outlived every one of these endings.
: "${E2E_TIMEOUT:=120}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_python
LEFTOVERS=$top_srcdir/tests/leftovers.sh
[ -f "$LEFTOVERS" ] || framework_failure "no $LEFTOVERS"

# The small test: FOLDER MODE.  Everything it starts runs in FOLDER.
cat > "$TMP/leaver.sh" <<'EOF'
#!/bin/sh
D=$1 MODE=$2
. "$top_srcdir/tests/e2e/lib.sh"
cd "$D" || exit 99
setsid "$PY" "$top_srcdir/tests/real/pool-rest.py" "$D/ready" </dev/null >/dev/null 2>&1 &
sh -c 'sleep 1000; :' "$D/sleeper" &
bg_track $!
pool_up() { test -s "$D/ready"; }
wait_until 30 pool_up || framework_failure "the pool did not start"
say "up"
case $MODE in
pass) pass ;;
fail) fail "on purpose" ;;
*) sleep 1000 ;;
esac
EOF

# leaver MODE: run it in $TMP/MODE (the outer test's own tag removed, so
# that it makes its own); sets D, LPID (its pid, the wrapper's), LOG.
leaver() {
	D=$TMP/$1; LOG=$D.log
	mkdir -p "$D"
	env -u GP_E2E_WATCHED -u GP_TEST_TAG --default-signal=INT,TERM E2E_TIMEOUT=${2:-60} E2E_TIMEOUT_SCALE=1 \
		top_srcdir="$top_srcdir" top_builddir="$top_builddir" GPUPROBE="$GPUPROBE" PY="$PY" \
		/bin/sh "$TMP/leaver.sh" "$D" "$1" > "$LOG" 2>&1 &
	LPID=$!
	bg_track $LPID
}
up() { grep -q 'leaver: up' "$LOG"; }
# nothing_left MODE: no process in $TMP/MODE once the leaver returned
# (what is found is killed, and the check fails).
nothing_left() {
	sh "$LEFTOVERS" --kill "$D" > "$D.left" 2>&1
	_rc=$?
	sed 's/^/    /' "$D.left"
	[ $_rc -eq 0 ]
}

leaver pass
wait $LPID; rc=$?
ok "pass: exit 0 (got $rc)" test $rc -eq 0
ok "pass: nothing left behind" nothing_left

leaver fail
wait $LPID; rc=$?
ok "fail: exit 1 (got $rc)" test $rc -eq 1
ok "fail: nothing left behind" nothing_left

leaver timeout 4
wait $LPID; rc=$?
ok "timed out: exit 1 (got $rc)" test $rc -eq 1
ok "timed out: it says so" grep -q 'FAIL: timed out after 4 s' "$LOG"
ok "timed out: nothing left behind" nothing_left

leaver term
wait_until 30 up || fail "term: the leaver's pool did not start"
kill -TERM $LPID
wait $LPID; rc=$?
ok "SIGTERM: exit 99 (got $rc)" test $rc -eq 99
ok "SIGTERM: nothing left behind" nothing_left

leaver kill
wait_until 30 up || fail "kill: the leaver's pool did not start"
tpid=$(pgrep -P $LPID -x timeout)
inner=$(pgrep -P "$tpid")
[ -n "$inner" ] || framework_failure "kill: no shell under timeout"
kill -KILL $inner
wait $LPID; rc=$?
sed 's/^/    /' "$LOG"
ok "inner shell SIGKILLed: the test fails (exit $rc)" test $rc -ne 0 -a $rc -ne 77
ok "inner shell SIGKILLed: the wrapper says what it killed" grep -q 'leaver: FAIL: [0-9]* processes left behind' "$LOG"
ok "inner shell SIGKILLed: the pool among them" grep -q 'left behind: .*pool-rest.py' "$LOG"
ok "inner shell SIGKILLed: nothing left behind" nothing_left

# tests/leftovers.sh itself: a stranger of a folder (in a session of its
# own, the folder in its command line, its child elsewhere) is found,
# killed (exit 1), then nothing is (exit 0); one that left the folder is
# not, nor the other commands of the pipeline leftovers.sh runs in.
D=$TMP/stranger; mkdir -p "$D"
(cd "$D" && exec setsid sh -c 'cd /; sleep 1000; :') &
S=$!; bg_track $S
(cd / && exec setsid sh -c 'sleep 1000; :' "$D/x") &
S2=$!; bg_track $S2
wait_until 3 sh -c "pgrep -P $S -x sleep >/dev/null && pgrep -P $S2 -x sleep >/dev/null" ||
	framework_failure "the strangers did not start"
sh "$LEFTOVERS" --kill "$D" > "$D.left" 2>&1
rc=$?
sed 's/^/    /' "$D.left"
ok "leftovers.sh: a stranger found, exit 1 (got $rc)" test $rc -eq 1
ok "leftovers.sh: its command line named" grep -q "pid $S2, .*: sh -c sleep 1000; : $D/x\$" "$D.left"
ok "leftovers.sh: its child named" grep -q "in /: sleep 1000\$" "$D.left"
ok "leftovers.sh: the process whose cwd it left is not" sh -c "! grep -q 'pid $S,' '$D.left'"
ok "leftovers.sh: killed" sh -c "! kill -0 $S2 2>/dev/null || [ \"\$(ps -o stat= -p $S2)\" = Z ]"
ok "leftovers.sh: then none, exit 0" sh "$LEFTOVERS" "$D"
(cd "$D" && sh "$LEFTOVERS" --kill "$D" | cat > "$D.pipe")
ok "leftovers.sh: the cat it writes to (in the folder) is neither killed nor listed" \
	grep -q '^leftovers: no process left behind' "$D.pipe"
pass
