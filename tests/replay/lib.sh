# Shared set-up of the replay tests (POSIX sh), sourced by each
# tests/replay/*.sh as: . "${0%/*}/lib.sh"
# The paths (defaulting to the tree run from), jq or a SKIP, a scratch
# $TMP removed on exit, and $failed for a test that reports every case.
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
GPUPROBE=${GPUPROBE:-$top_builddir/src/gpuprobe}
GEN=$top_srcdir/tests/fixtures/traces/gen-trace.awk
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failed=0
