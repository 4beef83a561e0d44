#!/bin/sh
# Transport errors poison the transfer phase: the failing rank sees
# BB_ERR_MPI at stage transport, every later call is refused without MPI,
# and the job ends with MPI_Abort (exit 3).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
# call:N rank: the payload Isend and Wait on the source, the payload Irecv
# on the destination, the status agreement (fourth Allreduce: the first is
# the creation's, agreeing the policies) anywhere.
for spec in "MPI_Isend:1 0" "MPI_Wait:1 0" "MPI_Irecv:1 1" "MPI_Allreduce:4 1"; do
    set -- $spec
    rm -f "$BB_TMP/verdict"
    BB_FAULT=$1 BB_FAULT_RANK=$2 bb_mpirun 2 "$B/tests/mpi/test-transfer" poison \
        "$BB_TMP/verdict" > "$out" 2>&1
    bb_expect_rc 3 $? "test-transfer poison, $1 on rank $2"
    touch "$BB_TMP/verdict"
    bb_expect_grep "rank $2: poisoned at stage transport: checks passed" "$BB_TMP/verdict" \
        "$1 on rank $2: poisoned and retained"
done

# bbench-transfer itself, with the interposer preloaded: fatal exit 3, no
# record and no temporary file left behind.  (Its "fatal" message is not
# checked: the launcher can kill the job before relaying the aborting rank's
# stderr.)
mkdir -p "$BB_TMP/rec"
for spec in "MPI_Isend:1 0" "MPI_Wait:1 0" "MPI_Wait:2 1"; do
    set -- $spec
    rm -f "$BB_TMP/fatal"
    BB_FATAL_VERDICT="$BB_TMP/fatal" bb_preload_fault "$1" "$2" \
        bb_mpirun 2 "$B/bench/bbench-transfer" --bytes 8,64K --batches 0 --mode protocol \
        --reps 2 --output "$BB_TMP/rec/r.json" > "$out" 2>&1
    bb_expect_rc 3 $? "bbench-transfer with $1 failing on rank $2 exits 3"
    bb_expect_true "bbench-transfer $1: no record and no temporary file" \
        test -z "$(ls -A "$BB_TMP/rec")"
    # Where it was caught (the verdict file survives the abort).
    touch "$BB_TMP/fatal"
    bb_expect_grep "^bbench-transfer: rank $2: fatal: transfer phase: MPI error" \
        "$BB_TMP/fatal" "bbench-transfer $1: caught in the transfer phase on rank $2"
done
# The first MPI_Allreduce is the kernel calibration's, before any phase: the
# verdict says so, so a fault test cannot pass for the wrong reason.
rm -f "$BB_TMP/fatal"
BB_FATAL_VERDICT="$BB_TMP/fatal" bb_preload_fault MPI_Allreduce:1 1 \
    bb_mpirun 2 "$B/bench/bbench-transfer" --bytes 8 --batches 0 --reps 2 > "$out" 2>&1
bb_expect_rc 3 $? "bbench-transfer with its first MPI_Allreduce failing exits 3"
touch "$BB_TMP/fatal"
bb_expect_grep "fatal: MPI_Allreduce of the kernel calibration failed" "$BB_TMP/fatal" \
    "the first MPI_Allreduce fault is caught in the calibration, not in a phase"
bb_finish
