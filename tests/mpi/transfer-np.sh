# The body of transfer-n3.sh and transfer-n4.sh (sourced, with np set): the
# transfer phase library at np ranks.  On a 2-core machine this
# oversubscribes and each collective costs milliseconds, so the reuse case
# runs 50 tickets here (transfer-lib.sh runs 1000 at 1 and 2 ranks).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
bb_np_test "$np" "$out" "$B/tests/mpi/test-transfer" 50
bb_expect_grep "passed, 0 failed (50 reuse" "$out" "-n $np: 50 tickets on one phase"
bb_finish
