#!/bin/sh
# gpuprobe pools against the HSA test double: agents, pool names, decoded
# flags, sizes; an older runtime's missing attributes read "unsupported".
. "${0%/*}/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_jq

gp pools --lib "$FAKE_HSA" > "$TMP/out" 2> "$TMP/err" || fail "pools exited $?: $(cat "$TMP/err")"
cat "$TMP/out"
for n in cpu-fine cpu-kernarg cpu-coarse cpu-extfine gpu0-coarse gpu0-fine; do
	ok "pool $n listed" grep -q "^  $n " "$TMP/out"
done
ok "kernarg flags decoded" grep -q "cpu-kernarg  *global  *kernarg|fine " "$TMP/out"
ok "product name shown" grep -q "AMD Radeon Graphics" "$TMP/out"
ok "build string shown (0x200)" grep -q "gpuprobe-fake-hsa 7.0.0" "$TMP/out"

gp pools --lib "$FAKE_HSA" --format json > "$TMP/j" || fail "pools --format json failed"
ok "json: 6 pools" test "$(jq '.pools | length' "$TMP/j")" = 6
ok "json: gpu0-fine is fine on gpu0" test "$(jq -r '.pools[] | select(.name=="gpu0-fine") | "\(.agent) \(.flags) \(.global_flags)"' "$TMP/j")" = "gpu0 fine 2"
ok "json: sizes in bytes" test "$(jq '.pools[0].size' "$TMP/j")" = 68719476736
ok "json: alloc allowed is a boolean" test "$(jq '.pools[0].alloc_allowed' "$TMP/j")" = true
ok "json: agent types" test "$(jq -r '[.agents[].type] | join(",")' "$TMP/j")" = "cpu,gpu"

# A 5.2.3-like runtime: product, uuid and alloc-allowed unknown.
GPUPROBE_FAKE_HSA_OLD=1 gp pools --lib "$FAKE_HSA" > "$TMP/old" 2>&1 || fail "old runtime: pools failed: $(cat "$TMP/old")"
ok "old runtime: product unsupported" grep -q "gpu0  *gpu  *gfx1151  *unsupported" "$TMP/old"
ok "old runtime: alloc unsupported" grep -q "cpu-fine .* unsupported$" "$TMP/old"
ok "old runtime: no extfine pool" sh -c "! grep -q cpu-extfine '$TMP/old'"
GPUPROBE_FAKE_HSA_OLD=1 gp pools --lib "$FAKE_HSA" --format json > "$TMP/oj" || fail "old json"
ok "old runtime json: alloc_allowed null" test "$(jq '.pools[0].alloc_allowed' "$TMP/oj")" = null

# --lib implies the runtime; --runtime cuda on it is refused clearly.
gp pools --runtime cuda --lib "$FAKE_HSA" > /dev/null 2> "$TMP/err"
rc=$?
ok "--runtime cuda with an HSA library fails (exit 1)" test $rc -eq 1
ok "... saying which symbol is missing" grep -q "^gpuprobe: .*no cuInit" "$TMP/err"
# The double's hsa_init failing: the diagnosis line.
GPUPROBE_FAKE_HSA_INIT_FAIL=1 gp pools --lib "$FAKE_HSA" > /dev/null 2> "$TMP/err"
ok "hsa_init failure exits 1" test $? -eq 1
ok "... with the status name and what the machine lacks" grep -q "^gpuprobe: hsa_init: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008): " "$TMP/err"
gp pools --lib "$TMP/nonexistent.so" > /dev/null 2> "$TMP/err"
ok "missing --lib: exit 1, one line" sh -c "test $? -eq 1 && grep -q '^gpuprobe: .*cannot load' '$TMP/err'"
gp pools --lib /bin/true > /dev/null 2> "$TMP/err"
ok "--lib not a library: exit 1" test $? -eq 1
gp pools extra > /dev/null 2>&1
ok "pools takes no argument (64)" test $? -eq 64
pass
