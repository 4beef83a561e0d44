#!/bin/sh
# scripts/bbench-plot on stored records: non-empty PNG files (checked by
# their signature), a skip message for absent benchmarks, and usage errors.
# No MPI.
. "$(dirname "$0")/../lib.sh"

PL="$S/scripts/bbench-plot"
D="$S/tests/tools/data"
P="$BB_TMP/png"
out="$BB_TMP/out"
err="$BB_TMP/err"
export BBENCH_COMPARE="$B/bench/bbench-compare"

# is_png FILE: non-empty and starts with the 8-byte PNG signature.
is_png() {
    [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}

mkdir "$BB_TMP/recs"
cp "$D/base.json" "$BB_TMP/recs/sum-n2.json"
cp "$D/other-ranks.json" "$BB_TMP/recs/sum-n4.json"
sh "$PL" --out "$P" "$BB_TMP/recs" >"$out" 2>"$err"
bb_expect_rc 0 $? "plot of sum records"
bb_expect_true "sum.png is a PNG" is_png "$P/sum.png"
# Two modes x two rank counts: four lines.
bb_expect_grep 'wrote .*sum.png (4 series)' "$err" "one line per mode and rank count"
bb_expect_grep 'no transfer points' "$err" "absent benchmark skipped with a message"

# A plot spec of the user's: transfer time against bytes, here from a
# hand-made transfer record derived from the sum fixture.
sed -e 's/"benchmark": "sum"/"benchmark": "transfer"/' -e 's/"count":/"bytes":/g' \
    "$D/base.json" >"$BB_TMP/transfer.json"
sh "$PL" --out "$P" "$BB_TMP/transfer.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "plot of a transfer record"
bb_expect_true "transfer.png is a PNG" is_png "$P/transfer.png"
sh "$PL" --out "$P" --plot 'sum:count:phase.admission::lin:' "$D/base.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "--plot replaces the sum plot"
bb_expect_grep 'wrote .*sum.png (1 series)' "$err" "only protocol points have admission times"

sh "$PL" --out "$P" "$D/malformed.json" >"$out" 2>"$err"
bb_expect_rc 2 $? "unreadable record"
bb_expect_grep 'malformed.json' "$err" "unreadable record named"
sh "$PL" --out "$P" >"$out" 2>"$err"
bb_expect_rc 2 $? "no records"
sh "$PL" --bogus x >"$out" 2>"$err"
bb_expect_rc 2 $? "unknown option"

bb_finish
