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

# The whole test runs under timeout(1): nothing can hang `make check`.
# (A test that runs out of time fails: a hang is what these tests catch.)
# E2E_TIMEOUT is the test's own limit; E2E_TIMEOUT_SCALE (a whole
# number, default 1) multiplies every test's limit, for slow builds
# (.ci/run gives the ASan+UBSan pass 4: its bad-input suite took more
# than a flat 180 s there).  The last line says how long the test took.
if [ -z "$GP_E2E_WATCHED" ]; then
	_limit=$(( ${E2E_TIMEOUT:-30} * ${E2E_TIMEOUT_SCALE:-1} ))
	_t0=$(date +%s)
	GP_E2E_WATCHED=1 timeout -k 2 "$_limit" /bin/sh "$0" "$@"
	rc=$?
	[ $rc -eq 124 ] && { say "FAIL: timed out after $_limit s"; rc=1; }
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
# whatever way the test ends.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuprobe-$ME.XXXXXX") || framework_failure "mktemp failed"
BG_PIDS=
bg_track() { BG_PIDS="$BG_PIDS $*"; }
cleanup() {
	for p in $BG_PIDS; do
		kill -KILL "$p" 2>/dev/null
	done
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
