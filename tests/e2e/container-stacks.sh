#!/bin/sh
# A process in a container of another release (issue 28): a Python ABBA
# deadlock run by Debian 13's python3.13 and libc in a root made by
# debootstrap, in its own mount and pid namespaces, on a host of another
# release.  gpuprobe must read the container's own files (unwind/tfile.h),
# not the host's of the same names:
#   - stacks names the Python lines (File ".../abba.py", line N) and the
#     container's libc functions (not "??"), its libc's build-id the
#     container's;
#   - trace says hang-blocked, naming abba.py:N; a bundle's stacks.txt,
#     trace.jsonl and report.md say the same;
#   - the target record carries the pid in its own namespace (NSpid) and
#     report says where it lives;
#   - a C mutex ABBA (tests/workloads/mutex-abba, run on the container's
#     libc) is a deadlock naming both threads: the owners' tids in the
#     mutexes are the container's own, turned into ours through NSpid.
# Two shapes of container, both with unshare(1) (podman does not run on
# the hybrid-cgroup machines this is written on):
#   chroot:  unshare --mount --pid --fork --mount-proc --root=DIR: /proc/PID/
#            maps names DIR/usr/lib/... (a path the host can open);
#   pivot:   the same, but pivot_root into DIR as runc does (docker,
#            containerd, cri-o, podman): maps name /usr/lib/..., which on
#            the host is the host's libc.
#
# The root: GP_CONTAINER_ROOT (default /var/tmp/trixie-root), made once by
#   debootstrap --variant=minbase --include=python3,libc6-dbg trixie DIR
# (about 100 s and 260 MiB from the mirror).  It is cached outside the tree
# and never built here: `make check` neither downloads from a mirror nor
# spends minutes of a shared machine; SKIP says the command.  libc6-dbg
# gives the container's libc its debug info (its libc.so.6 has no symbol
# table: __futex_abstimed_wait_common is not exported); without it the
# test checks instead that the hint says to install it in the container.
# Needs root (unshare of mount and pid namespaces, ptrace of another
# user's namespace), unshare(1), jq.
: "${E2E_TIMEOUT:=180}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_jq
[ "$(id -u)" = 0 ] || skip "needs root (unshare of mount and pid namespaces)"
command -v unshare > /dev/null 2>&1 || skip "no unshare(1) (util-linux)"
ROOT=${GP_CONTAINER_ROOT:-/var/tmp/trixie-root}
[ -x "$ROOT/usr/bin/python3" ] && [ -d "$ROOT/mnt" ] ||
	skip "no container root at $ROOT: make it with 'debootstrap --variant=minbase --include=python3,libc6-dbg trixie $ROOT' (or set GP_CONTAINER_ROOT)"
unshare --mount --pid --fork --mount-proc --root="$ROOT" /bin/true 2> "$TMP/unshare.err" ||
	skip "unshare cannot make namespaces here: $(head -c 200 "$TMP/unshare.err")"

SCRIPT=$top_srcdir/tests/e2e/abba.py
line_of() { grep -n "# LINE:$1\$" "$SCRIPT" | cut -d: -f1; }
LA=$(line_of a_then_b); LB=$(line_of b_then_a)
# The script in the root, under a name of this run's own.
IN=$(mktemp -d "$ROOT/tmp/gpuprobe-ctr.XXXXXX") || framework_failure "cannot write into $ROOT/tmp"
trap 'rc=$?; trap - EXIT; cleanup; rm -rf "$IN"; exit $rc' EXIT
cp "$SCRIPT" "$IN/abba.py"
PYIN=${IN#"$ROOT"}/abba.py

LIBC=$(ls "$ROOT"/usr/lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || ls "$ROOT"/usr/lib/*/libc.so.6 | head -1)
build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'; }
CTR_LIBC_ID=$(build_id "$LIBC")
HOST_LIBC_ID=$(build_id "$(ls /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/*/libc.so.6 2>/dev/null | head -1)")
[ -n "$CTR_LIBC_ID" ] || framework_failure "no build-id in $LIBC"
[ "$CTR_LIBC_ID" != "$HOST_LIBC_ID" ] || skip "the container's libc is the host's ($CTR_LIBC_ID): not another release"
HAVE_DBG=0
[ -s "$ROOT/usr/lib/debug/.build-id/$(echo "$CTR_LIBC_ID" | cut -c1-2)/$(echo "$CTR_LIBC_ID" | cut -c3-).debug" ] && HAVE_DBG=1
say "container root $ROOT: libc $CTR_LIBC_ID (host's $HOST_LIBC_ID), its debug info: $HAVE_DBG"

# start SHAPE: runs the ABBA in a container of that shape; sets PID (ours).
start() {
	case $1 in
	chroot) unshare --mount --pid --fork --mount-proc --root="$ROOT" python3 "$PYIN" \
			> "$TMP/$1.out" 2>&1 & ;;
	pivot)	unshare --mount --pid --fork --mount-proc sh -c '
			mount --make-rprivate / && mount --bind "$1" "$1" && cd "$1" &&
			pivot_root . mnt && cd / && mount -t proc proc /proc && umount -l /mnt &&
			exec python3 "$2"' sh "$ROOT" "$PYIN" > "$TMP/$1.out" 2>&1 & ;;
	esac
	U=$!
	bg_track "$U"
	wait_until 30 grep -q deadlocked "$TMP/$1.out" || fail "$1: the ABBA never started: $(head -c 300 "$TMP/$1.out")"
	PID=$(pgrep -P "$U" | head -1)
	[ -n "$PID" ] && [ "$(cat "/proc/$PID/comm")" = python3 ] || fail "$1: no python3 under unshare $U"
	sleep 0.5 # both threads into their second acquire
}

