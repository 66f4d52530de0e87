#!/bin/sh
# trace judges `waiting-gpu` when there is no host output while the GPU
# runs the process's work (issue 13): the NVML test double says the
# traced command is at 100 % SM.  With blocking sync the host thread
# sleeps; with spin sync it burns a core: either way a long GPU job, not
# a hang.  With the GPU idle the same host is judged as before (idle, or
# hang-busy-user); report of the saved file says the same.
E2E_TIMEOUT=${E2E_TIMEOUT:-60} # ~20 s alone; room for make -j2 check
. "${0%/*}/lib.sh"
require_jq
require_workload spin
N=$top_builddir/tests/gpu/libnvidia-ml.so.1
[ -f "$N" ] || framework_failure "the NVML double is not built"
BUSY='gpus 1;proc children sm=100 mem=20 bytes=1048576;dev util=100'
IDLE='gpus 1;proc children bytes=1048576;dev util=0'

run() { # name script -- command...
	name=$1 script=$2
	shift 3
	GPUPROBE_NVML_LIB=$N GPUPROBE_FAKE_NVML=$script \
		gp trace -q --interval 0.5 --seconds 5 --hang-after 2 -o "$TMP/$name.jsonl" -- "$@" \
		> "$TMP/$name.out" 2>&1
	echo $? > "$TMP/$name.rc"
	jq -r 'select(.type == "verdict") | .class' "$TMP/$name.jsonl"
}

c=$(run blocking "$BUSY" -- sleep 30)
ok "blocking: exit 0" test "$(cat "$TMP/blocking.rc")" = 0
ok "blocking sync, GPU busy: $c is waiting-gpu" test "$c" = waiting-gpu
ok "blocking: says a long GPU job" grep -q "a long GPU job, not a host hang" "$TMP/blocking.out"
ok "blocking: the sample carries the activity" \
	jq -s -e '[.[] | select(.type == "sample") | .gpu.activity.nvml.sm_pct] | any(. == 100)' "$TMP/blocking.jsonl"
r=$(gp report --format json "$TMP/blocking.jsonl" | jq -r '.results[0].verdict.class')
ok "blocking: report judges $r too" test "$r" = waiting-gpu

c=$(run spin "$BUSY" -- "$WORKLOADS/spin" 1)
ok "spin sync, GPU busy: $c is waiting-gpu" test "$c" = waiting-gpu
ok "spin: names the spinning thread" grep -q "spinning at" "$TMP/spin.out"

c=$(run idle "$IDLE" -- sleep 30)
ok "GPU idle, host asleep: $c is idle" test "$c" = idle
c=$(run spin-idle "$IDLE" -- "$WORKLOADS/spin" 1)
ok "GPU idle, host spinning: $c is hang-busy-user" test "$c" = hang-busy-user
pass
