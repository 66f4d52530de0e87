#!/bin/sh
# Output faults: a full disk (/dev/full) is a write error, exit 1 and one
# line naming it, never a silent truncation; '-o -' streams to stdout as
# root too (a dup of fd 1: no open of the /dev/stdout symlink, which
# O_NOFOLLOW refuses, no O_TRUNC of a file stdout appends to); an output
# path that is a symlink is not followed as root; a FIFO with a reader
# works.
. "${0%/*}/../e2e/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_jq
require_workload sleepers
"$WORKLOADS/sleepers" 3 & T=$!; bg_track $T
wait_until 5 test -e /proc/$T/task || framework_failure "no target"
mkfile "$TMP/f" 1
failed=0
# full WHAT CMD...: CMD (a shell line) exits 1 and says "No space left".
full() {
	what=$1; shift
	timeout -k 1 20 sh -c "$*" < /dev/null > "$TMP/o" 2> "$TMP/e"
	rc=$?
	if [ $rc -eq 1 ] && grep -q '^gpuprobe: .*No space left on device' "$TMP/e"; then
		say "ok: $what -> 1: $(grep -m1 'No space' "$TMP/e")"
	else
		say "FAIL: $what -> exit $rc: $(head -c 300 "$TMP/e" | tr '\n' '~')"
		failed=1
	fi
}
G=$GPUPROBE
full "trace -o /dev/full"          "'$G' trace -q -s 1 -o /dev/full $T"
full "trace -o - > /dev/full"      "'$G' trace -q -s 1 -o - $T > /dev/full"
full "trace > /dev/full"           "'$G' trace -s 1 $T > /dev/full"
full "stacks -o /dev/full"         "'$G' stacks -o /dev/full $T"
full "stacks > /dev/full"          "'$G' stacks $T > /dev/full"
full "stacks -o - > /dev/full"     "'$G' stacks -o - $T > /dev/full"
full "lock -o /dev/full"           "'$G' lock -q --lib '$FAKE_HSA' -o /dev/full '$TMP/f'"
full "lock > /dev/full"            "'$G' lock -q --lib '$FAKE_HSA' '$TMP/f' > /dev/full"
full "pools > /dev/full"           "'$G' pools --lib '$FAKE_HSA' > /dev/full"
full "idle -o /dev/full"           "'$G' idle -s 1 -i 0.5 --lib '$FAKE_HSA' -o /dev/full"
full "report > /dev/full"          "'$G' report '$top_srcdir/tests/fixtures/results/lock-pool-all.jsonl' > /dev/full"
full "info > /dev/full"            "'$G' info --no-runtimes > /dev/full"
full "demo > /dev/full"            "'$G' demo --only exit3 > /dev/full"

# -o - : a valid stream on stdout, as root or not; appended, not truncated.
gp trace -q -s 0.5 -o - $T > "$TMP/stdout.jsonl" 2> "$TMP/e" || { cat "$TMP/e"; failed=1; }
ok "trace -o - streams JSON Lines to stdout" check_jsonl "$TMP/stdout.jsonl"
gp stacks -q -o - --format json $T > "$TMP/stacks.out" 2> "$TMP/e" || { cat "$TMP/e"; failed=1; }
ok "stacks -o - writes its header to stdout" grep -q '"type":"header"' "$TMP/stacks.out"
echo 'kept line' > "$TMP/append"
gp trace -q -s 0.5 -o - $T >> "$TMP/append" 2>/dev/null
ok "trace -o - >> FILE keeps what FILE held" sh -c "head -n 1 '$TMP/append' | grep -qx 'kept line'"

# A symlink as the output path: as root, never followed.
if [ "$(id -u)" -eq 0 ]; then
	echo victim > "$TMP/victim"; touch -d '2020-01-01' "$TMP/victim"
	before=$(fsig "$TMP/victim")
	for cmd in "trace -q -s 0.5 -o $TMP/link $T" "stacks -o $TMP/link $T" \
		   "lock -q --lib $FAKE_HSA -o $TMP/link $TMP/f" \
		   "idle -s 1 -i 0.5 --lib $FAKE_HSA -o $TMP/link"; do
		ln -sf "$TMP/victim" "$TMP/link"
		# shellcheck disable=SC2086
		gp $cmd > /dev/null 2> "$TMP/e"; rc=$?
		if [ $rc -eq 1 ] && grep -q 'a symbolic link, which gpuprobe does not follow as root' "$TMP/e" &&
		   [ "$(fsig "$TMP/victim")" = "$before" ]; then
			say "ok: ${cmd%% *} -o SYMLINK as root: refused, target untouched"
		else
			say "FAIL: ${cmd%% *} -o SYMLINK as root: exit $rc, $(head -n 1 "$TMP/e")"; failed=1
		fi
	done
else
	say "not root: the symlink cases need root (skipped)"
fi

# A FIFO with a reader is a fine output.
mkfifo "$TMP/fifo" || framework_failure mkfifo
cat "$TMP/fifo" > "$TMP/from-fifo" & R=$!
gp trace -q -s 0.5 -o "$TMP/fifo" $T > /dev/null 2>&1
wait $R
ok "trace -o FIFO with a reader streams through it" check_jsonl "$TMP/from-fifo"
# A reader that goes away (issue 18): `trace -o - -- CMD | head -c 100`.
# gpuprobe ignores SIGPIPE, so the write fails with EPIPE and takes the
# output-error path: exit 1 (never 141, killed with no verdict), and the
# command gets SIGTERM, then SIGKILL after --kill-after (it was SIGKILLed
# at once through its parent-death signal).  The reader waits a second
# before it reads and leaves (the pipe holds what comes meanwhile): a
# reader gone at the header made gpuprobe end the command before its
# shell had set its trap (no term.log, 1 CI run in 5).
cat > "$TMP/stubborn.sh" <<'SH'
trap 'echo term >> "$1"' TERM
echo started >> "$1"
while :; do sleep 0.1; done
SH
{ timeout -k 2 20 "$G" trace -q --kill-after 1 -o - -- sh "$TMP/stubborn.sh" "$TMP/term.log" \
	2> "$TMP/pipe.err"; echo $? > "$TMP/pipe.rc"; } | { sleep 1; head -c 100 > /dev/null; }
rc=$(cat "$TMP/pipe.rc")
ok "trace -o - | head -c 100: exit 1, an output error (got $rc)" [ "$rc" = 1 ]
ok "... says it could not write" grep -q '^gpuprobe: .*Broken pipe' "$TMP/pipe.err"
ok "... the command got SIGTERM first" grep -qx term "$TMP/term.log"
ok "... then SIGKILL after --kill-after" grep -q 'output error (killed by signal 9)' "$TMP/pipe.err"
ok "... and is gone" sh -c "! pgrep -f '^sh $TMP/stubborn.sh' > /dev/null"

# The command sees the caller's fd limits, not gpuprobe's raised ones.
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -gt 1024 ]; then
	sh -c "ulimit -Sn 1024; '$G' trace -q -o '$TMP/lim.jsonl' -- sh -c 'ulimit -Sn > \"$TMP/lim\"; ulimit -Hn >> \"$TMP/lim\"'" \
		> /dev/null 2>&1
	ok "the command's soft fd limit is the caller's 1024 (got $(head -n 1 "$TMP/lim"))" \
		[ "$(head -n 1 "$TMP/lim")" = 1024 ]
	ok "and its hard limit the caller's $hard" [ "$(sed -n 2p "$TMP/lim")" = "$hard" ]
else
	say "hard fd limit $hard: nothing to raise (skipped)"
fi
[ $failed -eq 0 ] || fail "some cases failed"
pass
