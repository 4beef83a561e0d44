#!/bin/sh
# Redistribution on real MPI: every method x layout pairs x both commands
# moves the right data, in MDI mode and intra mode (one code, two layouts),
# as a singleton and at 2 and 3 ranks (4 ranks: redist-n4.sh); auto runs its
# trial and chooses alike on every rank (redist-auto.sh: which one); plan
# bytes are counted; overlap's traffic is counted as sparse's.
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
T="$B/tests/mpi/test-redist"
# the lines test-redist moves prints for auto and the plan bytes
bb_redist_auto_lines() {
    bb_expect_grep "^auto threshold: 0 (not calibrated" "$out" "-n $1: the link calibrates nothing"
    for pair in "random:5->std" "std->std"; do
        bb_expect_grep "^auto $pair N=3000: auto: [a-z]*: least trial median" "$out" \
            "-n $1: auto's trial on $pair decided and says why"
    done
    bb_expect_grep "^plan bytes, busiest rank: root [0-9]* -> [0-9]*, direct" "$out" \
        "-n $1: plan bytes counted"
    for pair in "block-cyclic:64->block-cyclic:1000 >" "random:5->cyclic <"; do
        bb_expect_grep "^overlap traffic as sparse's: $pair N=3000 moved" "$out" \
            "-n $1: overlap's messages and bytes counted as sparse's ($pair)"
    done
    for m in root root-gatherv; do
        bb_expect_grep "^$m: whole array in pieces of 7 doubles, data right" "$out" \
            "-n $1: $m in pieces (as N * components > INT_MAX needs)"
    done
}

# redist-n4.sh sets nps and sources this file.
for np in ${nps:-$(bb_ranks 0 2 3)}; do
    bb_np_test "$np" "$out" "$T" moves
    bb_redist_auto_lines "$np"
done
bb_finish
