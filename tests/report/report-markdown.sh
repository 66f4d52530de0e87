#!/bin/sh
# gpuprobe report --format markdown: a real trace of a test workload, the
# recorded shapes of gen-trace.awk, a `--pool all` lock run (arm lines), an
# idle A/B, stacks, several files (A/B), a cut file and foreign files.
# Each renders with cmark-gfm and its tables parse with the right columns.
# Many renders, a real trace, lock and idle run: more than the default 30 s on a busy box.
: "${E2E_TIMEOUT:=150}"; export E2E_TIMEOUT
. "${0%/*}/../e2e/lib.sh"
. "${0%/*}/lib-md.sh"
require_jq
require_md_tools
require_workload pagein
GEN=$top_srcdir/tests/fixtures/traces/gen-trace.awk
FIX=$top_srcdir/tests/fixtures/results

# ---- a real trace: a process paging in a file
dd if=/dev/urandom of="$TMP/data.bin" bs=1M count=32 2>/dev/null || framework_failure "dd"
gp trace -q --interval 0.25 --seconds 2 -o "$TMP/real.jsonl" -- "$WORKLOADS/pagein" "$TMP/data.bin" --mib-per-s 32 \
	> /dev/null 2>&1 || fail "trace of pagein failed"
gp report "$TMP/real.jsonl" > "$TMP/real.md" || fail "report of a real trace exited $?"
ok "real trace: the first line is the verdict" grep -q '^\*\*Verdict: `[a-z-]*`\*\*' "$TMP/real.md" -m1
ok "real trace: verdict line comes first" test "$(head -n 1 "$TMP/real.md" | cut -c1-12)" = '**Verdict: `'
ok "real trace: tables parse" check_tables "$TMP/real.md"
ev=$(table_with "$TMP/real.md" metric)
ok "real trace: evidence table has 7 columns" test "$(columns "$TMP/real.md" "$ev")" = 7
th=$(table_with "$TMP/real.md" process)
ok "real trace: thread table has 8 columns (process first) and a row" test "$(columns "$TMP/real.md" "$th")" = 8 -a "$(rows "$TMP/real.md" "$th")" -ge 1
ok "real trace: the pagein thread is in the thread table, with its process" grep -Eq '^\| [0-9]+ \(pagein\) \| [0-9]+ \| pagein \|' "$TMP/real.md"
ok "real trace: environment block" grep -q '<summary>Environment</summary>' "$TMP/real.md"
ok "real trace: RssFile sparkline" grep -Eq '^\| RssFile \|.*[▁▂▃▄▅▆▇█]{8}' "$TMP/real.md"

# ---- gen-trace shapes: every one renders and parses
for shape in seed004-import-hang seed000-idle-spin all-futex rssfile-84mibs bursty-writer cpu-only \
	     slowdown stopped gpu-flat-io-moving load-then-deadlock short-flat; do
	awk -v shape="$shape" -f "$GEN" > "$TMP/$shape.jsonl"
	gp report "$TMP/$shape.jsonl" > "$TMP/$shape.md" || fail "$shape: report exited $?"
	class=$(gp report --format json "$TMP/$shape.jsonl" | jq -r '.results[0].verdict.class')
	ok "$shape: verdict line names $class" grep -q "^\*\*Verdict: \`$class\`\*\*" "$TMP/$shape.md"
	ok "$shape: tables parse" check_tables "$TMP/$shape.md"
done
md=$TMP/seed004-import-hang.md
ok "seed 004: phase table (3 columns, 2 phases)" test "$(columns "$md" "$(table_with "$md" phase)")" = 3 -a "$(rows "$md" "$(table_with "$md" phase)")" = 2
ok "seed 004: hal-memory leads the thread table at 99%" grep -q '^| 4242 (llama-cli) | 4290 | hal-memory | 99% | 98% |' "$md"
ok "seed 004: the 40 sleepers are one row" grep -q '^| 4242 (llama-cli) | 40 threads | llama-cli |' "$md"
ok "seed 004: dirtied sparkline rises" grep -Eq '^\| system dirtied \|.*▁▁.*████' "$md"
ok "seed 000: both spinners at 91%" test "$(grep -Ec '^\| [0-9]+ \([a-z-]+\) \| 3283(49|50) \| llama-server \| 91% \|' "$TMP/seed000-idle-spin.md")" = 2

