# Shared set-up of the replay tests (POSIX sh), sourced by each
# tests/replay/*.sh as: . "${0%/*}/lib.sh"
# The paths (defaulting to the tree run from), jq or a SKIP, a scratch
# $TMP removed on exit, and $failed for a test that reports every case.
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
GPUPROBE=${GPUPROBE:-$top_builddir/src/gpuprobe}
GEN=$top_srcdir/tests/fixtures/traces/gen-trace.awk
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failed=0

# judge_recorded DIR [NEVER]: recorded traces judged again.  Each line of
# standard input, "fixture|class|words|never", names DIR/fixture.jsonl.zst;
# its verdict must have the class, a summary that holds /words/ and holds
# neither /never/ nor /NEVER/ (grep -E; an empty one is no test).
judge_recorded() {
	while IFS='|' read -r fx class words never; do
		[ -z "$fx" ] && continue
		out=$(timeout 20 "$GPUPROBE" report --hang-after 3 --format json "$1/$fx.jsonl.zst") || {
			echo "FAIL: $fx: report exited $?"; failed=1; continue; }
		c=$(echo "$out" | jq -r '.results[0].verdict.class')
		summary=$(echo "$out" | jq -r '.results[0].verdict.summary')
		nv=$never
		[ -n "${2:-}" ] && nv=${nv:+$nv|}$2
		if [ "$c" != "$class" ]; then
			echo "FAIL: $fx: class $c, expected $class ($summary)"; failed=1; continue
		fi
		if ! echo "$summary" | grep -Eq -- "$words"; then
			echo "FAIL: $fx: summary lacks /$words/: $summary"; failed=1; continue
		fi
		if [ -n "$nv" ] && echo "$summary" | grep -Eq -- "$nv"; then
			echo "FAIL: $fx: summary holds /$nv/: $summary"; failed=1; continue
		fi
		echo "ok: $fx: $c"
	done
}
