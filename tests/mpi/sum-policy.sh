#!/bin/sh
# The sum phase's buffer and admission policies at -n 1 to 4, and a poisoned
# retained phase that keeps its buffers.
. "$(dirname "$0")/../lib.sh"
out="$BB_TMP/out"
for np in 1 2 3 4; do
    bb_mpirun "$np" "$B/tests/mpi/test-sum-policy" > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "test-sum-policy at -n $np"
    [ $rc -eq 0 ] || cat "$out" >&2
    bb_expect_grep "on $np ranks: [0-9]* passed, 0 failed" "$out" "-n $np summary"
done
for call in MPI_Iallreduce:1 MPI_Wait:1; do
    rm -f "$BB_TMP/verdict"
    BB_FAULT="$call" BB_FAULT_RANK=0 bb_mpirun 2 "$B/tests/mpi/test-sum-policy" poison \
        "$BB_TMP/verdict" > "$out" 2>&1
    bb_expect_rc 3 $? "-n 2: $call fails on a retained phase: aborted with 3"
    touch "$BB_TMP/verdict"
    bb_expect_grep "rank 0: poison retained: [1-9][0-9]* passed, 0 failed" "$BB_TMP/verdict" \
        "-n 2: $call: the poisoned retained phase keeps its buffers"
done
bb_finish
