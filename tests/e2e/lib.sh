# Shared helpers of the end-to-end tests of gpuprobe (POSIX sh).
# Sourced by each tests/e2e/*.sh as: . "${0%/*}/lib.sh"
#
# Conventions (strace's and Automake's): a test prints what it checks;
# exit 0 pass, 1 fail, 77 skip, 99 the harness itself broke.
# Environment, set by AM_TESTS_ENVIRONMENT under `make check`:
#   top_builddir, top_srcdir, GPUPROBE (src/gpuprobe), WORKLOADS
#   (tests/workloads in the build tree).  Run by hand, they default to
#   the tree this script lives in.

ME=${0##*/}
ME=${ME%.sh}

: "${top_srcdir:=$(cd "${0%/*}/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${GPUPROBE:=$top_builddir/src/gpuprobe}"
: "${WORKLOADS:=$top_builddir/tests/workloads}"

say()  { printf '%s: %s\n' "$ME" "$*"; }
fail() { printf '%s: FAIL: %s\n' "$ME" "$*"; exit 1; }
skip() { printf '%s: SKIP: %s\n' "$ME" "$*"; exit 77; }
framework_failure() { printf '%s: HARNESS: %s\n' "$ME" "$*"; exit 99; }
pass() { say "PASS${1:+: $*}"; exit 0; }

# ok COND-DESCRIPTION CMD...: run CMD; print the check; fail if false.
ok() {
	desc=$1; shift
	if "$@"; then say "ok: $desc"; else fail "$desc"; fi
}

# ---- processes: a test leaves none behind (issue 27) ------------------
# Every process a test starts carries the test's GP_TEST_TAG in its
# environment (set below, one value per run of a test), whatever its
# session or process group (tests/real/run.sh starts each case with
# setsid): at its end the test kills every process that carries it, and
# the wrapper below kills what is left of the test's process group and
# of its tag.  (A program that clears its environment and leaves the
# process group escapes both: none does here.)  tests/leftovers.sh finds
# what a whole run left behind.

# _ancestors: this shell's pid and those of its ancestors (never killed).
_ancestors() {
	_an=$$ _ax=$$
	while _ax=$(awk '/^PPid:/ { print $2 }' "/proc/$_ax/status" 2>/dev/null) &&
	      [ -n "$_ax" ] && [ "$_ax" -gt 1 ]; do
		_an="$_an $_ax"
	done
	echo "$_an"
}
# procs_in sid|pgid ID: the live processes of session or process group ID.
procs_in() {
	ps -eo pid=,"$1"=,stat= | awk -v id="$2" '$2 == id && $3 !~ /^Z/ { print $1 }'
}
# procs_tagged TAG: the live processes whose environment holds
# GP_TEST_TAG=TAG (a zombie's environment reads empty; the grep itself
# runs without the tag, so it never lists itself).
procs_tagged() {
	[ -n "$1" ] || return 0
	env -u GP_TEST_TAG timeout 10 grep -lsxzF "GP_TEST_TAG=$1" /proc/[0-9]*/environ |
		sed -e 's|^/proc/||' -e 's|/environ$||'
}
# kill_all LISTER [ARGS...]: SIGKILL every process LISTER prints (never
# this shell nor an ancestor), round after round until a round finds none
# alive: a process that forks between the listing and the kill is caught
# by the next round (a multiprocessing Pool replaces a dead worker within
# 0.1 s: killing pool-rest.py's session once, its pids listed by one ps,
# left 1-2 new workers behind in 3 runs of 4, for good).  Gives up after
# 100 rounds (a process in uninterruptible sleep), saying which.  Adds
# the pids it killed to KILLED; with KILL_SAY=1, first prints each one
# (pid, age in seconds, command line).
KILLED=
kill_all() {
	_keep=" $(_ancestors) "
	_round=0
	while :; do
		_n=0 _l=
		for _k in $("$@"); do
			case $_keep in *" $_k "*) ;; *) _l="$_l $_k" ;; esac
		done
		[ "$KILL_SAY" = 1 ] && [ -n "$_l" ] &&
			ps -o pid=,etimes=,args= -p "$(echo $_l | tr ' ' ,)" 2>/dev/null | sed "s/^/$ME: left behind: /"
		for _k in $_l; do
			if kill -KILL "$_k" 2>/dev/null; then
				_n=$((_n + 1))
				case " $KILLED " in *" $_k "*) ;; *) KILLED="$KILLED $_k" ;; esac
			fi
		done
		[ $_n -eq 0 ] && return 0
		_round=$((_round + 1))
		if [ $_round -ge 100 ]; then
			say "still alive after 100 rounds of SIGKILL:$(for _k in $("$@"); do printf ' %s' "$_k"; done)"
			return 1
		fi
		sleep 0.05
	done
}

