#!/bin/sh
# Issue 19: the build-id of each GPU runtime a traced process maps, and
# the flag when processes of one job map two builds of one library
# (vllm-project/vllm#46097: one version, two builds, one hangs).  Two
# libraries named libnccl.so.2, one version, two build-ids, each
# dlopen'ed by one child of the traced parent 1.2 s after it started,
# after its target line (at the first tick, 0.5 s): a `runtime_libs` line
# at the end says it;
# libcudnn.so.9 beside them is no runtime of the list and is not named.
. "${0%/*}/lib.sh"
require_jq
command -v cc >/dev/null 2>&1 || skip "no C compiler"

cat >"$TMP/n.c" <<'C'
int ncclGetVersion(int *v) { *v = 22105; return 0; }
C
cat >"$TMP/job.c" <<'C'
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			usleep(1200000);
			if (!dlopen(argv[i], RTLD_NOW) || !dlopen(argv[argc - 1], RTLD_NOW))
				return fprintf(stderr, "%s\n", dlerror()), 1;
			pause();
		}
	while (wait(NULL) > 0)
		;
	return 0;
}
C
mkdir "$TMP/a" "$TMP/b" "$TMP/c"
# 20 bytes: a note's descriptor is padded to 4, and the reader takes a
# well-formed note only.
A=ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12
B=cd34cd34cd34cd34cd34cd34cd34cd34cd34cd34
cc -shared -fPIC -Wl,-soname,libnccl.so.2 -Wl,--build-id=0x$A "$TMP/n.c" -o "$TMP/a/libnccl.so.2" &&
cc -shared -fPIC -Wl,-soname,libnccl.so.2 -Wl,--build-id=0x$B "$TMP/n.c" -o "$TMP/b/libnccl.so.2" &&
cc -shared -fPIC -Wl,-soname,libcudnn.so.9 "$TMP/n.c" -o "$TMP/c/libcudnn.so.9" &&
cc -o "$TMP/job" "$TMP/job.c" -ldl || framework_failure "cannot build the libraries"

R=$TMP/r.jsonl
"$GPUPROBE" trace -q --seconds 2.5 --interval 0.5 -o "$R" -- \
	"$TMP/job" "$TMP/a/libnccl.so.2" "$TMP/b/libnccl.so.2" "$TMP/c/libcudnn.so.9" >/dev/null 2>"$TMP/err"
[ -s "$R" ] || fail "no result: $(cat "$TMP/err")"

# The newest list of each pid, from its target line and its runtime_libs lines.
libs=$(jq -c 'select(.type == "target" or .type == "runtime_libs")
	| {pid, libs: (.runtime_libs // .libs)}' "$R" |
	jq -sc 'group_by(.pid) | map(last) | map(select(.libs | length > 0))')
say "libs: $libs"
ok "every target line names its runtime libraries" \
	test "$(jq -c 'select(.type == "target") | has("runtime_libs")' "$R" | sort -u)" = true
ok "one process maps build $A from a/" test "$(printf '%s' "$libs" |
	jq --arg d "$TMP/a/libnccl.so.2" --arg id "$A" '[.[] | .libs[] | select(.path == $d and .build_id == $id
	and .soname == "libnccl.so.2")] | length')" = 1
ok "another maps build $B from b/" test "$(printf '%s' "$libs" |
	jq --arg d "$TMP/b/libnccl.so.2" --arg id "$B" '[.[] | .libs[] | select(.path == $d and .build_id == $id)] | length')" = 1
ok "two processes, one library each" test "$(printf '%s' "$libs" | jq '[.[] | .libs | length] == [1, 1]')" = true
ok "libcudnn is not a runtime of the list" test "$(jq '[.. | objects | .path? // empty
	| select(type == "string" and contains("cudnn"))] | length' "$R" | sort -u)" = 0
ok "the libraries loaded later come in runtime_libs lines, with t, pid and libs" \
	test "$(jq -c 'select(.type == "runtime_libs") | [(.t | type), (.pid | type), (.libs | type)]' "$R" |
	sort | uniq -c | sed 's/^ *//')" = '2 ["number","number","array"]'

"$GPUPROBE" report "$R" >"$TMP/md" || fail "report failed"
ok "the report has its Runtime libraries table" grep -q '^\*\*Runtime libraries\*\*' "$TMP/md"
ok "the table names each build-id's first 12 digits" \
	sh -c "grep -q '| libnccl.so.2 | \`ab12ab12ab12\` |' '$TMP/md' && grep -q '| libnccl.so.2 | \`cd34cd34cd34\` |' '$TMP/md'"
flag='pid [0-9]* and [0-9]* map two builds of libnccl\.so\.2 (\(ab12ab12ab12… vs cd34cd34cd34\|cd34cd34cd34… vs ab12ab12ab12\)…): one version, two builds'
ok "the report flags two builds of libnccl.so.2" grep -q "$flag" "$TMP/md"
"$GPUPROBE" report --format text "$R" >"$TMP/txt" || fail "report --format text failed"
ok "the text report flags them too" grep -q "$flag" "$TMP/txt"

# One build only: no flag.
jq -c 'if .type == "runtime_libs" then .libs |= map(.build_id = "'$A'")
	elif .type == "target" and .runtime_libs then .runtime_libs |= map(.build_id = "'$A'") else . end' \
	"$R" >"$TMP/one.jsonl"
"$GPUPROBE" report "$TMP/one.jsonl" >"$TMP/one.md" || fail "report of one build failed"
ok "one build: no flag" sh -c "! grep -q 'two builds' '$TMP/one.md'"

# A stranger's lines: wrong types are no rows, a name is printable, an id
# that is not hex is "?" and no build to compare.
{ head -1 "$R"
  printf '%s\n' '{"type":"runtime_libs","t":1,"pid":"7","libs":[]}' \
	'{"type":"runtime_libs","t":1,"pid":9,"libs":[1,"x",{"soname":5},{"soname":"a|b\u001b[31m","build_id":"zz"},{"soname":"libx","build_id":"abcdef0123456789"}]}' \
	'{"type":"runtime_libs","t":1,"pid":10,"libs":{"a":1}}' \
	'{"type":"runtime_libs","t":1,"pid":11,"libs":[{"soname":"libx","build_id":"1234"},{"soname":"a|b","build_id":"yy"}]}'
} >"$TMP/hostile.jsonl"
"$GPUPROBE" report "$TMP/hostile.jsonl" >"$TMP/h.md" || fail "report of hostile lines failed"
ok "hostile: four rows" test "$(grep -c '^| \(9\|11\) |' "$TMP/h.md")" = 4
ok "hostile: no escape byte" sh -c "! grep -q \"\$(printf '\033')\" '$TMP/h.md'"
ok "hostile: two builds of libx, none of a|b" \
	test "$(grep -c 'two builds' "$TMP/h.md"):$(grep -c 'two builds of libx (abcdef012345… vs 1234)' "$TMP/h.md")" = 1:1
pass
