#!/bin/sh
# The ScaLAPACK reference redistribution (harness/redist-scalapack.c) on real
# MPI as a singleton and at 2 and 3 ranks (4: redist-scalapack-n4.sh): its
# data checked slot by slot against bbench's maps, intra and MDI; the
# layouts it cannot express refused alike with a reason; BLACS ended and
# restarted with MPI running; the checker fails wrong data.  Exit 77 with configure's reason when
# ScaLAPACK is not configured.
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
T="$B/tests/mpi/test-redist-scalapack"
bb_serial "$T" available > "$out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
    cat "$out"
    exit 77
fi
bb_expect_rc 0 $rc "built with ScaLAPACK: $(cat "$out")"

for np in ${nps:-0 2 3}; do
    bb_np_test "$np" "$out" "$T" all
    r=$np
    [ "$np" -eq 0 ] && r=1
    bb_expect_grep "^moves: 3 layout pairs, both commands, intra and $((r - 1)) MDI splits" \
        "$out" "-n $r: every pair, command and split moved"
    bb_expect_grep "^refused random -> cyclic N=1000 on $r ranks: cannot express the driver's layout" \
        "$out" "-n $r: random refused with a reason"
    bb_expect_grep "checker, one wrong: slot" "$out" "-n $r: the checker fails one wrong double"
done
bb_finish
