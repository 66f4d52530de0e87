#!/bin/sh
# stacks-bpf-frames.sh: issue 30's second acceptance line, on the stacks
# benches' kinds of target: is a sleeping thread's stack unwound from the
# registers the kernel saved (a BPF task iterator, src/unwind/taskregs.c;
# no stop) the stack the ptrace path gives (GPUPROBE_BPF_REGS=off: each
# thread stopped)?  For each target: `gpuprobe stacks --format json`
# on the BPF path, then on the ptrace path, then on the BPF path again.
# A thread is compared where both BPF snapshots give it the same frames
# (it did not move between them) and the ptrace snapshot gave frames;
# frames are compared whole: each frame's function (or module+offset),
# and the Python frames (file, function, line).  Counted: threads
# compared, the same, different; the threads each path stopped (the
# snapshot's cost.stopped); how many the BPF path read from saved
# registers.  As root (the BPF path needs it).
#
# Targets: C (tests/workloads/sleepers: pause and pthread_cond_wait),
# C++ (tests/workloads/stackload: libgpcxx's queue waiters, spinners),
# Python (tests/real/py4threads.py: a lock, a sleep, a pipe read, a
# loop), Java (eight threads in Object.wait beside the JVM's own, after
# its JIT compiled a loop), Go (goroutines parked on a channel, one on a
# timer), and node (V8 after its JIT, libuv's threads) where each is
# installed.
set -u
top=$(cd "${0%/*}/.." && pwd)
GP=${GPUPROBE:-$top/src/gpuprobe}
W=${WORKLOADS:-$top/tests/workloads}
[ "$(id -u)" = 0 ] || { echo "run as root: the BPF path needs it" >&2; exit 2; }
command -v jq > /dev/null || { echo "jq is needed" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/stacks-bpf-frames.XXXXXX")
PIDS=
trap 'for p in $PIDS; do kill -9 $p 2>/dev/null; done; rm -rf "$TMP"' EXIT INT TERM

echo "# stacks-bpf-frames: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r)"
echo "# gpuprobe: $GP ($("$GP" --version 2>/dev/null | head -n 1)); BPF: $("$GP" info | sed -n 's/^BPF *//p' | head -n 1)"
echo
echo "| target | threads | compared | same | different | from saved registers (BPF) | stopped: BPF path | stopped: ptrace path |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"

# frames FILE: one line a thread asleep, "tid<TAB>frames as JSON" (a
# thread on a CPU, state R, is no sleeping thread: left out, whatever
# its frames)
frames() {
	jq -r '.threads[]? | select(.state != "R") | [.tid, ([.frames[]? | (.symbol // ((.module // "?") + "+" + (.offset // "")))
		, (.python[]? | "\(.file):\(.function):\(.line)")] | tojson)] | @tsv' "$1" | sort
}

compare() { # NAME PID
	name=$1 pid=$2
	"$GP" stacks --format json "$pid" > "$TMP/$name-b1.json" 2> /dev/null
	GPUPROBE_BPF_REGS=off "$GP" stacks --format json "$pid" > "$TMP/$name-p.json" 2> /dev/null
	"$GP" stacks --format json "$pid" > "$TMP/$name-b2.json" 2> /dev/null
	for k in b1 p b2; do frames "$TMP/$name-$k.json" > "$TMP/$name-$k.f"; done
	all=$(jq '.threads | length' "$TMP/$name-b1.json")
	regs=$(jq '[.threads[] | select(.regs_from == "bpf")] | length' "$TMP/$name-b1.json")
	sb=$(jq '.cost.stopped // 0' "$TMP/$name-b1.json")
	sp=$(jq '.cost.stopped // 0' "$TMP/$name-p.json")
	# stable: the same frames in both BPF snapshots, and some
	join -t "$(printf '\t')" "$TMP/$name-b1.f" "$TMP/$name-b2.f" |
		awk -F'\t' '$2 == $3 && $2 != "[]" { print $1 "\t" $2 }' > "$TMP/$name-stable"
	join -t "$(printf '\t')" "$TMP/$name-stable" "$TMP/$name-p.f" |
		awk -F'\t' '$3 != "[]"' > "$TMP/$name-both"
	n=$(wc -l < "$TMP/$name-both")
	same=$(awk -F'\t' '$2 == $3' "$TMP/$name-both" | wc -l)
	echo "| $name | $all | $n | $same | $((n - same)) | $regs | $sb | $sp |"
	awk -F'\t' '$2 != $3 { print "    differ: tid " $1 ": bpf " $2 " / ptrace " $3 }' "$TMP/$name-both" |
		head -n 3 >&2
}

