#!/bin/sh
# A GPU time-sliced between two processes (issue 22), through the NVML
# test double.  On the H100 (2026-12-05) a 32-CTA spinner beside a GEMM
# loop read per-process SM 35 %, under the 50 % "resident" bar: GPU
# `idle`, and the GEMM's device-wide tensor % then read as the spinner's
# work: class `progress`, no bundle.  Now:
#   - the spinner (SM 35 % beside pid 1 at 60 %, tensor 55 %): its kernel
#     resident on a shared GPU, whose work cannot be told: waiting-gpu,
#     low, naming the other pid -- never progress;
#   - the GEMM (SM 60 % beside pid 1 at 35 %, tensor 55 %): more tensor
#     work than the other's time could hold: progress, "GPU working";
#   - two spinners (tensor 0): no work anywhere: hang-gpu-spin.
# report of each saved file judges the same.
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/lib.sh"
require_jq
. "$top_srcdir/tests/gpu/lib-nvml.sh"
DEV='dev util=100 memutil=20 power=420 sms=132 gpm=1 occ=40'


v=$(nvml_run spinner "gpus 1;proc children sm=35 bytes=1048576;proc 1 sm=60 bytes=1048576;$DEV smutil=96 tensor=55 dram=10")
ok "a spinner beside a GEMM: $v is waiting-gpu, low (was progress)" test "$v" = "waiting-gpu low"
ok "spinner: the GPU is said shared, with the other pid" grep -q "on a GPU shared with pid 1 (SM 60%)" "$TMP/spinner.out"
ok "spinner: never 'GPU working'" sh -c "! grep -q 'GPU working' '$TMP/spinner.out'"
n=$(gp report --format jsonl "$TMP/spinner.jsonl" | jq -s '[.[] | select(.type == "sample") | .gpu.activity.work
	| select(.others == 1 and .other_pid == 1 and .other_sm_pct == 60)] | length')
ok "spinner: $n samples carry the other process" test "$n" -gt 0
same_in_report spinner "waiting-gpu low"

v=$(nvml_run gemm "gpus 1;proc children sm=60 bytes=1048576;proc 1 sm=35 bytes=1048576;$DEV smutil=96 tensor=55 dram=10")
ok "the GEMM beside a spinner: $v is progress" test "${v%% *}" = progress
ok "gemm: the work is named" grep -q "GPU working: tensor 55%" "$TMP/gemm.out"
same_in_report gemm "$v"

v=$(nvml_run spin2 "gpus 1;proc children sm=35 bytes=1048576;proc 1 sm=60 bytes=1048576;$DEV smutil=48")
ok "two spinners sharing a GPU: $v is hang-gpu-spin" test "${v%% *}" = hang-gpu-spin
ok "spin2: the SMs are not counted on a shared GPU" grep -q "resident 35% of the time on a GPU shared with pid 1" "$TMP/spin2.out"
same_in_report spin2 "$v"
pass
