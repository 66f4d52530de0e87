#!/bin/sh
# Seed 004's lockprobe table in CUDA terms, on the H200 machine
# (shared/DEVICE.md), and the two performance comparisons of issue 5:
#   - gpuprobe lock's registration time vs a bare C program making the
#     same cuMemHostRegister_v2 call (bench/workloads/bare-register.c): within 2%
#   - gpuprobe's pre-fault rate of a cached file vs `cat FILE > /dev/null`: within 10%
# Run from the repo root (as .devbundle/run-style scripts are):
#   GPUPROBE=path/to/gpuprobe OUT=dir SCRATCH=dir sh bench/h200-lock.sh
# Defaults: GPUPROBE=src/gpuprobe, OUT=./h200-out, SCRATCH=/var/tmp/gpuprobe-h200,
# SIZE=16 (GiB).  Needs ~16 GiB of disk and ~40 GiB of RAM free; keeps well
# under 8 minutes (the 16 GiB write is the longest step, ~1-2 min).
set -u
GPUPROBE=${GPUPROBE:-src/gpuprobe}
OUT=${OUT:-./h200-out}
SCRATCH=${SCRATCH:-/var/tmp/gpuprobe-h200}
SIZE=${SIZE:-16}
T=${T:-120}              # gpuprobe's --timeout for each call
mkdir -p "$OUT" "$SCRATCH" || exit 1
F=$SCRATCH/model-${SIZE}g.bin
LOG=$OUT/h200-lock.log
exec 3>&1
log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&3; }
run() {  # run NAME CMD...: stdout+stderr to $OUT/NAME.txt, timed
	name=$1; shift
	log "== $name: $*"
	s=$(date +%s.%N)
	"$@" > "$OUT/$name.txt" 2>&1
	rc=$?
	log "   exit $rc in $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
	cat "$OUT/$name.txt" >> "$LOG"
	return $rc
}
log "gpuprobe h200-lock: $(uname -r), $(nproc) cpus, GPUPROBE=$GPUPROBE"
{ date -u +%Y-%m-%dT%H:%M:%SZ; uname -a; nvidia-smi -L 2>&1; grep -E 'MemTotal|MemAvailable' /proc/meminfo; df -h "$SCRATCH"; } > "$OUT/env.txt" 2>&1
"$GPUPROBE" --version >> "$OUT/env.txt" 2>&1

# The file: sparse first (fallocate reserves nothing on some filesystems),
# then really written, so the page cache holds real pages as a model file's.
avail_kb=$(df -Pk "$SCRATCH" | awk 'NR==2 {print $4}')
need_kb=$((SIZE * 1048576 + 1048576))
if [ ! -f "$F" ] || [ "$(stat -c %s "$F")" -ne $((SIZE * 1073741824)) ]; then
	[ "$avail_kb" -gt "$need_kb" ] || { log "not enough disk in $SCRATCH: ${avail_kb} KiB"; exit 1; }
	rm -f "$F"
	run mkfile sh -c "truncate -s ${SIZE}G '$F' && dd if=/dev/urandom of='$F' bs=64M count=$((SIZE * 16)) conv=notrunc,fsync iflag=fullblock status=none"
fi
before=$(stat -c '%Y %s' "$F")
run pools "$GPUPROBE" pools --runtime cuda

# Cached-file read rates: cat first (warms the cache), then cat again
# (the cached rate), then gpuprobe's pre-fault of the same cached file.
run cat-cold sh -c "s=\$(date +%s.%N); cat '$F' > /dev/null; awk -v a=\$s -v b=\$(date +%s.%N) -v n=$SIZE 'BEGIN{printf \"cat %.2f s %.0f MiB/s\n\", b-a, n*1024/(b-a)}'"
run cat-cached sh -c "s=\$(date +%s.%N); cat '$F' > /dev/null; awk -v a=\$s -v b=\$(date +%s.%N) -v n=$SIZE 'BEGIN{printf \"cat %.2f s %.0f MiB/s\n\", b-a, n*1024/(b-a)}'"

# The arms (seed 004's table in CUDA terms).  Each writes JSON Lines.
run arm1-readonly "$GPUPROBE" lock -q --runtime cuda --timeout "$T" --repeat 3 "$F" -o "$OUT/arm1-readonly.jsonl"
run arm2-no-readonly-flag "$GPUPROBE" lock -q --runtime cuda --timeout "$T" --cuda-flags none "$F" -o "$OUT/arm2-no-readonly.jsonl"
run arm3-writable "$GPUPROBE" lock -q --runtime cuda --timeout "$T" --writable --cuda-flags none "$F" -o "$OUT/arm3-writable.jsonl"
run arm3b-writable-readonly-flag "$GPUPROBE" lock -q --runtime cuda --timeout "$T" --writable --cuda-flags read-only "$F" -o "$OUT/arm3b-writable-ro.jsonl"
run arm4-anon "$GPUPROBE" lock -q --runtime cuda --timeout "$T" --anon "${SIZE}G" -o "$OUT/arm4-anon.jsonl"
run arm5-refault2 "$GPUPROBE" lock -q --runtime cuda --timeout "$T" --refault 2 "$F" -o "$OUT/arm5-refault.jsonl"

# The bare program: the same call, nothing around it.
BARE=${BARE:-bench/workloads/bare-register}
if [ ! -x "$BARE" ]; then
	cc -O2 -o "$OUT/bare-register" bench/workloads/bare-register.c -ldl 2>> "$LOG" && BARE=$OUT/bare-register
fi
run bare-register "$BARE" "$F" 3
after=$(stat -c '%Y %s' "$F")
[ "$before" = "$after" ] && log "file mtime/size unchanged: $after" || log "FILE CHANGED: $before -> $after"

# Summary: registration time, gpuprobe vs bare (median of 3), pre-fault vs cat.
{
	echo "# gpuprobe lock on the H200 ($(date -u +%Y-%m-%d))"
	echo
	for j in "$OUT"/arm*.jsonl; do
		jq -r 'select(.type=="arm") | [.name, .mapping, .flags, (.bytes/1073741824|tostring)+" GiB",
			(.prefault_s|tostring), (.prefault_mib_s|floor|tostring), (.lock_s|tostring),
			(.unlock_s|tostring), .status, (.dirtied_mib|tostring), (.mtime_changed|tostring),
			(.note // "")] | @tsv' "$j" 2>/dev/null | sed "s|^|$(basename "$j" .jsonl)\t|"
	done
	gp=$(jq -r 'select(.type=="arm") | .lock_s' "$OUT/arm1-readonly.jsonl" 2>/dev/null | sort -n | sed -n 2p)
	bare=$(grep -o '^register_s=[0-9.]*' "$OUT/bare-register.txt" | cut -d= -f2 | sort -n | sed -n 2p)
	echo
	echo "register (median of 3): gpuprobe ${gp:-?} s, bare ${bare:-?} s" \
		"$(awk -v a="${gp:-0}" -v b="${bare:-0}" 'BEGIN{ if (b > 0) printf "(%+.1f%%)", (a-b)/b*100 }')"
	pf=$(jq -r 'select(.type=="arm") | .prefault_mib_s' "$OUT/arm1-readonly.jsonl" 2>/dev/null | sort -n | sed -n 2p)
	echo "pre-fault of the cached file: gpuprobe ${pf:-?} MiB/s; $(cat "$OUT/cat-cached.txt")"
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt" | tee -a "$LOG"
rm -f "$F"
log "done; logs in $OUT"
