#!/bin/sh
# The waits cases of tests/real/cases.tsv (see tests/real/run.sh): who
# waits on whom, and small output (issue 20).
: "${top_srcdir:=$(cd "${0%/*}/../.." && pwd)}"; export top_srcdir
REAL_GROUP=wait; export REAL_GROUP
exec /bin/sh "$top_srcdir/tests/real/run.sh" "$@"
