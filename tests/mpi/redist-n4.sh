#!/bin/sh
# redist-lib.sh at 4 ranks (oversubscribed on 2 cores: its own script so
# that each stays well under a minute).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
# the lines test-redist moves prints for auto and the plan bytes
bb_redist_auto_lines() {
    bb_expect_grep "^auto threshold: [0-9]* B per run" "$out" "-n $1: the link's threshold"
    bb_expect_grep "^auto random:5->std N=3000: auto: [a-z]*: mean run 24.0 B" "$out" \
        "-n $1: auto on a fragmented pair (24 B runs) says why"
    bb_expect_grep "^auto std->std N=3000: auto: direct: mean run" "$out" \
        "-n $1: auto chooses direct for a contiguous pair"
    bb_expect_grep "^plan bytes, busiest rank: root [0-9]* -> [0-9]*, direct" "$out" \
        "-n $1: plan bytes counted"
    for m in root root-gatherv; do
        bb_expect_grep "^$m: whole array in pieces of 7 doubles, data right" "$out" \
            "-n $1: $m in pieces (as N * components > INT_MAX needs)"
    done
}
bb_mpirun 4 "$B/tests/mpi/test-redist" moves > "$out" 2>&1
rc=$?
bb_expect_rc 0 $rc "test-redist moves at -n 4"
[ $rc -eq 0 ] || cat "$out" >&2
bb_expect_grep "moves on 4 ranks: [0-9]* passed, 0 failed" "$out" "-n 4 summary"
bb_redist_auto_lines 4
bb_finish
