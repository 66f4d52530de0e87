#!/bin/sh
# The house rules that a reader of the tree can check (README, "The
# house"; issues 12 and 18): data flows one way, so no room of src/
# includes a header of a room above it (the order is written below), a
# probe reaches into no renderer, and no two files of a room use each
# other; the verdict is data, so src/verdict/ holds no sentence (its
# words are src/render/verdict_text.c's); strings are built through
# common/strbuf.h, never by adding snprintf's return to an offset; no
# function is longer than 120 lines.
# Slow under a loaded make -j check (gcc strips every file): 90 s.
E2E_TIMEOUT=${E2E_TIMEOUT:-90}
. "${0%/*}/../e2e/lib.sh"
S=$top_srcdir/src
command -v gcc > /dev/null 2>&1 || skip "no gcc (to strip comments)"

# The rooms, lowest first (README, "The house").  A room may include the
# headers of the rooms before it, never of one after it.  The commands
# are the top floor, side by side; a command room that does not exist yet
# simply has no files.  src/gpuprobe.c and src/commands.h (the command
# table) are above them all and may include any room, as src/stacks_hint.h
# does to join the unwinder's facts to the renderer's words.  The order is the
# includes' own: the result (model) on the helpers; the verdict reads it,
# the renderer both; then the probes: the machine's readers (sysread:
# hostinfo.c takes gp_json_string from the model), the GPU's, the tracer
# (its sampler reads the GPU and the machine), then the unwinder (issue
# 31): it reads a thread's state with the tracer's readers (procstat.h,
# nsinfo.h) and loads its BPF program with the tracer's loader
# (bpfload.h), and the sampler takes no stack, so the tracer stays below;
# the loop that trace and watch share drives both (ptstop.h, stacks.h).
# The renderer and the probes are side by side
# in the data flow; the order keeps the renderer from the probes, a check
# below keeps the probes from the renderer.
LIBRARY="common model verdict render sysread gpu tracer unwind loop"
COMMANDS="lockprobe idleprobe report demo info trace stacks watch bundle"
# Commands still in a library room, on their way to a room of their own
# (issue 18: src/trace/, src/stacks/).  Once moved, these names match
# nothing; then this list is to be emptied.
MOVING=""

# Every header of the rooms, as ROOM/NAME.h.
(cd "$S" && ls ./*/*.h 2>/dev/null | sed 's|^\./||') > "$TMP/headers"
# The files of a room (nothing for a room that is not there yet).
room_files() { for f in "$S/$1"/*.[ch]; do [ -f "$f" ] && printf '%s\n' "$f"; done; }
not_moving() {
	while IFS= read -r f; do
		case " $MOVING " in *" ${f#"$S"/} "*) ;; *) printf '%s\n' "$f" ;; esac
	done
}
# The quoted includes in the files of room FROM, but those of MOVING,
# that name a header of the rooms after it.
bad_includes() {
	from=$1; shift
	hdrs=$(awk -v rooms=" $* " '{ r = $0; sub(/\/.*/, "", r); h = $0; sub(/.*\//, "", h)
		gsub(/\./, "\\.", h); if (index(rooms, " " r " ")) a = a (a == "" ? "" : "|") h }
		END { print a }' "$TMP/headers")
	files=$(room_files "$from" | not_moving)
	[ -n "$hdrs" ] && [ -n "$files" ] || return 0
	# shellcheck disable=SC2086 # one file a word
	grep -HnE "^#include \"($hdrs)\"" $files | sed "s|^$top_srcdir/||"
}

# Every folder of src/ is a room of the order: a new one is placed in it.
out=$(for d in "$S"/*/; do
	d=${d%/}; d=${d##*/}
	case " $LIBRARY $COMMANDS " in *" $d "*) ;; *) echo "src/$d/" ;; esac
done)
ok "every folder of src/ has its place in the order${out:+: $out}" test -z "$out"

