#!/bin/sh
# One-rank API misuse (tests/mpi/test-misuse.c): a singleton launch and 1 to
# 3 ranks.  A rank left waiting by another's local error is a timeout here.
. "$(dirname "$0")/../lib.sh"

BB_TIMEOUT=60
MPIEXEC_TIMEOUT=55
out="$BB_TMP/out"
for np in $(bb_ranks 0 1 2 3); do
    bb_np_test "$np" "$out" "$B/tests/mpi/test-misuse"
done
bb_finish
