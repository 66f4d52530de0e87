#!/bin/sh
# The house rules that a reader of the tree can check (README, "The
# house"; issue 12): data flows one way, so the lower rooms include
# nothing from the higher ones; the verdict is data, so src/verdict/ holds
# no sentence (its words are src/render/verdict_text.c's); strings are
# built through common/strbuf.h, never by adding snprintf's return to an
# offset; no function is longer than 120 lines.
. "${0%/*}/../e2e/lib.sh"
S=$top_srcdir/src
command -v gcc > /dev/null 2>&1 || skip "no gcc (to strip comments)"

# Headers of a room: the basenames of the .h files in those folders.
room_headers() { for d in "$@"; do (cd "$S/$d" && ls ./*.h 2>/dev/null | sed 's|^\./||'); done; }
# The quoted includes of a room's files that name one of those headers.
bad_includes() {
	from=$1; shift
	hdrs=$(room_headers "$@")
	for f in "$S/$from"/*.[ch]; do
		for h in $hdrs; do
			grep -Hn "^#include \"$h\"" "$f"
		done
	done
}
out=$(bad_includes verdict render tracer gpu lockprobe idleprobe report demo info)
ok "src/verdict/ includes no header of render, tracer, gpu or a command${out:+: $out}" test -z "$out"
out=$(bad_includes model verdict render tracer gpu lockprobe idleprobe report demo info)
ok "src/model/ includes no header of verdict, render, tracer, gpu or a command${out:+: $out}" test -z "$out"
out=$(bad_includes common model verdict render tracer gpu lockprobe idleprobe report demo info)
ok "src/common/ includes no header of another room${out:+: $out}" test -z "$out"

# String literals of the verdict's code, comments stripped: an English
# sentence has a space; the frame words it matches (lockish_frame) have none.
out=$(for f in "$S"/verdict/*.c "$S"/verdict/*.h; do
	gcc -fpreprocessed -dD -E -P "$f" 2>/dev/null | grep -v '^#' | grep -o '"[^"]*"' | grep ' ' |
		sed "s|^|${f#"$top_srcdir"/}: |"
done)
ok "src/verdict/ composes no sentence${out:+: $out}" test -z "$out"

out=$(grep -rnE '\+= *v?snprintf' "$S" --include='*.c' --include='*.h')
ok "no offset grown by snprintf's return${out:+: $out}" test -z "$out"

# A function: a line that starts with a name and '(' at column 0, to its
# closing brace at column 0.
out=$(for f in $(cd "$top_srcdir" && find src -name '*.c' | sort); do
	awk -v f="$f" '/^[a-z].*\(/ { name = $0; start = FNR }
		/^}/ { if (start && FNR - start > 120) printf "%s:%d: %d lines: %s\n", f, start, FNR - start, substr(name, 1, 60); start = 0 }' \
		"$top_srcdir/$f"
done)
ok "no function longer than 120 lines${out:+: $out}" test -z "$out"
pass
