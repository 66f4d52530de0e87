#!/bin/sh
# A Go program is judged by its goroutines, read from the runtime's
# memory (issue 32, src/unwind/goroutines.c), never by the runtime's own
# OS threads (idle Ms on futexes, the netpoller in epoll):
#   - gohang hung: hang-blocked; the stacks line's "goroutines" has 5 in
#     sync.Mutex.Lock and 1 in chan receive at main.holdAndWait (its start
#     function is the wrapper the go statement made: main.main.func2), and the
#     words name both;
#   - gohang rest: idle (workers on a job channel, main in Accept);
#   - the same program linked with -ldflags='-s -w': the words say its
#     goroutines are out of sight, and why, at low confidence.
E2E_TIMEOUT=${E2E_TIMEOUT:-150}
. "${0%/*}/lib.sh"
require_jq
command -v go >/dev/null 2>&1 || skip "go is missing (apt-get install golang-go)"
[ -n "${HOME:-}" ] && [ -w "${HOME:-/nonexistent}" ] || export GOCACHE="$TMP/gocache"
SRC=$top_srcdir/tests/e2e/gohang.go
GO111MODULE=off GOFLAGS= go build -o "$TMP/gohang" "$SRC" > "$TMP/go.log" 2>&1 \
	|| framework_failure "go build: $(head -n 3 "$TMP/go.log")"
GO111MODULE=off GOFLAGS= go build -ldflags='-s -w' -o "$TMP/gohang-stripped" "$SRC" >> "$TMP/go.log" 2>&1 \
	|| framework_failure "go build -ldflags='-s -w': $(head -n 3 "$TMP/go.log")"
say "$(go version)"
verdict() { jq -r 'select(.type=="verdict") | "\(.class) \(.confidence): \(.summary)"' "$1"; }
GP_TIMEOUT=30

gp trace --seconds 6 --hang-after 2 -o "$TMP/hung.jsonl" -- "$TMP/gohang" hung > /dev/null 2>&1
v=$(verdict "$TMP/hung.jsonl")
say "hung: $v"
ok "hung: hang-blocked" sh -c "printf '%s' \"\$1\" | grep -q '^hang-blocked '" sh "$v"
ok "hung: the words name goroutines" sh -c "printf '%s' \"\$1\" | grep -q 'goroutines of pid'" sh "$v"
ok "hung: 5 wait on sync.Mutex.Lock" sh -c "printf '%s' \"\$1\" | grep -q '5 in main.main.func1 wait on sync.Mutex.Lock'" sh "$v"
ok "hung: holdAndWait waits on chan receive" sh -c \
	"printf '%s' \"\$1\" | grep -q 'waits on chan receive at main.holdAndWait'" sh "$v"
ok "hung: the stacks line carries the groups" sh -c "jq -e -s '[.[] | select(.type == \"stacks\") | .goroutines.groups[]? | select(.wait == \"chan receive\" and .at == \"main.holdAndWait\")] | length > 0' '$TMP/hung.jsonl' > /dev/null"
ok "hung: the runtime's goroutines are left out of n" sh -c "jq -e -s '[.[] | select(.type == \"stacks\") | .goroutines | select(. != null) | (.n == 7 and .system > 0)] | all' '$TMP/hung.jsonl' > /dev/null"

gp trace --seconds 6 --hang-after 2 -o "$TMP/rest.jsonl" -- "$TMP/gohang" rest > /dev/null 2>&1
v=$(verdict "$TMP/rest.jsonl")
say "rest: $v"
ok "rest: idle" sh -c "printf '%s' \"\$1\" | grep -q '^idle '" sh "$v"
ok "rest: the words name the workers' goroutines" sh -c "printf '%s' \"\$1\" | grep -q '3 in main.main.func3 wait on chan receive at main.worker'" sh "$v"

gp trace --seconds 5 --hang-after 2 -o "$TMP/stripped.jsonl" -- "$TMP/gohang-stripped" hung > /dev/null 2>&1
v=$(verdict "$TMP/stripped.jsonl")
say "stripped: $v"
ok "stripped: the goroutines are out of sight, and why" sh -c \
	"printf '%s' \"\$1\" | grep -q \"goroutines are out of sight (no symbols\"" sh "$v"
ok "stripped: at low confidence (the runtime's threads lean it, no more)" sh -c \
	"printf '%s' \"\$1\" | grep -q '^[a-z-]* low: '" sh "$v"
pass
