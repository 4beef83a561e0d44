#!/bin/sh
# Fault injection: a failing MPI call in a message poisons the plan (retained,
# later calls refused); bbench-redist aborts the job with exit 3 and leaves
# no record.
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"

poison() {
    np=$1 method=$2 call=$3 frank=$4
    rm -f "$BB_TMP/verdict"
    bb_preload_fault "$call" "$frank" \
        bb_mpirun "$np" "$B/tests/mpi/test-redist" poison "$method" "$BB_TMP/verdict" \
        > "$out" 2>&1
    rc=$?
    if [ "$rc" -ne 3 ] && [ "$np" -eq 1 ]; then
        # Under load Hydra has reported 1 for a singleton's MPI_Abort(3) (twice
        # in CI-style runs, never in 20 quiet ones): say so, and try once more.
        echo "note: -n 1 abort reported as exit $rc by the launcher; once more:"
        sed 's/^/    /' "$out"
        rm -f "$BB_TMP/verdict"
        bb_preload_fault "$call" "$frank" \
            bb_mpirun "$np" "$B/tests/mpi/test-redist" poison "$method" "$BB_TMP/verdict" \
            > "$out" 2>&1
        rc=$?
    fi
    bb_expect_rc 3 $rc "-n $np: $method with $call failing on rank $frank: aborted with 3"
    touch "$BB_TMP/verdict"
    bb_expect_grep "rank $frank: poison: [0-9]* passed, 0 failed" "$BB_TMP/verdict" \
        "-n $np: $method $call: poisoned, retained, later calls refused"
}
# the first Alltoallw is the message's (plan building uses Alltoall/Alltoallv)
poison 2 direct MPI_Alltoallw:1 1
poison 3 two-step MPI_Alltoallw:1 2
poison 2 sparse MPI_Isend:1 0
poison 2 overlap MPI_Isend:1 0
poison 1 direct MPI_Alltoallw:1 0

# bbench-redist: fatal exit 3, no record and no temporary file.  (The fatal
# message is not checked: the abort can end the launcher before it relays it.)
mkdir -p "$BB_TMP/rec"
for spec in "direct MPI_Alltoallw:2" "sparse MPI_Irecv:1"; do
    set -- $spec
    rm -f "$BB_TMP/fatal"
    BB_FATAL_VERDICT="$BB_TMP/fatal" bb_preload_fault "$2" 1 \
        bb_mpirun 2 "$B/bench/bbench-redist" --elements 100 --methods "$1" --reps 2 \
        --output "$BB_TMP/rec/r.json" > "$out" 2>&1
    bb_expect_rc 3 $? "bbench-redist $1 with $2 failing on rank 1 exits 3"
    bb_expect_true "bbench-redist $1 $2: no record and no temporary file" \
        test -z "$(ls -A "$BB_TMP/rec")"
    touch "$BB_TMP/fatal"
    bb_expect_grep "^bbench-redist: rank 1: fatal: $1 [<>]: MPI error" "$BB_TMP/fatal" \
        "bbench-redist $1 $2: caught in the $1 message"
done
bb_finish