# Includes name the header, not the room (one -I per room): a name must
# be one room's only.
out=$( (cd "$S" && ls ./*.h; cat "$TMP/headers") 2>/dev/null | sed 's|.*/||' | sort | uniq -d)
ok "no header name in two rooms${out:+: $out}" test -z "$out"

# Each library room against every room after it, commands included.
above="$COMMANDS"
for r in $(echo "$LIBRARY" | tr ' ' '\n' | sed '1!G;h;$!d'); do
	# shellcheck disable=SC2086 # one room a word
	out=$(bad_includes "$r" $above)
	ok "src/$r/ includes no header of a room above it ($above)${out:+: $out}" test -z "$out"
	above="$r $above"
done

# The commands side by side: what two of them share sits in a room below.
# shellcheck disable=SC2046 # one room a word
out=$(for r in $COMMANDS; do bad_includes "$r" $(echo " $COMMANDS " | sed "s/ $r / /"); done)
ok "no command room includes another's header${out:+: $out}" test -z "$out"

# DESIGN: "a probe never reaches into a renderer", nor into the verdict
# (the other half of "the renderer never reads /proc", which the order
# says).  And the commands live in the command rooms: a file that
# includes commands.h (the command table) is a command.
out=$(for r in sysread gpu tracer unwind; do bad_includes "$r" verdict render; done)
ok "the probes (src/sysread/, src/gpu/, src/tracer/, src/unwind/) reach into no verdict or renderer${out:+: $out}" test -z "$out"

out=$(for r in $LIBRARY; do room_files "$r"; done | not_moving | xargs -r grep -l '^#include "commands.h"' |
	sed "s|^$top_srcdir/||")
ok "no command in a library room${MOVING:+ (excepted, on their way out: $MOVING)}${out:+: $out}" test -z "$out"

# No circle between the files of one room.  A .c file uses another when
# it calls a function that the other defines and that a header it
# includes (directly, or through the room's headers) declares.  A circle
# of uses within a room means the files are one thing, or a third is
# missing below them (issue 18: arms.c drew its cells with render_md.c's
# gp_md_cell, and render_md.c draws the arms).  A table that a file
# exports is not a call: gpu.c picks the backends hsa.c and cuda.c by
# their tables, and they call its loader.
circles() {
	files=$(room_files "$1")
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086 # one file a word
	awk -v room="$1" '
	# The code of a line: comments and the insides of literals dropped.
	function code(line,   out, i, n, ch, nx) {
		out = ""; n = length(line)
		for (i = 1; i <= n; i++) {
			ch = substr(line, i, 1); nx = substr(line, i + 1, 1)
			if (inblock) { if (ch == "*" && nx == "/") { inblock = 0; i++; out = out " " } continue }
			if (quote != "") { if (ch == "\\") i++; else if (ch == quote) { quote = ""; out = out ch } continue }
			if (ch == "/" && nx == "*") { inblock = 1; i++; continue }
			if (ch == "/" && nx == "/") break
			if (ch == "\"" || ch == "\047") quote = ch
			out = out ch
		}
		quote = ""
		return out
	}
	FNR == 1 { f = FILENAME; sub(/.*\//, "", f); file[f] = 1; if (f ~ /\.c$/) c[++nc] = f; inblock = 0 }
	/^#include "/ { h = $0; sub(/^#include "/, "", h); sub(/".*/, "", h); inc[f, ++ninc[f]] = h; next }
	{
		s = code($0)
		# A function defined here: at column 0, not static, its name before the first "(".
		if (f ~ /\.c$/ && s ~ /^[A-Za-z_]/ && s !~ /^(static|typedef|extern)[ \t]/ && s !~ /;[ \t]*$/ &&
		    match(s, /[(\[=]/) && substr(s, RSTART, 1) == "(") {
			d = substr(s, 1, RSTART - 1)
			if (match(d, /[A-Za-z_][A-Za-z0-9_]*[ \t]*$/)) {
				d = substr(d, RSTART, RLENGTH); sub(/[ \t]+$/, "", d); def[d] = def[d] " " f
			}
		}
		while (match(s, /[A-Za-z_][A-Za-z0-9_]*/)) {
			w = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
			if (f ~ /\.h$/) { if (!((f, w) in named)) { named[f, w] = 1; word[f, ++nword[f]] = w } }
			else used[f, w] = 1
		}
	}
	END {
		for (i = 1; i <= nc; i++) {
			# The room headers that c[i] reaches through its includes.
			a = c[i]; split("", seen); n = 0; q[++n] = a; seen[a] = 1
			for (p = 1; p <= n; p++)
				for (k = 1; k <= ninc[q[p]]; k++) {
					h = inc[q[p], k]
					if ((h in file) && !(h in seen)) { seen[h] = 1; q[++n] = h }
				}
			# What it calls of theirs, and who defines that.
			for (h in seen) if (h ~ /\.h$/)
				for (k = 1; k <= nword[h]; k++) {
					w = word[h, k]
					if (!((a, w) in used) || !(w in def)) continue
					m = split(def[w], who, " ")
					for (j = 1; j <= m; j++) if (who[j] != a) use[a, who[j]] = 1
				}
		}
		# The closure of uses (Floyd-Warshall); each circle once, its files in order.
		for (k = 1; k <= nc; k++) for (i = 1; i <= nc; i++) if ((c[i], c[k]) in use)
			for (j = 1; j <= nc; j++) if ((c[k], c[j]) in use) use[c[i], c[j]] = 1
		for (i = 1; i <= nc; i++) {
			if (c[i] in done) continue
			line = ""
			for (j = i + 1; j <= nc; j++)
				if (((c[i], c[j]) in use) && ((c[j], c[i]) in use)) { line = line " " c[j]; done[c[j]] = 1 }
			if (line != "") printf "src/%s/: %s%s\n", room, c[i], line
		}
	}' $files
}
out=$(for r in $LIBRARY $COMMANDS; do circles "$r"; done)
ok "no two files of a room use each other${out:+: $out}" test -z "$out"

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

# The repository's root holds only the project's own files (issue 31: a
# trace with a development machine's path in it sat there since 12-05).
# Checked on a git checkout: a distribution tarball's root is automake's.
ROOT_OWN=".ci .gitignore Makefile.am README.md bench bootstrap.sh completion configure.ac deploy doc m4 man src tests"
if git -C "$top_srcdir" rev-parse --show-toplevel > /dev/null 2>&1; then
	out=$(git -C "$top_srcdir" ls-files | sed 's|/.*||' | sort -u | while read -r e; do
		case " $ROOT_OWN " in *" $e "*) ;; *) printf '%s ' "$e" ;; esac
	done)
	ok "the root holds only the project's own files${out:+ (not: $out)}" test -z "$out"
fi
pass