# frames JQ-FILTER FILE: the count of frames of the stacks lines that pass it.
frames() {
	jq "select(.type==\"stacks\") | [.threads[].frames[]? | select($1)] | length" "$2" |
		awk '{ s += $1 } END { print s + 0 }'
}

check_shape() {
	shape=$1
	start "$shape"
	say "$shape: pid $PID ($(awk '/^NSpid:/ { $1 = ""; print }' "/proc/$PID/status" | sed 's/^ //') in its namespaces); maps: $(awk '/libc.so/ { print $6; exit }' "/proc/$PID/maps")"
	S=$TMP/$shape-stacks.jsonl
	gp stacks "$PID" -o "$S" > "$TMP/$shape-stacks.txt" 2>&1
	ok "$shape: stacks exit 0" [ $? -eq 0 ]
	ok "$shape: result is JSON Lines" check_jsonl "$S"
	for fl in "a_then_b $LA" "b_then_a $LB"; do
		set -- $fl
		n=$(frames ".python[]? | select(.function == \"$1\" and .line == $2 and (.file | endswith(\"abba.py\")))" "$S")
		ok "$shape: Python frame $1 at abba.py:$2 ($n)" [ "$n" -ge 1 ]
		ok "$shape: stacks text names $1 (abba.py:$2)" grep -qF "$1 (abba.py:$2)" "$TMP/$shape-stacks.txt"
	done
	nlibc=$(frames '.soname == "libc.so.6"' "$S")
	ok "$shape: libc frames read ($nlibc)" [ "$nlibc" -ge 2 ]
	ids=$(jq -r 'select(.type=="stacks") | .threads[].frames[]? | select(.soname == "libc.so.6") | .build_id' "$S" | sort -u)
	ok "$shape: libc's build-id is the container's ($ids)" [ "$ids" = "$CTR_LIBC_ID" ]
	if [ $HAVE_DBG = 1 ]; then
		unnamed=$(frames '.soname == "libc.so.6" and .symbol == null' "$S")
		ok "$shape: every libc frame named ($unnamed of $nlibc not)" [ "$unnamed" -eq 0 ]
		ok "$shape: no '?? libc.so.6' in the text" sh -c "! grep -qF '?? libc.so.6' '$TMP/$shape-stacks.txt'"
		named=$(frames '.soname == "libc.so.6" and (.symbol // "" | test("futex|syscall_cancel|sem_wait"))' "$S")
		ok "$shape: the futex wait named in libc ($named frames)" [ "$named" -ge 1 ]
	else
		say "$shape: libc's names not checked: no libc6-dbg in $ROOT"
		ok "$shape: the hint says to install libc's debug package in the container" \
			grep -q "libc.so.6.*install its debug package in the container" "$TMP/$shape-stacks.txt"
	fi
	ok "$shape: target nspid [$PID, 1]" sh -c "jq -ce 'select(.type==\"target\") | .nspid == [$PID, 1]' '$S' | grep -qx true"
	ok "$shape: target ns has mnt and pid" sh -c "jq -ce 'select(.type==\"target\") | (.ns | index(\"mnt\") != null and index(\"pid\") != null)' '$S' | grep -qx true"

	T=$TMP/$shape-trace.jsonl
	GP_TIMEOUT=40 gp trace "$PID" --interval 0.5 --seconds 4 --hang-after 2 -o "$T" > "$TMP/$shape-trace.txt" 2>&1
	ok "$shape: trace exit 0 ($?)" [ $? -eq 0 ]
	ok "$shape: verdict hang-blocked" sh -c "jq -r 'select(.type==\"verdict\").class' '$T' | grep -qx hang-blocked"
	ok "$shape: verdict names abba.py:$LA and abba.py:$LB" sh -c \
		"jq -r 'select(.type==\"verdict\").summary' '$T' | grep -F 'abba.py:$LA' | grep -qF 'abba.py:$LB'"
	ok "$shape: trace says where it lives" grep -q "lives in   pid 1 in its own pid namespace" "$TMP/$shape-trace.txt"
	gp report "$T" > "$TMP/$shape-report.md" 2>&1
	ok "$shape: report (Markdown): 'Lives in: pid 1 in its own pid namespace'" \
		grep -q "^Lives in: pid 1 in its own pid namespace; namespaces of its own: mnt, pid" "$TMP/$shape-report.md"
	if [ "$shape" = pivot ]; then
		# The bundle a user attaches: its stacks and trace of the same.
		GP_TIMEOUT=90 gp bundle "$PID" --seconds 3 --hang-after 2 -q -o "$TMP/b.tar.gz" > "$TMP/b.out" 2>&1
		ok "$shape: bundle exit 0 ($(tail -c 200 "$TMP/b.out"))" [ $? -eq 0 ]
		mkdir "$TMP/b" && tar xzf "$TMP/b.tar.gz" -C "$TMP/b" || fail "bundle: cannot unpack"
		B=$(echo "$TMP"/b/*/)
		ok "$shape: bundle stacks.txt names a_then_b (abba.py:$LA)" grep -qF "a_then_b (abba.py:$LA)" "$B/stacks.txt"
		[ $HAVE_DBG = 1 ] && ok "$shape: bundle stacks.txt names libc's functions, no '?? libc.so.6'" sh -c \
			"grep -q '__futex_abstimed_wait_common  libc.so.6' '$B/stacks.txt' && ! grep -qF '?? libc.so.6' '$B/stacks.txt'"
		ok "$shape: bundle trace.jsonl carries nspid [$PID, 1]" sh -c \
			"jq -ce 'select(.type==\"target\") | .nspid == [$PID, 1]' '$B/trace.jsonl' | grep -qx true"
		ok "$shape: bundle report.md says where it lives" grep -q "^Lives in: pid 1 in its own pid namespace" "$B/report.md"
	fi
	ok "$shape: no thread of it left stopped" no_stopped "$PID"
	kill -KILL "$U" "$PID" 2>/dev/null
	wait "$U" 2>/dev/null
}

check_shape chroot
check_shape pivot

require_workload mutex-abba
# A workload built with the sanitizers needs libasan, which the
# container's root does not have (the CI's sanitizer pass: "never
# started"): the mutex part is for the plain build.
if ldd "$WORKLOADS/mutex-abba" 2>/dev/null | grep -q 'libasan\|libubsan'; then
	say "mutex-abba: built with the sanitizers, not run in the container"
	pass
fi
cp "$WORKLOADS/mutex-abba" "$IN/mutex-abba"
unshare --mount --pid --fork --mount-proc --root="$ROOT" "${IN#"$ROOT"}/mutex-abba" > "$TMP/mabba.out" 2>&1 &
U=$!
bg_track "$U"
wait_until 20 sh -c "pgrep -P $U > /dev/null" || fail "mutex-abba never started"
PID=$(pgrep -P "$U" | head -1)
wait_until 20 sh -c "[ \$(ls /proc/$PID/task | wc -l) -ge 3 ]" || fail "mutex-abba: no threads"
T=$TMP/mabba-trace.jsonl
GP_TIMEOUT=40 gp trace "$PID" --interval 0.5 --seconds 4 --hang-after 2 -o "$T" > "$TMP/mabba-trace.txt" 2>&1
ok "mutex-abba: trace exit 0" [ $? -eq 0 ]
S=$(jq -r 'select(.type=="verdict").summary' "$T")
say "mutex-abba: $S"
ok "mutex-abba: a deadlock, each thread waiting for the mutex the other owns" sh -c \
	"echo '$S' | grep -q 'deadlock: thread [0-9]* (locker-a) in take_a_then_b waits for the mutex owned by thread [0-9]*; thread [0-9]* (locker-b)'"
kill -KILL "$U" "$PID" 2>/dev/null
pass
