#!/bin/sh
# A short fuzzing pass (FUZZ_SECONDS, default 10 s a target) in `make
# check`; skipped where clang with libFuzzer is missing.
E2E_TIMEOUT=${E2E_TIMEOUT:-900}
. "${0%/*}/../e2e/lib.sh"
[ -n "$GP_SKIP_FUZZ" ] && skip "GP_SKIP_FUZZ is set (.ci/run's sanitizer pass: fuzzed once already)"
FUZZ_SECONDS=${FUZZ_SECONDS:-10} top_srcdir=$top_srcdir top_builddir=$top_builddir \
	sh "$top_srcdir/tests/fuzz/fuzz.sh"
rc=$?
[ $rc -eq 77 ] && skip "no clang with libFuzzer"
[ $rc -eq 0 ] || fail "fuzzing found a crash (tests/fuzz/build/crash-*)"
pass
