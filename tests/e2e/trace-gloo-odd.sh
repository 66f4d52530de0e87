#!/bin/sh
# Siblings compared (issue 29), one trace: a real 4-rank torch.distributed
# job (tests/workloads/gloo_job.py: gloo on the CPU, RANK and WORLD_SIZE
# in each rank's environment as a launcher gives them) where, in turn,
# one rank sleeps elsewhere, calls another collective, exits, computes
# for ever.  Each time the verdict names that rank as the odd one out,
# with its pid and its frame (or how it ended), and the frame the three
# others wait in.  A job where every rank waits in the same collective
# (each in recv from the next: the input never comes) names no odd one.
E2E_TIMEOUT=${E2E_TIMEOUT:-400}
. "${0%/*}/lib.sh"
. "${0%/*}/gloo-lib.sh"
AR="wait in all_reduce (distributed_c10d.py:"
FROM="called from reduce_grads (gloo_job.py:$(at all_reduce)): the odd one out"
one() { # NAME MODE ODD: the job in one trace; $s its verdict
	gloo_job "$1" "$2" "$3" "0 1 2 3"
	s=$(verdict "$TMP/$1-0.jsonl")
	say "$1: $s"
	# A stack not read (a ptrace stop not taken within 100 ms: two CPUs,
	# one rank spinning) is said as such, and no failure of the
	# comparison: once more.
	if has "was not read"; then
		say "$1: a stack was not read: once more"
		gloo_job "$1" "$2" "$3" "0 1 2 3"
		s=$(verdict "$TMP/$1-0.jsonl")
		say "$1: $s"
	fi
	# `report` of the saved file says what the trace said, word for
	# word: the ranks' places, and when each main thread last ran (the
	# timeline; a saved file once lost it: model/proctab.c)
	live=$(jq -r 'select(.type=="verdict") | .summary' "$TMP/$1-0.jsonl")
	rep=$(gp report --format json "$TMP/$1-0.jsonl" | jq -r '.results[0].verdict.summary')
	ok "$1: report of the saved file says the same" test "$live" = "$rep"
}

one sleep sleep 1
ok "sleep: hang-blocked" has "hang-blocked: "
ok "sleep: rank 1 is the odd one, in load_next_batch" \
	has "4 ranks of gloo_job.py: rank 1 (pid $(pid_of "$TMP/sleep-0.jsonl" 1)) is in load_next_batch (gloo_job.py:$(at sleep)) while ranks 0, 2, 3 $AR"
ok "sleep: ... the others' line named" has "$FROM"

one other other 2
ok "other: hang-blocked" has "hang-blocked: "
ok "other: rank 2 is the odd one, in broadcast called from sync_params" \
	has "rank 2 (pid"
ok "... its frame" has ") is in broadcast (distributed_c10d.py:"
ok "... its line" has "called from sync_params (gloo_job.py:$(at broadcast)) while ranks 0, 1, 3 $AR"
ok "other: ... the others' line named" has "$FROM"

one exit exit 3
ok "exit: hang-blocked (the others wait for it at the rendezvous, on a timer: not idle)" \
	has "hang-blocked: "
ok "exit: rank 3 is the odd one, and it exited" has "4 ranks of gloo_job.py: rank 3 (pid"
ok "... and stopped first" has "timeline: rank 3 (pid"
ok "... exited" has ") exited"
ok "... while the others wait in init_process_group's code" \
	has "while ranks 0, 1, 2 wait in _new_process_group_helper (distributed_c10d.py:"
ok "... the odd one out" has ": the odd one out"

one compute compute 0
ok "compute: hang-busy-user" has "hang-busy-user: "
ok "compute: rank 0 is the odd one, computing in spin" has "rank 0 (pid"
ok "... its frame" has "computes at"
ok "... in spin" has "% CPU in spin (gloo_job.py:$(at spin)) while ranks 1, 2, 3 $AR"
ok "compute: ... the others' line named" has "$FROM"

one same same 0
ok "same: hang-blocked (every rank of the job waits in the collective)" has "hang-blocked: "
ok "same: all four named in one place" \
	has "all 4 ranks of gloo_job.py wait in recv (distributed_c10d.py:"
ok "... with the line" has "called from wait_for_input (gloo_job.py:$(at recv)): no odd one"
ok "same: no odd one out" hasnt "odd one out"
pass