start() { # NAME READY-FILE CMD...: runs CMD, waits for "ready" in its output
	name=$1 out=$2
	shift 2
	"$@" > "$out" 2>&1 &
	PIDS="$PIDS $!"
	P=$!
	i=0
	while ! grep -q ready "$out" 2> /dev/null && [ $i -lt 300 ] && kill -0 "$P" 2> /dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.5
	kill -0 "$P" 2> /dev/null || { echo "| $name | did not start: $(tail -n 1 "$out") | | | | | | |"; return 1; }
}

start c "$TMP/c.out" sh -c "echo ready; exec '$W/sleepers' 60" &&
	compare "C (sleepers, 60 threads)" "$P"

start cxx "$TMP/cxx.out" "$W/stackload" 24 2 "$W/libgplate.so" &&
	compare "C++ (stackload: 24 waiters, 2 spinners)" "$P"

if command -v python3 > /dev/null; then
	# the interpreter itself, not a launcher that forks it (pyenv's shim)
	PY=$(python3 -c 'import sys; print(sys.executable)')
	start py "$TMP/py.out" "$PY" "$top/tests/real/py4threads.py" &&
		compare "Python (py4threads.py)" "$P"
fi

if command -v javac > /dev/null && command -v java > /dev/null; then
	mkdir -p "$TMP/java"
	cat > "$TMP/java/Parked.java" <<'JAVA'
public class Parked {
    public static void main(String[] args) throws Exception {
        Object lock = new Object();
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() -> { synchronized (lock) { try { lock.wait(); } catch (InterruptedException e) { } } }, "waiter-" + i);
            t.setDaemon(true);
            t.start();
        }
        long s = 0;
        for (int i = 0; i < 20_000_000; i++) s += i % 7; // the JIT compiles this
        System.out.println("ready " + s);
        Thread.sleep(60_000);
    }
}
JAVA
	if javac -d "$TMP/java" "$TMP/java/Parked.java" 2> /dev/null; then
		start java "$TMP/java.out" java -cp "$TMP/java" Parked &&
			compare "Java (8 threads in Object.wait, the JVM's own)" "$P"
	fi
fi

if command -v go > /dev/null; then
	mkdir -p "$TMP/go"
	cat > "$TMP/go/main.go" <<'GO'
package main

import (
	"fmt"
	"time"
)

func main() {
	c := make(chan int)
	for i := 0; i < 50; i++ {
		go func() { <-c }()
	}
	go func() {
		for {
			time.Sleep(time.Second)
		}
	}()
	fmt.Println("ready")
	select {}
}
GO
	if (cd "$TMP/go" && GO111MODULE=off GOFLAGS= go build -o parked main.go) 2> /dev/null; then
		start go "$TMP/go.out" "$TMP/go/parked" &&
			compare "Go (50 goroutines parked)" "$P"
	fi
fi

if command -v node > /dev/null; then
	cat > "$TMP/n.js" <<'JS'
function hot(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i); return s; }
let s = 0;
for (let i = 0; i < 200; i++) s += hot(1e5);
console.log("ready " + s);
setInterval(() => {}, 100000);
JS
	start node "$TMP/node.out" node "$TMP/n.js" &&
		compare "node (V8 after its JIT, libuv's threads)" "$P"
fi
