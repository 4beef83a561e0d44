#!/bin/sh
# bbench-compare never matches a point whose samples are means over ranks
# (--rank-stat mean) with one whose samples are the slowest rank's: a mean
# is lower by construction and would read as an improvement.  A record that
# names max, and one older than --rank-stat that names nothing, match.  The
# records are tests/tools/data/base.json with run.measurement.rank_stat set.
# No MPI.
. "$(dirname "$0")/../lib.sh"

C="$B/bench/bbench-compare"
D="$S/tests/tools/data"
out="$BB_TMP/out"
err="$BB_TMP/err"

# stat IN OUT STAT: IN with its samples declared taken by STAT.
stat() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.setdefault("run", {})["measurement"] = {
    "samples": 3, "reps": 10, "reps_chosen_by": "--reps", "warmup": 2, "timing": "block",
    "calls": 43, "rank_stat": sys.argv[3]}
json.dump(d, open(sys.argv[2], "w"))
PY
}
stat "$D/base.json" "$BB_TMP/max.json" max
stat "$D/base.json" "$BB_TMP/mean.json" mean
stat "$D/base.json" "$BB_TMP/mean2.json" mean

"$C" "$D/base.json" "$BB_TMP/max.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "max against a record that names no statistic: they match"
bb_expect_grep 'summary: 3 points matched' "$out" "all three points matched"

"$C" "$BB_TMP/max.json" "$BB_TMP/mean.json" >"$out" 2>"$err"
bb_expect_rc 2 $? "max against mean: nothing matches"
bb_expect_grep 'no point of .*max.json matches a point of .*mean.json' "$err" \
    "the files are named"

"$C" "$BB_TMP/mean.json" "$BB_TMP/mean2.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "mean against mean: the points match"
bb_expect_grep 'summary: 3 points matched' "$out" "all three mean points matched"

mkdir "$BB_TMP/mixed"
cp "$BB_TMP/max.json" "$BB_TMP/mixed/max.json"
cp "$BB_TMP/mean.json" "$BB_TMP/mixed/mean.json"
"$C" --all "$D/base.json" "$BB_TMP/mixed" >"$out" 2>"$err"
bb_expect_rc 0 $? "a max and a mean record against the base"
bb_expect_true "the mean points are unmatched, labelled so" \
    test "$(grep -c 'candidate only: sum n=2 rank_stat=mean ' "$out")" -eq 3

bb_finish
