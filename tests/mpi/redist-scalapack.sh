#!/bin/sh
# The ScaLAPACK reference redistribution (bench/redist/scalapack.c) on real
# MPI as a singleton and at 2 and 3 ranks (4: redist-scalapack-n4.sh): its
# data checked slot by slot against bbench's maps, intra and MDI; the
# layouts it cannot express refused alike with a reason; BLACS ended and
# restarted with MPI running; the checker fails wrong data; and bbench-redist's
# scalapack line at every size, intra and MDI; bc2d (2D block-cyclic matrices)
# against ScaLAPACK's own index functions and moved by it.  Exit 77 with configure's reason when
# ScaLAPACK is not configured.
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out" err="$BB_TMP/err"
X="$B/bench/bbench-redist"
T="$B/tests/mpi/test-redist-scalapack"
bb_skip_without_scalapack "$out"

for np in ${nps:-$(bb_ranks 0 2 3)}; do
    bb_np_test "$np" "$out" "$T" all
    r=$np
    [ "$np" -eq 0 ] && r=1
    bb_expect_grep "^moves: 3 layout pairs and 4 of bc2d, both commands, intra and $((r - 1)) MDI splits" \
        "$out" "-n $r: every pair, command and split moved"
    bb_expect_grep "^index: 3264 bc2d shapes, [0-9]* slots against numroc_, indxl2g_" "$out" \
        "-n $r: bc2d against ScaLAPACK's index functions"
    bb_expect_grep "^refused random -> cyclic N=1000 on $r ranks: cannot express the driver's layout" \
        "$out" "-n $r: random refused with a reason"
    bb_expect_grep "checker, one wrong: slot" "$out" "-n $r: the checker fails one wrong double"
    # bbench-redist's own scalapack line at this size between two grids of a
    # 6-row matrix, in the same interleaved set as a method, every message
    # checked slot by slot by the program
    links=intra
    [ "$r" -ge 2 ] && links="intra mdi"
    for link in $links; do
        rec="$BB_TMP/sc-$r-$link.json"
        set -- "$X" --link "$link" --from bc2d:6,2,3 --to bc2d:6,4,1 --elements 600 \
            --element-bytes 16 --methods overlap,scalapack --reps 1 --warmup 0 \
            --warmup-blocks 0 -o "$rec"
        if [ "$np" -eq 0 ]; then bb_serial "$@"; else bb_mpirun "$np" "$@"; fi > "$out" 2> "$err"
        rc=$?
        bb_expect_rc 0 $rc "bbench-redist scalapack at -n $r $link"
        [ $rc -eq 0 ] || head -n 20 "$err" >&2
        for d in '>' '<'; do
            bb_expect_grep "^ *600 *$d *bc2d:6,2,3 *bc2d:6,4,1 *scalapack .* reference$" \
                "$out" "-n $r $link: scalapack's line '$d'"
        done
        bb_expect_true "-n $r $link: two scalapack record points, no wrong message" \
            test "$(grep -c '"method": *"scalapack"' "$rec")" -eq 2 -a \
            "$(grep -c 'wrong-data$' "$out")" -eq 0
    done
    # grids smaller than their side (a context over the side's first ranks,
    # the others holding nothing): intra, and MDI where a side has 2 ranks
    [ "$r" -ge 3 ] || continue
    for link in intra mdi; do
        bb_mpirun "$np" "$X" --link "$link" --from bc2d:6,2,3,1,1 --to "bc2d:6,4,1,$((r - 2)),1" \
            --elements 600 --element-bytes 16 --methods overlap,scalapack --no-bound --reps 1 \
            --warmup 0 --warmup-blocks 0 > "$out" 2> "$err"
        rc=$?
        bb_expect_rc 0 $rc "-n $r $link: bc2d grids smaller than their side"
        [ $rc -eq 0 ] || head -n 20 "$err" >&2
        bb_expect_true "-n $r $link: smaller grids, overlap and scalapack both ways, none wrong" \
            test "$(grep -c '^ *600 *[<>] *bc2d:6,2,3,1,1 .* \(scalapack .* reference\|overlap .* \(ok\|fastest\)\)$' "$out")" -eq 4
    done
done
bb_finish
