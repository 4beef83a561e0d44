#!/bin/sh
# redist-lib.sh at 4 ranks (oversubscribed on 2 cores: its own script so
# that each stays well under a minute).
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
bb_mpirun 4 "$B/tests/mpi/test-redist" moves > "$out" 2>&1
rc=$?
bb_expect_rc 0 $rc "test-redist moves at -n 4"
[ $rc -eq 0 ] || cat "$out" >&2
bb_expect_grep "moves on 4 ranks: [0-9]* passed, 0 failed" "$out" "-n 4 summary"
bb_finish
