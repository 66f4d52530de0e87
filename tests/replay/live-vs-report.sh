#!/bin/sh
# A trace's own verdict and `report` of its saved file judge the same
# points (model/point.c builds them, live and on replay): the same class
# and the same since_s, over the demo's workloads, process trees, and the
# recorded shapes (issue 12).
. "${0%/*}/lib.sh"
n=0

same() { # name file: the saved verdict line against report's
	f=$2
	live=$(jq -r 'select(.type == "verdict") | "\(.class) \(.since_s)"' "$f" | tail -n 1)
	rep=$(timeout 30 "$GPUPROBE" report --format json "$f" |
	      jq -r '.results[0].verdict | "\(.class) \(.since_s)"')
	n=$((n + 1))
	if [ -z "$live" ] || [ "$live" != "$rep" ]; then
		# since_s is printed with the same precision both ways: equal text
		echo "FAIL: $1: live '$live', report '$rep'"
		failed=1
	else
		echo "ok: $1: $live"
	fi
}

for w in spin deadlock kernel-loop slow-loader load-then-deadlock bursty-writer exit3; do
	timeout 60 "$GPUPROBE" trace -q --interval 0.25 --seconds 5 --hang-after 2 --kill-after 1 \
		-o "$TMP/$w.jsonl" -- "$GPUPROBE" __workload "$w" > /dev/null 2>&1
	same "$w" "$TMP/$w.jsonl"
done
# Trees: a shell waiting for its children, a pipeline, an idle sleeper.
timeout 60 "$GPUPROBE" trace -q --interval 0.25 --seconds 4 --hang-after 2 -o "$TMP/tree-idle.jsonl" \
	-- sh -c 'sleep 30 & sleep 30; wait' > /dev/null 2>&1
same tree-idle "$TMP/tree-idle.jsonl"
timeout 60 "$GPUPROBE" trace -q --interval 0.25 --seconds 3 --hang-after 2 -o "$TMP/tree-pipe.jsonl" \
	-- sh -c 'yes | head -c 50000000 | cat > /dev/null; sleep 30' > /dev/null 2>&1
same tree-pipe "$TMP/tree-pipe.jsonl"
timeout 60 "$GPUPROBE" trace -q --no-children --interval 0.25 --seconds 3 --hang-after 2 \
	-o "$TMP/no-children.jsonl" -- sh -c 'sleep 30; true' > /dev/null 2>&1
same no-children "$TMP/no-children.jsonl"

# Recorded shapes (format 1 files, no waits recorded): report judges them
# as the writer of the saved verdict line would, when there is one.
for shape in $(awk '/^# shape:/ { print $3 }' "$GEN" 2>/dev/null); do
	awk -v shape="$shape" -f "$GEN" > "$TMP/$shape.jsonl"
	grep -q '"type":"verdict"' "$TMP/$shape.jsonl" && same "$shape" "$TMP/$shape.jsonl"
done
echo "$n compared"
[ "$n" -ge 10 ] || { echo "FAIL: only $n compared"; failed=1; }
exit $failed
