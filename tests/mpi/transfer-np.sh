# The body of transfer-n3.sh and transfer-n4.sh (sourced, with np set): the
# transfer phase library at np ranks.  On a 2-core machine this
# oversubscribes and each collective costs milliseconds, so the reuse case
# runs 50 tickets here (transfer-lib.sh runs 1000 at 1 and 2 ranks).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
bb_mpirun "$np" "$B/tests/mpi/test-transfer" 50 > "$out" 2>&1
rc=$?
bb_expect_rc 0 $rc "test-transfer at -n $np"
[ $rc -eq 0 ] || cat "$out" >&2
bb_expect_grep "on $np ranks: [0-9]* passed, 0 failed (50 reuse" "$out" "-n $np summary"
bb_finish
