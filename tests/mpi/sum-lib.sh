#!/bin/sh
# The sum phase library on real MPI: a singleton launch and 1 to 4 ranks.
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
bb_serial "$B/tests/mpi/test-sum" > "$out" 2>&1
bb_expect_rc 0 $? "singleton test-sum (no mpiexec)"
bb_expect_grep "on 1 ranks: [0-9]* passed, 0 failed" "$out" "singleton summary"

for np in $(bb_ranks 1 2 3 4); do
    bb_np_test "$np" "$out" "$B/tests/mpi/test-sum"
done
bb_finish
