#!/bin/sh
# The kernel log, replayed (issue 13): a captured /proc tree with each
# kernel-log fixture (tests/fixtures/kmsg: an NVRM Xid, an amdgpu ring
# timeout, a hung-task warning) under one --proc-root.  trace keeps the
# driver's and the kernel's warnings as `kmsg` lines, with times from the
# trace start, and the verdict names those of the judged phase.
. "${0%/*}/lib.sh"
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; failed=1; fi; }

# name:kind:start (µs on the fixture's CLOCK_MONOTONIC; hung-task's warning
# comes at +122 s of its README's start, 110 s later here so it falls in
# 14 s; drift's printk clock runs 7.25 s ahead, which its recorded
# sched_debug says; overrun lost records twice in the window)
for fx in nvrm-xid:xid:500000000 amdgpu-ring-timeout:ring-timeout:500000000 \
	  hung-task:hung-task:610000000 drift:xid:17280000000000 overrun:lost:500000000; do
	name=${fx%%:*} rest=${fx#*:}
	kind=${rest%%:*} start=${rest#*:}
	root=$TMP/$name
	mkdir -p "$root"
	cp -r "$top_srcdir/tests/fixtures/proc-spinner/proc" "$root/"
	cp -r "$top_srcdir/tests/fixtures/kmsg/$name/." "$root/"
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
	case $name in
	nvrm-xid)
		# issue 19: the report shows the lines themselves, not a count
		"$GPUPROBE" report "$TMP/$name.jsonl" > "$TMP/$name.md" 2>&1
		check "nvrm-xid: report's Kernel log has both Xid 13 lines of pid 7777, whole" \
			"[ \$(grep -c '^| +3.000 s | nvidia | xid | 13 (graphics engine exception) | 7777 | \`NVRM: Xid (PCI:0000:9a:00): 13, pid=7777, name=python3, ' '$TMP/$name.md') = 2 ]"
		check "nvrm-xid: the Xid 13 named beside the verdict" \
			"sed -n 3p '$TMP/$name.md' | grep -q '^\*\*Kernel log:\*\* Xid 13 (graphics engine exception) at +3.0 s, pid 7777; '"
		check "nvrm-xid: kmsg is not among the lines not rendered" "! grep -q 'does not render' '$TMP/$name.md'" ;;
	drift)
		check "drift: the Xid at +3 s on the trace's clock (not +10.25 s)" \
			"jq -s -e '[.[] | select(.type == \"kmsg\" and .kind == \"xid\") | .t] == [3]' '$TMP/$name.jsonl' >/dev/null"
		check "drift: the hung task at -2 s, nothing from before the window" \
			"jq -s -e '[.[] | select(.type == \"kmsg\") | .t] == [-2, 3]' '$TMP/$name.jsonl' >/dev/null" ;;
	overrun)
		check "overrun: the losses written, with how many" \
			"jq -s -e '[.[] | select(.type == \"kmsg\" and .kind == \"lost\") | [.t, .lost]] == [[5, 1000], [6, 2]]' '$TMP/$name.jsonl' >/dev/null"
		check "overrun: the verdict says records were lost" \
			"grep -q '1000 records lost (ring overrun) at +5.0 s' '$TMP/$name.out'"
		check "overrun: report says so too" "echo \"\$r\" | grep -q '1000 records lost'"
		"$GPUPROBE" report "$TMP/$name.jsonl" > "$TMP/$name.md" 2>&1
		check "overrun: report renders it as Markdown (exit $?)" "[ $? = 0 ] && grep -q 'records lost' '$TMP/$name.md'" ;;
	esac
done
exit $failed
