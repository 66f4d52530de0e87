#!/bin/sh
# gpuprobe lock's arms against the HSA test double, as seed 004 ran them:
# plain lock, every pool (the GPU agent's refused with 0x28, recorded),
# the no-SVM knob (0x1000), anonymous memory, re-fault threads, repeats.
. "${0%/*}/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_jq
F=$TMP/model.gguf
mkfile "$F" 8
before=$(fsig "$F")
LOG=$TMP/calls; export GPUPROBE_FAKE_HSA_LOG=$LOG

gp lock -q --lib "$FAKE_HSA" "$F" -o "$TMP/r1" > "$TMP/out" 2> "$TMP/err" || fail "plain lock exited $?: $(cat "$TMP/err")"
cat "$TMP/out"
check_jsonl "$TMP/r1" || fail "result is not JSON Lines"
ok "header first" test "$(head -n 1 "$TMP/r1" | jq -r .type)" = header
ok "one arm" test "$(count arm "$TMP/r1")" = 1
ok "plain arm: call, status, code" test "$(armf "$TMP/r1" lock '"\(.call) \(.status) \(.status_code) \(.mapping) \(.bytes)"')" = "hsa_amd_memory_lock HSA_STATUS_SUCCESS 0 file-shared-ro 8388608"
for k in name call pool bytes mapping prefault_s prefault_mib_s lock_s unlock_s status status_code refault_threads dirtied_mib written_mib mtime_changed; do
	ok "arm has DESIGN field $k" test "$(jq -r "select(.type==\"arm\") | has(\"$k\")" "$TMP/r1")" = true
done
ok "unlock succeeded" test "$(armf "$TMP/r1" lock unlock_status)" = HSA_STATUS_SUCCESS
ok "mtime unchanged" test "$(armf "$TMP/r1" lock mtime_changed)" = false
ok "table header like seed 004" grep -q "^arm  *call  *range  *prefault  *lock  *result" "$TMP/out"
ok "table row" grep -q "^lock  *hsa_amd_memory_lock  *8.0 MiB (8 388 608 B), file, MAP_SHARED, read-only  *[0-9.]* s ([^)]*)  *[0-9.]* s  *rc=0, unlock [0-9.]* s" "$TMP/out"
ok "the runtime saw one lock and one unlock" test "$(grep -c '^hsa_amd_memory_lock size=8388608 num_agent=1 agent0=0x2000' "$LOG")" = 1

# --pool all: one arm per pool, the GPU agent's refused with 0x28.
: > "$LOG"
gp lock -q --lib "$FAKE_HSA" "$F" --pool all -o "$TMP/r2" > "$TMP/out" || fail "--pool all failed"
cat "$TMP/out"
ok "six arms" test "$(count arm "$TMP/r2")" = 6
for p in cpu-fine cpu-kernarg cpu-coarse cpu-extfine; do
	ok "$p: success" test "$(armf "$TMP/r2" $p '"\(.call) \(.pool) \(.status)"')" = "hsa_amd_memory_lock_to_pool $p HSA_STATUS_SUCCESS"
done
for p in gpu0-coarse gpu0-fine; do
	ok "$p: 0x28 INVALID_MEMORY_POOL, a recorded fact" test "$(armf "$TMP/r2" $p '"\(.status_code) \(.status)"')" = "40 HSA_STATUS_ERROR_INVALID_MEMORY_POOL"
	ok "$p: a note says why" sh -c "armf() { jq -r --arg n \"\$2\" 'select(.type==\"arm\" and .name==\$n) | .note' \"\$1\"; }; armf '$TMP/r2' $p | grep -q 'owned by a CPU agent'"
done
ok "lock_to_pool flags were 0" test "$(grep -c 'lock_to_pool .*flags=0' "$LOG")" = 6
ok "table shows 0x28" grep -q "gpu0-fine .*0x28 = HSA_STATUS_ERROR_INVALID_MEMORY_POOL" "$TMP/out"

