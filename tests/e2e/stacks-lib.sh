# Helpers of the stacks tests, sourced after lib.sh.
require_workload stackload
LIBDIR=$WORKLOADS
[ -r "$LIBDIR/libgpspin.so" ] || framework_failure "$LIBDIR/libgpspin.so not built"

# start_stackload NBLOCKED NSPIN: starts the target, sets $TPID once it
# printed "ready".
start_stackload() {
	"$WORKLOADS/stackload" "$1" "$2" "$LIBDIR/libgplate.so" > "$TMP/stackload.out" 2>&1 &
	TPID=$!; bg_track $TPID
	ready() { grep -q '^ready' "$TMP/stackload.out"; }
	wait_until 5 ready || framework_failure "stackload never became ready"
}

# no_stopped PID: no thread of PID is in state t or T (stat field 3).
no_stopped() {
	for f in /proc/$1/task/*/stat; do
		read -r line < "$f" 2>/dev/null || continue
		st=${line##*) }
		st=${st%% *}
		case $st in t|T) say "thread ${f#/proc/$1/task/} is in state $st"; return 1 ;; esac
	done
	return 0
}