# ---- stacks collapsed by identical frames
sed '$d' "$TMP/seed000-idle-spin.jsonl" > "$TMP/stacks.jsonl"
frame='{"pc":"0x706b98286aa6","module":"/usr/local/lib/ollama/rocm_v7_2/libhsa-runtime64.so.1","offset":"0x86aa6","symbol":"rocr::core::Runtime::AsyncEventsLoop(void*)"},{"pc":"0x706b982e34dd","module":"/usr/local/lib/ollama/rocm_v7_2/libhsa-runtime64.so.1","offset":"0xe34dd","symbol":"rocr::os::ThreadTrampoline(void*)"}'
printf '{"type":"stacks","t":30.0,"threads":[{"tid":328349,"comm":"llama-server","frames":[%s],"kernel":[]},{"tid":328350,"comm":"llama-server","frames":[%s],"kernel":[]},{"tid":4242,"comm":"llama-cli","frames":[{"pc":"0x7ffff569ac37","module":"/opt/rocm-7.2.4/lib/libhsa-runtime64.so.1","offset":"0x9ac37"}],"kernel":["futex_wait_queue+0x60/0xa0"]}]}\n' "$frame" "$frame" >> "$TMP/stacks.jsonl"
tail -n 1 "$TMP/seed000-idle-spin.jsonl" >> "$TMP/stacks.jsonl"
gp report "$TMP/stacks.jsonl" > "$TMP/stacks.md" || fail "stacks: report exited $?"
md_html "$TMP/stacks.md"
ok "stacks: inside <details>, 3 threads, 2 distinct" grep -q '<details><summary>Stacks: 3 threads, 2 distinct' "$TMP/stacks.md"
# A real trace of two spinning threads, every thread stacked (--stacks all).
require_workload spin
# --hot-threshold 1: a spinner is hot whatever share of a CPU a loaded box
# gives it, so the trace always stacks it (under the default threshold
# the test used to skip its frame check, saying "frames not checked").
gp trace -q --seconds 1.5 --interval 0.5 --stacks all --hot-threshold 1 -o "$TMP/spin.jsonl" -- "$WORKLOADS/spin" 2 10 > /dev/null 2>&1
gp report "$TMP/spin.jsonl" > "$TMP/spin.md" || fail "report of a stacked trace exited $?"
ok "real stacks: tables parse" check_tables "$TMP/spin.md"
spin_frame() {
	grep -Eq '^#[0-9]+ +(spin|main) \(spin\) at .*spin\.c:[0-9]+$' "$TMP/spin.md" && return 0
	sed -n '/summary>Stacks/,/details>$/p' "$TMP/spin.md"; grep '"type":"stacks"' "$TMP/spin.jsonl" | head -c 2000
	return 1
}
ok "real stacks: the trace took stacks lines" test "$(count stacks "$TMP/spin.jsonl")" -gt 0
ok "real stacks: the workload's frames, with file:line, in a collapsed stack" spin_frame
ok "stacks: the two spinners collapse into one block" grep -q '^2 threads: 328349 (llama-server) 328350 (llama-server)' "$TMP/stacks.md"
ok "stacks: a stripped frame reads ?? module+offset" grep -q '?? libhsa-runtime64.so.1+0x9ac37' "$TMP/stacks.md"
ok "stacks: HTML has the <details> and its code blocks" test "$(xq "$TMP/stacks.md.html" 'count(//details//pre)')" = 2

