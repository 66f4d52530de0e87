#!/bin/sh
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer plus ASan and
# UBSan) under $top_builddir/tests/fuzz/build and runs each for
# FUZZ_SECONDS (default 60), from the seed and regression corpora.
# A crash leaves its input in tests/fuzz/build/crash-TARGET-*: copy it to
# tests/fuzz/regress/TARGET/ once fixed, and `make check` replays it.
# Exit: 0 no finding, 1 a finding, 77 no clang/libFuzzer (skip).
# FUZZ_TARGETS="fuzz_fdinfo ..." runs some; FUZZ_RUNS=N bounds by runs;
# FUZZ_MAX_LEN (default 65536) and FUZZ_ARGS (e.g. -fork=N: N processes)
# pass on to libFuzzer.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${FUZZ_SECONDS:=60}"
: "${FUZZ_TARGETS:=fuzz_procstat fuzz_fdinfo fuzz_result fuzz_report fuzz_kmsg fuzz_ras}"
: "${FUZZ_CC:=clang}"
B=$top_builddir/tests/fuzz/build
mkdir -p "$B/obj" || exit 99

probe=$B/probe
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$probe.c"
if ! command -v "$FUZZ_CC" >/dev/null 2>&1 ||
   ! "$FUZZ_CC" -fsanitize=fuzzer,address "$probe.c" -o "$probe" >/dev/null 2>&1; then
	echo "fuzz: SKIP: no $FUZZ_CC with libFuzzer (apt-get install clang)"
	exit 77
fi

# libzstd, zlib: the result streams (model/rstream.c, result.c: -o .zst, report of .zst/.gz), as configure.ac has them.
PKGS="jansson libproc2 libdw libelf libzstd zlib"
pkg-config --exists cairo && PKGS="$PKGS cairo"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# One -I per room, as Makefile.am's AM_CPPFLAGS (every folder of src/: a
# room added later, src/unwind/ and src/loop/ of 2026-12-06, is in too).
ROOMS=
for d in "$top_srcdir"/src/*/; do
	ROOMS="$ROOMS -I${d%/}"
done
CFLAGS="-g -O1 $SAN -I$top_builddir -I$top_srcdir/src -I$top_builddir/src/common \
  $ROOMS $(pkg-config --cflags $PKGS)"
LIBS="$(pkg-config --libs $PKGS) -ldl -lpthread -lm"

# The library's sources, as src/Makemodule.am lists them.
SRCS=$(sed -n '/^src_libgpuprobe_a_SOURCES/,/^$/p' "$top_srcdir/src/Makemodule.am" |
	tr ' \t\\' '\n\n\n' | grep '^src/.*\.c$')
objs=
for s in $SRCS; do
	o=$B/obj/$(echo "$s" | tr / _ | sed 's/\.c$/.o/')
	objs="$objs $o"
	# Up to date only when newer than its source and every header: a
	# struct that grew in a header changes every object that uses it
	# (a stale object once read a point's new fields as garbage).
	[ "$o" -nt "$top_srcdir/$s" ] && [ -z "$(find "$top_srcdir/src" "$top_builddir/src" \
		-name '*.h' -newer "$o" 2>/dev/null | head -n 1)" ] && continue
	echo "  CC(fuzz) $s"
	# shellcheck disable=SC2086
	$FUZZ_CC $CFLAGS -fsanitize=fuzzer-no-link -c "$top_srcdir/$s" -o "$o" || exit 99
done
rm -f "$B/libgp-fuzz.a"
# shellcheck disable=SC2086
ar rcs "$B/libgp-fuzz.a" $objs || exit 99

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
# fontconfig (under cairo's plot) keeps its configuration for the life of
# the process: tests/report/lsan.supp says so.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top_srcdir/tests/report/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
findings=0
total_execs=0
for t in $FUZZ_TARGETS; do
	# shellcheck disable=SC2086
	$FUZZ_CC $CFLAGS -fsanitize=fuzzer "$top_srcdir/tests/fuzz/$t.c" "$B/libgp-fuzz.a" $LIBS \
		-o "$B/$t" || exit 99
	name=${t#fuzz_}
	work=$B/corpus-$name
	mkdir -p "$work"
	seeds=
	for d in "$top_srcdir/tests/fuzz/corpus/$name" "$top_srcdir/tests/fuzz/regress/$name"; do
		[ -d "$d" ] && seeds="$seeds $d"
	done
	limit="-max_total_time=$FUZZ_SECONDS"
	[ -n "${FUZZ_RUNS:-}" ] && limit="-runs=$FUZZ_RUNS"
	dict=
	[ -f "$top_srcdir/tests/fuzz/$name.dict" ] && dict="-dict=$top_srcdir/tests/fuzz/$name.dict"
	# FUZZ_MAX_LEN: the largest input (default 64 KiB); FUZZ_ARGS: more
	# libFuzzer flags (-jobs, -dict, ...).
	# shellcheck disable=SC2086
	"$B/$t" $limit -max_len="${FUZZ_MAX_LEN:-65536}" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$B/crash-$name-" $dict ${FUZZ_ARGS:-} \
		"$work" $seeds > "$B/$t.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$B/$t.log" | tail -n 1)
	# -fork=N prints no final stats: its last "#N:" line counts the runs
	[ -n "$execs" ] || execs=$(grep -aoE '^#[0-9]+' "$B/$t.log" | tail -n 1 | tr -d '#')
	total_execs=$((total_execs + ${execs:-0}))
	if [ $rc -ne 0 ]; then
		findings=$((findings + 1))
		echo "fuzz: $t: FINDING (exit $rc) after ${execs:-?} runs:"
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$B/$t.log" | head -n 8
	else
		echo "fuzz: $t: ${execs:-?} runs, $(ls "$work" | wc -l) corpus files, no finding"
	fi
done
echo "fuzz: $total_execs runs in all, $findings finding(s)"
[ $findings -eq 0 ]
