#!/bin/sh
# The sum phase's buffer, admission and request policies at -n 1 to 4, and a
# poisoned retained phase that keeps its buffers, per call and persistent.
. "$(dirname "$0")/../lib.sh"
bb_skip_without_persistent  # every policy is measured, persistent among them
out="$BB_TMP/out"
for np in $(bb_ranks 1 2 3 4); do
    bb_np_test "$np" "$out" "$B/tests/mpi/test-sum-policy"
done
# Per call: the payload's Iallreduce or Wait.  Persistent (spec: the MIN
# and MAX agreements are starts 1 and 2): the payload request's making, its
# start, and the first agreement's start.  (Not the payload's wait: its one
# MPI_Test may complete it, and then no wait is made.)
for case in MPI_Iallreduce:1 MPI_Wait:1 MPI_Allreduce_init:3:persistent \
    MPI_Start:3:persistent MPI_Start:1:persistent; do
    call=${case%:persistent}
    requests=
    [ "$call" = "$case" ] || requests=persistent
    rm -f "$BB_TMP/verdict"
    # shellcheck disable=SC2086
    BB_FAULT="$call" BB_FAULT_RANK=0 bb_mpirun 2 "$B/tests/mpi/test-sum-policy" poison \
        "$BB_TMP/verdict" $requests > "$out" 2>&1
    bb_expect_rc 3 $? "-n 2: $case fails on a retained phase: aborted with 3"
    touch "$BB_TMP/verdict"
    bb_expect_grep "rank 0: poison retained: [1-9][0-9]* passed, 0 failed" "$BB_TMP/verdict" \
        "-n 2: $case: the poisoned retained phase keeps its buffers"
done
bb_finish
