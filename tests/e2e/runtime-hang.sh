#!/bin/sh
# A runtime whose hsa_init never returns (the double's
# GPUPROBE_FAKE_HSA_INIT_HANG=1: blocked in read(2), as a wedged driver):
# pools and lock give up after --timeout, idle after --init-timeout, each
# with one line that says where it waits, exit 1, and nothing left behind.
# (Issue 12: `pools --timeout inf` spun a core for ever; a timeout's
# deadline is now integer ns and every answer of the timed wait handled.)
E2E_TIMEOUT=60
. "${0%/*}/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
export GPUPROBE_FAKE_HSA_INIT_HANG=1
# Every process of this test carries the tag: what is left is found by it.
TAG=$ME.$$
export GP_RUNTIME_HANG_TAG=$TAG
leftovers() {
	for e in /proc/[0-9]*/environ; do
		{ tr '\0' '\n' < "$e"; } 2>/dev/null | grep -qx "GP_RUNTIME_HANG_TAG=$TAG" &&
			{ p=${e#/proc/}; echo "${p%/environ}"; }
	done
}
# leftovers lists this shell too (and its pipeline): only gpuprobe counts.
left_gpuprobe() {
	for p in $(leftovers); do
		case $(cat /proc/$p/comm 2>/dev/null) in gpuprobe*) echo "$p" ;; esac
	done | sort -u
}

# pools: 0.5 s, then exit 1 naming the wait.
t0=$(now)
gp pools --timeout 0.5 --lib "$FAKE_HSA" > "$TMP/out" 2> "$TMP/err"; rc=$?
dt=$(elapsed "$t0")
say "pools: exit $rc after $dt s: $(cat "$TMP/err")"
ok "pools: exit 1" test $rc -eq 1
ok "pools: within --timeout + 2 s" fcmp "$dt" '<' 2.5
ok "pools: one line, naming the timeout and the wait" \
	grep -q "^gpuprobe: runtime: opening the GPU runtime did not return within 0.5 s (stuck in .*read" "$TMP/err"
ok "pools: nothing else on stderr" test "$(wc -l < "$TMP/err")" -eq 1
ok "pools: nothing on stdout" test ! -s "$TMP/out"
ok "pools: no gpuprobe left" test -z "$(left_gpuprobe)"

# lock: the same watchdog, a unit suffix.
head -c 65536 /dev/urandom > "$TMP/f"
t0=$(now)
gp lock --timeout 300ms --lib "$FAKE_HSA" "$TMP/f" > "$TMP/out" 2> "$TMP/err"; rc=$?
dt=$(elapsed "$t0")
say "lock: exit $rc after $dt s: $(cat "$TMP/err")"
ok "lock: exit 1" test $rc -eq 1
ok "lock: within --timeout + 2 s" fcmp "$dt" '<' 2.3
ok "lock: names 0.3 s" grep -q "did not return within 0.3 s" "$TMP/err"

# idle: the runtime opens in a child; --init-timeout, then SIGKILL and a
# bounded reap (never a blocking waitpid).
t0=$(now)
gp idle -s 1 -i 0.5 --init-timeout 1 --lib "$FAKE_HSA" -o "$TMP/r" > "$TMP/out" 2> "$TMP/err"; rc=$?
dt=$(elapsed "$t0")
say "idle: exit $rc after $dt s: $(cat "$TMP/err")"
ok "idle: exit 1" test $rc -eq 1
ok "idle: within --init-timeout + 3 s" fcmp "$dt" '<' 4
ok "idle: the reason, once" test "$(grep -c "did not open within 1 s (--init-timeout)" "$TMP/err")" -eq 1
ok "idle: no verdict, an error line" sh -c "! grep -q '\"type\":\"verdict\"' '$TMP/r' && grep -q '\"type\":\"error\"' '$TMP/r'"
ok "idle: no runtime child left" test -z "$(left_gpuprobe)"
pass
