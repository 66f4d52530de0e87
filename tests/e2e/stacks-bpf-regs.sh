#!/bin/sh
# Stacks without any stop (issue 30): where BPF loads, a sleeping thread
# is unwound from the user registers the kernel saved when it went to
# sleep (src/unwind/taskregs.h), not stopped with ptrace.  The truth:
#   - tests/workloads/sleepers (a main thread in pause(), three in
#     pthread_cond_wait): every thread reads "ok" with "regs_from":"bpf",
#     the snapshot stopped none (cost.stopped 0), a watcher polling
#     /proc/PID/task/*/stat every millisecond saw no thread stopped, and
#     each thread's functions are those the ptrace path
#     (GPUPROBE_BPF_REGS=off) gives, frame for frame;
#   - a writer blocked in the middle of a 1 MiB pipe write, stacked three
#     times: it finishes whole, its frames reach main.
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/lib.sh"
# A test of the BPF path itself: on it even where the suite runs on the
# /proc path (.ci/run's sanitizer pass: GPUPROBE_BPF=off).
unset GPUPROBE_BPF
require_jq
require_workload sleepers
require_workload stopwatch
require_workload wholewrite
[ "$(id -u)" = 0 ] || skip "not root: BPF does not load"
"$WORKLOADS/sleepers" 3 > /dev/null 2>&1 &
p=$!
bg_track $p
sleep 0.5
"$WORKLOADS/stopwatch" "$p" 3 1 > "$TMP/watch" &
w=$!
gp stacks --format json "$p" > "$TMP/bpf.json" 2> "$TMP/bpf.err"
wait $w
n=$(jq -s '[.[] | select(.type=="stacks") | .threads[] | select(.regs_from=="bpf")] | length' "$TMP/bpf.json")
[ "$n" -gt 0 ] || skip "sleeping threads' registers not read here ($(gp info | grep '^BPF'))"
GPUPROBE_BPF_REGS=off gp stacks --format json "$p" > "$TMP/ptrace.json" 2>/dev/null
fns() { jq -c '[.[] | select(.type=="stacks") | .threads[] | {tid, f: [.frames[]? | .symbol // .module]}] | sort_by(.tid) | .[]' -s "$1"; }
all=$(jq -s '[.[] | select(.type=="stacks") | .threads[]] | length' "$TMP/bpf.json")
ok "every thread from its saved registers ($n of $all)" test "$n" -eq "$all" -a "$all" -eq 4
s=$(jq -s '[.[] | select(.type=="stacks") | .cost.stopped] | add' "$TMP/bpf.json")
ok "no thread stopped ($s)" test "$s" -eq 0
ms=$(sed -n 's/.*max_stopped_ms=\([0-9.]*\).*/\1/p' "$TMP/watch")
ok "the watcher saw no stop (longest ${ms:-?} ms)" fcmp "${ms:-99999}" '<=' 0
fns "$TMP/bpf.json" > "$TMP/f-bpf"
fns "$TMP/ptrace.json" > "$TMP/f-ptrace"
# the ptrace path may time out on pause() (no frames): compare where both have them
same=0 diff=0
while read -r line; do
	tid=$(printf '%s' "$line" | jq .tid)
	other=$(grep "\"tid\":$tid," "$TMP/f-ptrace")
	[ -n "$other" ] && [ "$(printf '%s' "$other" | jq '.f | length')" -gt 0 ] || continue
	if [ "$line" = "$other" ]; then same=$((same + 1)); else diff=$((diff + 1)); say "differ: $line / $other"; fi
done < "$TMP/f-bpf"
ok "frames as the ptrace path gives them ($same same, $diff different)" test "$same" -ge 3 -a "$diff" -eq 0
ok "the condition waits named" grep -q pthread_cond_wait "$TMP/f-bpf"
kill -KILL $p

"$WORKLOADS/wholewrite" pipe 4 1048576 65536 100 > "$TMP/ww.out" 2>&1 &
ww=$!
bg_track $ww
sleep 0.4
for i in 1 2 3; do
	gp stacks --format json "$ww" > "$TMP/ww$i.json" 2>/dev/null
	sleep 0.2
done
wait $ww
rc=$?
ok "the writer finished whole (rc $rc: $(head -n 1 "$TMP/ww.out"))" test "$rc" -eq 0
m=$(cat "$TMP"/ww?.json | jq -s '[.[] | select(.type=="stacks") | .threads[]
	| select(.regs_from=="bpf" and ([.frames[]?.symbol] | index("main")))] | length')
ok "its blocked threads unwound to main from saved registers ($m)" test "$m" -gt 0
pass
