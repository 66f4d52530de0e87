#!/bin/sh
# gpuprobe stacks on a fake CPython 3.13 whose interpreter state is
# hostile (tests/workloads/pyhostile.c; issue 18, item 7), end to end:
# gpuprobe exits 0 within 5 s (process start, the module scan and three
# ptrace stops included), every thread is still stacked, and the line's
# "python" object names why its frames were not read ("error").  Before
# the checks, the first case killed gpuprobe (SIGBUS, a debug offset of
# 2^40 used as an index into a stack buffer) and the second took 14.7 s
# and 100 MB ("threads": 4194304).  tests/unit/test_pyhostile covers
# every offset, list and cache case under ASan; this is the line's shape.
: "${E2E_TIMEOUT:=60}"
. "${0%/*}/lib.sh"
require_jq
require_workload python3.13-hostile

# case NAME WANT MODE [FIELD=VALUE...]: stacks of the fake in MODE; its
# "python" "error" contains WANT ("" : no error, and Python frames).
case_() {
	name=$1 want=$2
	shift 2
	"$WORKLOADS/python3.13-hostile" "$@" > "$TMP/fake.out" 2>&1 &
	fpid=$!; bg_track $fpid
	wait_until 10 grep -q '^ready' "$TMP/fake.out" || framework_failure "$name: the fake never became ready"
	t0=$(now)
	gp stacks --format json "$fpid" > "$TMP/s.json" 2> "$TMP/err"
	rc=$?
	secs=$(elapsed "$t0")
	kill -KILL $fpid 2>/dev/null
	wait $fpid 2>/dev/null
	ok "$name: exit 0 (got $rc: $(tail -n 1 "$TMP/err"))" [ $rc -eq 0 ]
	ok "$name: in under 5 s (${secs} s)" fcmp "$secs" '<' 5
	ok "$name: all 3 threads stacked" [ "$(jq '.threads | length' "$TMP/s.json")" = 3 ]
	err=$(jq -r '.python.error // ""' "$TMP/s.json")
	say "$name: python: $(jq -c .python "$TMP/s.json")"
	if [ -z "$want" ]; then
		ok "$name: no error" [ -z "$err" ]
		n=$(jq '[.threads[].python.unplaced[]? | select(.function == "f0")] | length' "$TMP/s.json")
		ok "$name: each thread's youngest Python frame is f0 ($n)" [ "$n" = 3 ]
	else
		ok "$name: the error says \"$want\"" sh -c 'case "$1" in *"$2"*) exit 0 ;; esac; exit 1' - "$err" "$want"
		ok "$name: no thread count beside it" [ "$(jq '.python | has("threads")' "$TMP/s.json")" = false ]
	fi
}

case_ "a valid fake" "" valid
case_ "thread_state.next = 2^40" \
	"debug offsets refused: thread_state.next = 1099511627776 (+8 bytes) lies past thread_state.size = 304" \
	offsets thread_state.next=0x10000000000
case_ "a two-state loop in a two-interpreter loop" \
	"thread states not read: the list of interpreter" ts-cycle
case_ "thread_state.size = 2^40" "thread_state.size = 1099511627776 is beyond any CPython's" \
	offsets thread_state.size=0x10000000000
pass
