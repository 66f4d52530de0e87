#!/bin/sh
# gpuprobe trace on a captured /proc tree (--proc-root): the samples must
# carry what the capture holds.  The capture is static, so the process
# never exits and the trace ends at --seconds.
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
GPUPROBE=${GPUPROBE:-$top_builddir/src/gpuprobe}
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

timeout 10 "$GPUPROBE" trace --proc-root "$top_srcdir/tests/fixtures/proc-spinner" \
	--interval 0.1 --seconds 0.35 -q -o "$out" 12623 >/dev/null || fail "exit code $?"
jq -e . "$out" >/dev/null || fail "invalid JSON Lines"
# Every thread and vm whole (format 4 writes deltas): what jq reads below.
"$GPUPROBE" report --format jsonl "$out" > "$out.whole" && mv "$out.whole" "$out" \
	|| fail "report --format jsonl"
[ "$(jq -r 'select(.type=="target") | .comm' "$out")" = cap ] || fail "target comm"
[ "$(jq -r 'select(.type=="exit") | .reason' "$out")" = "time limit" ] || fail "exit reason"
n=$(jq -s '[.[] | select(.type=="sample")] | length' "$out")
[ "$n" -ge 3 ] && [ "$n" -le 5 ] || fail "$n samples, expected 3-5"
# The hostile comm survives intact; the waiter's syscall and wchan too.
# (jq -e judges the last input alone: slurp with -s to judge them all)
jq -e -s '[.[] | select(.type=="sample") | .threads[] | select(.tid==12625) | .comm]
	| length > 0 and all(. == "w2 (x) )")' "$out" >/dev/null \
	|| fail "comm w2 (x) ) lost"
jq -e -s '[.[] | select(.type=="sample")][0].threads[] | select(.tid==12626)
	| .wchan == "futex_do_wait" and .syscall.nr == 202 and (.kernel | length) > 0' "$out" >/dev/null \
	|| fail "waiter's wchan/syscall/kernel stack"
want=$(awk '/^RssFile:/ {print $2 * 1024}' "$top_srcdir/tests/fixtures/proc-spinner/proc/12623/status")
got=$(jq -s '[.[] | select(.type=="sample")][0].proc.rss_file' "$out")
[ "$got" = "$want" ] || fail "rss_file $got, expected $want"
jq -e -s '[.[] | select(.type=="sample")][0].vm.vmstat.nr_dirtied > 0' "$out" >/dev/null || fail "vmstat"
jq -e -s '.[0].type == "header" and (.[0].host.kernel | length > 0)' "$out" >/dev/null || fail "host kernel"
echo "PASS: $n samples replayed"
