#!/bin/sh
# Fault injection: a failing MPI call poisons the sum phase; the job aborts
# with exit 3 and leaves no record.
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"

poison() {
    np=$1 call=$2
    rm -f "$BB_TMP/verdict"
    BB_FAULT="$call" BB_FAULT_RANK=0 bb_mpirun "$np" "$B/tests/mpi/test-sum" poison \
        "$BB_TMP/verdict" > "$out" 2>&1
    rc=$?
    bb_expect_rc 3 $rc "-n $np: $call fails: job aborted with 3"
    touch "$BB_TMP/verdict"
    bb_expect_grep "rank 0: poison: [0-9]* passed, 0 failed" "$BB_TMP/verdict" \
        "-n $np: $call: poisoned, later calls refused, resources retained"
}
poison 1 MPI_Iallreduce:1
poison 2 MPI_Iallreduce:1
poison 2 MPI_Test:1
poison 2 MPI_Wait:1
# The first Allreduce is the creation's, agreeing the policies: the second
# is the first call's admission.
poison 2 MPI_Allreduce:2
poison 3 MPI_Wait:1

# bbench-sum itself: fatal exit 3, no record, no temporary left behind, and
# the fault caught in the phase, at the call that failed (the verdict file
# survives the abort; stderr may not be relayed).
mkdir -p "$BB_TMP/rec"
for case in "MPI_Iallreduce:3 MPI_Iallreduce" "MPI_Test:2 MPI_Test" \
            "MPI_Allreduce:7 MPI_Allreduce (admission)"; do
    call=${case%% *} site=${case#* }
    rm -f "$BB_TMP/fatal"
    BB_FATAL_VERDICT="$BB_TMP/fatal" bb_preload_fault "$call" 1 \
        bb_mpirun 2 "$B/bench/bbench-sum" --count 1,1K --reps 2 \
        --output "$BB_TMP/rec/r.json" > "$out" 2>&1
    bb_expect_rc 3 $? "bbench-sum with $call failing on rank 1 exits 3"
    bb_expect_true "bbench-sum $call: no record and no temporary file" \
        test -z "$(ls -A "$BB_TMP/rec")"
    touch "$BB_TMP/fatal"
    bb_expect_grep "^bbench-sum: rank 1: fatal: sum phase: .* in $site (stage transport)" \
        "$BB_TMP/fatal" "bbench-sum $call: caught in the sum phase at $site"
done
bb_finish
