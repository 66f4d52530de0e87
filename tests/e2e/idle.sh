#!/bin/sh
# gpuprobe idle against the HSA test double (tests/gpu): with interrupts
# off its two async-events threads spin in a function named
# rocr::core::Runtime::AsyncEventsLoop(void*) (seed 000) -> spin, both
# named, attributed to the context, and the fix direction; interrupts on
# -> quiet; an A/B between the spinning double and its backoff build;
# Debian's real runtime on a GPU-less machine -> a clear failure.
E2E_TIMEOUT=${E2E_TIMEOUT:-60} # ~20 s alone; room for make -j2 check
. "${0%/*}/lib.sh"
require_jq
A=$top_builddir/tests/gpu/libhsa-runtime64.so.1
B=$top_builddir/tests/gpu/backoff/libhsa-runtime64.so.1
[ -f "$A" ] && [ -f "$B" ] || framework_failure "the HSA doubles are not built"
nm -D "$A" | grep -q hsa_init || framework_failure "double without hsa_init"
nm -D --defined-only "$A" | grep -q . || true
nm -C "$A" 2>/dev/null | grep -q 'rocr::core::Runtime::AsyncEventsLoop' \
	|| skip "the double was built without C++ (no AsyncEventsLoop symbol)"

# A spinner is told by what it does, not by the share of a CPU it gets:
# on a loaded 2-CPU box the two got 27% each (idle's default --threshold
# is 10%).  A 2% threshold still leaves the sleeping threads (0%) out.
TH="--threshold 2"
gp idle --lib "$A" --no-interrupts $TH --seconds 3 --format json -o "$TMP/spin.jsonl" > "$TMP/spin.json" 2> "$TMP/err"
ok "spinning double: exit $? is 0" test $? -eq 0
ok "class spin" test "$(jq -r .class "$TMP/spin.json")" = spin
n=$(jq '.spinning_threads | length' "$TMP/spin.json")
ok "two spinners ($n)" test "$n" -eq 2
for f in $(jq -r '.spinning_threads[].frames[0].symbol' "$TMP/spin.json" | tr ' ' '_'); do
	ok "spinner frame $f" test "$f" = 'rocr::core::Runtime::AsyncEventsLoop(void*)'
done
ok "spinners appeared with the context" \
	test "$(jq -r '[.spinning_threads[].appeared] | unique | join(",")' "$TMP/spin.json")" = context
cpu=$(jq '.idle_cpu_pct' "$TMP/spin.json")
say "idle CPU $cpu% (two spinners get up to 2 cores; on a loaded box less)"
jq -r '.spinning_threads[] | "\(.tid) \(.state) \(.cpu_pct) \(.user_pct) \(.sys_pct) \(.voluntary_per_s)"' \
	"$TMP/spin.json" > "$TMP/spinners"
while read -r tid st c u sy v; do
	ok "spinner $tid: runnable (state $st), ran ($c%), in user space ($u% user, $sy% sys), never slept ($v voluntary/s)" \
		awk -v st="$st" -v c="$c" -v u="$u" -v sy="$sy" -v v="$v" \
		'BEGIN { exit !(st == "R" && c > 0 && u > sy && v == 0) }'
done < "$TMP/spinners"
ok "fix direction names ROCm/rocm-systems#7898" jq -e '.fix | test("rocm-systems#7898")' "$TMP/spin.json"
ok "HSA_ENABLE_INTERRUPT=0 recorded" jq -e '.env.HSA_ENABLE_INTERRUPT == "0"' "$TMP/spin.json"
ok "build-id recorded" jq -e '.runtime.build_id | length == 40' "$TMP/spin.json"
ok "saved: header, samples, stacks, verdict" \
	jq -e -s '(.[0].type == "header") and (map(.type) | index("sample") != null)
		and (map(.type) | index("stacks") != null) and (.[-1].type == "verdict")' "$TMP/spin.jsonl"

gp idle --lib "$A" --seconds 2 --format json > "$TMP/quiet.json" 2> "$TMP/err"
ok "interrupts on: exit 0" test $? -eq 0
ok "interrupts on: quiet" test "$(jq -r .class "$TMP/quiet.json")" = quiet

gp idle --lib "$A" --lib "$B" --no-interrupts $TH --seconds 3 > "$TMP/ab.txt" 2> "$TMP/err"
ok "A/B: exit 0" test $? -eq 0
sed -n '/^| library/,$p' "$TMP/ab.txt" | sed "s/^/$ME:   /"
rowa=$(grep "^| $A " "$TMP/ab.txt")
rowb=$(grep "^| $B " "$TMP/ab.txt")
ok "A/B: A spins (two spinners)" sh -c "echo '$rowa' | grep -q '% / '"
ok "A/B: B is quiet" sh -c "echo '$rowb' | grep -q '| none |'"

if [ -e /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1 ] || ldconfig -p | grep -q libhsa-runtime64.so.1; then
	gp idle --runtime hsa --seconds 2 > "$TMP/o" 2> "$TMP/e"
	rc=$?
	ok "real runtime, no AMD GPU: exit $rc is 1" test $rc -eq 1
	ok "one clear line: $(head -1 "$TMP/e")" grep -q '^gpuprobe: .*hsa_init.*/dev/kfd' "$TMP/e"
fi
gp idle --lib /nonexistent/libhsa.so --seconds 2 > "$TMP/o" 2> "$TMP/e"
ok "missing library: exit 1" test $? -eq 1
ok "missing library: one gpuprobe line" test "$(grep -c '^gpuprobe: ' "$TMP/e")" -eq 1
gp idle --runtime hsa --busy-kernel > "$TMP/o" 2> "$TMP/e"
ok "--busy-kernel with hsa: usage error" test $? -eq 64
pass
