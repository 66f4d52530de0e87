#!/bin/sh
# A process paging in a 64 MiB file at ~32 MiB/s: proc.rss_file rises
# across samples by >= 32 MiB, and tracing leaves the file untouched.
. "${0%/*}/lib.sh"
require_jq
require_workload pagein
F=$TMP/t.jsonl
DATA=$TMP/data.bin

# Real data (not a sparse file): its pages are in the page cache, and
# mapping them makes RssFile grow.
dd if=/dev/urandom of="$DATA" bs=1M count=64 2>/dev/null || framework_failure "cannot write $DATA"
sum0=$(sha256sum < "$DATA"); mt0=$(stat -c %y "$DATA")

gp trace -q --interval 0.5 --seconds 3 -o "$F" -- "$WORKLOADS/pagein" "$DATA" --mib-per-s 32 \
	> "$TMP/out" 2> "$TMP/err"
rc=$?
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
jq -r 'select(.type == "sample") | "\(.t) \(.proc.rss_file)"' "$F" > "$TMP/rss"
awk -v me="$ME" '{ printf "%s:   t %.2f rss_file %.1f MiB\n", me, $1, $2 / 1048576 }' "$TMP/rss"
first=$(head -n 1 "$TMP/rss" | cut -d' ' -f2)
last=$(tail -n 1 "$TMP/rss" | cut -d' ' -f2)
ok "rss_file present in every sample" test -z "$(grep -v ' [0-9][0-9]*$' "$TMP/rss")"
ok "rss_file grew by >= 32 MiB ($first -> $last)" test $((last - first)) -ge $((32 * 1048576))
ok "rss_file never fell" awk 'NR > 1 && $2 < p { exit 1 } { p = $2 }' "$TMP/rss"
ok "rises across samples (>= 3 distinct values)" test "$(cut -d' ' -f2 "$TMP/rss" | sort -u | wc -l)" -ge 3
ok "file content unchanged (sha256)" test "$(sha256sum < "$DATA")" = "$sum0"
ok "file mtime unchanged ($mt0)" test "$(stat -c %y "$DATA")" = "$mt0"
pass
