#!/bin/sh
# The transfer phase library on real MPI: a singleton launch, 1 and 2 ranks,
# each with 1000 tickets on one phase (transfer-n3.sh and transfer-n4.sh run 3 and 4).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
for np in 0 1 2; do
    bb_np_test "$np" "$out" "$B/tests/mpi/test-transfer" 1000
    bb_expect_grep "passed, 0 failed (1000 reuse" "$out" "-n $np: 1000 tickets on one phase"
done
bb_finish
