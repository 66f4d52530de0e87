#!/bin/sh
# Odd targets: a zombie, a kernel thread (kthreadd, pid 2), gpuprobe
# itself; targets that exit mid-sample and mid-unwind; heavy thread churn
# under trace --stacks all and stacks.  Each: a documented exit, one
# gpuprobe line when it fails, no crash, no hang.  PID reuse is not
# tested: provoking it needs pid_max cycling (~4M forks), too slow here.
E2E_TIMEOUT=${E2E_TIMEOUT:-120}
. "${0%/*}/../e2e/lib.sh"
require_jq
require_workload sleepers
failed=0
# expect WANT-EXIT ERE ARGS...: gpuprobe ARGS exits WANT-EXIT, stderr
# (all of it) matches ERE.
expect() {
	want=$1 ere=$2; shift 2
	timeout -k 1 15 "$GPUPROBE" "$@" < /dev/null > "$TMP/o" 2> "$TMP/e"; rc=$?
	if [ $rc -eq "$want" ] && grep -Eq -- "$ere" "$TMP/e" "$TMP/o"; then
		say "ok: $* -> $rc: $(grep -m1 -E -- "$ere" "$TMP/e" "$TMP/o" | cut -c1-150)"
	else
		say "FAIL: $* -> exit $rc (want $want, /$ere/): $(head -c 300 "$TMP/e" | tr '\n' '~')"
		failed=1
	fi
}
# A zombie: its parent sleeps and never reaps it.
sh -c 'sleep 0 & exec sleep 600' & ZP=$!; bg_track $ZP
wait_until 5 sh -c "ps -o stat= --ppid $ZP | grep -q Z" || framework_failure "no zombie"
Z=$(ps -o pid=,stat= --ppid $ZP | awk '$2 ~ /^Z/ { print $1; exit }')
expect 0 'exited' trace -q -s 1 $Z
expect 0 'exited' trace -q -s 1 --stacks all $Z
expect 1 '^gpuprobe: pid [0-9]+' stacks $Z
# kthreadd: no user space; as root its kernel stack.
expect 0 'kthreadd' trace -q -s 0.5 --stacks all 2
expect 0 'kernel thread: it has no user stack' stacks 2
expect 0 'kthreadd' stacks --format json 2
# gpuprobe itself (the shell execs it: $$ is its pid).
for c in "trace -q -s 0.5" "trace -q -s 0.5 --stacks all" "stacks"; do
	timeout -k 1 10 sh -c "exec '$GPUPROBE' $c \$\$" > /dev/null 2> "$TMP/e"; rc=$?
	if [ $rc -eq 1 ] && grep -q 'is gpuprobe itself' "$TMP/e"; then
		say "ok: $c (own pid) -> 1: $(head -n 1 "$TMP/e")"
	else
		say "FAIL: $c (own pid) -> $rc: $(head -n 1 "$TMP/e")"; failed=1
	fi
done
# Targets that exit while sampled and unwound: 12 short-lived
# multi-threaded targets, each killed at a different moment.
i=0
while [ $i -lt 12 ]; do
	"$WORKLOADS/sleepers" 16 & T=$!
	d=$(awk -v i=$i 'BEGIN { printf "%.3f", 0.02 + i * 0.03 }')
	( sleep "$d"; kill -KILL $T ) &
	timeout -k 1 10 "$GPUPROBE" stacks --hot-window 0 $T > /dev/null 2> "$TMP/e"; rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 1 ] || { say "FAIL: stacks of a target killed at +$d s: exit $rc"; failed=1; }
	wait $T 2>/dev/null
	"$WORKLOADS/sleepers" 16 & T=$!
	( sleep "$d"; kill -KILL $T ) &
	timeout -k 1 10 "$GPUPROBE" trace -q --stacks all -i 0.05 -o "$TMP/x.jsonl" $T > /dev/null 2> "$TMP/e"; rc=$?
	if [ $rc -ne 0 ] && ! { [ $rc -eq 1 ] && grep -q 'no such process' "$TMP/e"; }; then
		say "FAIL: trace of a target killed at +$d s: exit $rc: $(head -n 1 "$TMP/e")"; failed=1
	fi
	[ $rc -eq 0 ] && { check_jsonl "$TMP/x.jsonl" >/dev/null || { say "FAIL: result at +$d s not JSONL"; failed=1; }; }
	wait $T 2>/dev/null
	i=$((i + 1))
done
say "ok: 24 targets killed mid-sample/mid-unwind"
# Churn: 300 threads created and destroyed a second.
"$WORKLOADS/sleepers" 4 --churn 300 & C=$!; bg_track $C
wait_until 5 test -e /proc/$C/task || framework_failure "no churn target"
expect 0 'samples' trace -s 3 -i 0.1 --stacks all -o "$TMP/churn.jsonl" $C
ok "churn: the result is valid JSON Lines" check_jsonl "$TMP/churn.jsonl"
ok "churn: stacks lines were written" sh -c "[ \$(jq -r 'select(.type==\"stacks\") | .type' '$TMP/churn.jsonl' | wc -l) -ge 1 ]"
n=0
while [ $n -lt 10 ]; do
	timeout -k 1 10 "$GPUPROBE" stacks --hot-window 0 $C > /dev/null 2> "$TMP/e"; rc=$?
	[ $rc -eq 0 ] || { say "FAIL: stacks under churn: exit $rc: $(head -n 1 "$TMP/e")"; failed=1; }
	n=$((n + 1))
done
say "ok: 10 stacks snapshots under churn"
alive $C || fail "the churn target died"
[ $failed -eq 0 ] || fail "some cases failed"
pass
