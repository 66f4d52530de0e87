#!/bin/sh
# A stuck pin names its user-space frames, unwound from outside: the
# double's GPUPROBE_FAKE_HSA_PIN_HANG=1 blocks every lock call in
# fake_kfd_register_memory() (read(2) under it).  gpuprobe cannot ptrace
# its own thread; a helper (`gpuprobe __unwind PID TID`) does, and the
# arm's stuck.frames, the table and stderr name the double's function
# above the system call -- within --timeout plus a bound, nothing left
# behind, the helper reaped.  As nobody too (no root: the helper still
# traces its parent, which names it its ptracer for Yama ptrace_scope 1).
E2E_TIMEOUT=60
. "${0%/*}/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_jq
export GPUPROBE_FAKE_HSA_PIN_HANG=1
TAG=$ME.$$
export GP_LOCK_FRAMES_TAG=$TAG
left_gpuprobe() {
	for e in /proc/[0-9]*/environ; do
		{ tr '\0' '\n' < "$e"; } 2>/dev/null | grep -qx "GP_LOCK_FRAMES_TAG=$TAG" || continue
		p=${e#/proc/}; p=${p%/environ}
		case $(cat /proc/$p/comm 2>/dev/null) in gpuprobe*) echo "$p" ;; esac
	done
}
head -c 65536 /dev/urandom > "$TMP/f"

t0=$(now)
gp lock -q --timeout 0.5 --lib "$FAKE_HSA" --pool cpu-fine "$TMP/f" -o "$TMP/r" > "$TMP/out" 2> "$TMP/err"; rc=$?
lock_hung $rc "$t0" 4 "within --timeout + 5 s (the unwind's bound) and less in fact" "$TMP/r" cpu-fine
ok "no gpuprobe left (the helper reaped)" test -z "$(left_gpuprobe)"
# ok: stopped and unwound; nostop: a thread in a read of a pipe, unwound
# without a stop (tests/faults/harm-transfer.sh says why).
u=$(armf "$TMP/r" cpu-fine stuck.unwind)
ok "unwind ok ($u)" test "$u" = ok -o "$u" = nostop
ok "the text says no 'not read' of frames it read" sh -c "! grep -q 'user frames not read' '$TMP/out'"
syms=$(jq -r 'select(.type == "arm") | [.stuck.frames[].symbol // "?"] | join(" ")' "$TMP/r")
say "frames: $syms"
ok "frames: the double's blocking function" sh -c "echo '$syms' | grep -q fake_kfd_register_memory"
ok "frames: the runtime call itself, outside it" sh -c "echo '$syms' | grep -q 'fake_kfd_register_memory.* hsa_amd_memory_lock_to_pool'"
ok "frames: the system call's wrapper innermost" sh -c "echo '$syms' | grep -Eq '^(__)?(libc_)?read'"
ok "frames carry module and offset" test "$(armf "$TMP/r" cpu-fine 'stuck.frames[0].offset' | cut -c1-2)" = 0x
ok "unwind_ms recorded, under the bound" fcmp "$(armf "$TMP/r" cpu-fine stuck.unwind_ms)" '<' 5000
ok "stderr: the frames, in one line" grep -q "^gpuprobe: cpu-fine: its frames: .*fake_kfd_register_memory ← .*hsa_amd_memory_lock_to_pool" "$TMP/err"
ok "text: where it waits" grep -q "^Where hsa_amd_memory_lock_to_pool waits (arm cpu-fine)" "$TMP/out"
ok "text: the named frame with its source line" grep -q "fake_kfd_register_memory .*fake-hsa.c:[0-9]" "$TMP/out"

# Markdown: the same frames, in the stacks renderer's table.
gp lock -q --timeout 0.3 --lib "$FAKE_HSA" "$TMP/f" --format markdown > "$TMP/md" 2> "$TMP/err"; rc=$?
ok "markdown: exit 1" test $rc -eq 1
ok "markdown: where it waits" grep -q "^\*\*Where hsa_amd_memory_lock waits\*\*" "$TMP/md"
ok "markdown: the named frame" grep -q "fake_kfd_register_memory" "$TMP/md"

# The runtime's open hanging (hsa_init): the one stderr line names frames too.
GPUPROBE_FAKE_HSA_PIN_HANG= GPUPROBE_FAKE_HSA_INIT_HANG=1 gp pools --timeout 0.3 --lib "$FAKE_HSA" > "$TMP/out" 2> "$TMP/err"; rc=$?
say "pools: $(cat "$TMP/err")"
ok "pools: exit 1" test $rc -eq 1
ok "pools: one line naming hsa_init" sh -c "test \$(wc -l < '$TMP/err') -eq 1 && grep -q 'frames: .*hsa_init' '$TMP/err'"

# Without root: the helper is our child's kind of tracer (same uid).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
   setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$GPUPROBE" 2>/dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$FAKE_HSA" 2>/dev/null; then
	chmod a+r "$TMP/f"; chmod a+x "$TMP"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$GPUPROBE" lock -q --timeout 0.3 --lib "$FAKE_HSA" "$TMP/f" --format json > "$TMP/j" 2> "$TMP/err"; rc=$?
	say "nobody: exit $rc: $(cat "$TMP/err")"
	ok "nobody: exit 1" test $rc -eq 1
	ok "nobody: frames name the double's function" sh -c "jq -r '.stuck.frames[].symbol' '$TMP/j' | grep -q fake_kfd_register_memory"
else
	say "not run as nobody (needs root and setpriv)"
fi
ok "no gpuprobe left at the end" test -z "$(left_gpuprobe)"
pass
