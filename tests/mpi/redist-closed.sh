#!/bin/sh
# Closed-form plans between regular maps against today's per-element plans
# on real MPI (identical peers, counts, slot lists, runs, datatypes), as a
# singleton and at 2, 3 and 4 ranks (tests/mpi/test-redist-closed.c; the
# MPI-free grid of every (rank, peer) pair is tests/unit/test-redist-closed).
# each -n builds about 500 plan pairs, collectives each: allow for load
BB_TIMEOUT="${BB_TIMEOUT:-240}"
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
for np in $(bb_ranks 0 2 3 4); do
    bb_np_test "$np" "$out" "$B/tests/mpi/test-redist-closed"
done
bb_finish
