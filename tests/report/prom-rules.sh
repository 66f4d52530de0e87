#!/bin/sh
# deploy/prometheus-rules.yaml (issue 29): promtool reads it, and its unit
# tests (tests/prometheus/odd-rank.test.yaml: four nodes' series, rank 1
# waiting elsewhere; a job all in one place; two ranks apart) pass -- the
# alert names the odd rank alone, nothing for the others; and
# tests/prometheus/hang-clock.test.yaml: hung 5 minutes, a stale watch.
. "${0%/*}/../e2e/lib.sh"
PROMTOOL=$(command -v promtool) || skip "promtool missing (bootstrap.sh installs prometheus)"
RULES=$top_srcdir/deploy/prometheus-rules.yaml
"$PROMTOOL" check rules "$RULES" > "$TMP/check" 2>&1
rc=$?
cat "$TMP/check"
ok "promtool check rules (exit $rc)" [ $rc -eq 0 ]
# promtool finds rule_files relative to the test file: a copy beside it
mkdir -p "$TMP/tests/prometheus" "$TMP/deploy"
cp "$RULES" "$TMP/deploy/"
cp "$top_srcdir/tests/prometheus/odd-rank.test.yaml" "$top_srcdir/tests/prometheus/hang-clock.test.yaml" \
	"$TMP/tests/prometheus/"
"$PROMTOOL" test rules "$TMP/tests/prometheus/odd-rank.test.yaml" > "$TMP/test" 2>&1
rc=$?
cat "$TMP/test"
ok "promtool test rules: the odd rank named alone (exit $rc)" [ $rc -eq 0 ]
# Issue 28: "hung 5 minutes" as one expression over the hang's start, which
# a watch restart does not move; a watch that stopped writing (kill -9).
"$PROMTOOL" test rules "$TMP/tests/prometheus/hang-clock.test.yaml" > "$TMP/test2" 2>&1
rc=$?
cat "$TMP/test2"
ok "promtool test rules: hung 5 minutes, and a stale watch (exit $rc)" [ $rc -eq 0 ]
pass
