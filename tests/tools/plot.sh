#!/bin/sh
# tools/bbench-plot on stored records: non-empty PNG files (checked by
# their signature), and in the gnuplot scripts it writes (--script): legend
# entries in numeric order with one colour per rank count, at most 8 per
# panel, binary size ticks, a log2 batches axis, the protocol/raw ratio,
# redist split by direction, the revision and oversubscription in the title.
# A skip message for absent benchmarks, usage errors, --version; without
# gnuplot the script exits 77 and so does this test (a skip).  No MPI.
. "$(dirname "$0")/../lib.sh"

PL="$S/tools/bbench-plot"
SW="$S/tools/bbench-sweep"
D="$S/tests/tools/data"
R="$S/results"
P="$BB_TMP/png"
G="$BB_TMP/gp"
out="$BB_TMP/out"
err="$BB_TMP/err"
export BBENCH_COMPARE="$B/bench/bbench-compare"

# is_png FILE: non-empty and starts with the 8-byte PNG signature.
is_png() {
    [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}
# titles GP: the legend entries of each plot command, one line per panel,
# entries separated by '|'.
titles() {
    grep '^plot ' "$1" | while IFS= read -r l; do
        printf '%s\n' "$l" | grep -o "title '[^']*'" | sed -e "s/^title '//" -e "s/'\$/|/" | tr -d '\n'
        echo
    done
}
# most_entries GP: the largest number of legend entries of one panel.
most_entries() {
    grep '^plot ' "$1" | awk '{ n = gsub(/ title /, ""); if (n > m) m = n } END { print m + 0 }'
}

# --version: the package version configure gave the programs.
want="$("$BBENCH_COMPARE" --version | sed -n '1s/.* //p')"
bb_expect_true "bbench-plot --version says $want" \
    test "$(sh "$PL" --version)" = "bbench-plot (bbench) $want"
bb_expect_true "bbench-sweep --version says $want" \
    test "$(sh "$SW" --version)" = "bbench-sweep (bbench) $want"

# No gnuplot: exit 77 with a message, nothing drawn.
GNUPLOT="$BB_TMP/no-such-gnuplot" sh "$PL" --out "$BB_TMP/none" "$D/base.json" >"$out" 2>"$err"
bb_expect_rc 77 $? "no gnuplot: exit 77"
bb_expect_grep 'gnuplot not found' "$err" "no gnuplot: said so"
bb_expect_true "no gnuplot: no PNG" test ! -e "$BB_TMP/none/sum.png"
if ! command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    echo "SKIP: gnuplot not found; the plots are not drawn"
    # A failed check above still fails; otherwise the rest is skipped.
    bb_finish || exit 1
    exit 77
fi

# sum at 2, 4 and 16 ranks (the 16 made from the 2): legend in numeric
# order (text order would put 16 first), protocol and raw of one rank
# count in one colour, solid and dashed; sizes as 64K, not 65536.
mkdir "$BB_TMP/recs"
cp "$D/base.json" "$BB_TMP/recs/sum-n2.json"
cp "$D/other-ranks.json" "$BB_TMP/recs/sum-n4.json"
sed -e 's/"ranks": 2,/"ranks": 16,/' "$D/base.json" >"$BB_TMP/recs/sum-n16.json"
sed -i -e 's/"count": 8,/"count": 65536,/' -e 's/"max_elements": 8,/"max_elements": 65536,/' "$BB_TMP"/recs/*.json
sh "$PL" --out "$P" --script "$G" "$BB_TMP/recs" >"$out" 2>"$err"
bb_expect_rc 0 $? "plot of sum records"
bb_expect_true "sum.png is a PNG" is_png "$P/sum.png"
# Two modes x three rank counts: six lines.
bb_expect_grep 'wrote .*sum.png (6 series, 1 panel' "$err" "one line per mode and rank count"
bb_expect_grep 'no transfer points' "$err" "absent benchmark skipped with a message"
titles "$G/sum.gp" >"$BB_TMP/t"
bb_expect_true "sum legend: numeric order, mode after rank count" test "$(sed -n 1p "$BB_TMP/t")" = \
    "n=2 protocol|n=2 raw|n=4 protocol|n=4 raw|n=16 protocol|n=16 raw|"
bb_expect_true "sum ratio panel: one line per rank count" test "$(sed -n 2p "$BB_TMP/t")" = \
    "n=2|n=4|n=16|"
colours() { grep '^plot ' "$G/sum.gp" | head -n 1 | grep -o "lc rgb '#[0-9a-f]*' title '$1 [a-z]*'" | cut -d"'" -f2 | sort -u | wc -l; }
bb_expect_true "protocol and raw of n=2 share one colour" test "$(colours n=2)" -eq 1
bb_expect_true "protocol solid, raw dashed" test "$(grep '^plot ' "$G/sum.gp" | head -n 1 |
    grep -o "dt [0-9]* lw [0-9.]* pt [0-9]* ps [0-9.]* lc rgb '#[0-9a-f]*' title 'n=2 [a-z]*'" | cut -d' ' -f2 | paste -sd, -)" = 1,2
bb_expect_true "three rank counts, three colours" test "$(grep '^plot ' "$G/sum.gp" | head -n 1 |
    grep -o "lc rgb '#[0-9a-f]*' title 'n=[0-9]* protocol'" | cut -d"'" -f2 | sort -u | wc -l)" -eq 3
bb_expect_grep "^set xtics ('1' 1, .*'64K' 65536)" "$G/sum.gp" "binary ticks up to 64K on the count axis"
bb_expect_true "no decimal size tick label" test "$(grep -c "'65536'" "$G/sum.gp")" -eq 0
bb_expect_grep "count (elements)" "$G/sum.gp" "x axis unit"
bb_expect_grep "elapsed median (us)" "$G/sum.gp" "y axis unit"
bb_expect_grep "git 0000000; not oversubscribed" "$G/sum.gp" "revision and oversubscription in the title"
bb_expect_true "the saved script redraws the plot" sh -c 'cd "$1" && "$2" sum.gp' sh "$G" "${GNUPLOT:-gnuplot}"

# A plot spec of the user's: transfer time against bytes, here from a
# hand-made transfer record derived from the sum fixture.
sed -e 's/"benchmark": "sum"/"benchmark": "transfer"/' -e 's/"count":/"bytes":/g' \
    "$D/base.json" >"$BB_TMP/transfer.json"
sh "$PL" --out "$P" --script "$G" "$BB_TMP/transfer.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "plot of a transfer record"
bb_expect_true "transfer.png is a PNG" is_png "$P/transfer.png"
bb_expect_grep "^set title 'protocol / raw'" "$G/transfer.gp" "transfer has its protocol/raw ratio"
bb_expect_grep "message size (bytes)" "$G/transfer.gp" "transfer x axis unit"
sh "$PL" --out "$P" --plot 'sum:count:phase.admission::lin:' "$D/base.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "--plot replaces the sum plot"
bb_expect_grep 'wrote .*sum.png (1 series' "$err" "only protocol points have admission times"

# The stored baseline: overlap on a log2 batches axis, sizes as 64K, no
# raw null in the legend; redist one panel per direction, at most 8
# entries each, also when its points span two sizes at two rank counts.
mkdir "$BB_TMP/base"
cp "$R/overlap-n2.json" "$R/overlap-n4.json" "$R/redist-n2.json" "$R/redist-n4.json" "$BB_TMP/base"
sh "$PL" --out "$P" --script "$G" "$BB_TMP/base" >"$out" 2>"$err"
bb_expect_rc 0 $? "plot of the baseline's overlap and redist records"
bb_expect_true "overlap.png is a PNG" is_png "$P/overlap.png"
bb_expect_true "redist.png is a PNG" is_png "$P/redist.png"
bb_expect_grep '^set logscale x 2' "$G/overlap.gp" "batches on a log2 axis"
bb_expect_grep "overlap median (%)" "$G/overlap.gp" "overlap y axis unit"
bb_expect_true "no null or raw size in the overlap legend" test "$(grep -c -e '=null' -e 65536 "$G/overlap.gp")" -eq 0
bb_expect_grep "oversubscribed: n=4" "$G/overlap.gp" "oversubscribed rank count in the title"
bb_expect_grep "^set title 'direction > (driver to engine)" "$G/redist.gp" "a redist panel for '>'"
bb_expect_grep "^set title 'direction < (engine to driver)" "$G/redist.gp" "a redist panel for '<'"
bb_expect_true "at most 8 legend entries per redist panel" test "$(most_entries "$G/redist.gp")" -le 8
for f in redist-n2 redist-n4; do
    sed -e 's/"elements": 10000,/"elements": 100000,/' "$R/$f.json" >"$BB_TMP/base/$f-big.json"
done
sh "$PL" --out "$P" --script "$G" "$BB_TMP/base" >"$out" 2>"$err"
bb_expect_rc 0 $? "plot of redist at two sizes"
bb_expect_true "two sizes: at most 8 legend entries per redist panel" test "$(most_entries "$G/redist.gp")" -le 8
bb_expect_true "two sizes: every method still drawn" test "$(titles "$G/redist.gp" | tr '|' '\n' | grep -c sparse)" -ge 2

sh "$PL" --out "$P" "$D/malformed.json" >"$out" 2>"$err"
bb_expect_rc 2 $? "unreadable record"
bb_expect_grep 'malformed.json' "$err" "unreadable record named"
# said in the name of the program the user ran (issue 58, finding 8)
bb_expect_grep '^bbench-plot: .*malformed.json' "$err" "said as bbench-plot"
bb_expect_true "never as bbench-compare" sh -c "! grep -q '^bbench-compare:' '$err'"
sh "$PL" --out "$P" >"$out" 2>"$err"
bb_expect_rc 2 $? "no records"
sh "$PL" --bogus x >"$out" 2>"$err"
bb_expect_rc 2 $? "unknown option"

bb_finish