# ---- a --pool all lock run: seed 004's arm table
gp report "$FIX/lock-pool-all.jsonl" > "$TMP/lock.md" || fail "lock: report exited $?"
ok "lock: one-line summary on top" grep -q '^\*\*Pinning probe: 11 arms: 7 returned 0' "$TMP/lock.md"
ok "lock: tables parse" check_tables "$TMP/lock.md"
t=$(table_with "$TMP/lock.md" arm)
ok "lock: arm table has 6 columns (arm, call, range, prefault, lock, result)" test "$(columns "$TMP/lock.md" "$t")" = 6
ok "lock: 11 arm rows" test "$(rows "$TMP/lock.md" "$t")" = 11
ok "lock: header words" grep -q '^| arm | call | range | prefault | lock | result |$' "$TMP/lock.md"
ok "lock: GPU pool refused as seed 004 wrote it" grep -q '`0x28 = HSA_STATUS_ERROR_INVALID_MEMORY_POOL`' "$TMP/lock.md"
ok "lock: the exact byte count" grep -q '16.4 GiB (17 559 175 168 B)' "$TMP/lock.md"
ok "lock: a watchdog arm says it never returned" grep -q '> 120.0 s (watchdog)' "$TMP/lock.md"
ok "lock: mtime change is flagged" grep -q 'file mtime changed' "$TMP/lock.md"
gp report --format text "$FIX/lock-pool-all.jsonl" > "$TMP/lock.txt" || fail "lock text exited $?"
ok "lock: text has the arms, no Markdown" test "$(grep -c 'hsa_amd_memory_lock' "$TMP/lock.txt")" = 11 -a "$(grep -c '`' "$TMP/lock.txt")" = 0
ok "lock: json keeps the 11 arms" test "$(gp report --format json "$FIX/lock-pool-all.jsonl" | jq '.results[0].arms | length')" = 11

# ---- a real `lock --pool all` run against the HSA test double (tests/gpu)
FAKE_HSA=$top_builddir/tests/gpu/libhsa-runtime64.so.1
if [ -f "$FAKE_HSA" ]; then
	head -c 8388608 /dev/urandom > "$TMP/model.bin"
	gp lock --lib "$FAKE_HSA" --pool all -o "$TMP/lockreal.jsonl" "$TMP/model.bin" > /dev/null 2>&1 \
		|| fail "lock --pool all against the test double exited $?"
	gp report "$TMP/lockreal.jsonl" > "$TMP/lockreal.md" || fail "report of a real lock run exited $?"
	ok "real lock: tables parse" check_tables "$TMP/lockreal.md"
	t=$(table_with "$TMP/lockreal.md" arm)
	n=$(jq -r 'select(.type == "arm") | .name' "$TMP/lockreal.jsonl" | wc -l)
	ok "real lock: one row per arm ($n), 6 columns" test "$(rows "$TMP/lockreal.md" "$t")" = "$n" -a "$(columns "$TMP/lockreal.md" "$t")" = 6
	ok "real lock: GPU-agent pools refused with 0x28" grep -q '`0x28 = HSA_STATUS_ERROR_INVALID_MEMORY_POOL`' "$TMP/lockreal.md"
	ok "real lock: the runtime named from its gpu line" grep -q '^Runtime: \*\*hsa\*\* from `' "$TMP/lockreal.md"
	ok "real lock: the probe's notes follow the table" grep -q '^- gpu0-[a-z]*: expected' "$TMP/lockreal.md"
else
	say "no HSA test double built: the real lock run is skipped"
fi

