#!/bin/sh
# A result file from a stranger is bounded input (issue 27, model/rstream.h):
# refused at once, one line, exit 1, in every format: a 40 KB .jsonl.zst
# of one 1.2 GB line (before: report used 4.9 GB for 37 s); 5 KB of
# .zst holding 60 MiB of "{}," in a stacks line (before: 4.8 GB, 13 s); a
# sample of 2.2 M distinct threads (before, 3.9 M in 1.3 MB: 10 GB, 17 s),
# and a plain one of 600 000 (more than a sample may list, samplein.h);
# a .gz line over 64 MiB.  And a trace of 300 000 threads each joining
# the next (before: report overflowed its 8 MiB stack in the wait graph,
# then took 149 s over its thread table) renders, exit 0.
: "${E2E_TIMEOUT:=180}"; export E2E_TIMEOUT
. "${0%/*}/../e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip "python3 is missing (it writes the chain)"
HEADER='{"type":"header","gpuprobe":"0.1.0","format":4,"command":"trace","argv":["gpuprobe","trace","4242"],"started":"2026-11-07T10:37:57.000Z","host":{"machine":"x86_64","page_size":4096}}'
crashed() { grep -Eq 'runtime error|Sanitizer|Segmentation|Aborted|core dumped' "$1"; }

# refused FILE ERE: every format exits 1 within 10 s, one line matching ERE.
refused() {
	for fmt in text markdown json jsonl; do
		t0=$(now)
		GP_TIMEOUT=60 gp report --format $fmt "$1" > /dev/null 2> "$TMP/err"
		rc=$? took=$(elapsed "$t0")
		say "report --format $fmt ${1##*/}: exit $rc in $took s: $(head -c 300 "$TMP/err")"
		[ $rc -eq 1 ] || fail "exit $rc, not 1"
		fcmp "$took" '<' 10 || fail "$took s to refuse it"
		[ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -Eq "$2" "$TMP/err" || fail "not the one line wanted ($2)"
	done
}

if command -v zstd > /dev/null 2>&1; then
	{ echo "$HEADER"; printf '{"type":"sample","t":1,"x":"'
	  head -c 1200M /dev/zero | tr '\0' A; printf '"}\n'; } | zstd -q -3 -c > "$TMP/bomb.jsonl.zst" ||
		framework_failure "zstd"
	say "the bomb: $(wc -c < "$TMP/bomb.jsonl.zst") bytes of .zst"
	refused "$TMP/bomb.jsonl.zst" \
		'^gpuprobe: .*bomb.jsonl.zst: decompresses to more than [0-9]+ MiB .*, over 1000 times its [0-9]+ bytes: not a result gpuprobe wrote'
	python3 -c 'import sys; sys.stdout.write(sys.argv[1] + "\n{\"type\":\"stacks\",\"t\":1,\"why\":\"end\",\"threads\":[" + "{}," * (20 << 20) + "{}]}\n")' \
		"$HEADER" | zstd -q -19 -c > "$TMP/objects.jsonl.zst" || framework_failure "zstd"
	say "the objects: $(wc -c < "$TMP/objects.jsonl.zst") bytes of .zst"
	refused "$TMP/objects.jsonl.zst" \
		'^gpuprobe: .*objects.jsonl.zst: decompresses to more than 16 MiB \(an object or array counted as 64 bytes\), over 1000 times'
	python3 -c 'import sys; sys.stdout.write(sys.argv[1] + "\n{\"type\":\"sample\",\"t\":1,\"pid\":1,\"proc\":{\"state\":\"S\"},\"threads\":[" + ",".join("{\"tid\":%d}" % (1000000 + i) for i in range(2200000)) + "]}\n")' \
		"$HEADER" | zstd -q -3 -c > "$TMP/threads.jsonl.zst" || framework_failure "zstd"
	say "the threads: $(wc -c < "$TMP/threads.jsonl.zst") bytes of .zst"
	refused "$TMP/threads.jsonl.zst" \
		'^gpuprobe: .*threads.jsonl.zst: line 2 holds more than 2097152 JSON objects and arrays'
else
	say "zstd missing (bootstrap.sh installs it): the .zst bomb skipped"
fi
{ echo "$HEADER"; printf '{"type":"sample","t":1,"x":"'
  head -c 100M /dev/zero | tr '\0' A; printf '"}\n'; } | gzip -1 > "$TMP/long.jsonl.gz"
say "the long line: $(wc -c < "$TMP/long.jsonl.gz") bytes of .gz"
refused "$TMP/long.jsonl.gz" '^gpuprobe: .*long.jsonl.gz: line 2 is longer than 64 MiB: not a line gpuprobe writes'

python3 -c 'import sys; sys.stdout.write(sys.argv[1] + "\n{\"type\":\"sample\",\"t\":1,\"pid\":1,\"proc\":{\"state\":\"S\"},\"threads\":[" + ",".join("{\"tid\":%d}" % (1000000 + i) for i in range(600000)) + "]}\n")' \
	"$HEADER" > "$TMP/many.jsonl" || framework_failure "python3"
refused "$TMP/many.jsonl" '^gpuprobe: .*many.jsonl: line 2 is a sample of more than 524288 threads'

# ---- 300 000 threads, each joining the next, for three samples
python3 - "$TMP/chain.jsonl" "$HEADER" <<'PY' || framework_failure "python3"
import sys
n, pid = 300000, 4242
with open(sys.argv[1], 'w') as f:
    f.write(sys.argv[2] + '\n')
    f.write('{"type":"target","pid":%d,"comm":"chain","how":"pid"}\n' % pid)
    for t in range(3):
        th = ','.join('{"tid":%d,"comm":"w","state":"S","wait":"lock","on":{"how":"join","id":%d}}'
                      % (pid + i, pid + i + 1) for i in range(n - 1))
        th += ',{"tid":%d,"comm":"w","state":"S","wait":"input"}' % (pid + n - 1)
        f.write('{"type":"sample","t":%d,"pid":%d,"comm":"chain","proc":{"state":"S","utime":0,'
                '"stime":0,"threads":%d,"rss_file":1,"rss_anon":1},"threads":[%s]}\n' % (t, pid, n, th))
    f.write('{"type":"exit","t":2,"reason":"interrupted","status":null,"signal":null}\n')
PY
say "the chain: $(wc -c < "$TMP/chain.jsonl") bytes"
for fmt in text markdown; do
	t0=$(now)
	(ulimit -s 8192; GP_TIMEOUT=120 gp report --format $fmt "$TMP/chain.jsonl") > "$TMP/out" 2> "$TMP/err"
	rc=$?
	say "report --format $fmt of the chain, 8 MiB stack: exit $rc in $(elapsed "$t0") s"
	crashed "$TMP/err" && fail "it crashed: $(head -c 300 "$TMP/err")"
	ok "exit 0" [ $rc -eq 0 ]
	ok "300000 threads said" grep -Eq '300000|300 000' "$TMP/out"
done
pass