# One pool by name; cpu / gpu groups.
gp lock -q --lib "$FAKE_HSA" "$F" --pool cpu-fine --format json > "$TMP/j" || fail "--pool cpu-fine"
ok "--pool cpu-fine: one arm, success" test "$(jq -r '"\(.name) \(.status)"' "$TMP/j")" = "cpu-fine HSA_STATUS_SUCCESS"
gp lock -q --lib "$FAKE_HSA" "$F" --pool gpu --format json > "$TMP/j" || fail "--pool gpu"
ok "--pool gpu: two arms, both 0x28" test "$(jq -r .status_code "$TMP/j" | tr '\n' ' ')" = "40 40 "
gp lock -q --lib "$FAKE_HSA" "$F" --pool cpu --format json > "$TMP/j" || fail "--pool cpu"
ok "--pool cpu: four arms" test "$(wc -l < "$TMP/j")" = 4
gp lock -q --lib "$FAKE_HSA" "$F" --pool none --format json > "$TMP/j" || fail "--pool none"
ok "--pool none: the plain lock" test "$(jq -r .call "$TMP/j")" = hsa_amd_memory_lock

# Seed 004 arm 1: HSA_USE_SVM=0 refuses with 0x1000, named and explained.
HSA_USE_SVM=0 gp lock -q --lib "$FAKE_HSA" "$F" --format json > "$TMP/j" || fail "no-SVM arm"
ok "HSA_USE_SVM=0: 0x1000 HSA_STATUS_ERROR" test "$(jq -r '"\(.status_code) \(.status)"' "$TMP/j")" = "4096 HSA_STATUS_ERROR"
ok "... with a note naming the knob" sh -c "jq -r .note '$TMP/j' | grep -q HSA_USE_SVM=0"
ok "... and no unlock of a range never locked" test "$(jq -r .unlock_status "$TMP/j")" = null

# Anonymous memory (arm 2b), re-fault threads (arm 2c), repeats (3b).
gp lock -q --lib "$FAKE_HSA" --anon 4M --format json > "$TMP/j" || fail "--anon"
ok "--anon: mapping anon, 4 MiB, populate-write" test "$(jq -r '"\(.mapping) \(.bytes) \(.prefault_method) \(.mtime_changed)"' "$TMP/j")" = "anon 4194304 populate-write null"
gp lock -q --lib "$FAKE_HSA" "$F" --refault 2 --format json > "$TMP/j" || fail "--refault"
ok "--refault 2 recorded" test "$(jq -r .refault_threads "$TMP/j")" = 2
ok "... and the threads re-faulted chunks" fcmp "$(jq -r .refault_chunks "$TMP/j")" '>=' 1
gp lock -q --lib "$FAKE_HSA" "$F" --repeat 3 --pool cpu-fine --format json > "$TMP/j" || fail "--repeat"
ok "--repeat 3: three arms named #1..#3" test "$(jq -r .name "$TMP/j" | tr '\n' ' ')" = "cpu-fine#1 cpu-fine#2 cpu-fine#3 "
# --offset/--size with suffixes; --no-prefault.
gp lock -q --lib "$FAKE_HSA" "$F" --offset 4K --size 1M --no-prefault --format json > "$TMP/j" || fail "--offset/--size"
ok "--offset 4K --size 1M" test "$(jq -r '"\(.offset) \(.bytes) \(.prefault_s)"' "$TMP/j")" = "4096 1048576 null"
gp lock -q --lib "$FAKE_HSA" "$F" --size 2M --format markdown > "$TMP/md" || fail "--format markdown"
ok "markdown table" grep -q "^| arm | call | range | prefault | lock | result |" "$TMP/md"
# Issue 13: a pre-fault of cached pages is a mapping rate, not a read
# rate; VmPin/VmLck at 0 under a successful pin is not shown as evidence.
ok "cached file: prefault_kind mapping" test "$(armf "$TMP/r1" lock prefault_kind)" = mapping
ok "... and the note says it is not a read rate" sh -c "jq -r 'select(.type==\"arm\") | .note' '$TMP/r1' | grep -q 'not a read rate'"
ok "VmPin 0 under the pin: null, not accounted" test "$(armf "$TMP/r1" lock '"\(.vm_pin_mib) \(.vm_pin_accounted)"')" = "null false"
if dd if="$F" iflag=nocache count=0 status=none 2>/dev/null; then
	gp lock -q --lib "$FAKE_HSA" "$F" --format json > "$TMP/j" || fail "lock after dropping the file's cache"
	k=$(jq -r .prefault_kind "$TMP/j")
	# A filesystem that keeps the pages (tmpfs) reads nothing: mapping.
	case $k in
	read) ok "uncached file: a read rate" test "$(jq -r '.prefault_read_mib_s > 0' "$TMP/j")" = true ;;
	mapping) ok "uncached file on a cache-only filesystem: mapping" true ;;
	*) fail "prefault_kind $k" ;;
	esac
fi
ok "the file was never written" test "$(fsig "$F")" = "$before"
pass
