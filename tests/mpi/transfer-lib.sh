#!/bin/sh
# The transfer phase library on real MPI: a singleton launch, 1 and 2 ranks,
# each with 1000 tickets on one phase (transfer-n3.sh and transfer-n4.sh run 3 and 4).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
bb_serial "$B/tests/mpi/test-transfer" > "$out" 2>&1
bb_expect_rc 0 $? "singleton test-transfer (no mpiexec)"
bb_expect_grep "on 1 ranks: [0-9]* passed, 0 failed (1000 reuse" "$out" "singleton summary"

for np in 1 2; do
    bb_mpirun "$np" "$B/tests/mpi/test-transfer" 1000 > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "test-transfer at -n $np"
    [ $rc -eq 0 ] || cat "$out" >&2
    bb_expect_grep "on $np ranks: [0-9]* passed, 0 failed (1000 reuse" "$out" "-n $np summary"
done
bb_finish
