#!/bin/sh
# Bad input to gpuprobe lock/pools, table-driven: one "gpuprobe: ..." line,
# exit 1 (runtime: the file, memory) or 64 (usage), within 5 s; a FIFO
# never blocks the open.
. "${0%/*}/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
mkfile "$TMP/f" 1
: > "$TMP/empty"
mkdir "$TMP/dir"
mkfifo "$TMP/fifo" || skip "mkfifo failed"
failed=0
check() { _want=$1; shift; bad_input "$_want" lock -q --lib "$FAKE_HSA" "$@"; }   # check WANT-EXIT ARGS...
check 1  "$TMP/missing"
check 1  "$TMP/dir"
check 1  "$TMP/fifo"
check 1  "$TMP/empty"
check 1  /dev/null
check 1  "$TMP/f" --offset 1M
check 1  "$TMP/f" --offset 2M
check 1  "$TMP/f" --size 2M
check 1  "$TMP/f" --offset 512K --size 768K
check 64 "$TMP/f" --offset 1000
check 64 "$TMP/f" --size 0
check 64 "$TMP/f" --size abc
check 64 "$TMP/f" --size 1Q
check 64 "$TMP/f" --pool nosuchpool
check 64 "$TMP/f" --pool ''
check 64 "$TMP/f" --repeat 0
check 64 "$TMP/f" --repeat x
check 64 "$TMP/f" --refault -1
check 64 "$TMP/f" --timeout 0
check 64 "$TMP/f" --cuda-flags bogus
check 64 "$TMP/f" --runtime opencl
check 64 "$TMP/f" --format xml
check 64 "$TMP/f" --anon 1M
check 64 --anon 0
check 64 --anon 1M --writable
check 64 "$TMP/f" "$TMP/f"
check 64
check 1  --anon 1024T
check 1  "$TMP/f" -o "$TMP/missing/dir/r.jsonl"
timeout -k 1 5 "$GPUPROBE" lock -q --lib "$FAKE_HSA" "$TMP/f" --pool nosuchpool 2> "$TMP/err" > /dev/null
ok "unknown pool: the names it has are listed" grep -q "cpu-fine, cpu-kernarg" "$TMP/err"
timeout -k 1 5 "$GPUPROBE" lock -q --lib "$FAKE_HSA" --anon 1024T 2> "$TMP/err" > /dev/null
ok "memory guard says how much is free" grep -q "MemAvailable is [0-9.]* GiB" "$TMP/err"
ok "... and hints --force" grep -q "^gpuprobe: hint: .*--force" "$TMP/err"
[ $failed -eq 0 ] || fail "some cases failed"
pass
