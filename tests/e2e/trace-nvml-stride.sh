#!/bin/sh
# Issue 18 item 8: a driver that writes NVML's process lists at another
# stride than 24 bytes (R535: 32; 550.127.08: 16) must not turn a GPU
# wait into a host hang.  The NVML test double lists 40 other processes
# before the traced command (the 13th onwards overran a 24-byte reader
# at 32 bytes an entry); the command spins on the host while its GPU is
# at 100 % SM: `waiting-gpu`, as at 24 bytes (trace-waiting-gpu.sh).
# Read at a fixed 24 bytes, 32-byte lists corrupted gpuprobe's heap
# ("realloc(): invalid next size", gpuprobe aborted, the command killed
# with it); in 16-byte lists the command was absent (as the 41st entry:
# only every third 16-byte entry lines up with a 24-byte one), "no
# context: 0 % GPU, known", and the spin judged hang-busy-user.
. "${0%/*}/lib.sh"
require_jq
require_workload spin
N=$top_builddir/tests/gpu/libnvidia-ml.so.1
[ -f "$N" ] || framework_failure "the NVML double is not built"
OTHERS=$(awk 'BEGIN { for (i = 0; i < 40; i++) printf "proc %d bytes=%d;", 300000 + i, (i + 1) * 1048576 }')

for stride in 32 16; do
	GPUPROBE_NVML_LIB=$N \
	GPUPROBE_FAKE_NVML="gpus 1;stride $stride;${OTHERS}proc children sm=100 mem=20 bytes=7340032;dev util=100" \
		gp trace -q --interval 0.5 --seconds 4 --hang-after 2 -o "$TMP/$stride.jsonl" \
		-- "$WORKLOADS/spin" 1 > "$TMP/$stride.out" 2>&1
	rc=$?
	ok "$stride bytes: exit 0" test "$rc" = 0
	c=$(jq -r 'select(.type == "verdict") | .class' "$TMP/$stride.jsonl")
	ok "$stride bytes an entry, GPU busy, host spinning: $c is waiting-gpu" \
		test "$c" = waiting-gpu
	ok "$stride bytes: at 100 % SM in the samples, never \"no context\"" \
		jq -s -e '[.[] | select(.type == "sample") | .gpu.activity.nvml | select(.)] |
			any(.sm_pct == 100) and all(.no_context != true)' "$TMP/$stride.jsonl"
	# The GPU's UUID beside its index (issue 28: DCGM exporter's join key)
	ok "$stride bytes: the process's rows name the GPU's UUID" \
		jq -s -e '[.[] | select(.type == "sample") | .gpu.nvml[]?.uuid] |
			length > 0 and all(. == "GPU-fa6e0000-0000-4000-8000-000000000000")' "$TMP/$stride.jsonl"
done
pass
