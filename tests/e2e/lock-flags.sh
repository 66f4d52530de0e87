#!/bin/sh
# Flags the double records: lock_to_pool always with flags 0, the GPU
# agents passed; --cuda-flags refused with a warning on HSA; --pool on a
# runtime without pools; -o writes header, gpu line and arms.
. "${0%/*}/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_jq
F=$TMP/f
mkfile "$F" 2
LOG=$TMP/calls; export GPUPROBE_FAKE_HSA_LOG=$LOG
gp lock -q --lib "$FAKE_HSA" "$F" --pool cpu-coarse -o "$TMP/r" > /dev/null || fail "lock"
ok "lock_to_pool: pool cpu-coarse, flags 0, the GPU agent" grep -q "^hsa_amd_memory_lock_to_pool size=2097152 num_agent=1 agent0=0x2000 pool=cpu-coarse flags=0" "$LOG"
ok "then unlock" grep -q "^hsa_amd_memory_unlock" "$LOG"
ok "result: header, gpu, arm" test "$(jq -r .type "$TMP/r" | tr '\n' ' ')" = "header gpu arm "
ok "gpu line lists the pools" test "$(jq -r 'select(.type=="gpu") | .pools | length' "$TMP/r")" = 6
ok "gpu line: runtime and build" test "$(jq -r 'select(.type=="gpu") | "\(.runtime) \(.build)"' "$TMP/r")" = "hsa gpuprobe-fake-hsa 7.0.0"
ok "header command" test "$(jq -r 'select(.type=="header") | .command' "$TMP/r")" = lock
gp lock -q --lib "$FAKE_HSA" "$F" --cuda-flags read-only --format json > "$TMP/j" 2> "$TMP/err" || fail "--cuda-flags on hsa"
ok "--cuda-flags on HSA: a warning" grep -q "^gpuprobe: warning: --cuda-flags is for the CUDA runtime" "$TMP/err"
ok "... and HSA flags stay 0" test "$(jq -r .flags "$TMP/j")" = 0
gp lock -q --lib "$FAKE_HSA" "$F" --runtime hsa --format json > "$TMP/j" || fail "--runtime hsa --lib"
ok "--runtime hsa with --lib" test "$(jq -r .runtime "$TMP/j")" = hsa
# A pool lock and a plain lock pass the same range the runtime sees.
: > "$LOG"
gp lock -q --lib "$FAKE_HSA" "$F" --offset 1M --size 512K > /dev/null || fail "offset"
ok "the runtime saw 512 KiB" grep -q "^hsa_amd_memory_lock size=524288 " "$LOG"
pass
