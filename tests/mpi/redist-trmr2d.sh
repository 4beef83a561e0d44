#!/bin/sh
# ScaLAPACK's own TRMR2D test cases (tests/data/trmr2d.dat, the 10 cases
# pdtrmrdrv.c reads from REDIST/TESTING/TRMR2D.dat): trapezoids (upper and
# lower, unit and not, m != n) of submatrices off the origin, grids of 1 to
# 4 ranks, through bbench-redist --cases at -n 4.  Each case by one of the
# library's nine methods in rotation and by scalapack (Cpdtrmr2d on the whole
# matrices' local arrays), each exact: the program checks every slot of the
# trapezoid and that ScaLAPACK left the rest of B alone, and exits 1 on a
# wrong value (shown once by a planted corruption).  A trapezoid layout whose
# --elements is not its count is a usage error naming the count.  Exit 77
# with configure's reason without ScaLAPACK.
BB_FULL_ONLY=yes  # every launch over the cores: make check-full
BB_TIMEOUT="${BB_TIMEOUT:-120}"
. "$(dirname "$0")/../lib.sh"

X="$B/bench/bbench-redist"
D="$S/tests/data/trmr2d.dat"
out="$BB_TMP/out" err="$BB_TMP/err"
bb_skip_without_scalapack "$out"
quick="-e 8 --no-bound -s 3 --reps 1 --warmup 0 --warmup-blocks 0 -q"

# The data file: 10 cases of 24 integers, each UPLO and DIAG pair present.
n=$(grep -v '^#' "$D" | awk 'NF == 24' | wc -l)
bb_expect_true "trmr2d.dat holds 10 cases of 24 integers ($n)" [ "$n" -eq 10 ]
for ud in "1 0" "1 1" "0 0" "0 1"; do
    bb_expect_true "a case with UPLO DIAG = $ud" grep -q " $ud\$" "$D"
done

# --elements must be the trapezoid's count (a 6 x 4 upper off a 9 x 11
# matrix, its diagonal running into the bottom-right corner: 18)
bb_mpirun 2 "$X" --link intra --from 'bc2d:6,2,2,1,2,0,1@2,3,9,11,U,N,4' --to std \
    --elements 20 $quick > "$out" 2> "$err"
bb_expect_rc 2 $? "a trapezoid with the wrong --elements"
bb_expect_grep "holds 18 elements (its trapezoid), not N = 20: give --elements 18" "$err" \
    "it states the count"
n=$(grep -c "give --elements" "$err")
bb_expect_true "only rank 0 prints it ($n lines)" [ "$n" -eq 1 ]

# Every case, each by a method in rotation (case i by method i % 9) and by
# scalapack.
methods="root root-gatherv two-step direct pack sparse pack-mpi overlap auto"
grep -v '^#' "$D" | awk 'NF == 24' > "$BB_TMP/all.dat"
i=0 total=0
for m in $methods; do
    awk -v i=$i '(NR - 1) % 9 == i' "$BB_TMP/all.dat" > "$BB_TMP/m.dat"
    i=$((i + 1))
    [ -s "$BB_TMP/m.dat" ] || continue
    cases=$(grep -c . "$BB_TMP/m.dat")
    bb_mpirun 4 "$X" --cases "$BB_TMP/m.dat" --methods "$m,scalapack" $quick \
        > "$out" 2> "$err"
    rc=$?
    bb_expect_rc 0 $rc "$m and scalapack on $cases case(s)"
    [ $rc -eq 0 ] || head -n 20 "$err" >&2
    rows=$(grep -c "^ *[0-9][0-9]* *> *bc2d:.* \(ok\|fastest\|reference\)$" "$out")
    bb_expect_true "$m: $((cases * 2)) lines measured exact ($rows)" [ "$rows" -eq $((cases * 2)) ]
    total=$((total + cases))
done
bb_expect_true "every case ran ($total)" [ "$total" -eq 10 ]

# The check fails the run: a value changed after scalapack's message, on a
# lower unit trapezoid of a 2 x 1 grid.
grep " 0 1\$" "$BB_TMP/all.dat" | head -n 1 > "$BB_TMP/one.dat"
BB_REDIST_TEST_CORRUPT=scalapack bb_mpirun 4 "$X" --cases "$BB_TMP/one.dat" \
    --methods pack,scalapack $quick > "$out" 2> "$err"
bb_expect_rc 1 $? "a planted wrong value in scalapack's message"
bb_expect_grep " scalapack .* wrong-data$" "$out" "scalapack's line says wrong-data"
bb_expect_grep " pack .* \(ok\|fastest\)$" "$out" "pack's line is still right"
bb_finish
