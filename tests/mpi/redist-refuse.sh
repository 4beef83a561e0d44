#!/bin/sh
# Invalid maps (duplicates, gaps, out-of-range indices, another N, a missing
# map, split epochs) and bad contracts are refused on every rank, never a
# hang; the checker fails wrong data.
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
T="$B/tests/mpi/test-redist"

for np in $(bb_ranks 1 2 3 4); do
    inv="$BB_TMP/invalid-$np"
    bb_np_test "$np" "$inv" "$T" invalid
    # every rank printed its own refusal for each bad map and contract
    for kind in "dup (driver" "dup (engine" "gap (driver" "gap (engine" \
                "range (driver" "range (engine" "n (driver" "n (engine" \
                "missing (driver" "missing (engine" validate-dup \
                admission-n admission-cap; do
        got=$(grep -c "refused $kind" "$inv")
        bb_expect_true "-n $np: '$kind' refused on all $np ranks ($got lines)" \
            [ "$got" -eq "$np" ]
    done
    bb_mpirun "$np" "$T" checker > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "test-redist checker at -n $np"
    [ $rc -eq 0 ] || cat "$out" >&2
    bb_expect_grep "checker on $np ranks: [0-9]* passed, 0 failed" "$out" "checker -n $np summary"
done
bb_finish
