#!/bin/sh
# The sampler's two paths (issue 30): where BPF loads, threads are read by
# a task iterator (src/tracer/taskiter.h) that writes only those that
# moved; GPUPROBE_BPF_SAMPLER=off reads them from /proc.  Both traces run
# at once on the same target, so that they see the same threads:
#   - sleepers 6 (every thread asleep in a futex): each sample's threads,
#     resolved by report, are the same records on both paths (wait_ns
#     aside: it grows while a thread waits for a CPU), the verdict is the
#     same, and the BPF path opened no file of any thread (strace);
#   - spin 2 (two threads computing): the same verdict class, and each
#     path says both threads ran ~100 % of a core;
#   - sleepers 4 --churn 100 (threads made and ended all the time): the
#     same verdict class, threads created seen on both paths, no thread
#     vanished mid-read on the BPF path (nothing is read after listing);
#   - execloop (threads exec'ing): both paths follow it to the end.
# Each header says its path (sampler_path), the /proc one why.
E2E_TIMEOUT=${E2E_TIMEOUT:-120}
. "${0%/*}/lib.sh"
# A test of the BPF path itself: on it even where the suite runs on the
# /proc path (.ci/run's sanitizer pass: GPUPROBE_BPF=off).
unset GPUPROBE_BPF
require_jq
require_workload sleepers
require_workload spin
[ "$(id -u)" = 0 ] || skip "not root: BPF does not load"
path=$(gp info --format json | jq -r '.sampler.path // "proc"')
[ "$path" = bpf ] || skip "the BPF sampler does not load here: $(gp info --format json | jq -r '.sampler.why')"

# both NAME PID SECONDS [ARGS]: the two traces of PID at once, into
# $TMP/NAME-bpf.jsonl and $TMP/NAME-proc.jsonl.
both() {
	n=$1 p=$2 s=$3
	shift 3
	gp trace -q --seconds "$s" -o "$TMP/$n-bpf.jsonl" "$@" "$p" > /dev/null 2>&1 &
	b=$!
	GPUPROBE_BPF_SAMPLER=off gp trace -q --seconds "$s" -o "$TMP/$n-proc.jsonl" "$@" "$p" > /dev/null 2>&1
	rc=$?
	wait $b
	rb=$?
	ok "$n: both traces exit 0 ($rb and $rc)" test $rb -eq 0 -a $rc -eq 0
	ok "$n: the BPF path says so" test "$(jq -r 'select(.type=="header") | .sampler_path' "$TMP/$n-bpf.jsonl")" = bpf
	ok "$n: the /proc path says why" test "$(jq -r 'select(.type=="header") | "\(.sampler_path) \(.sampler_why)"' "$TMP/$n-proc.jsonl")" = "proc GPUPROBE_BPF_SAMPLER=off"
}
verdict() { jq -r 'select(.type=="verdict") | .class' "$1"; }
# The threads of every sample, resolved, without what moves on its own.
threads() {
	gp report --format jsonl "$1" | jq -c 'select(.type=="sample") | [.threads[] | del(.wait_ns)] | sort_by(.tid)' | sed 1d
}

"$WORKLOADS/sleepers" 6 > /dev/null 2>&1 &
p=$!
bg_track $p
sleep 0.5
both sleepers $p 4 --no-kernel-stacks
threads "$TMP/sleepers-bpf.jsonl" | sort -u > "$TMP/s-bpf"
threads "$TMP/sleepers-proc.jsonl" | sort -u > "$TMP/s-proc"
ok "sleepers: samples' threads resolved ($(wc -l < "$TMP/s-bpf") distinct)" test -s "$TMP/s-bpf"
if ! cmp -s "$TMP/s-bpf" "$TMP/s-proc"; then
	diff "$TMP/s-bpf" "$TMP/s-proc" | head -n 6
	fail "sleepers: the same thread records on both paths"
fi
say "ok: sleepers: the same thread records on both paths"
# The process's own: its CPU times, faults and io summed by the pass
# (taskiter.bpf.c account: the threads gone in the signal's totals, the
# live ones listed) against /proc/PID/stat's and io's walk; the sleepers
# started threads that exited, and hold still now.
procsum() { jq -c 'select(.type=="sample") | .proc | {utime, stime, minflt, majflt, children_cpu, io}' "$1" | tail -n 1; }
ok "sleepers: the same process times, faults and io ($(procsum "$TMP/sleepers-bpf.jsonl"))" \
	test "$(procsum "$TMP/sleepers-bpf.jsonl")" = "$(procsum "$TMP/sleepers-proc.jsonl")"
# ... and of a process whose threads computed and wrote, three of them
# since gone, one still there, all at rest now (sums that are not 0).
if command -v python3 > /dev/null 2>&1; then
	python3 -c '
import threading, time, os
def work(n, exit_after):
    x = 0
    t = time.time() + 0.4
    while time.time() < t:
        x += 1
        if x % 5000 == 0:
            os.write(fd, b"y" * 512)
    if not exit_after:
        time.sleep(60)
fd = os.open(os.devnull, os.O_WRONLY)
ts = [threading.Thread(target=work, args=(i, i < 3)) for i in range(4)]
[t.start() for t in ts]
[t.join() for t in ts[:3]]
print("rested", flush=True)
time.sleep(60)' > "$TMP/rest.out" 2>&1 &
	r=$!
	bg_track $r
	wait_until 20 grep -q rested "$TMP/rest.out" || fail "the resting process did not get there"
	sleep 0.5
	both rested $r 2 --stacks none
	ok "rested: the same process times, faults and io ($(procsum "$TMP/rested-bpf.jsonl"))" \
		test "$(procsum "$TMP/rested-bpf.jsonl")" = "$(procsum "$TMP/rested-proc.jsonl")"
	ok "rested: it computed and wrote (utime and wchar above 0)" \
		test "$(procsum "$TMP/rested-bpf.jsonl" | jq '.utime > 0 and .io.wchar > 0')" = true
	kill $r 2> /dev/null
