#!/bin/sh
# The GIL is a lock too (issue 32).  A thread that keeps CPython's GIL
# across a blocking call holds every Python thread of its process: they
# wait in take_gil.  Without the GIL in the verdict, the holder's read()
# (a wait for input) made the trace `idle`.  The truth:
#   - kept: hang-blocked, the waiters counted and the holder named with
#     its call and its Python frame (load_weights);
#   - released (the same program through ctypes.CDLL): the workers go on
#     waking; no GIL is claimed;
#   - kept, then the read returns at +6 s: the program exits, and no hang
#     is claimed;
#   - where a container root of another release is at hand (see
#     container-stacks.sh; root): kept, under its python3.13, traced by
#     pid from the host: the same hang.  Reading 3.13's frozen code faults
#     the binary's file pages in (64 KiB after the first snapshot): that
#     RssFile is ours (rss_file_ours), never the program's progress.
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/lib.sh"
require_jq
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || skip "no python3"
"$PY" -c 'import ctypes, sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' ||
	skip "$PY is not CPython 3.11-3.13 (the GIL's state is read for those)"
G=${0%/*}/gil-held.py
has() { printf '%s' "$1" | grep -q "$2"; }
verdict() { jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$1"; }

gp trace -q --seconds 7 --hang-after 3 -o "$TMP/keep.jsonl" -- "$PY" "$G" keep "$TMP/never" \
	> /dev/null 2>&1
v=$(verdict "$TMP/keep.jsonl")
say "keep: $v"
ok "kept: a hang" test "${v%% *}" = hang-blocked
ok "kept: the waiters counted" has "$v" "3 Python threads of pid [0-9]* wait for the GIL"
ok "kept: the holder, its call and its frame named" \
	has "$v" "held by thread [0-9]* ([a-z0-9]*) asleep in read(fd [0-9]*) in load_weights (gil-held.py:"

gp trace -q --seconds 7 --hang-after 3 -o "$TMP/release.jsonl" -- "$PY" "$G" release "$TMP/never" \
	> /dev/null 2>&1
v=$(verdict "$TMP/release.jsonl")
say "release: $v"
ok "released: no GIL claimed" sh -c "! printf '%s' '$v' | grep -q GIL"

(sleep 6; : > "$TMP/wake") &
gp trace -q --seconds 12 --hang-after 3 -o "$TMP/woken.jsonl" -- "$PY" "$G" keep "$TMP/wake" \
	> /dev/null 2>&1
v=$(verdict "$TMP/woken.jsonl")
say "woken: $v"
ok "woken: it exited, no hang" test "${v%% *}" = exited

ROOT=${GP_CONTAINER_ROOT:-/var/tmp/trixie-root}
if [ "$(id -u)" = 0 ] && [ -x "$ROOT/usr/bin/python3" ] && command -v unshare > /dev/null 2>&1; then
	IN=$(mktemp -d "$ROOT/tmp/gpuprobe-gil.XXXXXX") || framework_failure "cannot write into $ROOT/tmp"
	trap 'rc=$?; trap - EXIT; cleanup; rm -rf "$IN"; exit $rc' EXIT
	cp "$G" "$IN/gil-held.py"
	unshare --mount --pid --fork --mount-proc --root="$ROOT" \
		python3 "${IN#"$ROOT"}/gil-held.py" keep /never > /dev/null 2>&1 &
	bg_track $!
	# the container's python: the oldest process running the script
	wait_until 10 sh -c "pgrep -o -f '^python3 ${IN#"$ROOT"}/gil-held.py keep' > '$TMP/cpid'" ||
		framework_failure "the container's python did not start"
	sleep 1
	gp trace -q --seconds 7 --hang-after 3 -o "$TMP/ctr.jsonl" "$(cat "$TMP/cpid")" > /dev/null 2>&1
	v=$(verdict "$TMP/ctr.jsonl")
	say "container: $v"
	ok "container: a hang behind the GIL" has "$v" "^hang-blocked .*wait for the GIL, held by thread"
	ours=$(jq -s '[.[] | select(.type=="sample") | .proc.rss_file_ours // 0] | max' "$TMP/ctr.jsonl")
	say "container: RssFile our reads made resident: $ours bytes"
else
	say "no container root at $ROOT (or not root): the python3.13 part not run"
fi
pass
