#!/bin/sh
# The kernel log, replayed (issue 13): a captured /proc tree with each
# kernel-log fixture (tests/fixtures/kmsg: an NVRM Xid, an amdgpu ring
# timeout, a hung-task warning) under one --proc-root.  trace keeps the
# driver's and the kernel's warnings as `kmsg` lines, with times from the
# trace start, and the verdict names those of the judged phase.
. "${0%/*}/lib.sh"
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; failed=1; fi; }

# name:kind:start (µs on the fixture's clock; hung-task's warning comes at
# +122 s of its README's start, 110 s later here so it falls in 14 s)
for fx in nvrm-xid:xid:500000000 amdgpu-ring-timeout:ring-timeout:500000000 \
	  hung-task:hung-task:610000000; do
	name=${fx%%:*} rest=${fx#*:}
	kind=${rest%%:*} start=${rest#*:}
	root=$TMP/$name
	mkdir -p "$root"
	cp -r "$top_srcdir/tests/fixtures/proc-spinner/proc" "$root/"
	cp -r "$top_srcdir/tests/fixtures/kmsg/$name/dev" "$root/"
	chmod -R u+w "$root"
	# The fixtures' trace starts at 500 s on their clock (README).
	GPUPROBE_KMSG_START_US=$start timeout 30 "$GPUPROBE" trace --proc-root "$root" \
		--interval 0.25 --seconds 14 --hang-after 2 -q -o "$TMP/$name.jsonl" 12623 \
		> "$TMP/$name.out" 2>&1
	check "$name: exit 0" "[ $? = 0 ]"
	n=$(jq -s "[.[] | select(.type == \"kmsg\" and .kind == \"$kind\")] | length" "$TMP/$name.jsonl")
	check "$name: $n kmsg lines of kind $kind" "[ ${n:-0} -ge 1 ]"
	check "$name: times from the trace start (one before it kept as context)" \
		"jq -s -e '[.[] | select(.type == \"kmsg\") | .t] | (min < 14)' '$TMP/$name.jsonl' >/dev/null"
	check "$name: the verdict names the kernel log of its phase" \
		"grep -q 'kernel log in the phase' '$TMP/$name.out'"
	r=$("$GPUPROBE" report --format json "$TMP/$name.jsonl" | jq -r '.results[0].verdict.summary')
	check "$name: report names it too" "echo \"\$r\" | grep -q 'kernel log in the phase'"
done
exit $failed
