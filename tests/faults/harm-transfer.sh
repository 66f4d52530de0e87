#!/bin/sh
# A stop must not change what a system call returns (issue 27, part 1).
# A ptrace stop of a thread blocked in a partly done transfer makes the
# call return short: before the fix, tests/workloads/wholewrite (a writer
# and a reader that trust POSIX, every byte checked by its position)
# exited 3 with "short write: 131072 of 1048576 bytes" under
# `trace --stacks all --interval 0.05`, "short send: 255808 of 1048576" on
# a unix socket, 10859 on TCP, and 458752 of 1048576 under two
# `gpuprobe stacks`; and a pipeline whose consumer sleeps read "idle since
# +7 s, medium" with default stacks against "since +1 s, high" with
# --stacks none (the cut bytes counted as output).
# The truth: every byte goes through whole, the blocked writer's native
# frames are still taken (from its saved sp/pc, "unwind":"nostop"; or, where
# BPF reads a sleeping thread's saved registers, "regs_from":"bpf"; no
# stop), no thread is stopped for longer than 300 ms (tests/workloads/
# stopwatch polling from outside), and the pipeline's verdict has the same
# class and start (+-1 s) whatever --stacks says.
E2E_TIMEOUT=${E2E_TIMEOUT:-150}
. "${0%/*}/../e2e/lib.sh"
require_jq
require_workload wholewrite
require_workload stopwatch
MAX_MS=${HARM_MAX_MS:-300}

for kind in pipe unix tcp; do
	out=$TMP/$kind.jsonl
	GP_TIMEOUT=60 gp trace -q --stacks all --interval 0.05 -o "$out" -- \
		"$WORKLOADS/wholewrite" "$kind" 8 1048576 65536 30 \
		> "$TMP/$kind.out" 2> "$TMP/$kind.err" &
	gp_pid=$!
	bg_track $gp_pid
	wait_until 5 grep -qs '"type":"target"' "$out" || fail "$kind: the command did not start"
	target=$(jq -r 'select(.type=="target") | .pid' "$out" | head -n 1)
	"$WORKLOADS/stopwatch" "$target" 40 1 > "$TMP/$kind.watch" &
	w_pid=$!
	bg_track $w_pid
	wait $gp_pid
	gp_rc=$?
	wait $w_pid
	ok "$kind: gpuprobe ended by itself (rc $gp_rc)" test "$gp_rc" -eq 0
	ok "$kind: every byte went through whole ($(cat "$TMP/$kind.out" "$TMP/$kind.err" | grep wholewrite | head -n 1))" \
		grep -q 'wholewrite: done 8388608 bytes' "$TMP/$kind.out"
	st=$(jq -r 'select(.type=="exit") | .status' "$out")
	ok "$kind: the command's own status is 0 ($st)" test "$st" = 0
	ns=$(jq -s '[.[] | select(.type=="stacks") | .threads[]
		| select((.unwind=="nostop" or .regs_from=="bpf") and ([.frames[]?.symbol] | index("main")))]
		| length' "$out")
	ok "$kind: blocked transfers unwound without a stop, down to main ($ns stacks)" test "$ns" -gt 0
	ms=$(sed -n 's/.*max_stopped_ms=\([0-9.]*\).*/\1/p' "$TMP/$kind.watch")
	ok "$kind: no thread stopped longer than $MAX_MS ms (longest ${ms:-?} ms)" \
		fcmp "${ms:-99999}" '<=' "$MAX_MS"
done

# gpuprobe stacks, twice, on a writer blocked in the middle of 1 MiB.
"$WORKLOADS/wholewrite" pipe 4 1048576 65536 100 > "$TMP/st.out" 2>&1 &
w=$!
bg_track $w
sleep 0.5
gp stacks "$w" > "$TMP/st1.txt" 2>&1
sleep 0.3
gp stacks --format json "$w" > "$TMP/st2.json" 2>&1
wait $w
rc=$?
ok "stacks: the writer finished whole (rc $rc: $(head -n 1 "$TMP/st.out"))" test "$rc" -eq 0
ok "stacks: the text says why it was not stopped" \
	grep -q 'a stop would cut its write to a pipe' "$TMP/st1.txt"

# A pipeline whose consumer sleeps: the same verdict with and without stacks.
head -c 30000000 /dev/urandom > "$TMP/big" || framework_failure "no scratch space"
for st in hot none; do
	GP_TIMEOUT=40 gp trace -q --hang-after 5 --seconds 14 --stacks "$st" -o "$TMP/pl-$st.jsonl" -- \
		sh -c "gzip -1 -c '$TMP/big' | sleep 30" > /dev/null 2>&1
	v=$(jq -r 'select(.type=="verdict") | "\(.class) \(.since_s)"' "$TMP/pl-$st.jsonl")
	say "pipeline, --stacks $st: $v"
	eval "cls_$st=\${v%% *}; since_$st=\${v#* }"
done
ok "pipeline: the same class with and without stacks ($cls_hot, $cls_none)" \
	test "$cls_hot" = "$cls_none"
ok "pipeline: the same start, +-1 s ($since_hot, $since_none)" \
	awk -v a="$since_hot" -v b="$since_none" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1) }'
pass
