#!/bin/sh
# gpuprobe stacks on a C++ target: demangled namespaced member functions
# with file:line from the -g library, identical stacks grouped with a
# count, the spinner listed first as hot, and a saved stacks line.
. "${0%/*}/lib.sh"
. "${0%/*}/stacks-lib.sh"
require_jq
start_stackload 6 1
F=$TMP/s.jsonl

# Other tests may load the CPUs: the spinner is told from the threads
# blocked in futex (0 ns of run time, exactly) by a window long enough
# that a runnable thread is given some CPU however busy the machine is
# (the default 0.01 s window can fall between its time slices: with two
# busy loops beside `make check` it listed the spinner second, issue
# 12), and a threshold just above nothing.
HOT="--hot-window 0.5 --hot-threshold 1"
gp stacks $HOT -o "$F" "$TPID" > "$TMP/out" 2> "$TMP/err"
rc=$?
cat "$TMP/out"
ok "exit 0 (got $rc)" [ $rc -eq 0 ]
ok "no hint as root" sh -c "! grep -q hint '$TMP/err'"
ok "file is JSON Lines" check_jsonl "$F"
ok "header, target, stacks lines" sh -c "[ \"\$(jq -r .type '$F' | tr '\n' ' ')\" = 'header target stacks ' ]"
ok "header command is stacks" sh -c "[ \"\$(jq -r 'select(.type==\"header\").command' '$F')\" = stacks ]"

SYM='gpw::server::Queue::start_loop(long)'
n=$(jq --arg s "$SYM" '[.threads[]? | select(any(.frames[]?; .symbol == $s))] | length' "$F" | tail -n 1)
ok "6 threads have the demangled frame '$SYM' (got $n)" [ "$n" = 6 ]
fl=$(jq -r --arg s "$SYM" 'select(.type=="stacks") | [.threads[].frames[]? | select(.symbol == $s)][0] | "\(.file):\(.line)"' "$F")
ok "its file:line is in libgpcxx.cc (got $fl)" sh -c "echo '$fl' | grep -q 'libgpcxx.cc:[0-9]'"
ok "no mangled _ZN name left in libgpcxx frames" sh -c \
	"! jq -r '.threads[]?.frames[]? | select(.soname == \"libgpcxx.so\") | .symbol' '$F' | grep -q '^_Z'"
ok "text groups them: '6 threads in ... $SYM'" grep -q "^6 threads in .*gpw::server::Queue::start_loop(long)" "$TMP/out"
first=$(sed -n '3p' "$TMP/out")
ok "the hot spinner is listed first (got: $first)" sh -c "echo '$first' | grep -q '^1 thread HOT .*libgpspin.so+0x'"
# A thread in a read of a pipe or socket, or in epoll_wait, is unwound
# without a stop (tests/faults/harm-transfer.sh says why).
ok "every thread was unwound, stopped one at a time or not at all (cost.stopped + cost.nostop = 8)" \
	sh -c "[ \"\$(jq 'select(.type==\"stacks\").cost | .stopped + .nostop' '$F')\" = 8 ]"
ok "each stopped thread has its stop time" sh -c \
	"[ \"\$(jq 'select(.type==\"stacks\") | [.threads[] | select(.stop_us > 0)] | length' '$F')\" = \"\$(jq 'select(.type==\"stacks\").cost.stopped' '$F')\" ]"
ok "no thread left stopped" no_stopped "$TPID"

gp stacks --format markdown --hot-window 0 "$TPID" > "$TMP/md"
ok "markdown: a table row and a <details> per group" sh -c \
	"grep -q '^| 6 |' '$TMP/md' && [ \$(grep -c '^<details>' '$TMP/md') -ge 3 ]"
gp stacks --format json --tid "$TPID" "$TPID" > "$TMP/one.json"
ok "--tid: one thread" sh -c "[ \"\$(jq '.threads | length' '$TMP/one.json')\" = 1 ]"
gp stacks --format json --hot $HOT "$TPID" > "$TMP/hot.json"
ok "--hot: only the spinner unwound" sh -c \
	"[ \"\$(jq '[.threads[] | select(.frames != null)] | length' '$TMP/hot.json')\" = 1 ]"
ok "--hot: the others listed with /proc data" sh -c \
	"[ \"\$(jq '[.threads[] | select(.frames == null and .wchan != null)] | length' '$TMP/hot.json')\" = 7 ]"
pass
