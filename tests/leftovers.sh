#!/bin/sh
# tests/leftovers.sh [--kill] [DIR...]: the processes a run of the tests
# left behind (issue 27).  Lists every process whose working directory or
# command line lies in DIR (default: the tree this script is in), or that
# a test of DIR started (GP_TEST_TAG=DIR... in its environment, set by
# tests/e2e/lib.sh, whatever its working directory), one line each: pid,
# age in seconds, working directory, command line; and their children.
# Never this script, its ancestors (.ci/run, the shell that runs it), its
# own children, nor the other commands of its pipeline (`.ci/run | tee`).
#   --kill  SIGKILL them, round after round until none is left (a
#           process that forks between two rounds is caught by the next).
# Exit 0 and the line "leftovers: no process left behind in DIR" when
# there are none; 1 when some were found (killed or not); 2 on bad usage.
# Run it when nothing of DIR should be running: a test that runs
# meanwhile is listed (and, with --kill, killed).  .ci/run ends with it.
kill=0
case ${1:-} in
--kill) kill=1; shift ;;
-h|--help) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
-*) echo "leftovers: unknown option $1 (usage: tests/leftovers.sh [--kill] [DIR...])" >&2; exit 2 ;;
esac
[ $# -gt 0 ] || set -- "$(cd "$(dirname "$0")/.." && pwd)"

# Each DIR as given and, when it exists, with symlinks resolved (what
# /proc/PID/cwd says); never "/" (every process would match).
dirs=
for d in "$@"; do
	[ -n "$d" ] || continue
	case $d in /*) ;; *) d=$(cd "$d" 2>/dev/null && pwd) || { echo "leftovers: no directory $d" >&2; exit 2; } ;; esac
	while [ "$d" != "${d%/}" ]; do d=${d%/}; done
	[ -n "$d" ] || { echo "leftovers: not /" >&2; exit 2; }
	dirs="$dirs$d
"
	p=$(cd "$d" 2>/dev/null && pwd -P) && [ "$p" != "$d" ] && dirs="$dirs$p
"
done
# An ERE of the DIRs: (dir1|dir2), their special characters escaped.
re=$(printf '%s' "$dirs" | sed -e 's/[][\\.*^$+?(){}|]/\\&/g' | paste -sd '|')
re="($re)"
B='[^[:alnum:]_.-]'   # what may stand either side of a path in an argument

# scan: "PID<tab>AGE<tab>CWD<tab>COMMAND" for each process found.
scan() {
	# Candidates: PID WHY.  Each finder may list itself (it runs in the
	# tree, with it in its arguments): it is gone by the ps below.
	cand=$({
		find /proc -mindepth 2 -maxdepth 2 -name cwd -printf '%h\t%l\n' 2>/dev/null |
			awk -F'\t' -v dirs="$dirs" '
				BEGIN { n = split(dirs, d, "\n") }
				{ c = $2; sub(/ \(deleted\)$/, "", c)
				  for (i = 1; i <= n; i++)
					if (d[i] != "" && (c == d[i] || index(c, d[i] "/") == 1)) {
						sub(/^\/proc\//, "", $1); print $1; break
					} }'
		grep -lsaz -E "(^|$B)$re(/|\$|$B)" /proc/[0-9]*/cmdline |
			sed -e 's|^/proc/||' -e 's|/cmdline$||'
		env -u GP_TEST_TAG grep -lsaz -E "^GP_TEST_TAG=$re(/[^|]*)?\|" /proc/[0-9]*/environ |
			sed -e 's|^/proc/||' -e 's|/environ$||'
	} | sort -un)
	[ -n "$cand" ] || return 0
	# Alive now (no zombie); not this script, an ancestor, a child of an
	# ancestor in this script's process group (the other commands of its
	# pipeline: `.ci/run | tee log`), nor a descendant of those; and the
	# live descendants of what is left (a leftover's children, wherever
	# they run).
	ps -eo pid=,ppid=,pgid=,stat= | awk -v me=$$ -v cand="$cand" '
		BEGIN { n = split(cand, c, "\n"); for (i = 1; i <= n; i++) want[c[i]] = 1 }
		{ ppid[$1] = $2; pgid[$1] = $3; st[$1] = $4 }
		END {
			for (p = me; p != "" && p > 1; p = ppid[p]) { skip[p] = 1; delete want[p] }
			ours[me] = 1
			for (p in st)
				if (pgid[p] == pgid[me] && (ppid[p] in skip) && !(p in skip)) ours[p] = 1
			for (p in st) {
				if (st[p] ~ /^Z/ || (p in skip)) continue
				hit = 0
				for (q = p; q != "" && q > 1; q = ppid[q]) {
					if (q in ours) { hit = 0; break }
					if (q in want) hit = 1
				}
				if (hit) print p
			}
		}' | sort -n | while read -r pid; do
		cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || cwd=?
		line=$(ps -o etimes=,args= -p "$pid" 2>/dev/null) || continue
		line=$(printf '%s' "$line" | sed 's/^ *//')
		printf '%s\t%s\t%s\t%s\n' "$pid" "${line%% *}" "$cwd" "${line#* }"
	done
}

found=$(scan)
where=$(printf '%s' "$dirs" | paste -sd ' ')
if [ -z "$found" ]; then
	echo "leftovers: no process left behind in $where"
	exit 0
fi
echo "leftovers: $(printf '%s\n' "$found" | wc -l) processes left behind in $where:"
printf '%s\n' "$found" | awk -F'\t' '{ printf "leftovers:   pid %s, %s s old, in %s: %s\n", $1, $2, $3, $4 }'
if [ $kill -eq 1 ]; then
	seen=" $(printf '%s\n' "$found" | cut -f1 | tr '\n' ' ')"
	round=0
	while [ -n "$found" ] && [ $round -lt 50 ]; do
		for pid in $(printf '%s\n' "$found" | cut -f1); do
			kill -KILL "$pid" 2>/dev/null
		done
		sleep 0.1
		round=$((round + 1))
		found=$(scan)
		# The ones a round found anew (forked meanwhile): said too.
		printf '%s\n' "$found" | awk -F'\t' -v seen="$seen" '
			$1 != "" && index(seen, " " $1 " ") == 0 {
				printf "leftovers:   pid %s, %s s old, in %s: %s (new)\n", $1, $2, $3, $4 }'
		seen="$seen$(printf '%s\n' "$found" | cut -f1 | tr '\n' ' ')"
	done
	if [ -n "$found" ]; then
		echo "leftovers: still alive after $round rounds of SIGKILL: $(printf '%s\n' "$found" | cut -f1 | tr '\n' ' ')"
	else
		echo "leftovers: killed them"
	fi
fi
exit 1
