#!/bin/sh
# A map update protocol: after the engine changes its map, '>' falls back to
# two steps (receive in the layout the driver knows, convert inside the
# engine) until the maps are updated; '<' carries the map (recv_dist = MAP).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
T="$B/tests/mpi/test-redist"

for np in $(bb_ranks 1 2 3 4); do
    bb_np_test "$np" "$out" "$T" epoch
    for m in direct pack sparse pack-mpi overlap auto; do
        bb_expect_grep "epoch $m >: epoch mismatch fell back to two steps, data right" "$out" \
            "-n $np: $m falls back to two steps on an epoch mismatch"
    done
done
bb_finish
