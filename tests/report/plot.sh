#!/bin/sh
# gpuprobe report --plot: an SVG that xmllint accepts, a 1200x800 PNG that
# file(1) and pngcheck accept, from a recorded shape and a cut file.
# A build without cairo must say so in one line and exit 1; that much is
# checked, and then the test is a SKIP (77): no plot was tested.
. "${0%/*}/../e2e/lib.sh"
GEN=$top_srcdir/tests/fixtures/traces/gen-trace.awk
# --enable-sanitizers builds: fontconfig's own caches are not a leak of ours.
LSAN_OPTIONS=suppressions=$top_srcdir/tests/report/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}
export LSAN_OPTIONS
awk -v shape=seed004-import-hang -f "$GEN" > "$TMP/t.jsonl"

gp report --format text --plot "$TMP/p.svg" "$TMP/t.jsonl" > /dev/null 2> "$TMP/e"
rc=$?
if grep -q 'built without cairo' "$TMP/e"; then
	ok "no cairo: exit 1" test $rc -eq 1
	ok "no cairo: one error line (and a hint)" test "$(grep -vc '^gpuprobe: hint:' "$TMP/e")" -eq 1
	ok "no cairo: no file left" test ! -e "$TMP/p.svg"
	skip "built without cairo (configure found no cairo: apt-get install libcairo2-dev): no plot tested; the refusal was right (exit 1, one line, no file)"
fi
ok "svg: exit 0 ($(cat "$TMP/e"))" test $rc -eq 0
command -v xmllint >/dev/null 2>&1 || skip "xmllint is missing"
ok "svg: xmllint accepts it" xmllint --noout "$TMP/p.svg"
ok "svg: 1200x800" grep -q 'width="1200" height="800"' "$TMP/p.svg"
gp report --plot "$TMP/p.png" "$TMP/t.jsonl" > /dev/null || fail "png: exit $?"
ok "png: PNG signature" test "$(head -c 8 "$TMP/p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a
if command -v file >/dev/null 2>&1; then
	ok "png: file(1) says 1200 x 800 PNG" grep -q 'PNG image data, 1200 x 800' "$(file "$TMP/p.png" > "$TMP/f"; echo "$TMP/f")"
fi
if command -v pngcheck >/dev/null 2>&1; then
	ok "png: pngcheck accepts it" pngcheck -q "$TMP/p.png"
fi
awk -v shape=load-then-deadlock -f "$GEN" | head -c 200000 > "$TMP/cut.jsonl"
gp report --plot "$TMP/cut.png" "$TMP/cut.jsonl" > /dev/null
ok "cut file: plotted, exit 0" test $? -eq 0 -a -s "$TMP/cut.png"
gp report --plot "$TMP/x.pdf" "$TMP/t.jsonl" > /dev/null 2>&1
ok "--plot x.pdf: usage error 64" test $? -eq 64
gp report --plot "$TMP/nodir/x.png" "$TMP/t.jsonl" > /dev/null 2> "$TMP/e"
ok "--plot into a missing directory: exit 1, one line" test $? -eq 1 -a "$(wc -l < "$TMP/e")" -eq 1
gp report --plot "$TMP/arms.png" "$top_srcdir/tests/fixtures/results/lock-pool-all.jsonl" > /dev/null 2> "$TMP/e"
ok "--plot of a result without samples: exit 1, says why" test $? -eq 1 -a "$(grep -c 'no trace to plot' "$TMP/e")" -eq 1
pass
