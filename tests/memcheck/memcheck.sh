#!/bin/sh
# Valgrind memcheck of the main commands (make memcheck): trace a short
# command, report the saved result (markdown, text, json), stacks of a
# test workload, lock and pools against the HSA test double, info.  Any
# error, or a definite/indirect leak, fails (--error-exitcode).
# Suppressions (memcheck.supp) are for libraries' own caches, each with
# the reason.  Exit 77 without valgrind.
E2E_TIMEOUT=${E2E_TIMEOUT:-600}
. "${0%/*}/../e2e/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_workload sleepers
command -v valgrind >/dev/null 2>&1 || skip "no valgrind (apt-get install valgrind)"
VG="valgrind -q --error-exitcode=42 --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --track-fds=no
    --suppressions=$top_srcdir/tests/memcheck/memcheck.supp"
failed=0
vg() {   # vg NAME ARGS...
	name=$1; shift
	# shellcheck disable=SC2086
	timeout -k 2 300 $VG --log-file="$TMP/vg-$name.%p" "$GPUPROBE" "$@" < /dev/null > "$TMP/out-$name" 2> "$TMP/err-$name"
	rc=$?
	if [ $rc -eq 42 ] || grep -qs 'ERROR SUMMARY: [1-9]\|definitely lost\|indirectly lost\|Invalid\|uninitialised' "$TMP"/vg-$name.*; then
		say "FAIL: $name: memcheck errors (exit $rc):"
		cat "$TMP"/vg-$name.* | head -n 60
		failed=1
	elif [ $rc -ge 124 ]; then
		say "FAIL: $name: exit $rc (timeout or crash)"; failed=1
	else
		say "ok: $name (exit $rc): memcheck clean"
	fi
}
mkfile "$TMP/f" 4
vg trace trace -q -s 2 -i 0.25 --stacks all -o "$TMP/t.jsonl" -- "$WORKLOADS/sleepers" 3
"$WORKLOADS/sleepers" 3 & T=$!; bg_track $T
wait_until 5 test -e /proc/$T/task || framework_failure "no workload"
vg trace-pid trace -q -s 1 -i 0.25 -o "$TMP/t2.jsonl" $T
vg stacks stacks --hot-window 0 -o "$TMP/s.jsonl" $T
vg report-md report "$TMP/t.jsonl" "$TMP/s.jsonl" "$top_srcdir/tests/fixtures/results/lock-pool-all.jsonl"
vg report-text report --format text "$TMP/t.jsonl"
vg report-json report --format json "$TMP/t.jsonl"
vg lock lock -q --lib "$FAKE_HSA" --pool all -o "$TMP/l.jsonl" "$TMP/f"
vg pools pools --lib "$FAKE_HSA"
vg info info --no-runtimes
[ $failed -eq 0 ] || fail "memcheck found errors"
pass
