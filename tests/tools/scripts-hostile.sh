#!/bin/sh
# bbench-sweep and bbench-plot against hostile use: a stale record must not
# pass for a new one (the launch writes nothing, or fails, and the old
# record is put back); numbers too large for test(1) are usage errors with
# a message, not shell noise; a quote in --out reaches gnuplot as text;
# --plot fields are checked; a failure of bbench-compare other than bad
# input is not reported as unreadable records.
. "$(dirname "$0")/../lib.sh"

SW="$S/scripts/bbench-sweep"
PL="$S/scripts/bbench-plot"
SUM="$B/bench/bbench-sum"
D="$S/tests/tools/data"
out="$BB_TMP/out"
err="$BB_TMP/err"
export MPIEXEC
export BBENCH_COMPARE="$B/bench/bbench-compare"

# An old record, and a launch that writes none (--help exits 0).
mkdir "$BB_TMP/o"
cp "$D/base.json" "$BB_TMP/o/sum-n1.json"
before=$(cksum <"$BB_TMP/o/sum-n1.json")
sh "$SW" --force --ranks 1 --out "$BB_TMP/o" --timeout 60 -- "$SUM" --help >"$out" 2>"$err"
bb_expect_rc 1 $? "a launch that wrote no record fails the sweep"
bb_expect_grep 'exited 0 but wrote no record .*sum-n1.json' "$err" "the missing record named"
bb_expect_grep 'the previous .*sum-n1.json was put back' "$err" "the old record put back, and said so"
bb_expect_true "the old record is back unchanged" test "$(cksum <"$BB_TMP/o/sum-n1.json")" = "$before"
bb_expect_true "no file left beside it" test "$(ls -A "$BB_TMP/o")" = sum-n1.json
# A failed launch: the old record comes back too.
sh "$SW" --force --ranks 1 --out "$BB_TMP/o" --timeout 60 -- "$SUM" --count 8 --samples 1 >"$out" 2>"$err"
bb_expect_rc 1 $? "a failed launch fails the sweep"
bb_expect_true "the old record is back after a failed launch" \
    test "$(cksum <"$BB_TMP/o/sum-n1.json")" = "$before"
# A real launch replaces it.
sh "$SW" --force --ranks 1 --out "$BB_TMP/o" --timeout 60 -- "$SUM" --count 8 --samples 3 --reps 1 >"$out" 2>"$err"
bb_expect_rc 0 $? "a launch that writes its record"
bb_expect_true "the record is new" test "$(cksum <"$BB_TMP/o/sum-n1.json")" != "$before"
bb_expect_true "only the record is there" test "$(ls -A "$BB_TMP/o")" = sum-n1.json

# A FIFO where a record goes is never moved aside or replaced, even with
# --force; nothing is launched.
mkdir "$BB_TMP/of"
mkfifo "$BB_TMP/of/sum-n1.json"
sh "$SW" --force --ranks 1 --out "$BB_TMP/of" --timeout 60 -- "$SUM" --count 8 >"$out" 2>"$err"
bb_expect_rc 2 $? "a FIFO in place of a record"
bb_expect_grep 'sum-n1.json exists and is not a regular file' "$err" "the FIFO named"
bb_expect_true "the FIFO is still there, alone" test -p "$BB_TMP/of/sum-n1.json" -a "$(ls -A "$BB_TMP/of")" = sum-n1.json

# Numbers as text: no test(1) noise, a message and exit 2.
sweep_usage() {
    rwhat=$1 want=$2
    shift 2
    sh "$SW" "$@" >"$out" 2>"$err"
    bb_expect_rc 2 $? "$rwhat"
    bb_expect_grep "$want" "$err" "$rwhat: message"
    bb_expect_true "$rwhat: no shell noise" test "$(grep -c -e 'expression' -e 'out of range' -e 'Illegal' "$err")" -eq 0
}
sweep_usage "--timeout 20 digits" "--timeout: '99999999999999999999' seconds is more than the limit" \
    --timeout 99999999999999999999 --ranks 1 --out "$BB_TMP/u" -- "$SUM"
sweep_usage "--timeout 0" "--timeout: '0' must be a positive" --timeout 0 --ranks 1 --out "$BB_TMP/u" -- "$SUM"
sweep_usage "--ranks 20 digits" "rank count '99999999999999999999' is more than the limit" \
    --ranks 1,99999999999999999999 --out "$BB_TMP/u" -- "$SUM"
sweep_usage "--ranks 0" "rank count '0' must be at least 1" --ranks 0 --out "$BB_TMP/u" -- "$SUM"
sweep_usage "--name with a leading dot" "--name: '.hidden' is not a file name stem" \
    --name .hidden --ranks 1 --out "$BB_TMP/u" -- "$SUM"
bb_expect_true "nothing was created for usage errors" test ! -e "$BB_TMP/u"

# The drawing cases need gnuplot (bbench-plot exits 77 without it).
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    # A quote in --out reaches gnuplot as part of a string.
    q="$BB_TMP/q'uote"
    sh "$PL" --out "$q" "$D/base.json" >"$out" 2>"$err"
    bb_expect_rc 0 $? "--out with a quote"
    bb_expect_true "the plot is in the quoted directory" test -s "$q/sum.png"
    # A FIFO where a PNG goes: not written into (gnuplot would wait), not
    # replaced; the other plots are still made.
    mkdir "$BB_TMP/pf"
    mkfifo "$BB_TMP/pf/sum.png"
    cp "$D/base.json" "$BB_TMP/transfer.json"
    sed -i 's/"benchmark": "sum"/"benchmark": "transfer"/; s/"count":/"bytes":/g' "$BB_TMP/transfer.json"
    BB_TIMEOUT=60 bb_serial sh "$PL" --out "$BB_TMP/pf" "$D/base.json" "$BB_TMP/transfer.json" >"$out" 2>"$err"
    bb_expect_rc 1 $? "a FIFO in place of sum.png fails that plot"
    bb_expect_grep 'sum.png exists and is not a regular file' "$err" "the FIFO named"
    bb_expect_true "the FIFO is still a FIFO" test -p "$BB_TMP/pf/sum.png"
    bb_expect_true "transfer.png was still drawn" test -s "$BB_TMP/pf/transfer.png"
    # A quote in TMPDIR (the data files pasted into the script).
    mkdir "$BB_TMP/t'mp"
    TMPDIR="$BB_TMP/t'mp" sh "$PL" --out "$BB_TMP/pt" "$D/base.json" >"$out" 2>"$err"
    bb_expect_rc 0 $? "TMPDIR with a quote"
    bb_expect_true "the plot drawn from the quoted TMPDIR" test -s "$BB_TMP/pt/sum.png"
fi
# --plot fields.
for spec in 'a/b:count:elapsed' 'sum:count' 'sum:count:elapsed::cubic:' 'sum:c\n:elapsed'; do
    sh "$PL" --out "$BB_TMP/pp" --plot "$spec" "$D/base.json" >"$out" 2>"$err"
    bb_expect_rc 2 $? "--plot '$spec' refused"
done
# bbench-compare failing other than on its input (3: lost output) is not
# "unreadable records".
cat >"$BB_TMP/compare3" <<'SH'
#!/bin/sh
exit 3
SH
chmod +x "$BB_TMP/compare3"
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    sh "$PL" --compare "$BB_TMP/compare3" --out "$BB_TMP/p3" "$D/base.json" >"$out" 2>"$err"
    bb_expect_rc 1 $? "bbench-compare exit 3 fails the plot"
    bb_expect_grep 'compare3 --extract failed on .*base.json (exit 3)' "$err" \
        "the failed helper named"
fi

bb_finish