fi
first() { jq -c 'select(.type=="sample") | [.threads[] | del(.wait_ns)]' "$1" | head -n 1; }
ok "sleepers: the same first sample, thread for thread" test "$(first "$TMP/sleepers-bpf.jsonl")" = "$(first "$TMP/sleepers-proc.jsonl")"
# When each took its stacks is its own clock's: "stacks at +4.3 s".
vj='select(.type=="verdict") | {class, summary: (.summary | gsub("stacks at \\+[0-9.]+ s"; "stacks at +T s"))}'
vb=$(jq -c "$vj" "$TMP/sleepers-bpf.jsonl")
vp=$(jq -c "$vj" "$TMP/sleepers-proc.jsonl")
say "verdict: $vb"
ok "sleepers: the same verdict" test "$vb" = "$vp"
if command -v strace > /dev/null 2>&1; then
	# (GPUPROBE_STILL=off: the start's one reading of how long each thread has
	# been off the CPUs, tracer/still.h, opens its stat and sched once; the
	# sampler's own opens are counted here)
	GPUPROBE_STILL=off strace -f -qq -e trace=openat -o "$TMP/strace" "$GPUPROBE" trace -q --seconds 2 --stacks none --no-kernel-stacks \
		-o "$TMP/st.jsonl" "$p" > /dev/null 2>&1
	# (but the leader's stat, for the process: its name, state and start
	# without /proc/PID/stat's walk over every thread, sampler.c P_LSTAT)
	opens=$(grep "/task/[0-9]*/" "$TMP/strace" | grep -vc "/task/$p/stat\"")
	ok "sleepers: no thread's file opened on the BPF path ($opens)" test "$opens" -eq 0
fi
kill $p

"$WORKLOADS/spin" 2 > /dev/null 2>&1 &
p=$!
bg_track $p
sleep 0.5
both spin $p 4
ok "spin: the same verdict class ($(verdict "$TMP/spin-bpf.jsonl"))" test "$(verdict "$TMP/spin-bpf.jsonl")" = "$(verdict "$TMP/spin-proc.jsonl")"
# Over the same seconds, the same CPU: each path's sum of every thread's
# cpu_pct (a shared 2-CPU machine gives each spinner what it can).
busy() { gp report --format jsonl "$1" | jq -s '[.[] | select(.type=="sample") | .threads[] | .cpu_pct // 0] | add | floor'; }
nb=$(busy "$TMP/spin-bpf.jsonl")
np=$(busy "$TMP/spin-proc.jsonl")
ok "spin: the same CPU on both paths (sums of cpu_pct $nb and $np)" \
	awk -v a="$nb" -v b="$np" 'BEGIN { exit !(a > 100 && b > 100 && a < 1.3 * b && b < 1.3 * a) }'
kill $p

"$WORKLOADS/sleepers" 4 --churn 100 > /dev/null 2>&1 &
p=$!
bg_track $p
sleep 0.5
# (--stacks none: the two traces end together, and each one's last
# snapshot stopped the running threads the other's last sample then read
# as stopped: "stopped" against "undecided" in the sanitizer pass, where
# a stop lasts longer)
both churn $p 4 --interval 0.2 --stacks none
ok "churn: the same verdict class ($(verdict "$TMP/churn-bpf.jsonl"))" test "$(verdict "$TMP/churn-bpf.jsonl")" = "$(verdict "$TMP/churn-proc.jsonl")"
created() { jq -s '[.[] | select(.type=="sample") | .threads[] | select(.new == true)] | length' "$1"; }
ok "churn: new threads seen on both paths ($(created "$TMP/churn-bpf.jsonl"), $(created "$TMP/churn-proc.jsonl"))" \
	test "$(created "$TMP/churn-bpf.jsonl")" -gt 5 -a "$(created "$TMP/churn-proc.jsonl")" -gt 5
van=$(jq -s '[.[] | select(.type=="sample") | .proc.threads_vanished // 0] | add' "$TMP/churn-bpf.jsonl")
ok "churn: no thread vanished mid-read on the BPF path ($van)" test "$van" -eq 0
kill $p

if [ -x "$WORKLOADS/execloop" ]; then
	gp trace -q --interval 0.1 -o "$TMP/exec-bpf.jsonl" -- "$WORKLOADS/execloop" 10 3 200 > /dev/null 2>&1
	rc=$?
	GPUPROBE_BPF_SAMPLER=off gp trace -q --interval 0.1 -o "$TMP/exec-proc.jsonl" -- "$WORKLOADS/execloop" 10 3 200 > /dev/null 2>&1
	rp=$?
	ok "execloop: both paths exit 0 ($rc, $rp)" test $rc -eq 0 -a $rp -eq 0
	for f in bpf proc; do
		c=$(gp report --format jsonl "$TMP/exec-$f.jsonl" | jq -c 'select(.type=="sample") | (.threads | length)' | tr '\n' ' ')
		ok "execloop ($f): every sample resolves to threads ($c)" sh -c "test -n '$c' && ! echo ' $c' | grep -q ' 0 '"
	done
	ok "execloop: the same verdict class ($(verdict "$TMP/exec-bpf.jsonl"))" test "$(verdict "$TMP/exec-bpf.jsonl")" = "$(verdict "$TMP/exec-proc.jsonl")"
fi
pass
