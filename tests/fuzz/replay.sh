#!/bin/sh
# Replays the fuzzers' seed and regression corpora through the targets
# linked to replay-main.c (any compiler; ASan/UBSan under
# --enable-sanitizers): a crash once found stays fixed.
E2E_TIMEOUT=${E2E_TIMEOUT:-900}
. "${0%/*}/../e2e/lib.sh"
# report's plots go through cairo: fontconfig keeps its configuration for
# the life of the process (tests/report/lsan.supp).
LSAN_OPTIONS=suppressions=$top_srcdir/tests/report/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}
export LSAN_OPTIONS
for name in procstat fdinfo result kmsg report ras; do
	bin=$top_builddir/tests/fuzz/replay_$name
	[ -x "$bin" ] || framework_failure "no $bin"
	dirs=
	for d in "$top_srcdir/tests/fuzz/corpus/$name" "$top_srcdir/tests/fuzz/regress/$name"; do
		[ -d "$d" ] && dirs="$dirs $d"
	done
	[ -n "$dirs" ] || { say "no corpus for $name"; continue; }
	# shellcheck disable=SC2086
	out=$("$bin" $dirs 2>&1) || { printf '%s\n' "$out" | tail -n 20; fail "replay_$name crashed"; }
	say "ok: $name: $out"
done
pass
