#!/bin/sh
# Transport errors poison the transfer phase: the failing rank sees
# BB_ERR_MPI at stage transport, every later call is refused without MPI,
# and the job ends with MPI_Abort (exit 3).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
# call:N rank: the payload Isend and Wait on the source, the payload Irecv
# on the destination, the status agreement (third Allreduce) anywhere.
for spec in "MPI_Isend:1 0" "MPI_Wait:1 0" "MPI_Irecv:1 1" "MPI_Allreduce:3 1"; do
    set -- $spec
    BB_FAULT=$1 BB_FAULT_RANK=$2 bb_mpirun 2 "$B/tests/mpi/test-transfer" poison > "$out" 2>&1
    bb_expect_rc 3 $? "test-transfer poison, $1 on rank $2"
    bb_expect_grep "rank $2: poisoned at stage transport: checks passed" "$out" \
        "$1 on rank $2: poisoned and retained"
done
bb_finish
