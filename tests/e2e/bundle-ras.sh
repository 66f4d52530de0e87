#!/bin/sh
# The bundle's ras.txt (issue 22: "NCCL/RCCL RAS status where it
# listens"): a process that maps libnccl (a copy of libz named so,
# preloaded) with NCCL_RAS_ADDR pointing at tests/e2e/fake-ras.py gets
# the RAS answer in its bundle, the port taken from its environment; a
# process that maps no NCCL is not asked, and the MANIFEST says why.
# Before, ras.txt was always "not probed: no RAS reader yet".
: "${E2E_TIMEOUT:=60}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
command -v python3 > /dev/null 2>&1 || skip "no python3"
Z=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64|libz\.so\.1 / { print $NF; exit }')
[ -f "$Z" ] || skip "no libz.so.1 to stand in for libnccl"
cp "$Z" "$TMP/libnccl.so.2"
python3 -S "$top_srcdir/tests/e2e/fake-ras.py" json "$TMP/port" &
bg_track $!
has_port() { [ -s "$TMP/port" ]; }
wait_until 40 has_port || framework_failure "fake-ras.py did not start"
port=$(cat "$TMP/port")
LD_PRELOAD=$TMP/libnccl.so.2 NCCL_RAS_ADDR=127.0.0.1:$port sleep 60 &
N=$!; bg_track $N
sleep 60 &
P=$!; bg_track $P
nccl_mapped() { grep -q libnccl "/proc/$N/maps"; }
wait_until 10 nccl_mapped || framework_failure "the stand-in libnccl is not mapped"

bundle() { # NAME PID
	GP_TIMEOUT=50 gp bundle "$2" --seconds 1 -o "$TMP/$1.tar.gz" > /dev/null 2> "$TMP/$1.err"
	echo $? > "$TMP/$1.rc"
	mkdir "$TMP/$1" && tar -xzf "$TMP/$1.tar.gz" -C "$TMP/$1" || fail "tar cannot read the $1 bundle"
}
bundle nccl $N
ok "nccl: exit 0" test "$(cat "$TMP/nccl.rc")" = 0
D=$TMP/nccl/nccl
cat "$D/ras.txt" | head -5
ok "nccl: ras.txt asked the port of its NCCL_RAS_ADDR" \
	grep -qF "at 127.0.0.1:$port (NCCL_RAS_ADDR=127.0.0.1:$port): ok" "$D/ras.txt"
ok "nccl: ras.txt holds the communicators' counts" grep -q '"comms"' "$D/ras.txt"
ok "nccl: the MANIFEST says ras.txt ok" grep -q '^ras.txt  *ok ' "$D/MANIFEST"
ok "nccl: the bundle's trace read RAS on the same port" \
	grep -q "\"type\":\"ras\".*\"addr\":\"127.0.0.1:$port\".*\"state\":\"ok\"" "$D/trace.jsonl"

bundle plain $P
ok "plain: exit 0" test "$(cat "$TMP/plain.rc")" = 0
M=$TMP/plain/plain/MANIFEST
ok "plain: RAS not asked, and why" grep -qF "RAS: not probed: pid $P maps no libnccl or librccl" "$M"
ok "no stub left: no 'no RAS reader yet'" sh -c "! grep -rq 'no RAS reader yet' '$TMP/nccl' '$TMP/plain'"
pass
