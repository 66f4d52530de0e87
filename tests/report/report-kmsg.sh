#!/bin/sh
# gpuprobe report of a trace's kernel log (issue 19, item 4): every `kmsg`
# line in a "Kernel log" section, in order, with its time from the trace
# start, driver, kind, Xid and pid, and its text in full; a long log
# bounded (the first 50, the last 50, the driver errors between them) with
# what was left out counted, never dropped unsaid; the records lost to a
# ring overrun in their place; the driver errors named beside the verdict,
# in the phases, on the timeline and on the plot.  Markdown (through
# cmark-gfm), text and JSON (jq reads back what the file held).  Then
# hostile kmsg lines (missing fields, wrong types, huge and markup text):
# every format renders them, exit 0, no crash.
# The fixture: tests/fixtures/traces/add-kmsg.awk over gen-trace.awk's
# load-then-deadlock (the lines it adds are listed at its top).
: "${E2E_TIMEOUT:=120}"; export E2E_TIMEOUT
. "${0%/*}/../e2e/lib.sh"
. "${0%/*}/lib-md.sh"
require_jq
require_md_tools
GEN=$top_srcdir/tests/fixtures/traces/gen-trace.awk
ADD=$top_srcdir/tests/fixtures/traces/add-kmsg.awk
LSAN_OPTIONS=suppressions=$top_srcdir/tests/report/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}
export LSAN_OPTIONS
clean_stderr() { ! grep -Eq 'runtime error|Sanitizer|Segmentation|Aborted|core dumped' "$1"; }

F=$TMP/kmsg.jsonl
awk -v shape=load-then-deadlock -f "$GEN" | awk -f "$ADD" > "$F" || framework_failure "fixture"
ok "fixture: 156 kmsg lines" test "$(count kmsg "$F")" = 156

# ---- Markdown
gp report "$F" > "$TMP/k.md" 2> "$TMP/e" || fail "markdown: exit $?"
M=$TMP/k.md
ok "markdown: nothing on stderr" test ! -s "$TMP/e"
ok "markdown: the verdict line still comes first" test "$(head -n 1 "$M" | cut -c1-12)" = '**Verdict: `'
ok "markdown: tables parse" check_tables "$M"
ok "markdown: kmsg is no longer among the lines not rendered" test "$(grep -c 'does not render' "$M")" = 0
# Beside the verdict, one line: the errors, the judged-phase ones first.
sed -n 3p "$M" > "$TMP/beside"
ok "beside the verdict: Xid 31 (MMU fault) at +12.3 s, pid 4242" \
	grep -q '^\*\*Kernel log:\*\* Xid 31 (MMU fault) at +12.3 s, pid 4242; ' "$TMP/beside"
ok "beside the verdict: the amdgpu ring timeout and page fault, the rest counted" \
	grep -q 'amdgpu ring timeout at +30.5 s; amdgpu error ".*page fault.*" at +30.6 s, pid 5151; and 1 more; ' "$TMP/beside"
ok "beside the verdict: all in the judged phase, the lost records, and where to look" \
	grep -q 'all in the judged phase (+10.0-59.0 s); 1000 records lost (ring overrun) — see \*\*Kernel log\*\* below\.$' "$TMP/beside"
# The phases and the timeline mark the instants.
ph=$(table_with "$M" phase)
ok "phases: still 3 columns" test "$(columns "$M" "$ph")" = 3
ok "phases: the flat phase names the errors in it" \
	grep -q '^| +10.0 – 59.0 s | flat | .*; \*\*kernel log\*\*: Xid 31 at +12.3 s, amdgpu ring timeout at +30.5 s, amdgpu error at +30.6 s and 1 more |$' "$M"
ok "phases: the progress phase names none" grep -q '^| +0.0 – 10.0 s | progress | RssFile +50.0 MiB/s |$' "$M"
ok "timeline: a kernel-log row, four errors in three buckets (two at +30.5 s share one)" \
	test "$(grep '^| kernel log: driver errors | +12.3 s | +45.0 s | 4 | ' "$M" | grep -o '█' | wc -l)" = 3
# The section: every kept line, in order; what was left out, said.
kt=$(table_with "$M" time)
ok "section: a Kernel log heading with the counts" \
	grep -q '^\*\*Kernel log\*\* (156 lines .*; 4 driver errors; 1000 records lost (ring overrun))$' "$M"
ok "section: folded under a summary that says the bound" \
	grep -q '^<details><summary>Kernel log: 105 of 156 lines: the first 50, the last 50 and, between them, 5 driver errors and lost-records notes; 51 left out</summary>$' "$M"
