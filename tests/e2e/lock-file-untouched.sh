#!/bin/sh
# The probed file is never written: hashed and stat'ed before and after
# every kind of arm, --writable included (gpuprobe maps it read-write but
# never stores to it; the double pins nothing).
. "${0%/*}/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_jq
F=$TMP/weights.bin
mkfile "$F" 6
before=$(fsig "$F")
gp lock -q --lib "$FAKE_HSA" "$F" --pool all --refault 2 --repeat 2 > /dev/null || fail "pool all"
ok "after --pool all --refault 2 --repeat 2: unchanged" test "$(fsig "$F")" = "$before"
gp lock -q --lib "$FAKE_HSA" "$F" --writable --refault 1 --format json > "$TMP/j" 2> "$TMP/err" || fail "--writable"
ok "--writable: mapping file-shared-rw" test "$(jq -r .mapping "$TMP/j")" = file-shared-rw
ok "--writable warns" grep -q "^gpuprobe: warning: --writable" "$TMP/err"
ok "--writable: mtime_changed false" test "$(jq -r .mtime_changed "$TMP/j")" = false
ok "after --writable: unchanged" test "$(fsig "$F")" = "$before"
chmod 0444 "$F"
if [ "$(id -u)" != 0 ]; then
	gp lock -q --lib "$FAKE_HSA" "$F" --writable > /dev/null 2>&1
	ok "--writable on a read-only file: exit 1" test $? -eq 1
fi
gp lock -q --lib "$FAKE_HSA" "$F" --no-prefault > /dev/null || fail "read-only file, read-only map"
ok "a read-only file pins read-only" test "$(fsig "$F")" = "$before"
pass
