#!/bin/sh
# bc2d submatrices (layout.h: bc2d:ROWS,...@IA,JA,M,N): the m x n part at
# (IA, JA) of an M x N block-cyclic matrix, through bbench-redist at -n 3
# and -n 4 with pack, overlap and scalapack (Cpdgemr2d on the whole
# matrices' local arrays: the program checks every submatrix slot and that
# B's other slots are untouched, and exits 1 on a wrong value); the same
# from a --cases file of submatrix lines (tests/data/gemr2d-sub.dat); bad
# submatrices are usage errors.  Exit 77 with configure's reason without
# ScaLAPACK.
BB_FULL_ONLY=yes  # every launch over the cores: make check-full
BB_TIMEOUT="${BB_TIMEOUT:-120}"
. "$(dirname "$0")/../lib.sh"

X="$B/bench/bbench-redist"
D="$S/tests/data/gemr2d-sub.dat"
out="$BB_TMP/out" err="$BB_TMP/err"
bb_skip_without_scalapack "$out"
quick="--methods pack,overlap,scalapack --no-bound -s 3 --reps 1 --warmup 0 --warmup-blocks 0 -q"

# Usage errors, on every rank alike (said once): a submatrix leaving its
# matrix, at parse and for the N given; a malformed suffix.
bb_mpirun 2 "$X" --link intra --from 'bc2d:5,2,3,1,2,0,1@6,2,9,11' --to std --elements 30 \
    $quick > "$out" 2> "$err"
bb_expect_rc 2 $? "a submatrix below its matrix"
bb_expect_grep "the submatrix at (IA, JA) = (6, 2) leaves the 9 x 11 matrix" "$err" \
    "it names the corner and the matrix"
n=$(grep -c "leaves the" "$err")
bb_expect_true "only rank 0 prints it ($n lines)" [ "$n" -eq 1 ]
bb_mpirun 2 "$X" --link intra --from 'bc2d:5,2,3,1,2,0,1@3,2,9,11' --to std --elements 55 \
    $quick > "$out" 2> "$err"
bb_expect_rc 2 $? "N puts the submatrix's columns past the matrix"
bb_expect_grep "the 5 x 11 submatrix at (3, 2) leaves the 9 x 11 matrix (at most 50 elements)" \
    "$err" "it says the most that fit"
bb_mpirun 2 "$X" --link intra --from 'bc2d:5,2,3,1,2,0,1@3,2,9' --to std --elements 30 \
    $quick > "$out" 2> "$err"
bb_expect_rc 2 $? "a submatrix of three numbers"
bb_expect_grep "a bc2d submatrix is @IA,JA,M,N" "$err" "it gives the syntax"

# Four submatrix pairs, both commands: different M x N each side, corners
# off (1, 1), sources off (0, 0), grids smaller than the code (2 x 1, 1 x 1,
# 1 x 3 at -n 4), a whole matrix to a submatrix with 16-byte elements, MDI.
run() { # NP LINK FROM TO N EB WHAT
    bb_mpirun "$1" "$X" --link "$2" --from "$3" --to "$4" --elements "$5" -e "$6" $quick \
        > "$out" 2> "$err"
    rc=$?
    bb_expect_rc 0 $rc "-n $1 $7"
    [ $rc -eq 0 ] || head -n 20 "$err" >&2
    rows=$(grep -c "^ *$5 *[<>] *bc2d:.* \(pack\|overlap\|scalapack\) .* \(ok\|fastest\|reference\)$" "$out")
    bb_expect_true "-n $1 $7: 6 lines measured exact ($rows)" [ "$rows" -eq 6 ]
}
for np in 3 4; do
    run $np intra 'bc2d:5,2,3,1,3,0,1@3,2,9,11' 'bc2d:5,3,2,2,1,1,0@2,4,7,10' 30 8 \
        "5 x 6 at (3, 2) of 9 x 11 to (2, 4) of 7 x 10"
    run $np intra 'bc2d:7,3,2,2,1,1,0@4,5,12,9' 'bc2d:7,2,4,1,2,0,1@1,3,7,8' 28 24 \
        "7 x 4 at (4, 5) of 12 x 9 to (1, 3) of 7 x 8"
    run $np mdi 'bc2d:4,2,2,1,1@2,3,6,8' 'bc2d:4,1,3,2,1,1,0@3,1,8,5' 20 8 \
        "MDI: 4 x 5 at (2, 3) of 6 x 8 to (3, 1) of 8 x 5"
    run $np intra 'bc2d:6,2,2' 'bc2d:6,4,3,1,2,0,1@2,2,10,9' 30 16 \
        "a whole 6 x 5 matrix to (2, 2) of 10 x 9"
done

# --cases: submatrix lines run (none skipped), each exact
for np in 3 4; do
    bb_mpirun $np "$X" --cases "$D" $quick > "$out" 2> "$err"
    rc=$?
    bb_expect_rc 0 $rc "-n $np --cases gemr2d-sub.dat"
    [ $rc -eq 0 ] || head -n 20 "$err" >&2
    cases=$(grep -v '^#' "$D" | grep -c .)
    rows=$(grep -c "^ *[0-9][0-9]* *> *bc2d:.* \(ok\|fastest\|reference\)$" "$out")
    bb_expect_true "-n $np: $cases cases x 3 lines measured exact ($rows)" \
        [ "$rows" -eq $((cases * 3)) ]
    bb_expect_grep "^# cases: $cases of .*gemr2d-sub.dat.*; 0 skipped" "$out" "-n $np: none skipped"
done
bb_finish
