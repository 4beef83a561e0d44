#!/bin/sh
# A map update protocol: after the engine changes its map, '>' falls back to
# two steps (receive in the layout the driver knows, convert inside the
# engine) until the maps are updated; '<' carries the map (recv_dist = MAP).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
T="$B/tests/mpi/test-redist"

for np in 1 2 3 4; do
    bb_mpirun "$np" "$T" epoch > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "test-redist epoch at -n $np"
    [ $rc -eq 0 ] || cat "$out" >&2
    bb_expect_grep "epoch on $np ranks: [0-9]* passed, 0 failed" "$out" "epoch -n $np summary"
    for m in direct pack sparse pack-mpi auto; do
        bb_expect_grep "epoch $m >: epoch mismatch fell back to two steps, data right" "$out" \
            "-n $np: $m falls back to two steps on an epoch mismatch"
    done
done
bb_finish
