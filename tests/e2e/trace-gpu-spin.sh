#!/bin/sh
# GPU work, not occupancy (issue 19), through the NVML test double: a
# kernel resident at 100 % SM that does no work is hang-gpu-spin (with
# GPM: high confidence, naming "32 of 132 SMs"; without GPM, from power
# within 25 W of the floor measured while the GPU had no kernel: medium);
# a kernel that works (GEMM-like: tensor 93 %, DRAM 18 %) is progress,
# "GPU working", never "no progress"; occupancy alone (no power, no GPM,
# no util.memory) is waiting-gpu at low confidence.  Before, each of
# these read waiting-gpu, the spin at high confidence.  report of each
# saved file judges the same.
# Four traces of 6-7 s each: 26 s of wall clock by design, over the
# default 30 s limit once the machine is loaded.
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/lib.sh"
require_jq
. "$top_srcdir/tests/gpu/lib-nvml.sh"
P='gpus 1;proc children sm=100 bytes=1048576'
SPIN32="$P;dev util=100 memutil=0 power=137 sms=132 gpm=1 smutil=24 occ=3"
GEMM="$P;dev util=100 memutil=25 power=695 sms=132 gpm=1 smutil=96 occ=40 tensor=93 dram=18"
OCC="$P;dev util=100"


v=$(nvml_run spin32 "$SPIN32")
ok "32 CTAs spinning, GPM: $v is hang-gpu-spin, high" test "$v" = "hang-gpu-spin high"
ok "spin32: names the grid's share" grep -q "32 of 132 SMs: a collective's shape" "$TMP/spin32.out"
ok "spin32: no math, no DRAM traffic" grep -q "no math, no DRAM traffic" "$TMP/spin32.out"
ok "spin32: the sample carries the readings" \
	jq -s -e '[.[] | select(.type == "sample") | .gpu.activity.work.gpm.sm_util] | any(. == 24)' "$TMP/spin32.jsonl" > /dev/null
same_in_report spin32 "hang-gpu-spin high"

v=$(nvml_run gemm "$GEMM")
ok "GEMM-like work: $v is progress" test "${v%% *}" = progress
ok "gemm: the work is named" grep -q "GPU working: tensor 93%, DRAM 18%, 695 W" "$TMP/gemm.out"
ok "gemm: never 'no progress'" sh -c "! grep -q 'no progress' '$TMP/gemm.out'"
same_in_report gemm "$v"

v=$(nvml_run occ "$OCC")
ok "occupancy alone: $v is waiting-gpu, low" test "$v" = "waiting-gpu low"
same_in_report occ "waiting-gpu low"

# Without GPM: the floor is read while the process holds a context and
# the GPU runs no kernel (the first 1.5 s), then a spin 14 W over it.
printf '%s\n' 'gpus 1' 'proc children bytes=1048576' 'dev util=0 power=123' > "$TMP/classic.nvml"
GPUPROBE_NVML_LIB=$N GPUPROBE_FAKE_NVML=$TMP/classic.nvml \
	gp trace -q --interval 0.5 --seconds 7 --hang-after 2 -o "$TMP/classic.jsonl" -- sleep 30 \
	> "$TMP/classic.out" 2>&1 &
T=$!
sleep 1.5
printf '%s\n' "$P" 'dev util=100 memutil=0 power=137' > "$TMP/classic.nvml.new"
mv "$TMP/classic.nvml.new" "$TMP/classic.nvml"
wait $T
v=$(jq -r 'select(.type == "verdict") | "\(.class) \(.confidence)"' "$TMP/classic.jsonl")
ok "spin, no GPM, 14 W over the measured floor: $v is hang-gpu-spin, medium" test "$v" = "hang-gpu-spin medium"
ok "classic: the power over the floor is said" grep -q "137 W (+14 W over its floor)" "$TMP/classic.out"
same_in_report classic "hang-gpu-spin medium"
pass
