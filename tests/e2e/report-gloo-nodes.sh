#!/bin/sh
# Siblings compared across results (issue 29): the 4-rank job of
# tests/workloads/gloo_job.py traced apart, as on two nodes (ranks 0 and
# 1 by one gpuprobe, 2 and 3 by another, each its own file), with in turn
# one rank asleep elsewhere, calling another collective, exited,
# computing.  `gpuprobe report A B` names that rank as the odd one out,
# with its pid and its file's host, and where the three others are --
# each file alone sees two ranks of four.  A job where every rank waits
# in the same collective names no odd one.
E2E_TIMEOUT=${E2E_TIMEOUT:-400}
. "${0%/*}/lib.sh"
. "${0%/*}/gloo-lib.sh"
AR="wait in all_reduce (distributed_c10d.py:"
nodes() { # NAME MODE ODD: the job on two "nodes"; $s what report says across them
	gloo_job "$1" "$2" "$3" "0 1" "2 3"
	say "$1: node 0: $(verdict "$TMP/$1-0.jsonl")"
	say "$1: node 1: $(verdict "$TMP/$1-1.jsonl")"
	HOST=$(jq -r 'select(.type == "header") | .host.hostname' "$TMP/$1-0.jsonl")
	gp report --format text "$TMP/$1-0.jsonl" "$TMP/$1-1.jsonl" > "$TMP/$1.txt" || fail "$1: report failed"
	s=$(head -n 1 "$TMP/$1.txt")
	say "$1: report: $s"
	# A stack not read (a ptrace stop not taken within 100 ms on a
	# loaded machine) is said as such, and no failure of the comparison.
	if has "was not read" && [ -z "$again" ]; then
		say "$1: a stack was not read: once more"
		again=1 nodes "$@"
		again=
	fi
	gp report "$TMP/$1-0.jsonl" "$TMP/$1-1.jsonl" > "$TMP/$1.md" || fail "$1: report (markdown) failed"
	ok "$1: the Markdown says it too" grep -qE '^\*\*Across the files:\*\* .*4 ranks of gloo.?_job' "$TMP/$1.md"
}

nodes sleep sleep 1
ok "sleep: rank 1 named with its host and file" \
	has "across the files: 4 ranks of gloo_job.py: rank 1 (pid $(pid_of "$TMP/sleep-0.jsonl" 1) on $HOST (sleep-0.jsonl)) is in load_next_batch (gloo_job.py:$(at sleep)) while ranks 0, 2, 3 $AR"
ok "... the odd one out" has ": the odd one out"

nodes other other 2
ok "other: rank 2 named with its host and file" \
	has "rank 2 (pid $(pid_of "$TMP/other-1.jsonl" 2) on $HOST (other-1.jsonl)) is in broadcast (distributed_c10d.py:"
ok "... its line" has "called from sync_params (gloo_job.py:$(at broadcast)) while ranks 0, 1, 3 $AR"

nodes exit exit 3
ok "exit: rank 3 named with its host and file, exited" \
	has "rank 3 (pid $(pid_of "$TMP/exit-1.jsonl" 3) on $HOST (exit-1.jsonl)) exited"
ok "... while the others wait at the rendezvous" \
	has "while ranks 0, 1, 2 wait in _new_process_group_helper (distributed_c10d.py:"

nodes compute compute 0
ok "compute: rank 0 named with its host and file, computing in spin" \
	has "rank 0 (pid $(pid_of "$TMP/compute-0.jsonl" 0) on $HOST (compute-0.jsonl)) computes"
ok "... in spin" has "in spin (gloo_job.py:$(at spin)) while ranks 1, 2, 3 $AR"

nodes same same 0
ok "same: no odd one across the files" \
	has "across the files: all 4 ranks of gloo_job.py wait in recv (distributed_c10d.py:"
ok "... no odd one out" hasnt "odd one out"
pass
