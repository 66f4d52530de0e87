# Shared start of the bench/h200-*.sh scripts (POSIX sh; bench/lib.sh is
# bash).  Sourced as: . "${0%/*}/h200-lib.sh"

# h200_log NAME: makes $OUT, sends the rest of the script's output to
# $OUT/NAME.log, and starts it with when, which kernel and how many CPUs.
h200_log() {
	mkdir -p "$OUT" || exit 1
	exec > "$OUT/$1.log" 2>&1
	echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus"
}
