#!/bin/sh
# The measurement engine's bookkeeping (test-measure) at -n 1 to 4.
. "$(dirname "$0")/../lib.sh"
for np in $(bb_ranks 1 2 3 4); do
    bb_mpirun "$np" "$B/tests/mpi/test-measure" > "$BB_TMP/out" 2>&1
    bb_expect_rc 0 $? "test-measure at -n $np"
    grep -v ' 0 failed' "$BB_TMP/out" | head -20 >&2
done
bb_finish
