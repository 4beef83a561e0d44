#!/bin/sh
# One-rank API misuse (tests/mpi/test-misuse.c): a singleton launch and 1 to
# 3 ranks.  A rank left waiting by another's local error is a timeout here.
. "$(dirname "$0")/../lib.sh"

BB_TIMEOUT=60
MPIEXEC_TIMEOUT=55
out="$BB_TMP/out"
bb_serial "$B/tests/mpi/test-misuse" > "$out" 2>&1
rc=$?
bb_expect_rc 0 $rc "singleton test-misuse"
[ $rc -eq 0 ] || cat "$out" >&2
bb_expect_grep "misuse on 1 ranks: [0-9]* passed, 0 failed" "$out" "singleton summary"

for np in 1 2 3; do
    bb_mpirun "$np" "$B/tests/mpi/test-misuse" > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "test-misuse at -n $np"
    [ $rc -eq 0 ] || cat "$out" >&2
    bb_expect_grep "misuse on $np ranks: [0-9]* passed, 0 failed" "$out" "-n $np summary"
done
bb_finish
