#!/bin/sh
# Redistribution on real MPI: every method x layout pairs x both commands
# moves the right data, in MDI mode and intra mode (one code, two layouts),
# at 1, 2 and 3 ranks (4 ranks: redist-n4.sh).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
T="$B/tests/mpi/test-redist"

bb_serial "$T" moves > "$out" 2>&1
bb_expect_rc 0 $? "singleton test-redist moves (intra mode on one rank)"
bb_expect_grep "moves on 1 ranks: [0-9]* passed, 0 failed" "$out" "singleton summary"

for np in 2 3; do
    bb_mpirun "$np" "$T" moves > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "test-redist moves at -n $np"
    [ $rc -eq 0 ] || cat "$out" >&2
    bb_expect_grep "moves on $np ranks: [0-9]* passed, 0 failed" "$out" "-n $np summary"
done
bb_finish