ok "section: 6 columns (time, driver, kind, Xid, pid, text)" test "$(columns "$M" "$kt")" = 6
ok "section: 105 lines and one row for the 51 left out" test "$(rows "$M" "$kt")" = 106
ok "section: the left-out row sits between flood line 048 and the Xid" \
	test "$(grep -A1 'flood line 048' "$M" | tail -n 1)" = '| … | | | | | *51 lines left out* |'
ok "section: the Xid 31 row, whole (time, driver, kind, Xid and its name, pid, text to its end)" \
	grep -q '^| +12.300 s | nvidia | xid | 31 (MMU fault) | 4242 | `NVRM: Xid (PCI:0000:9a:00): 31, pid=4242, name=llama-cli, .*Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ` |$' "$M"
ok "section: the amdgpu ring timeout and page fault rows" \
	test "$(grep -c '^| +30.5[05]0 s | amdgpu | ' "$M")" = 2
ok "section: the lost records in place" \
	test "$(grep -A1 'pid 5151 thread python3 pid 5151' "$M" | tail -n 1)" = '| +40.000 s | kernel | lost | – | – | *1000 records lost (ring overrun)* |'
ok "section: the context line before the start, first, at -2.000 s" grep -q '^| -2.000 s | amdkfd | other | – | – | ' "$M"
# In order: the times of the rows (the gap row aside) never go back.
xq "$M.html" "(//table)[$kt]/tbody/tr/td[1]/text()" | grep -E '^[+-][0-9]' | sed 's/ s$//' > "$TMP/times"
in_order() { test "$(wc -l < "$TMP/times")" = 105 && sort -g -c "$TMP/times"; }
ok "section: 105 times, in the log's order" in_order
# Markup in the kernel's words stays words: "*ERROR*" is no emphasis, "<unknown>" no tag.
ok "html: the Xid 79 text keeps pid='<unknown>'" \
	test "$(xq "$M.html" "count(//code[contains(., \"pid='<unknown>', name=<unknown>\")])")" = 1
ok "html: the ring timeout's *ERROR* stays in the code span" \
	test "$(xq "$M.html" 'count(//code[contains(., "[amdgpu]] *ERROR* ring gfx_0.0.0")])')" = 1
ok "html: no emphasis but ours (the kernel's asterisks are text)" test "$(xq "$M.html" 'count(//em)')" = 2
ok "html: ours are the left-out row and the lost records" \
	test "$(xq "$M.html" 'string((//em)[1])')|$(xq "$M.html" 'string((//em)[2])')" = "51 lines left out|1000 records lost (ring overrun)"

# ---- text
gp report --format text "$F" > "$TMP/k.txt" || fail "text: exit $?"
T=$TMP/k.txt
ok "text: beside the verdict" grep -q '^  kernel log: Xid 31 (MMU fault) at +12.3 s, pid 4242; .*; each line below$' "$T"
ok "text: the section's head" grep -q '^kernel log: 156 lines (time from the trace start), 4 driver errors, 1000 records lost (ring overrun); 105 of 156 lines' "$T"
ok "text: the Xid row" grep -Eq '^ +\+12\.300 s  nvidia +xid +Xid 31 +pid 4242 +NVRM: Xid .*ACCESS_TYPE_VIRT_READ$' "$T"
ok "text: the lost records in place" grep -Eq '^ +\+40\.000 s  kernel +lost +1000 records lost \(ring overrun\)$' "$T"
ok "text: 51 left out, said" test "$(grep -c '^  \.\.\. 51 lines left out \.\.\.$' "$T")" = 1
ok "text: 105 lines of the log" test "$(grep -Ec '^ +[+-][0-9]+\.[0-9]{3} s  ' "$T")" = 105
ok "text: no Markdown" test "$(grep -c '`' "$T")" = 0

# ---- JSON: what the file held comes back
gp report --format json "$F" > "$TMP/k.json" || fail "json: exit $?"
ok "json: parses" jq -e . "$TMP/k.json" > /dev/null
ok "json: the counts" test "$(jq -c '.results[0].kernel_log | [.lines, .errors, .errors_judged, .lost_records, .left_out]' "$TMP/k.json")" = '[156,4,4,1000,51]'
ok "json: kmsg is no unrendered type" test "$(jq '.results[0].unrendered_types.kmsg' "$TMP/k.json")" = null
jq -c 'select(.type == "kmsg")' "$F" | jq -s -c '.[0:50] + .[101:106] + .[106:]' > "$TMP/want"
jq -c '.results[0].kernel_log.shown' "$TMP/k.json" > "$TMP/got"
ok "json: the lines shown are the file's, unchanged (the first 50, the 5 notable, the last 50)" \
	cmp -s "$TMP/want" "$TMP/got"

