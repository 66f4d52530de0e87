#!/bin/sh
# The target as a report names it (issue 20): a trace of `sh -c '...; exec
# xz ...'` is xz, not sh, in the trace's summary and the report, which
# also says what it was started as; its command line is printed as shell
# words that paste back into a shell and give the same argv, an argument
# with a quote, one with a space and one that is not UTF-8 included.
. "${0%/*}/lib.sh"
require_jq
command -v xz >/dev/null 2>&1 || skip "no xz"
command -v bash >/dev/null 2>&1 || skip "no bash (the paste-back check runs it)"
F=$TMP/t.jsonl
A="$TMP/it's a file"
B=$(printf '%s/caf\351 \033x' "$TMP")     # Latin-1 and an escape: not UTF-8 text
head -c 3000000 /dev/urandom > "$A" || framework_failure "cannot write $A"
cp "$A" "$B" || framework_failure "cannot write a non-UTF-8 name"

# The exec comes after gpuprobe wrote the target line (sleep first).
gp trace -q --interval 0.2 --seconds 1.5 -o "$F" -- \
	sh -c 'sleep 0.3; exec xz -T1 -9 -c -- "$@" > /dev/null' sh "$A" "$B" > "$TMP/out" 2>&1
say "summary: $(head -n 3 "$TMP/out" | tr '\n' '|')"
ok "trace summary names xz" grep -q '^gpuprobe trace: pid [0-9]* (xz)' "$TMP/out"
ok "trace summary: started as sh -c" grep -q "^  started as sh -c 'sleep 0.3; exec xz" "$TMP/out"
ok "an exec target line for the same pid" \
	test "$(jq -r 'select(.type == "target" and .how == "exec") | .comm' "$F")" = xz
ok "the exec line keeps the Latin-1 argument's bytes" \
	jq -s -e >/dev/null '[.[] | select(.how == "exec")][0].cmdline_bytes | map(select(. != null)) | length == 1' "$F"

gp report "$F" > "$TMP/r.md" || fail "report exited $?"
ok "report names xz" grep -q '^`gpuprobe trace` of \*\*xz\*\*' "$TMP/r.md"
ok "report says what it started as" grep -q '^Started as `sh -c ' "$TMP/r.md"
gp report --format text "$F" > "$TMP/r.txt" || fail "report --format text exited $?"
ok "report text names xz" grep -q '(xz)' "$TMP/r.txt"

# Paste the report's command line back into bash: the argv must be xz's.
words=$(sed -n 's/^Command line: `\(.*\)`$/\1/p' "$TMP/r.md")
say "command line: $words"
[ -n "$words" ] || fail "no Command line in the report"
bash -c "printf '%s\\0' $words" > "$TMP/pasted" || fail "bash refused the command line"
printf '%s\0' xz -T1 -9 -c -- "$A" "$B" > "$TMP/want"
ok "the pasted command line gives xz's argv, byte for byte" cmp -s "$TMP/pasted" "$TMP/want"
ok "the Latin-1 argument is quoted with \\xe9" grep -q "caf\\\\xe9" "$TMP/r.md"
pass
