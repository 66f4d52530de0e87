#!/bin/sh
# The bash completion offers every command and every long option that
# `gpuprobe ... --help` lists, and the pool names.
. "${0%/*}/../e2e/lib.sh"
command -v bash >/dev/null 2>&1 || skip "bash is missing"
COMP=$top_srcdir/completion/gpuprobe

# complete WORDS...: what the completion offers after them (last word = current).
complete_words() {
	bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_gpuprobe gpuprobe "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$@"
}

ok "the script parses" bash -n "$COMP"
cmds=$("$GPUPROBE" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
complete_words gpuprobe '' > "$TMP/c"
for c in $cmds; do
	ok "command $c is offered" grep -qx "$c" "$TMP/c"
	complete_words gpuprobe "$c" -- > "$TMP/o"
	for o in $("$GPUPROBE" "$c" --help | grep -E '^ +(-[^-], )?--[a-z]' | grep -Eo -- '--[a-z][a-z0-9-]*' | sort -u); do
		ok "gpuprobe $c $o is offered" grep -qx -- "$o" "$TMP/o"
	done
done
complete_words gpuprobe -- > "$TMP/g"
for o in $("$GPUPROBE" --help | grep -E '^ +(-[^-], )?--[a-z]' | grep -Eo -- '--[a-z][a-z0-9-]*' | sort -u); do
	ok "global $o is offered" grep -qx -- "$o" "$TMP/g"
done
complete_words gpuprobe lock --pool '' > "$TMP/p"
for p in cpu-fine cpu-kernarg cpu-coarse cpu-extfine gpu0-coarse gpu0-fine all; do
	ok "pool $p is offered" grep -qx "$p" "$TMP/p"
done
ok "report --format offers markdown" test "$(complete_words gpuprobe report --format m)" = markdown
ok "trace --fail-on offers classes" grep -qx hang-busy-kernel "$(complete_words gpuprobe trace --fail-on hang-busy-k > "$TMP/f"; echo "$TMP/f")"
pass
