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

