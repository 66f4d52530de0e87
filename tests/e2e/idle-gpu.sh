#!/bin/sh
# gpuprobe idle puts the GPU's activity beside the host CPU (issue 13):
# the HSA double spins (interrupts off) while the NVML double says the
# process runs at 100 % SM -> the GPU is busy with its work; with the GPU
# idle -> the spin is the host's own (seed 000's shape); without NVML ->
# the absence is said, not shown as 0.
. "${0%/*}/lib.sh"
require_jq
A=$top_builddir/tests/gpu/libhsa-runtime64.so.1
N=$top_builddir/tests/gpu/libnvidia-ml.so.1
[ -f "$A" ] && [ -f "$N" ] || framework_failure "the GPU doubles are not built"
nm -C "$A" 2>/dev/null | grep -q 'rocr::core::Runtime::AsyncEventsLoop' \
	|| skip "the double was built without C++ (no spinner)"

GPUPROBE_NVML_LIB=$N GPUPROBE_FAKE_NVML='gpus 1;proc children sm=100 mem=30 bytes=1048576;dev util=100 memutil=40' \
	gp idle --lib "$A" --no-interrupts --seconds 2 --format json > "$TMP/busy.json" 2> "$TMP/err"
ok "busy GPU: exit 0" test $? -eq 0
ok "busy GPU: still class spin (host CPU)" test "$(jq -r .class "$TMP/busy.json")" = spin
ok "NVML: 100 % SM of the runtime child" test "$(jq -r .gpu.nvml.sm_pct "$TMP/busy.json")" = 100
ok "NVML: its GPU 100 % busy" test "$(jq -r .gpu.nvml.dev_util_pct "$TMP/busy.json")" = 100
ok "the text says the spinner may be waiting on the GPU" jq -e '.gpu_text | test("waiting on it")' "$TMP/busy.json"

GPUPROBE_NVML_LIB=$N GPUPROBE_FAKE_NVML='gpus 1;proc children bytes=1048576;dev util=0' \
	gp idle --lib "$A" --no-interrupts --seconds 2 > "$TMP/idle.txt" 2> "$TMP/err"
ok "idle GPU: exit 0" test $? -eq 0
cat "$TMP/idle.txt"
ok "idle GPU: the table says the spin is the host's own" grep -q "GPU: .*idle on the GPU.*seed 000's shape" "$TMP/idle.txt"

GPUPROBE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 \
	gp idle --lib "$A" --seconds 2 --format json > "$TMP/none.json" 2> "$TMP/err"
ok "no NVML: exit 0" test $? -eq 0
ok "no NVML: said, with the reason" jq -e '.gpu.absent.nvml | test("nonexistent")' "$TMP/none.json"
ok "no NVML: no number shown for it" jq -e '.gpu.nvml == null' "$TMP/none.json"
pass
