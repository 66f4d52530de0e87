#!/bin/sh
# Files gpuprobe leaves for others (issue 27): a bundle and watch's
# metrics are new files of the caller's (O_EXCL), in a directory nobody
# else may write to.  As root: a directory writable by others and not
# sticky, or owned by another user, is refused at once with one line and
# exit 1 (bundle -o, watch --bundle-dir, watch --metrics); in a sticky
# one (/tmp's kind), a FILE.tmp that `nobody` made beforehand is never
# written through (before: the bundle landed in nobody's file, mode
# 0666) and is left as it was; a stale FILE.tmp of root's own is
# replaced; the bundle is root's, mode 0640.
: "${E2E_TIMEOUT:=120}"; export E2E_TIMEOUT
. "${0%/*}/../e2e/lib.sh"
require_workload sleepers
[ "$(id -u)" -eq 0 ] || skip "needs root (a directory of another user's)"
command -v setpriv > /dev/null 2>&1 || skip "setpriv missing (util-linux)"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
nobody true 2> /dev/null || skip "setpriv cannot drop privileges here"
chmod 755 "$TMP"
"$WORKLOADS/sleepers" 1 > /dev/null & T=$!; bg_track $T
wait_until 5 test -e /proc/$T/task || framework_failure "no target"
mkdir "$TMP/open" "$TMP/theirs" "$TMP/sticky" "$TMP/ours"
chmod 0777 "$TMP/open"; chown 65534:65534 "$TMP/theirs"; chmod 1777 "$TMP/sticky"

# refused WHAT ERE CMD...: CMD exits 1 at once, one line matching ERE.
refused() {
	what=$1 ere=$2; shift 2
	timeout -k 1 60 "$@" < /dev/null > "$TMP/o" 2> "$TMP/e"
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l < "$TMP/e")" -eq 1 ] && grep -Eq "^gpuprobe: .*$ere" "$TMP/e"; then
		say "ok: $what -> 1: $(cat "$TMP/e")"
	else
		fail "$what -> exit $rc: $(head -c 400 "$TMP/e" | tr '\n' '~')"
	fi
}
G=$GPUPROBE
refused "bundle into a directory anyone may write to" \
	"open/b.tar.gz: refusing to write the bundle there: the directory is writable by others \\(mode 0777\\) and not sticky" \
	"$G" bundle -q -s 1 -o "$TMP/open/b.tar.gz" "$T"
ok "nothing written there" test -z "$(ls -A "$TMP/open")"
refused "bundle into a directory of nobody's" \
	"refusing to write the bundle there: the directory is owned by uid 65534" \
	"$G" bundle -q -s 1 -o "$TMP/theirs/b.tar.gz" "$T"
ok "nothing written there" test -z "$(ls -A "$TMP/theirs")"
refused "watch --bundle-dir a directory anyone may write to" \
	"open: refusing to write bundles there: the directory is writable by others" \
	"$G" watch -q --seconds 1 --bundle-dir "$TMP/open" "$T"
refused "watch --metrics in a directory of nobody's" \
	"refusing to write the metrics there: the directory is owned by uid 65534" \
	"$G" watch -q --seconds 1 --metrics "$TMP/theirs/gpuprobe.prom" "$T"

# A sticky directory: nobody makes FILE.tmp first, open to all.
nobody sh -c "umask 0; : > '$TMP/sticky/b.tar.gz.tmp'; : > '$TMP/sticky/gpuprobe.prom.tmp'" ||
	framework_failure "nobody cannot make a file in $TMP/sticky"
refused "bundle through nobody's FILE.tmp" \
	"refusing to write the bundle: .*b.tar.gz.tmp is there and is not a file of this user's" \
	"$G" bundle -q -s 1 -o "$TMP/sticky/b.tar.gz" "$T"
ok "no bundle" test ! -e "$TMP/sticky/b.tar.gz"
"$G" watch --seconds 1.5 --interval 0.25 --metrics "$TMP/sticky/gpuprobe.prom" "$T" \
	> "$TMP/wo" 2> "$TMP/we"
rc=$?
say "watch: exit $rc; $(head -c 300 "$TMP/we" | tr '\n' '~')"
ok "watch says once that nobody's FILE.tmp is there" \
	[ "$(grep -c "gpuprobe.prom.tmp is there and is not a file of this user's" "$TMP/we")" -eq 1 ]
for f in b.tar.gz.tmp gpuprobe.prom.tmp; do
	ok "nobody's $f is as it was (owner 65534, empty)" \
		[ "$(stat -c '%u %s' "$TMP/sticky/$f")" = "65534 0" ]
done
ok "no metrics file of anybody's" test ! -e "$TMP/sticky/gpuprobe.prom"

# Root's own directory: a stale FILE.tmp of root's own is replaced.
: > "$TMP/ours/b.tar.gz.tmp"
gp bundle -q -s 1 -o "$TMP/ours/b.tar.gz" "$T" > /dev/null 2> "$TMP/e" || fail "bundle into $TMP/ours: $(cat "$TMP/e")"
ok "the bundle is root's, mode 0640" [ "$(stat -c '%u %a' "$TMP/ours/b.tar.gz")" = "0 640" ]
ok "the stale FILE.tmp is gone" test ! -e "$TMP/ours/b.tar.gz.tmp"
ok "tar reads it" sh -c "tar -tzf '$TMP/ours/b.tar.gz' | grep -q MANIFEST"
pass
