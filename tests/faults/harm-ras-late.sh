#!/bin/sh
# A late stop is let go during a slow step (issue 27, part 3): a thread
# that sits ~0.3 s in one kernel call (tests/workloads/kernelsit), so that
# its stop often comes after the 100 ms timeout, traced with --stacks all
# --interval 0.1 and --ras-port of a service that accepts and never
# answers (tests/e2e/fake-ras.py silent): each RAS read waits its whole
# 3 s budget.  The trace let late stops go only between its steps: the
# thread sat stopped 2.9 s behind a read.
# The truth: the reads still take their 3 s and say "no answer"; a
# watcher polling /proc/PID/task/*/stat every millisecond never sees the
# thread stopped longer than 300 ms.
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/../e2e/lib.sh"
require_jq
require_workload kernelsit
require_workload stopwatch
command -v python3 > /dev/null 2>&1 || skip "no python3"
MAX_MS=${HARM_MAX_MS:-300}
S=8
python3 -S "$top_srcdir/tests/e2e/fake-ras.py" silent "$TMP/port" &
bg_track $!
has_port() { [ -s "$TMP/port" ]; }
wait_until 40 has_port || framework_failure "fake-ras.py did not start"
port=$(cat "$TMP/port")
late=0
for run in 1 2; do
	out=$TMP/$run.jsonl
	"$WORKLOADS/kernelsit" $((S + 8)) 0 > "$TMP/$run.ks" 2>&1 &
	target=$!
	bg_track $target
	"$WORKLOADS/stopwatch" "$target" $((S + 8)) 1 > "$TMP/$run.watch" &
	w_pid=$!
	GP_TIMEOUT=$((S + 30)) gp trace -q --stacks all --interval 0.1 --seconds $S --hang-after 1 \
		--ras-port="$port" -o "$out" "$target" > /dev/null 2> "$TMP/$run.err"
	gp_rc=$?
	kill $target 2>/dev/null
	wait $w_pid
	ok "$run: gpuprobe ended by itself (rc $gp_rc)" test "$gp_rc" -eq 0
	n=$(jq -s '[.[] | select(.type=="ras" and .state=="no-answer")] | length' "$out")
	ok "$run: RAS was asked and did not answer ($n ras lines)" test "$n" -ge 1
	t=$(jq -s '[.[] | select(.type=="stacks") | .threads[] | select(.unwind=="timeout")] | length' "$out")
	say "$run: $t stops came late"
	late=$((late + t))
	ms=$(sed -n 's/.*max_stopped_ms=\([0-9.]*\).*/\1/p' "$TMP/$run.watch")
	polls=$(sed -n 's/.*polls=\([0-9]*\).*/\1/p' "$TMP/$run.watch")
	ok "$run: the watcher polled ($polls polls)" test "${polls:-0}" -gt 100
	ok "$run: no thread stopped longer than $MAX_MS ms (longest $ms ms)" \
		fcmp "${ms:-99999}" '<=' "$MAX_MS"
done
ok "stops came late ($late): the test tried what it is about" test "$late" -gt 0
pass
