#!/bin/sh
# --fail-on CLASS makes gpuprobe exit 3 when the verdict is CLASS, 0 when
# it is not; the verdict line is in the result either way.
. "${0%/*}/lib.sh"
require_jq
F=$TMP/t.jsonl
gp trace -q --interval 0.25 --seconds 3 --hang-after 1.5 --fail-on hang-busy-user,hang-blocked \
	-o "$F" -- "$GPUPROBE" __workload deadlock > "$TMP/out" 2> "$TMP/err"
rc=$?
ok "deadlock with --fail-on hang-blocked: exit $rc is 3" test $rc -eq 3
ok "verdict hang-blocked" test "$(jq -r 'select(.type == "verdict") | .class' "$F")" = hang-blocked
gp trace -q --interval 0.25 --seconds 3 --hang-after 1.5 --fail-on hang-busy-user \
	-o "$F" -- "$GPUPROBE" __workload deadlock > "$TMP/out" 2> "$TMP/err"
rc=$?
ok "deadlock with --fail-on hang-busy-user: exit $rc is 0" test $rc -eq 0
gp trace -q --fail-on hung -- true > "$TMP/out" 2> "$TMP/err"
rc=$?
ok "--fail-on hung is a usage error: exit $rc is 64" test $rc -eq 64
pass