# The whole test runs under timeout(1): nothing can hang `make check`.
# (A test that runs out of time fails: a hang is what these tests catch.)
# E2E_TIMEOUT is the test's own limit; E2E_TIMEOUT_SCALE (a whole
# number, default 1) multiplies every test's limit, for slow builds
# (.ci/run gives the ASan+UBSan pass 4: its bad-input suite took more
# than a flat 180 s there).  The last line says how long the test took.
if [ -z "$GP_E2E_WATCHED" ]; then
	_limit=$(( ${E2E_TIMEOUT:-30} * ${E2E_TIMEOUT_SCALE:-1} ))
	_t0=$(date +%s)
	_tag="$top_srcdir|$ME|$$|$_t0"
	# timeout(1) makes a process group of its own, the test's (a
	# background job, so that a signal to this shell, make interrupted,
	# is passed on at once; its stdin kept, not /dev/null).
	if [ -r /dev/stdin ]; then exec 3<&0; else exec 3</dev/null; fi
	GP_E2E_WATCHED=1 GP_TEST_TAG=$_tag timeout -k 2 "$_limit" /bin/sh "$0" "$@" <&3 3<&- &
	_tpid=$!
	exec 3<&-
	trap 'kill -TERM "$_tpid" 2>/dev/null' HUP INT TERM
	while :; do
		wait "$_tpid"
		rc=$?
		kill -0 "$_tpid" 2>/dev/null || break
	done
	[ $rc -eq 124 ] && { say "FAIL: timed out after $_limit s"; rc=1; }
	# What the test left (it was killed, or something escaped its own
	# cleanup): listed, killed, and the test fails.
	KILL_SAY=1
	kill_all procs_in pgid "$_tpid"
	kill_all procs_tagged "$_tag"
	if [ -n "$KILLED" ]; then
		say "FAIL: $(echo $KILLED | wc -w) processes left behind, killed:$KILLED"
		[ $rc -eq 0 ] || [ $rc -eq 77 ] && rc=1
	fi
	say "took $(( $(date +%s) - _t0 )) s (limit $_limit s)"
	exit $rc
fi

[ -x "$GPUPROBE" ] || framework_failure "no gpuprobe at $GPUPROBE"
command -v timeout >/dev/null 2>&1 || skip "timeout(1) is missing"
require_jq() { command -v jq >/dev/null 2>&1 || skip "jq is missing (bootstrap.sh installs it)"; }
require_workload() {
	[ -x "$WORKLOADS/$1" ] || framework_failure "workload $WORKLOADS/$1 not built"
}

# A private scratch directory, and background processes, both removed
# whatever way the test ends: the pids given to bg_track, then every
# process the test started (its GP_TEST_TAG, above), whatever its session.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuprobe-$ME.XXXXXX") || framework_failure "mktemp failed"
BG_PIDS=
bg_track() { BG_PIDS="$BG_PIDS $*"; }
cleanup() {
	for p in $BG_PIDS; do
		kill -KILL "$p" 2>/dev/null
	done
	kill_all procs_tagged "$GP_TEST_TAG"
	rm -rf "$TMP"
}
trap 'rc=$?; trap - EXIT; cleanup; exit $rc' EXIT
trap 'exit 99' HUP INT TERM

# gp [ARGS...]: gpuprobe, never allowed to hang (GP_TIMEOUT, default 15 s).
gp() { timeout -k 2 "${GP_TIMEOUT:-15}" "$GPUPROBE" "$@"; }

# now: monotonic-enough seconds with decimals (for elapsed-time checks).
now() { date +%s.%N; }
# elapsed START: seconds since START (from now()).
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# fcmp A OP B: floating-point comparison, e.g. fcmp "$x" '>=' 80
fcmp() { awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }"; }

# alive PID: the process exists and is not a zombie.
alive() {
	st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	case $st in Z*|'') return 1 ;; esac
	return 0
}

# wait_until SECONDS CMD...: poll CMD every 0.05 s; 1 if it never held.
wait_until() {
	_end=$(awk -v t="$1" -v n="$(now)" 'BEGIN { printf "%.3f", n + t }'); shift
	while ! "$@"; do
		fcmp "$(now)" '<' "$_end" || return 1
		sleep 0.05
	done
	return 0
}

