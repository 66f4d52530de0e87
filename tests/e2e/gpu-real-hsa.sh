#!/bin/sh
# Debian's real libhsa-runtime64 (5.2.3, bootstrap.sh installs it) on a
# machine with no AMD GPU: pools and lock fail with the diagnosis, one
# clear line and a hint, exit 1.  Skipped where the package is absent or
# a real AMD GPU is present.
. "${0%/*}/lib.sh"
LIB=
for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /opt/rocm/lib; do
	[ -e "$d/libhsa-runtime64.so.1" ] && { LIB=$d/libhsa-runtime64.so.1; break; }
done
[ -n "$LIB" ] || skip "libhsa-runtime64.so.1 is not installed (apt-get install libhsa-runtime64-1)"
[ -e /dev/kfd ] && skip "/dev/kfd exists: this machine may have an AMD GPU"
head -c 65536 /dev/urandom > "$TMP/f"
for args in "pools --runtime hsa" "pools --lib $LIB" "lock -q --runtime hsa $TMP/f" "lock -q --lib $LIB --anon 1M"; do
	# shellcheck disable=SC2086
	gp $args > "$TMP/out" 2> "$TMP/err"
	rc=$?
	say "$args -> $rc: $(head -n 1 "$TMP/err")"
	ok "$args: exit 1" test $rc -eq 1
	ok "$args: hsa_init's status named" grep -q "^gpuprobe: hsa_init: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008): " "$TMP/err"
	ok "$args: says what the machine lacks" grep -q "/dev/kfd is absent" "$TMP/err"
	ok "$args: a hint" grep -q "^gpuprobe: hint: " "$TMP/err"
	ok "$args: nothing on stdout" test ! -s "$TMP/out"
done
pass
