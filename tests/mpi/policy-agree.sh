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
for what in "create sum" "create transfer" "create agreement" "calls sum" "calls transfer"; do
    for np in 1 2 3 4; do
        # shellcheck disable=SC2086
        bb_mpirun "$np" "$B/tests/mpi/test-policy-agree" $what > "$out" 2>&1
        rc=$?
        bb_expect_rc 0 $rc "test-policy-agree $what at -n $np"
        [ $rc -eq 0 ] || head -n 40 "$out" >&2
        bb_expect_grep "$what on $np ranks: [1-9][0-9]* passed, 0 failed" "$out" \
            "$what -n $np summary"
    done
done
bb_finish
