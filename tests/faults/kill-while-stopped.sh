#!/bin/sh
# A target SIGKILLed while gpuprobe holds one of its threads stopped
# (tests/faults/killstop.c makes it happen at the first detach): trace
# must see it exit within a tick or two, and stacks must return, rather
# than trace the dead process until the time limit.
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/../e2e/lib.sh"
# About ptrace stops: sleeping threads read from their saved registers,
# with no stop (BPF, src/unwind/taskregs.h), would leave this test no
# stop to look at.  tests/e2e/stacks-bpf-regs.sh covers that path.
export GPUPROBE_BPF_REGS=off
require_workload sleepers
SHIM=$top_builddir/tests/faults/killstop.so
[ -f "$SHIM" ] || framework_failure "no $SHIM"
# Under ASan the shim cannot come first in the preload list.
case "$(ldd "$GPUPROBE" 2>/dev/null)" in *libasan*) skip "gpuprobe is built with ASan (LD_PRELOAD order)";; esac
for mode in trace stacks; do
	"$WORKLOADS/sleepers" 8 & T=$!; bg_track $T
	rm -f "$TMP/mark"
	wait_until 5 sh -c "[ \$(ls /proc/$T/task | wc -l) -ge 9 ]" || framework_failure "no sleepers"
	start=$(date +%s.%N)
	if [ $mode = trace ]; then
		GP_FAULT_KILL_PID=$T GP_FAULT_KILL_MARK=$TMP/mark LD_PRELOAD=$SHIM timeout -k 1 20 "$GPUPROBE" trace -q --stacks all \
			-i 0.1 -s 15 -o "$TMP/k.jsonl" $T > "$TMP/o" 2> "$TMP/e"; rc=$?
	else
		GP_FAULT_KILL_PID=$T GP_FAULT_KILL_MARK=$TMP/mark LD_PRELOAD=$SHIM timeout -k 1 20 "$GPUPROBE" stacks \
			--hot-window 0 $T > "$TMP/o" 2> "$TMP/e"; rc=$?
	fi
	took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
	kill -KILL $T 2>/dev/null; wait $T 2>/dev/null
	say "$mode: exit $rc after $took s: $(head -n 1 "$TMP/e")"
	ok "$mode: the target was killed while one of its threads was stopped" test -e "$TMP/mark"
	ok "$mode: exits 0 or 1 (not the timeout)" sh -c "[ $rc -eq 0 ] || [ $rc -eq 1 ]"
	ok "$mode: returns within 5 s of the kill" awk -v t="$took" 'BEGIN { exit !(t < 5) }'
done
require_jq
ok "trace: ended because the target exited" \
	test "$(jq -r 'select(.type=="exit") | .reason' "$TMP/k.jsonl")" = exited
pass
