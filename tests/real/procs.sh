#!/bin/sh
# The single-process cases (sleep, SIGSTOP, exits) of tests/real/cases.tsv (see tests/real/run.sh).
: "${top_srcdir:=$(cd "${0%/*}/../.." && pwd)}"; export top_srcdir
REAL_GROUP=proc; export REAL_GROUP
exec /bin/sh "$top_srcdir/tests/real/run.sh" "$@"
