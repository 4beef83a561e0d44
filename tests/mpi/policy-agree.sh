#!/bin/sh
# Policies agreed at creation (issue 23) and no collective left out of step
# (issue 28), at -n 1 to 4: pairs of differing policies of the sum phase,
# the transfer phase and the agreement objects are BB_REFUSED on every rank
# with the same cause naming the attributes, never a hang; after every
# creation and every refused or failed call of every agreed policy, the
# application's own MPI_Allreduce is exact.  A hang is a failure (timeout).
# Many small collectives at -n 4 on two shared cores: a longer timeout than
# the default (still a timeout: a hang fails).
BB_TIMEOUT=${BB_TIMEOUT:-300}
. "$(dirname "$0")/../lib.sh"
out="$BB_TMP/out"
# agree WHAT NP: test-policy-agree WHAT on NP ranks, two checks.
agree() {
    # shellcheck disable=SC2086
    bb_mpirun "$2" "$B/tests/mpi/test-policy-agree" $1 > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "test-policy-agree $1 at -n $2"
    [ $rc -eq 0 ] || head -n 40 "$out" >&2
    bb_expect_grep "$1 on $2 ranks: [1-9][0-9]* passed, 0 failed" "$out" "$1 -n $2 summary"
}
for what in "create sum" "create transfer" "create agreement" "calls sum" "calls transfer"; do
    for np in $(bb_ranks 1 2 3 4); do
        agree "$what" "$np"
    done
done
# every tier (policy agreement): the agreement objects' policies over the
# cores, non-power-of-two (the full tier ran it in the loop above)
[ "$BB_TIER" = full ] || agree "create agreement" 3
bb_finish
