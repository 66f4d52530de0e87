#!/bin/bash
# Real programs nobody here wrote, each with its truth (issue 11): every
# case of tests/real/cases.tsv (the make check ones) and of
# tests/real/bench-cases.tsv (redis-server, PostgreSQL, stress-ng), traced
# by a real `gpuprobe trace` and judged by tests/real/run.sh.  Writes a
# Markdown table (case, truth, got, ok) to RESULT, appending a section
# when RESULT already exists (one section per binary judged).
#
#   bench/real-programs.sh [--install]
#   GPUPROBE=/work/main/src/gpuprobe LABEL="main build" bench/real-programs.sh
#
# --install   apt-get install the servers first (root; Debian 12):
#             redis-server redis-tools postgresql stress-ng pv xz-utils.
#             Without it, a case whose program is missing is SKIPped.
# Environment: GPUPROBE (default: this tree's src/gpuprobe; copied before
# the run, so a rebuild mid-run cannot mix two binaries), RESULT (default
# bench/results/DATE-real-programs.md), LABEL (the section's title),
# REAL_ONLY (an ERE of case names), REAL_KEEP (keep each case's result).
# Exit: 0 every case ok, 1 a case failed, 2 the harness broke.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RESULT=${RESULT:-$BENCH_DIR/results/$(date +%F)-real-programs.md}
LABEL=${LABEL:-$GPUPROBE}
[ -x "$GPUPROBE" ] || die "no gpuprobe at $GPUPROBE"

if [ "${1:-}" = --install ]; then
	[ "$(id -u)" -eq 0 ] || die "--install needs root"
	pkgs=
	for p in redis-server redis-tools postgresql stress-ng pv xz-utils python3 jq; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || pkgs="$pkgs $p"
	done
	if [ -n "$pkgs" ]; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs >/dev/null ||
			die "apt-get install$pkgs failed"
	fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/real-programs.XXXXXX") || die "mktemp"
trap 'rm -rf "$work"' EXIT
cp "$GPUPROBE" "$work/gpuprobe" || die "cannot copy $GPUPROBE"
# What was judged: the binary's time, checksum, and its tree's commit.
bin_when=$(date -u -r "$GPUPROBE" +%FT%TZ)
bin_sum=$(sha256sum "$GPUPROBE" | cut -c1-12)
bin_tree=$(cd "$(dirname "$GPUPROBE")/.." 2>/dev/null &&
	git rev-parse --short HEAD 2>/dev/null)
[ -n "$bin_tree" ] && (cd "$(dirname "$GPUPROBE")/.." &&
	! git diff --quiet HEAD -- src 2>/dev/null) && bin_tree="$bin_tree + uncommitted changes in src/"

tsv=$work/results.tsv; : > "$tsv"
rc=0
for table in cases.tsv bench-cases.tsv; do
	echo "== tests/real/$table"
	top_srcdir=$TOP_DIR top_builddir=$TOP_DIR GPUPROBE=$work/gpuprobe \
		CASES=$TOP_DIR/tests/real/$table REAL_RESULTS=$tsv E2E_TIMEOUT=1800 \
		sh "$TOP_DIR/tests/real/run.sh"
	r=$?
	case $r in 0|77) ;; 1) rc=1 ;; *) echo "run.sh exit $r: the harness broke" >&2; exit 2 ;; esac
done

nok=$(awk -F'\t' '$4 == "ok"' "$tsv" | wc -l)
nall=$(awk -F'\t' '$4 != "SKIP"' "$tsv" | wc -l)
{
	if [ ! -s "$RESULT" ]; then
		echo "# Real programs: truth versus gpuprobe trace ($(date +%F))"
		echo
		echo "Issue 11's acceptance suite: real programs nobody here wrote, each with its truth"
		echo "written beside it (tests/real/cases.tsv: make check; tests/real/bench-cases.tsv:"
		echo "servers and stress-ng).  Each case: a real \`gpuprobe trace -q -o\` (mostly"
		echo "\`--seconds 7-8 --hang-after 3\`), its last \`verdict\` line compared with the truth:"
		echo "class exactly, confidence where the truth demands, words of the summary, the"
		echo "process named, stacks at the hang.  Regenerate: \`bench/real-programs.sh\`"
		echo "(\`make bench-real\`); \`GPUPROBE=...\` judges another build."
		echo
		echo "Machine: $(nproc) CPUs shared with other sessions (everything under \`nice -n 10\`),"
		echo "kernel $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME"), running as $(id -un)."
	fi
	echo
	echo "## $LABEL"
	echo
	echo "Binary \`$GPUPROBE\` built $bin_when, sha256 $bin_sum${bin_tree:+, tree $bin_tree};"
	echo "run $(date -u +%FT%TZ).  **$nok of $nall cases ok.**"
	echo
	echo "| case | truth | got | ok | why not / summary |"
	echo "|---|---|---|---|---|"
	awk -F'\t' '{
		gsub(/\|/, "\\|", $2); gsub(/\|/, "\\|", $3); gsub(/\|/, "\\|", $5); gsub(/\|/, "\\|", $6)
		s = $6; if (length(s) > 160) s = substr(s, 1, 157) "..."
		note = ($4 == "ok") ? s : ($5 (s != "" && s != "-" ? ": " s : ""))
		printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, note
	}' "$tsv"
} >> "$RESULT"
echo "$nok of $nall ok; written to $RESULT"
exit $rc
