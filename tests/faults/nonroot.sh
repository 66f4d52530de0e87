#!/bin/sh
# Privileges: as uid/gid 65534 (setpriv), every command starts, and
# either works with less data and says what is missing, or fails with a
# hint.  No command needs root to start.
E2E_TIMEOUT=${E2E_TIMEOUT:-120}
. "${0%/*}/../e2e/lib.sh"
. "$top_srcdir/tests/gpu/lib-gpu.sh"
require_workload sleepers
[ "$(id -u)" -eq 0 ] || skip "needs root to drop to nobody"
command -v setpriv >/dev/null 2>&1 || skip "no setpriv (util-linux)"
NB="setpriv --reuid=65534 --regid=65534 --clear-groups"
# Where people clone -- a 0700 home, a mktemp -d folder -- uid 65534
# cannot reach the build tree (8 cases failed "Permission denied", issue
# 12).  So nobody runs copies of what it needs, from $TMP made 0755:
# gpuprobe, the sleepers workload and the HSA test double.
chmod 755 "$TMP"
$NB test -x "$TMP" || skip "uid 65534 cannot enter $TMP (TMPDIR=${TMPDIR:-unset}: a private temporary directory); set TMPDIR to a world-searchable one"
mkdir "$TMP/bin" && chmod 755 "$TMP/bin" &&
cp "$GPUPROBE" "$TMP/bin/gpuprobe" && cp "$WORKLOADS/sleepers" "$TMP/bin/sleepers" &&
cp "$FAKE_HSA" "$TMP/bin/libhsa-runtime64.so.1" && chmod 755 "$TMP/bin"/* ||
	framework_failure "cannot copy gpuprobe and its fixtures into $TMP/bin"
GPUPROBE=$TMP/bin/gpuprobe WORKLOADS=$TMP/bin FAKE_HSA=$TMP/bin/libhsa-runtime64.so.1
$NB "$GPUPROBE" --version > /dev/null 2>&1 || skip "uid 65534 cannot run the copy $GPUPROBE: $($NB "$GPUPROBE" --version 2>&1 | head -n 1)"
mkfile "$TMP/f" 1; chmod 644 "$TMP/f"
mkdir "$TMP/w"; chmod 777 "$TMP/w"   # where nobody writes
sleep 600 & R=$!; bg_track $R             # a root-owned target
failed=0
# nb WANT-EXIT ERE ARGS...: as nobody, gpuprobe ARGS exits WANT-EXIT and
# stdout+stderr match ERE (what is missing, or the hint).
nb() {
	want=$1 ere=$2; shift 2
	( cd "$TMP" && timeout -k 1 30 $NB "$GPUPROBE" "$@" < /dev/null > "$TMP/o" 2> "$TMP/e" ); rc=$?
	if [ $rc -eq "$want" ] && cat "$TMP/o" "$TMP/e" | grep -Eq -- "$ere"; then
		say "ok: [nobody] $* -> $rc: $(cat "$TMP/o" "$TMP/e" | grep -m1 -E -- "$ere" | sed 's/^ *//' | cut -c1-140)"
	else
		say "FAIL: [nobody] $* -> exit $rc (want $want, /$ere/): $(head -c 300 "$TMP/e" | tr '\n' '~')"
		failed=1
	fi
}
nb 0 'User +nobody' info
nb 0 'not seen.*(run as root|target.s user)' trace -q -s 1 $R
nb 0 'not seen.*run as root' trace -q -s 1 --stacks all -- "$WORKLOADS/sleepers" 2
nb 0 'not seen.*kernel stacks' trace -q -s 1 -o "$TMP/w/t.jsonl" -- "$WORKLOADS/sleepers" 2
nb 0 'hint: .*belongs to uid 0.*run it as root' stacks $R
nb 0 'hint: .*kernel stacks' stacks --hot-window 0 1
nb 0 'Verdict' report "$TMP/w/t.jsonl"
nb 0 'HSA_STATUS_SUCCESS' lock -q --lib "$FAKE_HSA" "$TMP/f"
nb 0 'HSA_STATUS_SUCCESS' lock -q --lib "$FAKE_HSA" --anon 4M
nb 0 'cpu-fine' pools --lib "$FAKE_HSA"
nb 0 'verdict' idle -s 1 -i 0.5 --lib "$FAKE_HSA"
nb 0 'exit3' demo --only exit3
# Without a GPU: fails, with the reason and a hint.
if [ ! -e /dev/kfd ]; then
	nb 1 'hint: ' pools --runtime hsa
	nb 1 'hint: ' lock --runtime hsa "$TMP/f"
fi
# Root-only files nobody can read are refused with the errno, not a crash.
head -c 4096 /dev/urandom > "$TMP/secret"; chmod 600 "$TMP/secret"
nb 1 'Permission denied' report "$TMP/secret"
nb 1 'Permission denied' lock -q --lib "$FAKE_HSA" "$TMP/secret"
nb 1 'Permission denied' trace -q -s 1 -o /proc/1/status $R
[ $failed -eq 0 ] || fail "some cases failed"
pass