# check_jsonl FILE [--partial]: every line is a JSON object with a string
# "type".  With --partial, a last line without its '\n' (a write cut by a
# kill) is ignored; otherwise the file must end with '\n'.
check_jsonl() {
	require_jq
	_f=$1
	[ -s "$_f" ] || { say "check_jsonl: $_f is empty or missing"; return 1; }
	_src=$_f
	if [ "$(tail -c 1 "$_f" | od -An -c | tr -d ' ')" != '\n' ]; then
		if [ "$2" = --partial ]; then
			_src=$TMP/.complete-lines
			sed '$d' "$_f" > "$_src"
			say "check_jsonl: ignoring the unterminated last line"
		else
			say "check_jsonl: $_f does not end with a newline"
			return 1
		fi
	fi
	_bad=$(jq -R -r 'try (fromjson
		| if type == "object" and (.type | type) == "string" then empty
		  else "line \(input_line_number): no \"type\"" end)
		catch "line \(input_line_number): not JSON"' "$_src" 2>&1)
	[ $? -eq 0 ] && [ -z "$_bad" ] && return 0
	say "check_jsonl: $_f: $(printf '%s' "$_bad" | head -n 3 | tr '\n' ';')"
	return 1
}

# count TYPE FILE
count() { jq -r --arg t "$1" 'select(.type == $t) | .type' "$2" | wc -l; }

# no_stopped PID: no thread of PID is in state t or T (stat field 3).
no_stopped() {
	for f in /proc/$1/task/*/stat; do
		read -r line < "$f" 2>/dev/null || continue
		st=${line##*) }
		st=${st%% *}
		case $st in t|T) say "thread ${f#/proc/$1/task/} is in state $st"; return 1 ;; esac
	done
	return 0
}

# require_python: $PY and its $PY_VERSION (3.11), a CPython whose frames gpuprobe reads (3.11-3.13;
# PYTHON, default /usr/bin/python3), or SKIP saying why not.
require_python() {
	PY=${PYTHON:-/usr/bin/python3}
	[ -x "$PY" ] || skip "no $PY"
	PY_VERSION=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || skip "$PY does not run"
	case $PY_VERSION in 3.11|3.12|3.13) ;; *) skip "$PY is Python $PY_VERSION (3.11-3.13 are read)" ;; esac
}

# wait_target FILE: sets $pid, the traced command's, from the target line
# that trace -o FILE writes once the command started (fails after 5 s).
wait_target() {
	_target_pid() { pid=$(jq -r 'select(.type == "target") | .pid' "$1" 2>/dev/null); [ -n "$pid" ]; }
	wait_until 5 _target_pid "$1" || fail "no target line within 5 s"
}

# bad_input WANT ARGS...: gpuprobe ARGS exits WANT within 5 s, with a first
# line on stderr (hints aside) that starts with "gpuprobe"; failed=1 if not.
bad_input() {
	_want=$1; shift
	timeout -k 1 5 "$GPUPROBE" "$@" > "$TMP/out" 2> "$TMP/err" < /dev/null
	_rc=$?
	_first=$(grep -v '^gpuprobe: hint' "$TMP/err" | head -n 1)
	case $_first in
	gpuprobe*) if [ $_rc -eq "$_want" ]; then say "ok: $* -> $_rc: $_first"; return 0; fi ;;
	esac
	say "FAIL: $* -> exit $_rc (want $_want), stderr: ${_first:-<empty>}"
	[ $_rc -ge 124 ] && say "      (timed out or crashed)"
	failed=1
}

# trace_spin INTERVAL: gpuprobe trace -o $F of the spin workload in the
# background ($GP; its stdout in $TMP/out, stderr in $TMP/err), once the
# target line names the spinner ($pid).  SIGINT has its default action,
# as from a terminal: a background job of a non-interactive shell would
# start with it ignored.
trace_spin() {
	require_workload spin
	env --default-signal=INT "$GPUPROBE" trace -q --interval "$1" -o "$F" -- "$WORKLOADS/spin" 1 \
		> "$TMP/out" 2> "$TMP/err" &
	GP=$!; bg_track $GP
	wait_target "$F"
	bg_track "$pid"
}

# exit_is FILE KEYS WANT: the exit line of FILE, cut to KEYS (jq's
# `{status, signal}`), is WANT (compact JSON).
exit_is() {
	_ex=$(jq -c "select(.type == \"exit\") | {$2}" "$1")
	say "exit line: $_ex"
	ok "exit line is $3" test "$_ex" = "$3"
}
