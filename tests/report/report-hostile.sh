#!/bin/sh
# gpuprobe report on hostile result files (issue 12): a header whose host
# facts (the `info` section) hold extreme values, long strings and wrong
# types renders in every format, whole, exit 0; `report` of several files
# where one is hostile says so in one "gpuprobe: FILE: ..." line, exits 1
# (README: a file could not be read or is not a result) and still renders
# the others; every input the fuzzers kept (tests/fuzz/regress/report)
# goes through the command itself in every format.  Never a crash.
: "${E2E_TIMEOUT:=120}"; export E2E_TIMEOUT
. "${0%/*}/../e2e/lib.sh"
require_jq
FIX=$top_srcdir/tests/fixtures/results
GEN=$top_srcdir/tests/fixtures/traces/gen-trace.awk
command -v python3 >/dev/null 2>&1 || skip "python3 is missing (it writes the hostile headers)"

# crashed CMD...: the command died of a signal or a sanitizer spoke.
clean_stderr() { ! grep -Eq 'runtime error|Sanitizer|Segmentation|Aborted|core dumped' "$1"; }

# ---- a header with extreme host facts, and a trace behind it
awk -v shape=short-flat -f "$GEN" > "$TMP/base.jsonl"
python3 - "$TMP/base.jsonl" "$TMP/host.jsonl" <<'PY' || framework_failure "python3"
import json, sys
L = open(sys.argv[1]).read().splitlines()
h = json.loads(L[0])
big = "r" * 70000
h["host"] = {
    "os": {"name": "x|`*_<>" * 3000, "kernel": big},
    "machine": "%s%n%99999999d",
    "cpu": {"model": big}, "cpus": 1.7976931348623157e308,
    "gpus": [{"card": "card0", "vendor": "0x1002", "device": big, "driver": None, "pci": big}] * 50,
    "drivers": {"amdgpu": big, "nvidia": 12, "nvidia_open": "yes"},
    "wsl": {"detected": True, "evidence": [big, 1, None, {"x": 1}] * 10},
    "devices": [{"path": big, "mode": None, "group": 3, "read": True, "write": "no"}] * 20,
    "user": {"name": big, "uid": 9223372036854775807, "groups": [big, -1, 1e308, None, "NaN"] * 20},
    "runtimes": {"hsa": {"path": big, "file_version": big, "version": big, "build_id": big, "build": big},
                 "cuda": {"name": 1e308}},
    "env": {"HSA_" + "K" * 5000: big, "ROCR_X": 1e308, "CUDA_Y": None, "HIP_Z": ["a"]},
    "vm": {"vm.dirty_ratio": -9223372036854775808, "vm.dirty_background_ratio": 1e308,
           "vm.dirty_bytes": 9223372036854775807, "vm.dirty_background_bytes": -1},
    "thp": {"enabled": big, "defrag": None},
    "kernel.yama.ptrace_scope": -1e308,
    "memlock": {"soft": 1.7976931348623157e308, "hard": "unlimited" * 1000},
    "mem_available": -1.7976931348623157e308, "mem_total": 9223372036854775807,
    "page_size": 1e308, "clk_tck": -0.0,
}
L[0] = json.dumps(h)
open(sys.argv[2], "w").write("\n".join(L) + "\n")
PY
for fmt in markdown text json; do
	gp report --format $fmt "$TMP/host.jsonl" > "$TMP/host.$fmt" 2> "$TMP/e"
	rc=$?
	ok "extreme host facts ($fmt): exit 0, nothing on stderr" test $rc -eq 0 -a ! -s "$TMP/e"
	ok "extreme host facts ($fmt): no crash" clean_stderr "$TMP/e"
done
ok "extreme host facts (markdown): the environment block is there" \
	grep -q '<summary>Environment</summary>' "$TMP/host.markdown"
# The runtime line comes out whole: path, versions, build-id and builder
# (the stack buffer that overflowed held 1 KiB of it).
grep '^- \*\*HSA runtime\*\*' "$TMP/host.markdown" > "$TMP/rt"
ok "extreme host facts (markdown): the runtime line holds all five 70000-byte fields" \
	test "$(wc -c < "$TMP/rt")" -gt 350000
ok "extreme host facts (markdown): ... up to its builder" grep -q ', built by r' "$TMP/rt"
ok "extreme host facts (json): parses, header kept" \
	sh -c 'jq -e ".results[0].header.host.runtimes.hsa.path | length == 70000" "$1" >/dev/null' - "$TMP/host.json"

# A number past int64 (2^64 - 1) is more than jansson reads: the header
# is refused, in one line that says why.
sed '1s/"mem_total": [0-9]*/"mem_total": 18446744073709551615/' "$TMP/host.jsonl" > "$TMP/host64.jsonl"
gp report "$TMP/host64.jsonl" > /dev/null 2> "$TMP/e"
ok "a header with 2^64-1: exit 1, one line saying why" \
	test $? -eq 1 -a "$(wc -l < "$TMP/e")" -eq 1 -a "$(grep -c 'line 1 is not JSON: too big integer' "$TMP/e")" -eq 1

