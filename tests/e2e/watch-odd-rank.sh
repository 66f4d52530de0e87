#!/bin/sh
# The odd rank named fleet-wide (issue 29): a real 4-rank torch.distributed
# job (tests/workloads/gloo_job.py, gloo on the CPU, rank 1 asleep in
# load_next_batch while ranks 0, 2, 3 wait in all_reduce), each rank
# followed by a `gpuprobe watch --metrics` of its own, as on four nodes.
# Their files, as Prometheus would gather them (each its own instance),
# go through deploy/prometheus-rules.yaml with promtool:
#   - every rank writes gpuprobe_process_wait_signature once flat for
#     --hang-after, with its job (MASTER_ADDR:MASTER_PORT) and rank;
#   - ranks 0, 2, 3 share one signature, whose frame is all_reduce called
#     from reduce_grads; rank 1's differs and names load_next_batch;
#   - the rules' alert GpuprobeOddRank fires for rank 1 alone.
: "${E2E_TIMEOUT:=300}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
. "${0%/*}/gloo-lib.sh"
PROMTOOL=$(command -v promtool) || skip "promtool missing (bootstrap.sh installs prometheus)"
RULES=$top_srcdir/deploy/prometheus-rules.yaml
JOB=127.0.0.1:29555
pids=
for r in 0 1 2 3; do
	RANK=$r WORLD_SIZE=$WORLD MASTER_ADDR=127.0.0.1 MASTER_PORT=29555 \
		"$PY" "$W" sleep 1 "$TMP/job.init" > "$TMP/r$r" 2>&1 &
	bg_track $!
	pids="$pids $!"
done
ready() { for r in 0 1 2 3; do grep -q ready "$TMP/r$r" 2> /dev/null || return 1; done; }
wait_until 120 ready || { tail -n 3 "$TMP"/r*; fail "the ranks were not ready after 120 s"; }
r=0 watches=
for p in $pids; do
	"$GPUPROBE" watch "$p" -q --interval 0.5 --hang-after $HANG_AFTER --metrics "$TMP/node$r.prom" \
		> "$TMP/watch$r.log" 2>&1 &
	bg_track $!
	watches="$watches $!"
	r=$((r + 1))
done
signed() {
	for r in 0 1 2 3; do
		grep -q '^gpuprobe_process_wait_signature{' "$TMP/node$r.prom" 2> /dev/null || return 1
	done
}
wait_until 60 signed || { cat "$TMP"/node*.prom "$TMP"/watch*.log; fail "not every watch wrote a signature in 60 s"; }
for r in 0 1 2 3; do
	grep '^gpuprobe_process_wait_signature{' "$TMP/node$r.prom" > "$TMP/sig$r"
	say "node $r: $(cat "$TMP/sig$r")"
done
kill -TERM $watches
for w in $watches; do wait "$w"; done
label() { sed -n "s/.*[{,]$1=\"\\([^\"]*\\)\".*/\\1/p" "$TMP/sig$2"; }
for r in 0 1 2 3; do
	ok "rank $r: its job and rank" test "$(label dist_job $r)/$(label rank $r)" = "$JOB/$r"
done
ok "ranks 0, 2, 3: one signature" test "$(label signature 0)" = "$(label signature 2)" -a \
	"$(label signature 0)" = "$(label signature 3)"
ok "rank 1: another" test "$(label signature 1)" != "$(label signature 0)"
ok "ranks 0, 2, 3 wait in all_reduce from reduce_grads" sh -c \
	"printf '%s' '$(label frame 0)' | grep -q '^all_reduce (distributed_c10d.py:[0-9]*) <- reduce_grads (gloo_job.py:$(at all_reduce))\$'"
ok "rank 1 waits in load_next_batch" sh -c \
	"printf '%s' '$(label frame 1)' | grep -q 'load_next_batch (gloo_job.py:$(at sleep))'"

# The four files as four instances' series, and the alert the rules give.
{
	printf 'rule_files: [ %s ]\nevaluation_interval: 15s\ntests:\n  - interval: 15s\n    input_series:\n' "$RULES"
	for r in 0 1 2 3; do
		s=$(sed "s/^gpuprobe_process_wait_signature{/gpuprobe_process_wait_signature{instance=\"node$r:9100\",/; s/ 1\$//" "$TMP/sig$r")
		printf "      - series: '%s'\n        values: '1x10'\n" "$s"
	done
	printf '    alert_rule_test:\n      - eval_time: 2m\n        alertname: GpuprobeOddRank\n        exp_alerts:\n          - exp_labels:\n'
	printf '              severity: warning\n              instance: "node1:9100"\n'
	for k in pid comm dist_job rank signature frame; do
		printf '              %s: "%s"\n' "$k" "$(label $k 1)"
	done
	printf '            exp_annotations:\n              summary: "rank 1 of %s waits elsewhere"\n' "$JOB"
	printf '              description: "rank 1 (pid %s, %s on node1:9100) has made no progress in %s, where fewer than half of its job'"'"'s waiting ranks are: the odd one out. gpuprobe trace PID there tells more."\n' \
		"$(label pid 1)" "$(label comm 1)" "$(label frame 1)"
} > "$TMP/live.test.yaml"
"$PROMTOOL" test rules "$TMP/live.test.yaml" > "$TMP/promtool.out" 2>&1
rc=$?
cat "$TMP/promtool.out"
ok "promtool: GpuprobeOddRank names rank 1 alone (exit $rc)" [ $rc -eq 0 ]
pass
