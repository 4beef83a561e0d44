#!/bin/sh
# The transfer phase's buffer, admission and request policies at -n 1 to 4,
# and a poisoned retained phase that keeps its buffer, with per-call and
# with persistent requests.
. "$(dirname "$0")/../lib.sh"
bb_skip_without_persistent  # every policy is measured, persistent among them
out="$BB_TMP/out"
for np in $(bb_ranks 1 2 3 4); do
    bb_np_test "$np" "$out" "$B/tests/mpi/test-transfer-policy"
done
# The second ticket's payload Wait on the source (its third MPI_Wait: the
# first ticket waited for its payload and its receipt), and its payload
# Irecv on the destination.
for spec in "MPI_Wait:3 0" "MPI_Irecv:2 1"; do
    set -- $spec
    rm -f "$BB_TMP/verdict"
    BB_FAULT=$1 BB_FAULT_RANK=$2 bb_mpirun 2 "$B/tests/mpi/test-transfer-policy" poison \
        "$BB_TMP/verdict" > "$out" 2>&1
    bb_expect_rc 3 $? "-n 2: $1 fails on rank $2 of a retained phase: aborted with 3"
    touch "$BB_TMP/verdict"
    bb_expect_grep "rank $2: poison retained per-call at ticket 1: [1-9][0-9]* passed, 0 failed" \
        "$BB_TMP/verdict" "-n 2: $1: the poisoned retained phase keeps its buffer"
done
# Persistent requests: a spec ticket starts four (MIN, MAX, status,
# terminal), so the second ticket's are MPI_Start 5 to 8: its admission's
# MIN on the source, its status agreement on the destination.
for spec in "MPI_Start:5 0" "MPI_Start:7 1"; do
    set -- $spec
    rm -f "$BB_TMP/verdict"
    BB_FAULT=$1 BB_FAULT_RANK=$2 bb_mpirun 2 "$B/tests/mpi/test-transfer-policy" poison \
        "$BB_TMP/verdict" persistent > "$out" 2>&1
    bb_expect_rc 3 $? "-n 2: $1 fails on rank $2 of a retained persistent phase: aborted with 3"
    touch "$BB_TMP/verdict"
    bb_expect_grep "rank $2: poison retained persistent at ticket 1: [1-9][0-9]* passed, 0 failed" \
        "$BB_TMP/verdict" "-n 2: $1: the poisoned persistent phase keeps its buffer"
done
bb_finish
