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
poison 2 MPI_Allreduce:1
poison 3 MPI_Wait:1

# bbench-sum itself: fatal exit 3, no record, no temporary left behind.
mkdir -p "$BB_TMP/rec"
for call in MPI_Iallreduce:3 MPI_Test:2; do
    bb_preload_fault "$call" 1 \
        bb_mpirun 2 "$B/bench/bbench-sum" --count 1,1K --reps 2 \
        --output "$BB_TMP/rec/r.json" > "$out" 2>&1
    bb_expect_rc 3 $? "bbench-sum with $call failing on rank 1 exits 3"
    # (The fatal message itself may be lost: the abort can end the launcher
    # before it relays the failing rank's stderr.)
    bb_expect_true "bbench-sum $call: no record and no temporary file" \
        test -z "$(ls -A "$BB_TMP/rec")"
done
bb_finish
