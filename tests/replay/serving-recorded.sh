#!/bin/sh
# Servers' traces, recorded (issue 32): tests/real/serving's programs
# under mariadbd 10.11, node 18, CPython 3.11 and Go 1.19, traced by gpuprobe
# (`trace --seconds 10 --hang-after 3`, the kernel counting socket calls),
# each line kept but the vm block and the frames' addresses.  The
# verdict, judged again from them, must hold the class and the words that
# name the cause -- in CI, where no mariadbd or node runs:
#   innodb-rowlock   an UPDATE waits for a row lock (InnoDB: a condition
#                    with a timeout of an hour): hang-blocked, the
#                    statement named (read "idle" before);
#   innodb-mdl       an ALTER TABLE waits for the metadata lock an open
#                    transaction holds, while InnoDB's purge task spins in
#                    sched_yield for it (a shape added after the rules:
#                    read "hang-busy-user" at first): hang-blocked, the
#                    statement named, the spinner said to be a spin-wait;
#   rest-mariadb     the same server at rest: idle;
#   loop-node-...    node's loop asleep in Atomics.wait inside a handler,
#                    its load generator's requests piling up unaccepted:
#                    hang-blocked naming the builtin (read "slow-progress"
#                    from the load generator's heap, then "progress" from
#                    its requests, written with write() to the server);
#   answer-node      the same server answering 2 requests a second:
#                    progress, its answers the output (read "151x slower"
#                    against its start-up's heap);
#   rest-node        at rest: idle;
#   batcher-py-...   handlers wait on futures of a batcher that died
#                    before the trace: hang-blocked, "no live thread";
#   go-hung          Go 1.19's handlers on a mutex held by a goroutine
#                    blocked on a channel, its load generator in the tree
#                    (read "progress, write() +217 B/s" before): judged by
#                    the goroutines, not the runtime's threads;
#   rest-go          the same server at rest: idle.
# Regenerate: REAL_KEEP=DIR with tests/real/run.sh (serving-cases.tsv),
# then on each kept file, and zstd -19:
#   jq -c 'select(.type != "verdict") | if .type == "sample" then del(.vm)
#     elif .type == "stacks" then (.threads |= map((.frames |= map(if .jit
#     then {"jit": .jit, "pc": .pc} else {"symbol": .symbol, "soname":
#     .soname, "module": .module} + (if .python then {"python": .python}
#     else {} end) end)) | del(.regs_from))) | del(.modules, .cost)
#     else . end'
. "${0%/*}/lib.sh"
FX=$top_srcdir/tests/fixtures/traces/serving

# fixture | class | summary must contain (grep -E) | must not (grep -E)
judge_recorded "$FX" <<'TABLE'
innodb-rowlock|hang-blocked|a database statement waits for a lock: thread [0-9]+ \(mariadbd\) asleep on a condition in handler::ha_index_read_map|
innodb-mdl|hang-blocked|a database statement waits for a lock: thread [0-9]+ \(mariadbd\) asleep on a condition in MDL_wait::timed_wait.*spins in sched_yield, [0-9]+% CPU \(a spin-wait, not work\)|
rest-mariadb|idle|threads asleep|database statement
loop-node-sync-sleep|hang-blocked|[0-9]+ connections not accepted; the main thread of pid [0-9]+ \(node\), which holds them, waits in Builtin_AtomicsWait \(V8\)|
answer-node|progress|sent on sockets|ETA|slower
rest-node|idle|threads asleep|
batcher-py-dead-before|hang-blocked|requests read and never answered.*no live thread is left to answer them|
go-hung|hang-blocked|goroutines of pid [0-9]+ \(go1\.[0-9.]+\).*wait on sync\.Mutex\.Lock.*waits on chan receive at main\.reloadModel.*runtime's own threads .* do not decide|write\(\)
rest-go|idle|goroutines of pid [0-9]+ .*runtime\.main waits for input|
TABLE
exit $failed
