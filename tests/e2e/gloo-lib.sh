# Helpers of the tests that run a real torch.distributed job (Debian's
# python3-torch, gloo on the CPU: tests/workloads/gloo_job.py), sourced
# after lib.sh.  Skips (77) only when torch cannot be found.
#
# Wall time: importing torch takes 2-9 s a rank (more with four at once on
# a loaded machine); each trace is stopped (SIGINT, as from a terminal)
# --hang-after plus a margin after every rank said it is ready (mode
# exit: started; the others never get ready), not after a fixed time.
# The ranks' last words are output, so the flat stretch, and the stacks
# taken --hang-after into it, start after them: in the collective, not
# in the rendezvous on the way to it.
require_jq
# Debian's torch is in /usr/lib/python3/dist-packages: its python3, not
# another one first on PATH (pyenv).
PY=
for p in /usr/bin/python3 python3; do
	# find_spec, not an import: importing torch costs seconds; a torch
	# that is there but broken fails the test below, it is no skip.
	if command -v "$p" > /dev/null 2>&1 \
	   && "$p" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)' 2> /dev/null; then
		PY=$(command -v "$p")
		break
	fi
done
[ -n "$PY" ] || skip "torch is not installed (apt-get install python3-torch; bootstrap.sh does)"
W=$top_srcdir/tests/workloads/gloo_job.py
HANG_AFTER=3
WORLD=4

# at MARK: the line of gloo_job.py marked "# at: MARK".
at() { grep -n "# at: $1\$" "$W" | cut -d: -f1; }

# gloo_job NAME MODE ODD NODE...: the job of WORLD ranks, rank ODD apart
# as MODE says; each NODE (a list of ranks, "0 1 2 3" or "0 1" "2 3") is
# traced apart, as a node of its own: its ranks started by one `sh -c`
# (the launcher, not a rank), gpuprobe trace -o $TMP/NAME-K.jsonl, K the
# node's index.  Returns once every trace has ended.
gloo_job() {
	_name=$1 _mode=$2 _odd=$3
	shift 3
	rm -f "$TMP/$_name".*
	_k=0 _gps=
	for _node in "$@"; do
		_cmd=
		for _r in $_node; do
			_cmd="$_cmd RANK=$_r WORLD_SIZE=$WORLD '$PY' '$W' $_mode $_odd '$TMP/$_name.init' > '$TMP/$_name.r$_r' 2>&1 &"
		done
		# env(1) execs timeout(1), whose pid $! is: SIGINT to it reaches
		# gpuprobe, which passes it to the job (default action: a
		# background job of this shell would start with it ignored).
		env --default-signal=INT timeout -k 2 "${GP_TIMEOUT:-150}" "$GPUPROBE" trace -q --kill-after 1 \
			--interval 0.5 --hang-after $HANG_AFTER -o "$TMP/$_name-$_k.jsonl" -- sh -c "$_cmd wait" \
			> "$TMP/$_name-$_k.out" 2>&1 &
		_gps="$_gps $!"
		bg_track $!
		_k=$((_k + 1))
	done
	_word=ready
	[ "$_mode" = exit ] && _word=started
	_started() {
		_r=0
		while [ $_r -lt $WORLD ]; do
			grep -q "$_word" "$TMP/$_name.r$_r" 2> /dev/null || return 1
			_r=$((_r + 1))
		done
	}
	_t0=$(now)
	wait_until 120 _started || { tail -n 5 "$TMP/$_name".r* "$TMP/$_name"-*.out 2> /dev/null
				      fail "$_name: the ranks were not $_word after 120 s"; }
	say "$_name: every rank $_word after $(elapsed "$_t0") s"
	sleep $((HANG_AFTER + 3))
	for _g in $_gps; do
		kill -INT "$_g" || framework_failure "cannot signal gpuprobe"
	done
	_gone() { for _g in $_gps; do ! kill -0 "$_g" 2> /dev/null || return 1; done; }
	wait_until 20 _gone || fail "$_name: gpuprobe still running 20 s after SIGINT"
	for _g in $_gps; do wait "$_g"; done
	say "$_name: traced for $(elapsed "$_t0") s after the ranks started"
}

# pid_of FILE RANK: the pid of rank RANK in FILE (its newest target line).
pid_of() { jq -r --arg r "$2" 'select(.type == "target" and .job_env.RANK == $r) | .pid' "$1" | tail -n 1; }
# verdict FILE: "CLASS: SUMMARY" of FILE's verdict line.
verdict() { jq -r 'select(.type == "verdict") | .class + ": " + .summary' "$1"; }
# has TEXT: $s holds TEXT.
has() { printf '%s\n' "$s" | grep -qF -- "$1"; }
hasnt() { ! has "$1"; }
