#!/bin/sh
# A spinner in a stripped library: its frames name module + offset +
# build-id and no symbol (never the nearest exported one); eu-addr2line on
# the unstripped copy names the same function at that offset; the module
# gets one "debug info would help" note.
. "${0%/*}/lib.sh"
. "${0%/*}/stacks-lib.sh"
require_jq
command -v eu-addr2line >/dev/null 2>&1 || skip "eu-addr2line missing (elfutils)"
command -v eu-readelf >/dev/null 2>&1 || skip "eu-readelf missing (elfutils)"
start_stackload 2 2
gp stacks --format json --hot-window 0 "$TPID" > "$TMP/s.json" || fail "gpuprobe stacks failed"
gp stacks --hot-window 0 "$TPID" > "$TMP/out" || fail "gpuprobe stacks (text) failed"

jq -c '.threads[].frames[]? | select(.soname == "libgpspin.so")' "$TMP/s.json" > "$TMP/frames"
n=$(wc -l < "$TMP/frames")
ok "the 2 spinners have libgpspin.so frames (got $n)" [ "$n" -ge 4 ]
ok "no libgpspin.so frame has a symbol" sh -c "! jq -e 'select(.symbol != null)' '$TMP/frames' >/dev/null"
ok "none is the exported gpspin_* guessed" sh -c "! grep -q 'gpspin_' '$TMP/out'"
want=$(eu-readelf -n "$LIBDIR/libgpspin.so" | awk '/Build ID:/ { print $3 }')
[ -n "$want" ] || framework_failure "no build-id in libgpspin.so"
ok "each names the build-id $want" sh -c "! jq -e --arg b '$want' 'select(.build_id != \$b)' '$TMP/frames' >/dev/null"
ok "each has a module path and an offset" sh -c \
	"! jq -e 'select((.module | test(\"libgpspin.so$\") | not) or (.offset | test(\"^0x[0-9a-f]+$\") | not))' '$TMP/frames' >/dev/null"
# The innermost frame of a spinner is in the loop; the next in its caller.
for off in $(jq -r '.offset' "$TMP/frames" | sort -u); do
	fn=$(eu-addr2line -f -e "$LIBDIR/libgpspin-full.so" "$off" | head -n 1)
	say "eu-addr2line -f -e libgpspin-full.so $off -> $fn"
	case $fn in
	gpspin_hidden_loop|gpspin_hidden_thread) ;;
	*) fail "offset $off is not in a hidden spinner function (eu-addr2line: $fn)" ;;
	esac
done
inner=$(jq -r 'select(.threads) | [.threads[] | select(.frames[0]?.soname == "libgpspin.so")][0].frames[0].offset' "$TMP/s.json")
ok "a spinner's innermost frame is gpspin_hidden_loop" sh -c \
	"[ \"\$(eu-addr2line -f -e '$LIBDIR/libgpspin-full.so' $inner | head -n 1)\" = gpspin_hidden_loop ]"
ok "text shows libgpspin.so+0x... with its build-id" grep -q "libgpspin.so+0x[0-9a-f]* \[build-id $want\]" "$TMP/out"
c=$(grep -c "libgpspin.so (build-id $want).*/usr/lib/debug/.build-id/" "$TMP/out")
ok "one debug-info note for libgpspin.so (got $c)" [ "$c" = 1 ]
ok "modules[] says libgpspin.so is dynsym-only" sh -c \
	"jq -e '.modules[] | select(.soname == \"libgpspin.so\" and .debug == \"dynsym\")' '$TMP/s.json' >/dev/null"

# The debuginfod client's cache (CACHE/BUILDID/debuginfo) is read without
# --debuginfod and without any server (issue 28, unwind/tfile.h): the
# unstripped copy there names the hidden spinner.
mkdir -p "$TMP/cache/$want" && cp "$LIBDIR/libgpspin-full.so" "$TMP/cache/$want/debuginfo"
DEBUGINFOD_CACHE_PATH=$TMP/cache gp stacks --format json --hot-window 0 "$TPID" > "$TMP/c.json" ||
	fail "gpuprobe stacks (with a debuginfod cache) failed"
ok "from the debuginfod cache: a libgpspin.so frame is gpspin_hidden_loop" sh -c \
	"jq -e '.threads[].frames[]? | select(.soname == \"libgpspin.so\" and .symbol == \"gpspin_hidden_loop\")' '$TMP/c.json' >/dev/null"
# A file there of another build-id is not taken.
cp "$GPUPROBE" "$TMP/cache/$want/debuginfo"
DEBUGINFOD_CACHE_PATH=$TMP/cache gp stacks --format json --hot-window 0 "$TPID" > "$TMP/w.json" ||
	fail "gpuprobe stacks (a wrong file in the cache) failed"
ok "a cached file of another build-id is refused" sh -c \
	"! jq -e '.threads[].frames[]? | select(.soname == \"libgpspin.so\" and .symbol != null)' '$TMP/w.json' >/dev/null"
pass
