#!/bin/sh
# Siblings compared, a pool (issues 29, 32 "Words"): a master that forks
# workers, nginx's and a DataLoader's shape, no RANK in anyone's
# environment.  Its workers are compared among themselves (the master,
# waiting for them, is not one of them): at rest, nothing is said of
# them; with one worker blocked on a lock it inherited held across the
# fork, that worker is named with its frame -- as a worker, never as a
# rank, and never as "the odd one out" (words for a job's ranks only:
# its only thread on a private lock that names no holder is said to have
# no thread left to release it, "a lock inherited held across fork";
# nginx's master and workers read "3 nginx processes (ranks) ... the odd
# one out" before).
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/lib.sh"
require_jq
command -v python3 > /dev/null 2>&1 || skip "no python3"
cat > "$TMP/pool.py" <<'PY'
import os, socket, sys, threading

mode, n = sys.argv[1], int(sys.argv[2])
lock = threading.Lock()
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen()

def serve():
    srv.accept()              # at: serve

def load_shard():
    with lock:                # at: load_shard
        pass

for i in range(n):
    last = i == n - 1
    if mode == "stuck" and last:
        lock.acquire()        # held at the fork: the child's copy has no holder
    if os.fork() == 0:
        load_shard() if mode == "stuck" and last else serve()
        os._exit(0)
    if mode == "stuck" and last:
        lock.release()
while True:
    os.wait()
PY
at() { grep -n "# at: $1\$" "$TMP/pool.py" | cut -d: -f1; }
run() { # NAME MODE WORKERS: the pool traced; $s its verdict
	gp trace -q --interval 0.5 --seconds 7 --hang-after 3 -o "$TMP/$1.jsonl" -- python3 "$TMP/pool.py" "$2" "$3" \
		> "$TMP/$1.out" 2>&1
	s=$(jq -r 'select(.type == "verdict") | .class + ": " + .summary' "$TMP/$1.jsonl")
	say "$1: $s"
}
has() { printf '%s\n' "$s" | grep -qF -- "$1"; }
not_ranks() {
	ok "$1: no rank" sh -c "! printf '%s\n' \"\$0\" | grep -qE 'ranks?[ :]'" "$s"
	ok "$1: no odd one out" sh -c "! printf '%s\n' \"\$0\" | grep -qF 'odd one'" "$s"
}
master() { jq -r 'select(.type == "target") | .pid' "$TMP/$1.jsonl" | head -n 1; }

run rest rest 2
not_ranks rest
ok "rest: nothing said of the workers" sh -c "! printf '%s\n' \"\$0\" | grep -qF 'workers of'" "$s"

run two stuck 2
not_ranks two
ok "two workers: both named, as the master's workers" \
	has "the 2 workers of pid $(master two) (pool.py) differ: pid "
ok "... the one at rest in serve" has "waits in socket.accept (socket.py:"
ok "... called from serve" has "called from serve (pool.py:$(at serve))"
ok "... the blocked one in load_shard" has "waits in load_shard (pool.py:$(at load_shard))"
ok "... its lock said to be inherited held" \
	has "the only thread of pid $(jq -r 'select(.type == "stacks") | .pid' "$TMP/two.jsonl" | sort -nu | tail -n 1) (python3) waits on a lock private to its process that names no holder, in load_shard (pool.py:$(at load_shard)): no thread of it is left to release it (a lock inherited held across fork"

run three stuck 3
not_ranks three
ok "three workers: the one apart named with its frame" \
	has "3 workers of pid $(master three) (pool.py): pid "
ok "... in load_shard, the others in serve" \
	has "is in load_shard (pool.py:$(at load_shard)) while pids "
ok "... the others in serve" has "wait in socket.accept (socket.py:"
ok "... called from serve" has "called from serve (pool.py:$(at serve))"
pass
