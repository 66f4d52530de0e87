#!/bin/sh
# One thread on its way to a stop does not turn the others' stacks "off"
# (issue 27, part 3): a tree of kernelsit (a thread that sits ~0.3 s in
# one kernel call, so that its stop often comes after the 100 ms timeout:
# pending) and spin (two threads busy in user space, another process),
# traced with --stacks all --interval 0.1.  While kernelsit's thread was
# pending, every other stop was refused: 9 of 42 of spin's stacks read
# "off" ("thread N has not stopped yet ... one thread at a time").
# The truth: no stack reads "off"; kernelsit's stops did time out (the
# test tried what it is about); a watcher polling /proc/PID/task/*/stat
# every millisecond sees no thread of either stopped longer than 300 ms.
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/../e2e/lib.sh"
# About ptrace stops: sleeping threads read from their saved registers,
# with no stop (BPF, src/unwind/taskregs.h), would leave this test no
# stop to look at.  tests/e2e/stacks-bpf-regs.sh covers that path.
export GPUPROBE_BPF_REGS=off
require_jq
require_workload kernelsit
require_workload spin
require_workload stopwatch
MAX_MS=${HARM_MAX_MS:-300}
S=8
out=$TMP/t.jsonl
# One tree and one trace; run again (3 tries at most) when no stop of
# kernelsit came late, the case this test is about: under the sanitizers'
# slowness a run can see kernelsit's thread only between its kernel calls
# (4 stacks, all "ok", 0 timeouts, in CI's sanitizer pass).
attempt() {
	sh -c "'$WORKLOADS/kernelsit' $((S + 2)) 0 & '$WORKLOADS/spin' 2 $((S + 2)) & wait" \
		> "$TMP/tree.out" 2>&1 &
	parent=$!
	bg_track $parent
	kids() { ks=$(pgrep -P $parent -x kernelsit) && sp=$(pgrep -P $parent -x spin); }
	wait_until 5 kids || framework_failure "the tree did not start"
	bg_track $ks $sp
	"$WORKLOADS/stopwatch" "$ks" $((S + 4)) 1 > "$TMP/ks.watch" &
	w1=$!
	"$WORKLOADS/stopwatch" "$sp" $((S + 4)) 1 > "$TMP/sp.watch" &
	w2=$!
	GP_TIMEOUT=$((S + 30)) gp trace -q --stacks all --interval 0.1 --seconds $S -o "$out" "$parent" \
		> /dev/null 2> "$TMP/err"
	gp_rc=$?
	wait $w1 $w2
	t=$(jq -s --argjson p "$ks" '[.[] | select(.type=="stacks" and .pid==$p) | .threads[] | select(.unwind=="timeout")] | length' "$out")
}
for try in 1 2 3; do
	attempt
	say "try $try: $t late stops of kernelsit"
	[ "$t" -gt 0 ] && break
	kill -KILL $ks $sp 2>/dev/null
	wait $parent 2>/dev/null
done
ok "gpuprobe ended by itself (rc $gp_rc)" test "$gp_rc" -eq 0
per() { jq -s -c --argjson p "$1" '[.[] | select(.type=="stacks" and .pid==$p) | .threads[] | .unwind] | group_by(.) | map({(.[0]): length}) | add' "$out"; }
say "kernelsit $ks: $(per $ks); spin $sp: $(per $sp)"
n=$(jq -s '[.[] | select(.type=="stacks") | .threads[] | select(.unwind=="off")] | length' "$out")
ok "no stack reads off ($n)" test "$n" -eq 0
ok "kernelsit's stops came late at times ($t timeouts)" test "$t" -gt 0
o=$(jq -s --argjson p "$sp" '[.[] | select(.type=="stacks" and .pid==$p) | .threads[] | select(.unwind=="ok")] | length' "$out")
# (a loaded CI machine took 14 in a run, the sanitizer pass 4: the point is
# that some were, where before every one was "off")
ok "spin's stacks were taken ($o ok)" test "$o" -ge 1
for w in ks sp; do
	ms=$(sed -n 's/.*max_stopped_ms=\([0-9.]*\).*/\1/p' "$TMP/$w.watch")
	polls=$(sed -n 's/.*polls=\([0-9]*\).*/\1/p' "$TMP/$w.watch")
	ok "$w: the watcher polled ($polls polls)" test "${polls:-0}" -gt 100
	ok "$w: no thread stopped longer than $MAX_MS ms (longest $ms ms)" fcmp "${ms:-99999}" '<=' "$MAX_MS"
done
pass
