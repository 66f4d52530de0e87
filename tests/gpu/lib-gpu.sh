# Shared by the GPU end-to-end tests (sourced after tests/e2e/lib.sh):
# the HSA test double, built by `make check`, loaded only through --lib.
FAKE_HSA=$top_builddir/tests/gpu/libhsa-runtime64.so.1
[ -f "$FAKE_HSA" ] || framework_failure "no test double at $FAKE_HSA (make check builds it)"
# A file of random bytes, its hash and mtime recorded (the probe must
# never write it).
mkfile() {   # mkfile PATH SIZE-MiB
	head -c "$(($2 * 1048576))" /dev/urandom > "$1" || framework_failure "cannot write $1"
	touch -d '2020-01-01 00:00:00' "$1"
}
fsig() { printf '%s %s\n' "$(sha256sum < "$1" | cut -d' ' -f1)" "$(stat -c '%Y.%y %s' "$1")"; }
# armf FILE NAME FIELD|'"\(.a) \(.b)"': of the arm named NAME in a result.
armf() {
	case $3 in \"*) _e=$3 ;; *) _e=.$3 ;; esac
	jq -r --arg n "$2" "select(.type == \"arm\" and .name == \$n) | $_e" "$1"
}
# lock_hung RC T0 MAX WHY RESULT ARM: a `gp lock ... -o RESULT > $TMP/out
# 2> $TMP/err` started at T0 that exited RC, its arm ARM hung: says how it
# ended, then exit 1 within MAX s (WHY: the bound's reason), RESULT JSON
# Lines, ARM's status timeout.
lock_hung() {
	_dt=$(elapsed "$2")
	say "exit $1 after $_dt s"; cat "$TMP/out" "$TMP/err"
	ok "exit 1" test "$1" -eq 1
	ok "$4" fcmp "$_dt" '<' "$3"
	check_jsonl "$5" || fail "result not JSON Lines"
	ok "$6: status timeout" test "$(armf "$5" "$6" status)" = timeout
}
