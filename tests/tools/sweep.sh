#!/bin/sh
# tools/bbench-sweep at ranks 1 and 2 with tiny sizes: one record per
# launch, named BENCH-nN.json, progress on stderr, no overwrite without
# --force, a failed launch stops the sweep naming the command.
. "$(dirname "$0")/../lib.sh"

SW="$S/tools/bbench-sweep"
SUM="$B/bench/bbench-sum"
R="$BB_TMP/results"
out="$BB_TMP/out"
err="$BB_TMP/err"
export MPIEXEC
tiny="--count 1,8 --samples 3 --reps 2"

# shellcheck disable=SC2086
sh "$SW" --ranks 1,2 --out "$R" --timeout 60 -- "$SUM" $tiny >"$out" 2>"$err"
bb_expect_rc 0 $? "sweep over ranks 1,2"
bb_expect_true "record for 1 rank" test -s "$R/sum-n1.json"
bb_expect_true "record for 2 ranks" test -s "$R/sum-n2.json"
bb_expect_true "exactly two records" test "$(ls "$R" | wc -l)" -eq 2
bb_expect_grep '\[1/2\] ranks 1 -> ' "$err" "progress line for the first launch"
bb_expect_grep '\[2/2\] ranks 2 done' "$err" "progress line for the second launch"
# topology.ranks of every point, as the compare tool reads it.
ranks_of() {
    "$B/bench/bbench-compare" --extract "$1" | awk -F'\t' 'NR > 1 { print $4 }' | sort -u
}
bb_expect_true "the 1-rank record says 1 rank" test "$(ranks_of "$R/sum-n1.json")" = 1
bb_expect_true "the 2-rank record says 2 ranks" test "$(ranks_of "$R/sum-n2.json")" = 2

# The records are usable: compared with themselves, nothing regressed.
"$B/bench/bbench-compare" "$R" "$R" >"$out" 2>"$err"
bb_expect_rc 0 $? "sweep results compare with themselves"
bb_expect_grep '8 points matched' "$out" "2 counts x 2 modes x 2 rank counts matched"

# No overwrite without --force; nothing is launched then.
before=$(cksum <"$R/sum-n1.json")
# shellcheck disable=SC2086
sh "$SW" --ranks 1 --out "$R" -- "$SUM" $tiny >"$out" 2>"$err"
bb_expect_rc 2 $? "existing record not overwritten"
bb_expect_grep 'sum-n1.json exists; use --force' "$err" "message names the record"
bb_expect_true "record unchanged" test "$(cksum <"$R/sum-n1.json")" = "$before"
# shellcheck disable=SC2086
sh "$SW" --ranks 1 --out "$R" --force -- "$SUM" $tiny >"$out" 2>"$err"
bb_expect_rc 0 $? "--force overwrites"

# A failed launch stops the sweep and prints the command.
sh "$SW" --ranks 1,2 --out "$BB_TMP/bad" -- "$SUM" --count 1 --samples 1 >"$out" 2>"$err"
bb_expect_rc 1 $? "failed launch stops the sweep"
bb_expect_grep "launch 1/2 failed (exit 2): .*'-n' '1' .*bbench-sum' '--count' '1' '--samples' '1'" "$err" \
    "failed command printed"
bb_expect_true "no record from the failed launch" test ! -e "$BB_TMP/bad/sum-n1.json"
bb_expect_true "second launch not attempted" test ! -e "$BB_TMP/bad/sum-n2.json"

# Usage errors.
sh "$SW" --out "$BB_TMP/u" -- "$SUM" >"$out" 2>"$err"
bb_expect_rc 2 $? "missing --ranks"
sh "$SW" --ranks 1,x --out "$BB_TMP/u" -- "$SUM" >"$out" 2>"$err"
bb_expect_rc 2 $? "bad rank list"
sh "$SW" --ranks 1 --out "$BB_TMP/u" -- "$SUM" --output x.json >"$out" 2>"$err"
bb_expect_rc 2 $? "PROGRAM --output refused"
sh "$SW" --help >"$out" 2>"$err"
bb_expect_rc 0 $? "--help"

bb_finish