# ---- the plot marks the errors (cairo builds)
if gp report --plot "$TMP/k.svg" "$F" > /dev/null 2> "$TMP/e"; then
	ok "plot: four errors dotted in three panels, and the key" \
		test "$(grep -c 'stroke:rgb(60%,15%,55%);stroke-opacity:1;stroke-dasharray:2,3' "$TMP/k.svg")" = 13
	awk -v shape=load-then-deadlock -f "$GEN" > "$TMP/plain.jsonl"
	gp report --plot "$TMP/plain.svg" "$TMP/plain.jsonl" > /dev/null
	ok "plot: none without a kernel log" test "$(grep -c 'stroke:rgb(60%,15%,55%)' "$TMP/plain.svg")" = 0
else
	grep -q 'built without cairo' "$TMP/e" || fail "plot: $(cat "$TMP/e")"
	say "built without cairo: the plot's marks are not checked"
fi

# ---- errors outside the judged phase; a log with no error
awk -v shape=rssfile-84mibs -f "$GEN" |
	awk 'NR == 3 { print; print "{\"type\":\"kmsg\",\"t\":-4.5,\"driver\":\"kernel\",\"kind\":\"hung-task\",\"text\":\"INFO: task python3:7777 blocked for more than 122 seconds.\",\"level\":3,\"pid\":7777}"; next } { print }' \
	> "$TMP/before.jsonl"
gp report "$TMP/before.jsonl" > "$TMP/before.md" || fail "before: exit $?"
ok "an error before the judged phase: named, and said to be outside it" \
	grep -q '^\*\*Kernel log:\*\* hung task at -4.5 s, pid 7777; not in the judged phase (+0.0-59.0 s) — see' "$TMP/before.md"
ok "...and the table is not folded (one row)" grep -q '^| -4.500 s | kernel | hung-task | – | 7777 | `INFO: task python3:7777 blocked' "$TMP/before.md"
awk -v shape=short-flat -f "$GEN" |
	awk 'NR == 3 { print; print "{\"type\":\"kmsg\",\"t\":1.0,\"driver\":\"nvidia\",\"kind\":\"other\",\"text\":\"NVRM: loading NVIDIA UNIX Open Kernel Module\",\"level\":6}"; next } { print }' \
	> "$TMP/quiet.jsonl"
gp report "$TMP/quiet.jsonl" > "$TMP/quiet.md" || fail "quiet: exit $?"
ok "a log with no error: no line beside the verdict" test "$(grep -c '^\*\*Kernel log:\*\*' "$TMP/quiet.md")" = 0
ok "...its one line in the section, unfolded" \
	test "$(grep -c '^| +1.000 s | nvidia | other | – | – | `NVRM: loading NVIDIA UNIX Open Kernel Module` |$' "$TMP/quiet.md")" = 1 -a \
	"$(grep -c '<details><summary>Kernel log' "$TMP/quiet.md")" = 0

# ---- a flood: 20 000 lines, 300 errors among them, the bound holds
awk -v shape=load-then-deadlock -f "$GEN" | awk '
	/"type":"exit"/ {
		for (i = 0; i < 20000; i++)
			if (i >= 1000 && i < 1300)
				printf "{\"type\":\"kmsg\",\"t\":%.3f,\"driver\":\"nvidia\",\"kind\":\"xid\",\"text\":\"NVRM: Xid (PCI:0000:9a:00): 13, pid=4242, name=llama-cli, Graphics Exception\",\"level\":4,\"pid\":4242,\"xid\":13}\n", 20 + i / 1000
			else
				printf "{\"type\":\"kmsg\",\"t\":%.3f,\"driver\":\"nvidia\",\"kind\":\"other\",\"text\":\"NVRM: flood %d\",\"level\":6}\n", 20 + i / 1000, i
	}
	{ print }' > "$TMP/flood.jsonl"
gp report "$TMP/flood.jsonl" > "$TMP/flood.md" || fail "flood: exit $?"
ok "flood: tables parse" check_tables "$TMP/flood.md"
kt=$(table_with "$TMP/flood.md" time)
ok "flood: 200 lines and the two left-out rows" test "$(rows "$TMP/flood.md" "$kt")" = 202
ok "flood: the summary counts the errors it could not keep" \
	grep -q '200 of 20000 lines: .* 100 driver errors and lost-records notes; 19800 left out, 200 driver errors among them (more than 100 between the ends)' "$TMP/flood.md"
ok "flood: beside the verdict, three named and 297 more" \
	grep -q '^\*\*Kernel log:\*\* Xid 13 (graphics engine exception) at +21.0 s, pid 4242; Xid 13 .*; and 297 more; all in the judged phase' "$TMP/flood.md"
ok "flood: json says how many were left out" \
	test "$(gp report --format json "$TMP/flood.jsonl" | jq -c '.results[0].kernel_log | [.lines, .errors, .left_out, (.shown | length)]')" = '[20000,300,19800,200]'

