#!/bin/sh
# The fixed-shape sum phase against the contract phase at -n 1 to 4 (every
# case of the policy matrix, one reduction per call), borrowed contributions,
# and poisoned phases: a fixed-shape phase per call and persistent keeps its
# buffers; a borrowed call never releases the array MPI may still hold.
. "$(dirname "$0")/../lib.sh"
bb_skip_without_persistent  # persistent requests are among the cases
out="$BB_TMP/out"
for np in $(bb_ranks 1 2 3 4); do
    bb_mpirun "$np" "$B/tests/mpi/test-sum-fixed" > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "test-sum-fixed at -n $np"
    [ $rc -eq 0 ] || cat "$out" >&2
    bb_expect_grep "on $np ranks: [0-9]* passed, 0 failed" "$out" "-n $np summary"
done
# Creation makes MPI_Allreduce 1; the first call's combined reduction is
# MPI_Allreduce 2 (per call) or MPI_Allreduce_init 1 / MPI_Start 1
# (persistent); a borrowed call's payload is MPI_Iallreduce 1.
for case in MPI_Allreduce:2:per-call MPI_Allreduce_init:1:persistent \
    MPI_Start:1:persistent MPI_Iallreduce:1:borrowed; do
    how=${case##*:}
    call=${case%:*}
    rm -f "$BB_TMP/verdict"
    BB_FAULT="$call" BB_FAULT_RANK=0 bb_mpirun 2 "$B/tests/mpi/test-sum-fixed" poison \
        "$BB_TMP/verdict" "$how" > "$out" 2>&1
    bb_expect_rc 3 $? "-n 2: $call fails ($how): aborted with 3"
    touch "$BB_TMP/verdict"
    bb_expect_grep "rank 0: poison $how: [1-9][0-9]* passed, 0 failed" "$BB_TMP/verdict" \
        "-n 2: $call ($how): poisoned, nothing published, the buffers kept"
done
bb_finish
