#!/bin/sh
# The unwind of a stuck pin retries until the thread takes the stop
# (issue 18 #9).  The double's GPUPROBE_FAKE_HSA_PIN_STARVED=1 keeps the
# lock call's thread off the CPU for a second at a time and lets it run
# 50 ms (tests/gpu/fake-hsa.c): the first stop asked for does not come
# within 100 ms ("timeout"), as with a thread in a long kernel call.
# Before, every retry on the helper's session read `off` ("thread N has
# not stopped yet", N the very thread asked for): 3 runs of 3.  Each
# attempt now has a session and a tracer thread of its own, whose exit
# gives back the stop it armed; the retry takes the thread when it runs.
E2E_TIMEOUT=60
. "${0%/*}/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_jq
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the double's busy thread holds one)"
export GPUPROBE_FAKE_HSA_PIN_STARVED=1
head -c 65536 /dev/urandom > "$TMP/f"

t0=$(now)
gp lock -q --timeout 0.3 --lib "$FAKE_HSA" --pool cpu-fine "$TMP/f" -o "$TMP/r" > "$TMP/out" 2> "$TMP/err"; rc=$?
lock_hung $rc "$t0" 8 "within --timeout + 5 s (the unwind's bound) and a margin" "$TMP/r" cpu-fine
say "unwind: $(jq -c 'select(.type == "arm") | .stuck | {unwind, unwind_error, unwind_ms, unwind_attempts}' "$TMP/r")"
u=$(armf "$TMP/r" cpu-fine stuck.unwind)
n=$(armf "$TMP/r" cpu-fine stuck.unwind_attempts)
ok "unwind not off ($u)" test "$u" != off
ok "attempts counted ($n)" test "${n:-0}" -ge 1
ok "unwind_ms under the bound" fcmp "$(armf "$TMP/r" cpu-fine stuck.unwind_ms)" '<' 5000
if [ "$u" = timeout ]; then
	# The double's CPU was never free of other work for 5 s (a loaded
	# machine: SCHED_IDLE runs only on an idle CPU): asked again and again,
	# never stopped, never left stopped.
	ok "timeout: asked again until the bound ($n attempts)" test "$n" -ge 2
	pass "the thread never got a CPU on this loaded machine: retried, not off"
fi
ok "unwind ok ($u; nostop: read without a stop)" test "$u" = ok -o "$u" = nostop
syms=$(jq -r 'select(.type == "arm") | [.stuck.frames[].symbol // "?"] | join(" ")' "$TMP/r")
say "frames: $syms"
ok "frames: the double's starved function under the runtime call" \
	sh -c "echo '$syms' | grep -q '^fake_kfd_pin_starved .*hsa_amd_memory_lock_to_pool'"
ok "stderr: the frames" grep -q "its frames: fake_kfd_pin_starved" "$TMP/err"
pass