# ---- several files, one hostile
printf '%s\n' '{"type":"header","gpuprobe":1e308,"command":["x"],"host":"x"}' > "$TMP/h-types.jsonl"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; print "" }' > "$TMP/h-deep.jsonl"
head -c 3000 /bin/sh > "$TMP/h-binary"
printf '\f\n\f\n' > "$TMP/h-ff"
: > "$TMP/h-empty"
for h in "$TMP/h-deep.jsonl" "$TMP/h-binary" "$TMP/h-ff" "$TMP/h-empty" "$TMP/no-such-file"; do
	name=${h##*/}
	for fmt in markdown text json; do
		gp report --format $fmt "$FIX/lock-pool-all.jsonl" "$h" "$TMP/base.jsonl" \
			> "$TMP/o" 2> "$TMP/e"
		rc=$?
		ok "good, $name, good ($fmt): exit 1" test $rc -eq 1
		ok "good, $name, good ($fmt): one line, gpuprobe: FILE: ..." \
			test "$(wc -l < "$TMP/e")" -eq 1 -a "$(grep -c "^gpuprobe: $h: " "$TMP/e")" -eq 1
		ok "good, $name, good ($fmt): no crash" clean_stderr "$TMP/e"
		case $fmt in
		json) ok "good, $name, good (json): both good files rendered" \
			sh -c 'jq -e ".results | length == 2" "$1" >/dev/null' - "$TMP/o" ;;
		*) ok "good, $name, good ($fmt): both good files rendered" \
			sh -c 'grep -qi "pinning probe" "$1" && grep -qi "verdict" "$1"' - "$TMP/o" ;;
		esac
	done
done
# A header of wrong types is still a header: rendered from what it holds.
for fmt in markdown text json; do
	gp report --format $fmt "$TMP/h-types.jsonl" > "$TMP/o" 2> "$TMP/e"
	rc=$?
	ok "header of wrong types ($fmt): exit 0 or one line" \
		test $rc -eq 0 -o \( $rc -eq 1 -a "$(wc -l < "$TMP/e")" -eq 1 \)
	ok "header of wrong types ($fmt): no crash" clean_stderr "$TMP/e"
done

# ---- names cut inside a UTF-8 character: the compact records keep 15
# bytes of a comm; "ab" + five 3-byte characters is cut inside the fifth
# (byte 15 is its first).  The verdict, naming the busy
# thread, must still be written (jansson refuses invalid UTF-8).
awk -v shape=cpu-only -f "$GEN" |
	sed 's/"worker"/"ab\\u65e5\\u672c\\u8a9e\\u30c6\\u30b9\\u30c8"/g' > "$TMP/utf.jsonl"
grep -q 'u65e5' "$TMP/utf.jsonl" || framework_failure "the cpu-only shape names no worker thread"
gp report --format json "$TMP/utf.jsonl" > "$TMP/utf.json" 2> "$TMP/e"
ok "a comm cut inside a UTF-8 character: the verdict is written, naming the thread" \
	jq -e '.results[0].verdict.summary | test("\\(ab\u65e5\u672c\u8a9e\u30c6\\)")' "$TMP/utf.json"

# ---- what the fuzzers found, through the command (a "\f" line splits
# a fuzz input into files; the command gets them as separate files)
n=0
# (the named seeds; the grown corpus, files named by hash, is replayed
# in-process by tests/fuzz/replay.sh: a process each would take minutes)
for f in "$top_srcdir"/tests/fuzz/regress/report/* "$top_srcdir"/tests/fuzz/corpus/report/*.jsonl \
	 "$top_srcdir"/tests/fuzz/corpus/report/multi-*; do
	[ -f "$f" ] || continue
	rm -f "$TMP"/part.*
	awk -v p="$TMP/part." 'BEGIN { k = 0 } $0 == "\f" { k++; next } { print > (p k) }' "$f"
	for fmt in markdown text json; do
		# shellcheck disable=SC2046
		gp report --format $fmt $(ls "$TMP"/part.* 2>/dev/null) > "$TMP/o" 2> "$TMP/e"
		rc=$?
		[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "${f##*/} ($fmt): exit $rc"
		clean_stderr "$TMP/e" || fail "${f##*/} ($fmt): $(head -n 3 "$TMP/e")"
		if [ $fmt = json ]; then
			jq -e . "$TMP/o" > /dev/null || fail "${f##*/}: --format json is not JSON"
		fi
	done
	n=$((n + 1))
done
ok "$n kept fuzz inputs: every format, exit 0 or 1, no crash" test $n -gt 0
pass
