#!/bin/sh
# The verdict on recorded traces of known shapes (tests/fixtures/traces/
# gen-trace.awk makes them: seed 004's import hang, seed 000's two
# spinners, all threads in futex, RssFile growing 84 MiB/s, and the shapes
# the verdict must never confuse).  Each: class, since_s, and the words
# the summary must hold.
. "${0%/*}/lib.sh"

# shape | class | since_s min | since_s max | summary must contain (grep -E)
while IFS='|' read -r shape class smin smax words; do
	[ -z "$shape" ] && continue
	awk -v shape="$shape" -f "$GEN" > "$TMP/$shape.jsonl"
	out=$(timeout 20 "$GPUPROBE" report --format json "$TMP/$shape.jsonl") || {
		echo "FAIL: $shape: report exited $?"; failed=1; continue; }
	got=$(echo "$out" | jq -r '.results[0].verdict | "\(.class) \(.since_s)"')
	summary=$(echo "$out" | jq -r '.results[0].verdict.summary')
	c=${got% *}
	s=${got#* }
	if [ "$c" != "$class" ]; then
		echo "FAIL: $shape: class $c, expected $class ($summary)"; failed=1; continue
	fi
	if ! awk -v s="$s" -v a="$smin" -v b="$smax" 'BEGIN { exit !(s >= a && s <= b) }'; then
		echo "FAIL: $shape: since_s $s not in [$smin, $smax]"; failed=1; continue
	fi
	if ! echo "$summary" | grep -Eq "$words"; then
		echo "FAIL: $shape: summary lacks /$words/: $summary"; failed=1; continue
	fi
	echo "ok: $shape: $c since +$s s"
done <<'TABLE'
seed004-import-hang|hang-busy-kernel|45|47|thread 4290 \(hal-memory\).*ioctl\(fd 3, 0xc0284b16 AMDKFD_IOC_ALLOC_MEMORY_OF_GPU\).*no file reclaim
seed000-idle-spin|hang-busy-user|0|1|thread 328349 .*91%.*thread 328350 .*91%
all-futex|hang-blocked|0|1|41 of 41 threads in futex_do_wait
rssfile-84mibs|progress|0|1|RssFile \+84\.0 MiB/s.*ETA
bursty-writer|progress|0|5|write\(\)
cpu-only|hang-busy-user|0|1|thread 4243 \(worker\) busy in user space, 99%
slowdown|slow-progress|19|21|(1\.0 MiB|9[0-9][0-9] KiB)/s, down from 100 MiB/s
stopped|stopped|20|22|SIGSTOP
gpu-flat-io-moving|progress|0|1|read\(\) \+20\.0 MiB/s
load-then-deadlock|hang-blocked|9|11|futex_do_wait.*before that \+0\.0-10\.0 s: RssFile \+50\.0 MiB/s
short-flat|undecided|0|0|25 s short of --hang-after 30: leans hang-blocked
TABLE

# --hang-after changes the judgement after the fact: 5 s of flat trace.
awk -v shape=short-flat -f "$GEN" > "$TMP/short.jsonl"
c=$("$GPUPROBE" report --format json --hang-after 3 "$TMP/short.jsonl" | jq -r '.results[0].verdict.class')
[ "$c" = hang-blocked ] && echo "ok: --hang-after 3 makes short-flat hang-blocked" \
	|| { echo "FAIL: --hang-after 3 on short-flat gave $c"; failed=1; }

# A run killed mid-line: rendered from what it holds, and said to be cut.
awk -v shape=load-then-deadlock -f "$GEN" | head -c 200000 > "$TMP/cut.jsonl"
if "$GPUPROBE" report --format text "$TMP/cut.jsonl" > "$TMP/cut.out" 2>&1 \
	&& grep -q "the last line was cut" "$TMP/cut.out" && grep -q "^verdict:" "$TMP/cut.out"; then
	echo "ok: a cut file is rendered and said to be cut"
else
	echo "FAIL: cut file"; cat "$TMP/cut.out"; failed=1
fi

# Syscall names are the traced machine's (header host.machine), not the
# reporting one's (issue 12): seed 004's thread sits in syscall 16, ioctl
# on x86_64; the same numbers recorded on aarch64 are fremovexattr there,
# and on a machine gpuprobe has no table for, a number without a name.
awk -v shape=seed004-import-hang -f "$GEN" > "$TMP/x86.jsonl"
for m in aarch64 ppc64le none; do
	if [ $m = none ]; then
		sed '1s/"machine":"x86_64",//' "$TMP/x86.jsonl" > "$TMP/$m.jsonl"
	else
		sed "1s/\"machine\":\"x86_64\"/\"machine\":\"$m\"/" "$TMP/x86.jsonl" > "$TMP/$m.jsonl"
	fi
done
sum() { timeout 20 "$GPUPROBE" report --format json "$1" | jq -r '.results[0].verdict.summary'; }
for case in "x86|in ioctl\(fd 3, 0xc0284b16 AMDKFD_IOC_ALLOC_MEMORY_OF_GPU\)" \
	    "aarch64|in fremovexattr\(\)" \
	    "ppc64le|in syscall 16 \(name unknown on ppc64le\)" \
	    "none|in syscall 16 \(name unknown: machine not recorded\)"; do
	m=${case%%|*} want=${case#*|}
	s=$(sum "$TMP/$m.jsonl")
	if echo "$s" | grep -Eq "$want" && { [ $m = x86 ] || ! echo "$s" | grep -q ioctl; }; then
		echo "ok: recorded on $m: /$want/"
	else
		echo "FAIL: recorded on $m: summary lacks /$want/ (or names ioctl): $s"; failed=1
	fi
done
# The thread table of the Markdown report names them the same way.
if timeout 20 "$GPUPROBE" report --format markdown "$TMP/ppc64le.jsonl" | grep -q 'syscall 16 (name unknown on ppc64le)' \
	&& ! timeout 20 "$GPUPROBE" report --format markdown "$TMP/ppc64le.jsonl" | grep -q 'ioctl'; then
	echo "ok: markdown of a ppc64le result: syscall 16, name unknown, no ioctl"
else
	echo "FAIL: markdown of a ppc64le result names ioctl or lacks 'name unknown'"; failed=1
fi

# Not a result: one clear line, exit 1.  Empty, JSON of another shape, binary, a FIFO, a directory.
: > "$TMP/empty"
echo '{"type":"sample","t":1}' > "$TMP/noheader.jsonl"
head -c 3000 /bin/sh > "$TMP/binary"
mkfifo "$TMP/fifo"
for f in "$TMP/empty" "$TMP/noheader.jsonl" "$TMP/binary" "$TMP/fifo" "$TMP" "$TMP/missing"; do
	timeout 5 "$GPUPROBE" report "$f" > "$TMP/o" 2> "$TMP/e"
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l < "$TMP/e")" -eq 1 ] && grep -q '^gpuprobe: ' "$TMP/e"; then
		echo "ok: ${f##*/} rejected: $(cat "$TMP/e")"
	else
		echo "FAIL: ${f##*/}: exit $rc, stderr: $(cat "$TMP/e")"; failed=1
	fi
done
exit $failed