# ---- an idle A/B (seed 000's table: runtime, idle CPU, spinner threads),
# from a real `gpuprobe idle` of the HSA test double: its polling build
# with interrupts off (spin) against its backoff build (tests/gpu/backoff)
BACKOFF=$top_builddir/tests/gpu/backoff/libhsa-runtime64.so.1
if [ -f "$FAKE_HSA" ] && [ -f "$BACKOFF" ]; then
	# --threshold 2: the double's spinners count as spinners whatever
	# share of a CPU a loaded box gives them (under the default 10% the
	# verdict was quiet beside two busy loops; sleepers run 0%).
	GP_TIMEOUT=40 gp idle -q --no-interrupts --threshold 2 --seconds 2 --lib "$FAKE_HSA" --lib "$BACKOFF" \
		-o "$TMP/idle.jsonl" > /dev/null 2>&1 || fail "idle against the test doubles exited $?"
	gp report "$TMP/idle.jsonl" > "$TMP/idle.md" || fail "idle: report exited $?"
	ok "idle: one line on top" grep -q '^\*\*Idle verdict: `spin`\*\* — 1 of 2 runtimes spin' "$TMP/idle.md"
	ok "idle: tables parse" check_tables "$TMP/idle.md"
	t=$(table_with "$TMP/idle.md" runtime)
	ok "idle: A/B table, 4 columns, 2 runtimes" test "$(columns "$TMP/idle.md" "$t")" = 4 -a "$(rows "$TMP/idle.md" "$t")" = 2
	ok "idle: the polling build spins, the backoff build is quiet" \
		test "$(grep -c '| `spin` |$' "$TMP/idle.md")" = 1 -a "$(grep -c '| none | `quiet` |$' "$TMP/idle.md")" = 1
	ok "idle: the spinners' frames, collapsed" grep -q 'rocr::core::Runtime::AsyncEventsLoop' "$TMP/idle.md"
	ok "idle: no trace verdict on an idle result" test "$(grep -c '^\*\*Verdict:' "$TMP/idle.md")" = 0
	gp report --format text "$TMP/idle.jsonl" > "$TMP/idle.txt" || fail "idle text exited $?"
	ok "idle: text names both runtimes" test "$(grep -c 'libhsa-runtime64.so.1 ' "$TMP/idle.txt")" = 2
else
	say "no HSA test doubles built: the idle A/B is skipped"
fi

# ---- several traces: the A/B table, one verdict line each
gp report "$TMP/seed004-import-hang.jsonl" "$TMP/rssfile-84mibs.jsonl" > "$TMP/ab.md" || fail "ab: report exited $?"
ok "ab: tables parse" check_tables "$TMP/ab.md"
t=$(table_with "$TMP/ab.md" arm)
ok "ab: arm / own GPU peak / RssFile peak / result, 2 rows" test "$(columns "$TMP/ab.md" "$t")" = 4 -a "$(rows "$TMP/ab.md" "$t")" = 2
ok "ab: one line on top with both verdicts" grep -q '^\*\*gpuprobe report\*\*: `seed004-import-hang.jsonl` hang-busy-kernel; `rssfile-84mibs.jsonl` progress' "$TMP/ab.md"

# ---- cut and foreign
awk -v shape=load-then-deadlock -f "$GEN" | head -c 200000 > "$TMP/cut.jsonl"
gp report "$TMP/cut.jsonl" > "$TMP/cut.md"
ok "cut: rendered, exit 0" test $? -eq 0
ok "cut: says it was cut" grep -q 'the file was cut mid-line' "$TMP/cut.md"
ok "cut: no exit line, said" grep -q 'cut short' "$TMP/cut.md"
ok "cut: tables parse" check_tables "$TMP/cut.md"
printf '{"type":"header","gpuprobe":"9.0","command":"future"}\n{"type":"hologram","x":1}\n{"type":"hologram","x":2}\n' > "$TMP/future.jsonl"
gp report "$TMP/future.jsonl" > "$TMP/future.md" || fail "a result with unknown line types exited $?"
ok "unknown line types are named, not fatal" grep -q '`hologram` ×2' "$TMP/future.md"
echo '{"type":"sample","t":1}' > "$TMP/noheader.jsonl"
head -c 3000 /bin/sh > "$TMP/binary"
for fmt in markdown text json; do
	for f in "$TMP/noheader.jsonl" "$TMP/binary"; do
		gp report --format $fmt "$f" > "$TMP/o" 2> "$TMP/e"
		rc=$?
		ok "foreign ${f##*/} ($fmt): exit 1, one line on stderr" \
			test $rc -eq 1 -a "$(wc -l < "$TMP/e")" -eq 1
	done
done
gp report "$TMP/binary" "$FIX/lock-pool-all.jsonl" > "$TMP/mixed.md" 2> "$TMP/e"
ok "a foreign file among good ones: exit 1, the good one still rendered" \
	test $? -eq 1 -a "$(grep -c 'Pinning probe' "$TMP/mixed.md")" -eq 1
pass