# ---- hostile kmsg lines: every field from the file is untrusted
awk -v shape=short-flat -f "$GEN" | awk '
	BEGIN { big = "x"; while (length(big) < 200000) big = big big; big = substr(big, 1, 200000) }
	/"type":"exit"/ {
		print "{\"type\":\"kmsg\"}"
		print "{\"type\":\"kmsg\",\"t\":\"soon\",\"driver\":7,\"kind\":[\"xid\"],\"text\":{\"a\":1},\"level\":\"err\",\"pid\":\"4242\",\"xid\":\"31\",\"lost\":\"many\"}"
		print "{\"type\":\"kmsg\",\"t\":1e308,\"driver\":\"nvidia\",\"kind\":\"xid\",\"text\":null,\"pid\":-5,\"xid\":-1}"
		print "{\"type\":\"kmsg\",\"t\":-1e308,\"driver\":\"nvidia\",\"kind\":\"xid\",\"pid\":9223372036854775807,\"xid\":9223372036854775807,\"text\":\"max\"}"
		print "{\"type\":\"kmsg\",\"t\":1.5,\"driver\":\"amd\\u001b[1mgpu\",\"kind\":\"ring-timeout\",\"level\":3,\"text\":\"\\u001b]0;title\\u0007 ring gfx timeout\"}"
		print "{\"type\":\"kmsg\",\"t\":2,\"driver\":\"kernel\",\"kind\":\"lost\",\"lost\":-3,\"text\":\"negative\"}"
		print "{\"type\":\"kmsg\",\"t\":2.5,\"driver\":\"kernel\",\"kind\":\"lost\",\"lost\":9223372036854775807}"
		print "{\"type\":\"kmsg\",\"t\":2.6,\"driver\":\"kernel\",\"kind\":\"lost\",\"lost\":9223372036854775807}"
		print "{\"type\":\"kmsg\",\"t\":2.7,\"driver\":\"kernel\",\"kind\":\"lost\",\"lost\":9223372036854775807}"
		print "{\"type\":\"kmsg\",\"t\":3,\"driver\":\"amdgpu|`*<b>\",\"kind\":\"future-kind\\u001b[31m\",\"level\":0,\"text\":\"``a|b``` <script>alert(1)</script> *x* _y_ \\u001b[2J\\r\\nnext line\"}"
		print "{\"type\":\"kmsg\",\"t\":3.5,\"driver\":\"amdgpu\",\"kind\":\"other\",\"level\":2,\"text\":\"" big "\"}"
		print "{\"type\":\"kmsg\",\"t\":4,\"driver\":\"" big "\",\"kind\":\"" big "\",\"level\":3,\"text\":\"`\"}"
		print "{\"type\":\"kmsg\",\"t\":4.5,\"driver\":\"nvidia\",\"kind\":\"xid\",\"xid\":31,\"pid\":1,\"text\":\"\"}"
	}
	{ print }' > "$TMP/hostile.jsonl"
for fmt in markdown text json; do
	gp report --format $fmt "$TMP/hostile.jsonl" > "$TMP/hostile.$fmt" 2> "$TMP/e"
	rc=$?
	ok "hostile kmsg ($fmt): exit 0, nothing on stderr" test $rc -eq 0 -a ! -s "$TMP/e"
	ok "hostile kmsg ($fmt): no crash" clean_stderr "$TMP/e"
done
H=$TMP/hostile.markdown
hostile_rows() { check_tables "$H" && test "$(rows "$H" "$(table_with "$H" time)")" = 13; }
ok "hostile (markdown): tables parse, every line a row" hostile_rows
ok "hostile (markdown): no terminal escape" test "$(tr -dc '\033' < "$H" | wc -c)" = 0
ok "hostile (markdown): no tag of the file's" test "$(xq "$H.html" 'count(//script) + count(//b)')" = 0
ok "hostile (markdown): the backticks stay in their code span" \
	test "$(xq "$H.html" 'count(//code[contains(., "``a|b``` <script>")])')" = 1
ok "hostile (markdown): a 200 000-byte text cut, and said" grep -q 'x\.\.\. (200000 bytes)` |$' "$H"
ok "hostile (markdown): the lost records add up without overflow" \
	grep -q '; 18446744073709551615 records lost (ring overrun))$' "$H"
ok "hostile (text): no terminal escape, the verdict's summary included" \
	test "$(tr -dc '\033\007' < "$TMP/hostile.text" | wc -c)" = 0 -a "$(grep -c 'amd?\[1mgpu ring-timeout at +1.5 s' "$TMP/hostile.text")" -ge 1
ok "hostile (json): parses back, 13 lines shown, the lost records clamped" \
	test "$(jq '.results[0].kernel_log.shown | length' "$TMP/hostile.json")" = 13 -a \
	"$(grep -c '"lost_records": 9223372036854775807,' "$TMP/hostile.json")" = 1
pass
