#!/bin/sh
# auto's trial at 2, 3 and 4 ranks, intra and MDI, '>' and '<': each rank's
# trial times faked so that its own medians pick another method than the
# MAX over ranks does; every rank must choose the MAX's winner for the same
# reason, in 12 runs when one candidate leads by more than 25 %, else after
# a second round of the close ones (which may overturn round 1's leader),
# every trial execution must move the right data, a refusal must not count,
# and update_maps or a '<' that carries a new engine map must restart the
# trial (test-redist-auto.c).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
T="$B/tests/mpi/test-redist-auto"

for np in $(bb_ranks 2 3 4); do
    bb_np_test "$np" "$out" "$T"
    for mode in intra mdi; do
        bb_expect_grep "^auto $mode > P=$np: every rank chose pack in 12 runs " "$out" \
            "-n $np $mode '>': the MAX's winner (pack), not a rank's own"
        bb_expect_grep "^auto $mode > P=$np after update_maps: every rank chose overlap in 20 runs " "$out" \
            "-n $np $mode: update_maps restarted the trial (pack led round 1, overlap won round 2)"
        bb_expect_grep "^auto $mode < P=$np: every rank chose sparse in 12 runs " "$out" \
            "-n $np $mode '<': the MAX's winner (sparse)"
        bb_expect_grep "^auto $mode < P=$np after the map came: every rank chose direct in 28 runs " "$out" \
            "-n $np $mode: a '<' carrying the map restarted the trial (a tie: all four in round 2, direct)"
    done
done
bb_finish
