#!/bin/sh
# Man pages: lint-clean under mandoc, one page per command, and each
# page's options are exactly the long options its --help lists.
. "${0%/*}/../e2e/lib.sh"
MAN=$top_srcdir/man
command -v mandoc >/dev/null 2>&1 || skip "mandoc is missing (bootstrap.sh installs it)"

# Long options of a --help text: only the option lines, not the prose.
help_opts() {
	"$GPUPROBE" "$@" --help | grep -E '^ +(-[^-], )?--[a-z]' | grep -Eo -- '--[a-z][a-z0-9-]*' | sort -u
}
# Long options of a page: the tags of its OPTIONS section.
page_opts() {
	awk '/^\.SH OPTIONS/ { on = 1; next } /^\.SH/ { on = 0 } on && prev ~ /^\.TP/ { print } { prev = $0 }' "$1" |
		sed 's/\\-/-/g' | grep -Eo -- '--[a-z][a-z0-9-]*' | sort -u
}

for page in "$MAN"/*.1; do
	out=$(mandoc -T lint "$page" 2>&1)
	ok "${page##*/}: mandoc -T lint is clean${out:+: $out}" test -z "$out"
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
		ok "${page##*/}: has $s" grep -q "^\.SH $s\$" "$page"
	done
done

# Every command in `gpuprobe --help` has a page, with the same options.
cmds=$("$GPUPROBE" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
[ -n "$cmds" ] || framework_failure "no commands in gpuprobe --help"
for c in $cmds; do
	page=$MAN/gpuprobe-$c.1
	ok "gpuprobe $c has a page" test -f "$page"
	help_opts "$c" > "$TMP/h"
	page_opts "$page" > "$TMP/p"
	d=$(diff "$TMP/h" "$TMP/p" | grep '^[<>]' | tr '\n' ' ')
	ok "gpuprobe-$c.1 options = gpuprobe $c --help${d:+ (< help only, > page only: $d)}" test -z "$d"
	ok "gpuprobe.1 lists $c" grep -q "^\.B $c\$" "$MAN/gpuprobe.1"
done
help_opts > "$TMP/h"
page_opts "$MAN/gpuprobe.1" > "$TMP/p"
d=$(diff "$TMP/h" "$TMP/p" | grep '^[<>]' | tr '\n' ' ')
ok "gpuprobe.1 options = gpuprobe --help${d:+: $d}" test -z "$d"
pass
