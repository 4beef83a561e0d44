#!/bin/sh
# bbench-compare keeps its inputs and its verdict whole (issue 23, findings
# 3 to 5): no output path (--details, standard output) replaces a BASE or
# CAND record or lands inside a directory it reads; the candidate under test
# cannot exempt a contract quantity by declaring it a measurement (the
# base's declaration decides, and a declaration that changed is itself a
# contract change); base points the candidate lost fail unless
# --allow-missing (report mode unchanged); a record of another schema version
# in a directory is unusable input, not a skip.  No MPI.
. "$(dirname "$0")/compare-lib.sh"

# --- 3. Never write over an input ----------------------------------------
cp "$D/base.json" "$BB_TMP/base.json"
cp "$D/slow.json" "$BB_TMP/cand.json"
run 2 "--details naming the base record" --details "$BB_TMP/base.json" "$BB_TMP/base.json" "$BB_TMP/cand.json"
bb_expect_grep "details .*base.json is the base record" "$err" "the base named"
bb_expect_true "the base record is intact" cmp -s "$BB_TMP/base.json" "$D/base.json"
run 2 "--details naming the candidate record" --details "$BB_TMP/cand.json" "$BB_TMP/base.json" "$BB_TMP/cand.json"
bb_expect_true "the candidate record is intact" cmp -s "$BB_TMP/cand.json" "$D/slow.json"
ln "$BB_TMP/cand.json" "$BB_TMP/hardlink.md"
run 2 "--details: a hard link to the candidate" --details "$BB_TMP/hardlink.md" "$BB_TMP/base.json" "$BB_TMP/cand.json"
bb_expect_true "the candidate record is intact" cmp -s "$BB_TMP/cand.json" "$D/slow.json"
mkdir -p "$BB_TMP/recs/sub"
cp "$D/base.json" "$BB_TMP/recs/a.json"
run 2 "--details inside the candidate directory" --details "$BB_TMP/recs/report.json" "$BB_TMP/base.json" "$BB_TMP/recs"
bb_expect_grep 'inside the candidate directory' "$err" "the directory named"
bb_expect_true "nothing written there" test ! -e "$BB_TMP/recs/report.json"
run 2 "--details below the base directory" --details "$BB_TMP/recs/sub/r.md" "$BB_TMP/recs" "$BB_TMP/base.json"
bb_expect_grep 'inside the base directory' "$err" "the base directory named"
# Standard output appended to the base (>> does not truncate first).
bb_serial "$C" "$BB_TMP/base.json" "$BB_TMP/cand.json" >>"$BB_TMP/base.json" 2>"$err"
bb_expect_rc 2 $? "standard output appended to the base record"
bb_expect_grep 'standard output is the base record' "$err" "standard output named"
bb_expect_true "the base record is intact" cmp -s "$BB_TMP/base.json" "$D/base.json"
run 1 "--details beside the records is written" --details "$BB_TMP/details.md" "$BB_TMP/base.json" "$BB_TMP/cand.json"
bb_expect_grep '^summary: 3 points matched, 1 timing regressions' "$BB_TMP/details.md" "the details file holds the report"

# --- 4. The candidate cannot choose its own exemption ---------------------
# payload 64 -> 128 and "deterministic": true -> false on the candidate side.
edit "$D/base.json" "$BB_TMP/decl-base.json" 'p[1]["quantities"]["communication.payload"]["deterministic"] = True'
edit "$D/base.json" "$BB_TMP/decl-cand.json" '
q = p[1]["quantities"]["communication.payload"]
q["value"] = 128
q["deterministic"] = False'
run 1 "payload changed and declared a measurement by the candidate" "$BB_TMP/decl-base.json" "$BB_TMP/decl-cand.json"
bb_expect_grep 'communication.payload: base 64 byte, candidate 128 byte' "$out" "the payload change named"
bb_expect_grep 'communication.payload.deterministic: base true, candidate false' "$out" "the declaration change named"
run 1 "... even in report mode" --report "$BB_TMP/decl-base.json" "$BB_TMP/decl-cand.json"
# The same against a base that predates the member (the base's rule: bytes
# without samples are a contract).
run 1 "payload declared a measurement against an undeclared base" "$D/base.json" "$BB_TMP/decl-cand.json"
bb_expect_grep 'communication.payload: base 64 byte, candidate 128 byte' "$out" "the payload change named"
# A declaration change alone (same value) is a contract change.
edit "$BB_TMP/decl-base.json" "$BB_TMP/decl-only.json" 'p[1]["quantities"]["communication.payload"]["deterministic"] = False'
run 1 "deterministic true -> false, same value" "$BB_TMP/decl-base.json" "$BB_TMP/decl-only.json"
bb_expect_grep '1 contract changes' "$out" "counted once"
edit "$D/base.json" "$BB_TMP/scope.json" 'p[1]["quantities"]["communication.payload"]["scope"] = "run/rank"'
run 1 "a quantity's scope changed" "$D/base.json" "$BB_TMP/scope.json"
bb_expect_grep 'communication.payload.scope: base call/rank, candidate run/rank' "$out" "the scope change named"

# --- 5. Nothing drops out silently ----------------------------------------
edit "$D/base.json" "$BB_TMP/lost.json" 'del p[0]; del p[1]'
run 1 "a candidate that lost 2 of the 3 points" "$D/base.json" "$BB_TMP/lost.json"
bb_expect_grep 'LOST sum n=2 count=1 max_elements=1 mode=protocol element_bytes=8 (.*base.json: points\[0\])' "$out" "the first lost point named"
bb_expect_grep 'LOST sum n=2 count=8 max_elements=8 mode=raw element_bytes=8 (.*base.json: points\[2\])' "$out" "the second lost point named"
bb_expect_grep '2 points of .*base.json are missing from .*lost.json' "$err" "said on stderr"
run 0 "--allow-missing accepts them" --allow-missing "$D/base.json" "$BB_TMP/lost.json"
bb_expect_grep 'lost points (in the base, not in the candidate; accepted (--allow-missing))' "$out" "still listed"
run 0 "report mode unchanged: lost points never fail" --report "$D/base.json" "$BB_TMP/lost.json"
run 0 "extra candidate points are not lost ones" "$BB_TMP/lost.json" "$D/base.json"
# A record of another schema version in a directory: unusable, not skipped.
mkdir "$BB_TMP/v2"
cp "$D/base.json" "$BB_TMP/v2/a.json"
edit "$D/base.json" "$BB_TMP/v2/b.json" 'r["schema"] = "bbench.record/2"; r["benchmark"] = "transfer"'
run 2 "a bbench.record/2 file in the candidate directory" "$D/base.json" "$BB_TMP/v2"
bb_expect_grep 'v2/b.json: schema: "bbench.record/2" is not "bbench.record/1"' "$err" "the file and its schema named"
# A saved report beside the records is still skipped, and counted.
rm "$BB_TMP/v2/b.json"
bb_serial "$C" --format json "$D/base.json" "$D/base.json" >"$BB_TMP/v2/report.json" 2>"$err"
bb_expect_rc 0 $? "a report saved beside the records"
run 0 "a saved bbench.compare/1 report is skipped" "$D/base.json" "$BB_TMP/v2"
bb_expect_grep '1 files skipped (not records)' "$out" "the skip counted in the summary"
bb_expect_grep 'warning: skipped, not a record: .*report.json' "$err" "and warned"

bb_finish
