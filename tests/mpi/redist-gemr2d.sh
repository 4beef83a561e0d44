#!/bin/sh
# ScaLAPACK's own GEMR2D test cases (tests/data/gemr2d.dat, 90 lines of
# REDIST/TESTING/GEMR2D.dat) through bbench-redist --cases at -n 4: grids of
# 1 to 4 ranks, so the 3-rank grids run as a grid smaller than the code.
# Every message is checked slot by slot by the program, which exits 1 on a
# wrong value (shown once by a planted corruption, for a method and for
# ScaLAPACK).  Exit 77 with configure's reason without ScaLAPACK.
#
# Time: at -n 4 on 2 cores every collective waits for a descheduled rank
# (milliseconds each under load), and a case costs about a second per
# method.  So by default each method (the library's nine and scalapack) runs
# its share of every BB_GEMR2D_STRIDE-th case (9: 10 cases of 200 to 1000,
# in rotation: each method one case, every grid shape, 7 of them a 3-rank
# grid in the 4-rank code), with 3
# samples of one call, no warm-up and no bound probe (--no-bound): nothing
# but the plans, the messages and their checks.  BB_GEMR2D_STRIDE=1 runs
# every case once (each by one method in turn); BB_GEMR2D_ALL=1 runs every
# selected case with every method and scalapack (minutes at -n 4).
BB_FULL_ONLY=yes  # every launch over the cores: make check-full
BB_TIMEOUT="${BB_TIMEOUT:-120}"
. "$(dirname "$0")/../lib.sh"

X="$B/bench/bbench-redist"
D="$S/tests/data/gemr2d.dat"
out="$BB_TMP/out" err="$BB_TMP/err"
bb_skip_without_scalapack "$out"
quick="-e 8 --no-bound --reps 1 --warmup 0 --warmup-blocks 0 -q"

# The data file: 90 cases of 22 integers, all whole square matrices.
n=$(grep -v '^#' "$D" | awk 'NF == 22' | wc -l)
bb_expect_true "gemr2d.dat holds 90 cases of 22 integers ($n)" [ "$n" -eq 90 ]

# A malformed file is a usage error on every rank, said once.
printf '# a comment\n200 200 200\n' > "$BB_TMP/bad.dat"
bb_mpirun 2 "$X" --cases "$BB_TMP/bad.dat" > "$out" 2> "$err"
bb_expect_rc 2 $? "--cases with a 3-integer line"
bb_expect_grep "bad.dat:2: 3 integers where a case has 22" "$err" "it names the line"
n=$(grep -c "integers where a case has" "$err")
bb_expect_true "only rank 0 prints it ($n lines)" [ "$n" -eq 1 ]
bb_mpirun 2 "$X" --cases "$BB_TMP/nowhere.dat" > "$out" 2> "$err"
bb_expect_rc 2 $? "--cases with no such file"
bb_mpirun 2 "$X" --cases "$D" --from std > "$out" 2> "$err"
bb_expect_rc 2 $? "--cases with --from"
# no case of the file fits 2 ranks: a usage error naming a skipped case
bb_mpirun 2 "$X" --cases "$D" $quick > "$out" 2> "$err"
bb_expect_rc 2 $? "--cases where no case fits the launch"
bb_expect_grep "no case of .* runs on 2 ranks (90 skipped, the first: .*needs 4 ranks" "$err" \
    "it says why"

# The cases selected, in rotation over the methods: method i runs the
# selected cases j with j % 10 == i.
stride=${BB_GEMR2D_STRIDE:-9}
methods="root root-gatherv two-step direct pack sparse pack-mpi overlap auto scalapack"
grep -v '^#' "$D" | awk -v s="$stride" 'NF == 22 && (k++ % s) == 0' > "$BB_TMP/sel.dat"
nsel=$(wc -l < "$BB_TMP/sel.dat")
run_cases() { # FILE METHODS WHAT: every case exact, every line measured
    file=$1 meth=$2 what=$3
    bb_mpirun 4 "$X" --cases "$file" --methods "$meth" $quick > "$out" 2> "$err"
    rc=$?
    bb_expect_rc 0 $rc "$what"
    [ $rc -eq 0 ] || head -n 20 "$err" >&2
    cases=$(grep -c . "$file")
    rows=$(grep -c "^ *[0-9][0-9]* *> *bc2d:.* \(ok\|fastest\|reference\)$" "$out")
    want=$cases
    [ "$meth" = all ] && want=$((cases * 10))
    bb_expect_true "$what: $want lines measured, none wrong or not measured ($rows)" \
        [ "$rows" -eq "$want" ]
}
if [ "${BB_GEMR2D_ALL:-0}" = 1 ]; then
    run_cases "$BB_TMP/sel.dat" all "$nsel cases, every method and scalapack"
else
    i=0 ran=0
    for m in $methods; do
        awk -v i=$i '(NR - 1) % 10 == i' "$BB_TMP/sel.dat" > "$BB_TMP/m.dat"
        if [ -s "$BB_TMP/m.dat" ]; then
            run_cases "$BB_TMP/m.dat" "$m" "$m on $(grep -c . "$BB_TMP/m.dat") of the $nsel cases"
            ran=$((ran + 1))
        fi
        i=$((i + 1))
    done
    # every line ran (a stride above 9 leaves some out: said, not failed)
    bb_expect_true "$ran of the 10 lines ran ($nsel cases)" [ "$ran" -eq 10 -o "$nsel" -lt 10 ]
fi

# The check fails the run: one value changed after a message, as if wrong
# in transit (the program's test hook), on a 3-rank grid in the 4-rank code.
grep -v '^#' "$D" | awk '$9 * $10 == 3 || $19 * $20 == 3' | head -n 1 > "$BB_TMP/one.dat"
for m in pack scalapack; do
    BB_REDIST_TEST_CORRUPT=$m bb_mpirun 4 "$X" --cases "$BB_TMP/one.dat" --methods "$m" \
        $quick > "$out" 2> "$err"
    bb_expect_rc 1 $? "a planted wrong value in $m's message"
    bb_expect_grep " $m .* wrong-data$" "$out" "$m's line says wrong-data"
done
bb_finish
