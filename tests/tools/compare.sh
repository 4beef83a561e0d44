#!/bin/sh
# bbench-compare on stored record pairs (tests/tools/data, hand-checked):
# exit codes, the regression rule, contract changes, provenance warnings,
# unusable input named by file and place, and the plot-data extraction.
# No MPI: the tool never calls MPI_Init.
. "$(dirname "$0")/../lib.sh"

C="$B/bench/bbench-compare"
D="$S/tests/tools/data"
out="$BB_TMP/out"
err="$BB_TMP/err"

# run WANT WHAT ARGS...: run the tool, check its exit code.
run() {
    want=$1; what=$2; shift 2
    "$C" "$@" >"$out" 2>"$err"
    bb_expect_rc "$want" $? "$what"
}

run 0 "identical records" "$D/base.json" "$D/base.json"
bb_expect_grep 'summary: 3 points matched, 0 timing regressions' "$out" "all three points matched"

run 0 "member and point order ignored, rss not compared" "$D/base.json" "$D/reordered.json"
bb_expect_grep '3 points matched' "$out" "reordered parameters still match"

run 1 "slowed copy is a regression" "$D/base.json" "$D/slow.json"
bb_expect_grep 'REGRESSION sum n=2 count=8 max_elements=8 mode=protocol: elapsed: 21 \[20, 22\] us -> 31 \[30, 33\] us' "$out" \
    "the regressed point and timing are named"
bb_expect_true "only that timing regressed, said once" test "$(grep -c REGRESSION "$out")" -eq 1
bb_expect_grep '^summary: ' "$out" "the summary comes first"
bb_expect_true "the summary is the first line" test "$(head -n 1 "$out" | cut -c1-8)" = "summary:"
bb_expect_grep 'x1.476, ranges disjoint' "$out" "the reason of the verdict (3 samples: the range rule)"
bb_expect_grep '1.476' "$out" "ratio of medians 31/21"
run 0 "--report never fails on timings" --report "$D/base.json" "$D/slow.json"
run 0 "slowed copy within --tolerance 0.5" --tolerance 0.5 "$D/base.json" "$D/slow.json"

run 0 "slower median with overlapping ranges is not a regression" --all "$D/base.json" "$D/noisy.json"
bb_expect_grep '1.238  within noise (ranges overlap)' "$out" "overlap shown as within noise, with the reason"
bb_expect_grep 'within noise (1 ranges overlap, 4 under tolerance' "$out" "the reasons counted in the summary"
run 0 "without --all only what changed" "$D/base.json" "$D/noisy.json"
bb_expect_true "no per-timing table" test "$(grep -c 'within noise (ranges' "$out")" -eq 0

run 0 "improvement does not fail" "$D/base.json" "$D/faster.json"
bb_expect_grep 'elapsed: 21 \[20, 22\] us -> 11 \[10, 12\] us (x0.524, ranges disjoint)' "$out" "improvement reported"
bb_expect_grep 'improvement sum n=2 count=8 max_elements=8 mode=protocol: elapsed' "$out" "improved point named"
bb_expect_grep '1 improvements' "$out" "improvement counted"

run 1 "changed payload is a contract change" "$D/base.json" "$D/payload.json"
bb_expect_grep 'CONTRACT CHANGE sum n=2 count=8 max_elements=8 mode=protocol element_bytes=8: communication.payload: base 64 byte, candidate 72 byte' \
    "$out" "contract change names point, quantity and values"
run 1 "contract change fails even with --report" --report "$D/base.json" "$D/payload.json"

run 1 "ok against refused is a contract change" "$D/base.json" "$D/refused.json"
bb_expect_grep 'count=1 .*: status: base ok, candidate refused' "$out" "status change named"

run 0 "provenance differences are warnings only" "$D/base.json" "$D/provenance.json"
bb_expect_grep 'WARNING runtime.mpi_library: base "MPICH Version: 4.0.2 MPICH Device: ch4:ucx" candidate "MPICH Version: 4.1.2' "$out" "MPI library warning"
bb_expect_grep 'WARNING topology.oversubscribed: base false candidate true' "$out" "oversubscription warning"

run 0 "extra candidate point is listed, not fatal" --all "$D/base.json" "$D/extra.json"
bb_expect_grep 'candidate only: sum n=2 count=64 .*extra.json: points\[3\]' "$out" "unmatched point listed"

# Unusable input: exit 2 with the file (and the place) named.
run 2 "malformed JSON" "$D/base.json" "$D/malformed.json"
bb_expect_grep 'malformed.json' "$err" "malformed file named"
run 2 "unknown schema" "$D/schema.json" "$D/base.json"
bb_expect_grep 'schema.json.*schema' "$err" "schema file and member named"
run 2 "nothing matched" "$D/base.json" "$D/other-ranks.json"
bb_expect_grep 'no point of .*base.json matches a point of .*other-ranks.json' "$err" "no-match names files"
run 2 "median outside its range" "$D/base.json" "$D/bad-range.json"
bb_expect_grep 'bad-range.json: points\[1\].quantities.elapsed' "$err" "bad range place named"
run 2 "missing file" "$D/base.json" "$D/no-such.json"
bb_expect_grep 'no-such.json' "$err" "missing file named"

# Directories: every *.json in name order; a point twice in one set is ambiguous.
mkdir "$BB_TMP/a" "$BB_TMP/b" "$BB_TMP/dup" "$BB_TMP/empty"
cp "$D/base.json" "$BB_TMP/a/sum-n2.json"
cp "$D/slow.json" "$BB_TMP/b/sum-n2.json"
cp "$D/other-ranks.json" "$BB_TMP/a/sum-n4.json"
cp "$D/other-ranks.json" "$BB_TMP/b/sum-n4.json"
run 1 "directories: the slowed record is found" "$BB_TMP/a" "$BB_TMP/b"
bb_expect_grep '6 points matched, 1 timing regressions' "$out" "both records of each directory matched"
cp "$D/base.json" "$BB_TMP/dup/one.json"
cp "$D/reordered.json" "$BB_TMP/dup/two.json"
run 2 "the same point twice in one set" "$BB_TMP/dup" "$BB_TMP/a"
bb_expect_grep 'appears twice: .*one.json: points\[[0-9]\] and .*two.json: points\[[0-9]\]' "$err" "both places named"
run 2 "directory without records" "$BB_TMP/empty" "$BB_TMP/a"
bb_expect_grep 'empty: no \*.json records' "$err" "empty directory named"

# --ignore-parameter: a parameter left out of matching (max_elements of the
# count=8 points differs, so without it only count=1 matches).
sed 's/"max_elements": 8,/"max_elements": 16,/' "$D/base.json" >"$BB_TMP/cap16.json"
run 0 "--ignore-parameter" --ignore-parameter max_elements "$D/base.json" "$BB_TMP/cap16.json"
bb_expect_grep '3 points matched' "$out" "matched without max_elements"
run 1 "without --ignore-parameter: the base's count=8 points are lost" --all "$D/base.json" "$BB_TMP/cap16.json"
bb_expect_grep "1 points matched" "$out" "only count=1 matched"
bb_expect_grep 'base only: sum n=2 count=8 max_elements=8 mode=protocol' "$out" "cap 8 point unmatched"
run 0 "... listed, not failed, with --allow-missing" --allow-missing "$D/base.json" "$BB_TMP/cap16.json"

# Output formats.
run 1 "markdown" --format markdown --all "$D/base.json" "$D/slow.json"
bb_expect_grep '^| point *| timing' "$out" "markdown table header"
run 1 "json" --format json "$D/base.json" "$D/payload.json"
bb_expect_grep '"schema":[[:space:]]*"bbench.compare/1"' "$out" "json report schema"
bb_expect_grep '"contract_changes":[[:space:]]*1' "$out" "json summary counts the change"
run 0 "--all lists every timing" --all "$D/base.json" "$D/base.json"
bb_expect_grep 'phase.admission' "$out" "sub-phase timing listed with --all"

# Usage.
run 0 "--help" --help
bb_expect_grep 'cand min > base max' "$out" "the rule is in --help"
run 0 "--version" --version
run 2 "unknown option" --frobnicate "$D/base.json" "$D/base.json"
run 2 "bad format" --format yaml "$D/base.json" "$D/base.json"
run 2 "negative tolerance" --tolerance -1 "$D/base.json" "$D/base.json"
run 2 "one operand" "$D/base.json"

# Extraction: a header, then one line per point, parameters as columns.
run 0 "--extract" --extract --quantity elapsed,communication.payload "$D/base.json"
bb_expect_grep '^file	point	benchmark	ranks	status	count	max_elements	mode	element_bytes	elapsed	elapsed.min	elapsed.max	communication.payload' \
    "$out" "extract header"
bb_expect_grep '	1	sum	2	ok	8	8	protocol	8	2.1e-05	2e-05	2.2e-05	64	NaN	NaN$' \
    "$out" "extract row of count=8 protocol"
bb_expect_true "extract has 4 lines" test "$(wc -l <"$out")" -eq 4

# Mann-Whitney U beside the range rule: with 5 samples a side the rank test
# decides (ties get mean ranks; p from the normal approximation with tie and
# continuity corrections, by hand: base 10..14 us, candidate 13..17 us gives
# U = 2, z = 2.10, p = 0.036) even though the ranges overlap.
samples() {  # samples OUT BASE_OR_CAND SAMPLES_US...: elapsed of points[1]
    o=$1; shift
    python3 - "$D/base.json" "$o" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = [float(x) * 1e-6 for x in sys.argv[3:]]
q = d["points"][1]["quantities"]["elapsed"]
q["samples"] = v
q["median"] = q["value"] = sorted(v)[len(v) // 2]
q["range"] = [min(v), max(v)]
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}
samples "$BB_TMP/mw-base.json" 10 11 12 13 14
samples "$BB_TMP/mw-slow.json" 13 14 15 16 17
samples "$BB_TMP/mw-noisy.json" 10.5 12 13.5 14.5 30
run 1 "5 samples a side: Mann-Whitney finds the overlap-ranged regression" "$BB_TMP/mw-base.json" "$BB_TMP/mw-slow.json"
bb_expect_grep 'REGRESSION .*count=8 .*: elapsed: 12 \[10, 14\] us -> 15 \[13, 17\] us (x1.250, Mann-Whitney p = 0.036)' \
    "$out" "regression with its p-value"
run 0 "5 samples a side: a wide candidate is within noise by the p-value" --all "$BB_TMP/mw-base.json" "$BB_TMP/mw-noisy.json"
bb_expect_grep 'within noise (Mann-Whitney p = 0.[0-9]* >= 0.05)' "$out" "within noise, the p-value said"
run 1 "json: the U statistic and p" --format json "$BB_TMP/mw-base.json" "$BB_TMP/mw-slow.json"
bb_expect_grep '"u":[[:space:]]*2,' "$out" "U = 2"

# The intervals of the median (issue 54): a move beyond the tolerance that
# the test calls must also have the two intervals apart where both sides
# have one (6 samples or more at 95%); where a side has none the rule above
# decides alone and the timing is counted unresolved.  Records without ci
# get theirs from the samples at 0.95; "ci" adds the exact one (x(j) and
# x(n+1-j), its binomial coverage), as the record writer does.
interval() {  # interval OUT ci|- SAMPLES_US...: elapsed of points[1]
    o=$1; with=$2; shift 2
    python3 - "$D/base.json" "$o" "$with" "$@" <<'PY'
import json, sys
from math import comb
d = json.load(open(sys.argv[1]))
v = [float(x) * 1e-6 for x in sys.argv[4:]]
s, n = sorted(v), len(v)
q = d["points"][1]["quantities"]["elapsed"]
q["samples"] = v
q["median"] = q["value"] = s[n // 2] if n % 2 else 0.5 * s[n // 2 - 1] + 0.5 * s[n // 2]
q["range"] = [s[0], s[-1]]
if sys.argv[3] == "ci":
    j, cdf, cov = 0, 0.0, None
    for k in range(1, (n + 1) // 2 + 1):
        cdf += comb(n, k - 1) / 2.0 ** n
        if 1 - 2 * cdf < 0.95:
            break
        j, cov = k, 1 - 2 * cdf
    q["ci"] = {"level": 0.95, "low": s[j - 1], "high": s[n - j], "coverage": cov,
               "order": j} if j else None
    if not j:
        q["ci_reason"] = "%d samples: too few for an interval at 0.95" % n
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}
# 7 a side: the intervals are [min, max] (order 1, coverage 0.984).  The
# candidate's bulk sits above the base's, p = 0.035, the medians 13 and 19
# us, but one slow base sample (25 us) keeps the base's interval over the
# candidate's: where the medians lie is not settled, within noise.
interval "$BB_TMP/ci-base7.json" - 10 11 12 13 14 15 25
interval "$BB_TMP/ci-cand7.json" - 15 17 18 19 20 21 22
run 0 "p < 0.05 beyond the tolerance, intervals overlap" --all "$BB_TMP/ci-base7.json" "$BB_TMP/ci-cand7.json"
bb_expect_grep '1.462  within noise (intervals of the median overlap (base \[10, 25\] us, candidate \[15, 22\] us at 95%))' \
    "$out" "within noise, both intervals named"
bb_expect_grep 'within noise (0 ranges overlap, 4 under tolerance, 0 p >= 0.05, 1 intervals overlap), 4 unresolved' \
    "$out" "counted by its reason; the 3-sample timings unresolved"
run 0 "... json" --format json "$BB_TMP/ci-base7.json" "$BB_TMP/ci-cand7.json"
cp "$out" "$BB_TMP/ci-overlap-report.json"
bb_expect_grep '"intervals_apart":[[:space:]]*false' "$out" "intervals_apart false"
bb_expect_grep '"p":[[:space:]]*0.0348' "$out" "the test alone would have called it (p = 0.035)"
# 9 a side: the intervals are [x(2), x(8)] (coverage 0.961), [11, 17] and
# [18, 24] us: apart, though an outlier on each side makes the ranges
# overlap.  A regression; swapped, an improvement.  The base states its ci
# (read as recorded), the candidate does not (computed at 0.95).
interval "$BB_TMP/ci-base9.json" ci 10 11 12 13 14 15 16 17 40
interval "$BB_TMP/ci-cand9.json" - 9 18 19 20 21 22 23 24 25
run 1 "intervals apart: a regression" "$BB_TMP/ci-base9.json" "$BB_TMP/ci-cand9.json"
bb_expect_grep 'REGRESSION .*count=8 .*: elapsed: 14 \[10, 40\] us -> 21 \[9, 25\] us (x1.500, Mann-Whitney p = 0.0[0-9]*, intervals of the median apart)$' \
    "$out" "the regression says its intervals are apart"
bb_expect_grep ' 4 unresolved ' "$out" "only the 3-sample timings are unresolved"
run 0 "... swapped: an improvement" "$BB_TMP/ci-cand9.json" "$BB_TMP/ci-base9.json"
bb_expect_grep 'improvement .*count=8 .*: elapsed: 21 \[9, 25\] us -> 14 \[10, 40\] us (x0.667, Mann-Whitney p = 0.0[0-9]*, intervals of the median apart)$' \
    "$out" "the improvement too"
run 1 "... json" --format json "$BB_TMP/ci-base9.json" "$BB_TMP/ci-cand9.json"
cp "$out" "$BB_TMP/ci-apart-report.json"
python3 - "$out" >"$BB_TMP/ci-apart.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = [t for p in r["points"] for t in p["timings"]
     if p["parameters"].get("count") == 8 and p["parameters"].get("mode") == "protocol"
     and t["name"] == "elapsed"][0]
print("base", t["base"]["ci"]["low"], t["base"]["ci"]["high"], t["base"]["ci"]["order"])
print("candidate", t["candidate"]["ci"]["low"], t["candidate"]["ci"]["high"], t["candidate"]["ci"]["order"])
print("apart", t["intervals_apart"], "unresolved", t["unresolved"], t["verdict"])
print("summary unresolved", r["summary"]["unresolved"])
PY
bb_expect_grep '^base 1.1e-05 1.7e-05 2$' "$BB_TMP/ci-apart.txt" "the base's recorded interval, order 2"
bb_expect_grep '^candidate 1.8e-05 2.4e-05 2$' "$BB_TMP/ci-apart.txt" "the candidate's, computed"
bb_expect_grep '^apart True unresolved False regression$' "$BB_TMP/ci-apart.txt" "apart, resolved"
bb_expect_grep '^summary unresolved 4$' "$BB_TMP/ci-apart.txt" "the summary's count"
# 3 a side, disjoint ranges: no interval on either side (n < 6 at 95%); the
# range rule decides, and the timing is counted unresolved.  base.json
# against slow.json: every one of the 5 judged timings has 3 samples.
run 1 "3 samples a side: a regression, unresolved" "$D/base.json" "$D/slow.json"
bb_expect_grep '(x1.476, ranges disjoint) unresolved (no interval of the median on a side)$' "$out" \
    "the line says it is unresolved"
bb_expect_grep ', 5 unresolved (no interval of the median on a side),' "$out" "5 timings unresolved"
run 1 "... json" --format json "$D/base.json" "$D/slow.json"
bb_expect_grep '"unresolved":[[:space:]]*5,' "$out" "the JSON summary's count"
bb_expect_grep '"ci":[[:space:]]*null' "$out" "no interval shown as null"
# A side with ci null (the record's own word: too few at its level) is
# unresolved even against a side with an interval.
interval "$BB_TMP/ci-null.json" ci 19 20 21 22 23
run 1 "5 samples, ci null, against 9 with one" "$BB_TMP/ci-base9.json" "$BB_TMP/ci-null.json"
bb_expect_grep 'REGRESSION .*(x1.500, Mann-Whitney p = 0.023) unresolved' "$out" "unresolved, the test decides"

# A compare report saved among the candidate records is skipped, said on
# stderr and in the report; a directory of no records at all is unusable.
mkdir "$BB_TMP/withreport" "$BB_TMP/onlyreport"
cp "$D/slow.json" "$BB_TMP/withreport/sum-n2.json"
"$C" --format json "$D/base.json" "$D/slow.json" >"$BB_TMP/withreport/compare.json"
cp "$BB_TMP/withreport/compare.json" "$BB_TMP/onlyreport/"
run 1 "a saved compare report in the candidate directory" "$D/base.json" "$BB_TMP/withreport"
bb_expect_grep 'warning: skipped, not a record: .*compare.json: schema: "bbench.compare/1"' "$err" "the skipped file named on stderr"
bb_expect_grep 'SKIPPED (not a record) .*compare.json' "$out" "and in the report"
bb_expect_grep '3 points matched, 1 timing regressions' "$out" "the records beside it compared"
run 2 "a directory holding no record" "$D/base.json" "$BB_TMP/onlyreport"
bb_expect_grep 'onlyreport: no records among its 1 \*.json files' "$err" "no records named"

# Provenance named field by field; revisions and hosts in the summary lines.
python3 - "$D/base.json" "$BB_TMP/flags.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["source"]["git"] = "abc1234-dirty"
d["source"].setdefault("build", {})["cflags"] = "-O2 -Werror"
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
python3 - "$D/base.json" "$BB_TMP/flags0.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["source"].setdefault("build", {})["cflags"] = "-O2"
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
run 0 "build flags differ" "$BB_TMP/flags0.json" "$BB_TMP/flags.json"
bb_expect_grep 'WARNING source.build.cflags: base "-O2" candidate "-O2 -Werror" (1 record pair)' "$out" "the flag difference named"
bb_expect_grep '^  candidate: .*git abc1234-dirty' "$out" "the candidate revision, dirty"

# A long array that differs in length is named by its size, never cut
# inside its JSON.
python3 - "$D/base.json" "$BB_TMP/caches.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["topology"].setdefault("machine", {})["caches"] = [{"level": i, "size": 32768 << i} for i in range(9)]
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
run 0 "a long array differs" "$D/base.json" "$BB_TMP/caches.json"
bb_expect_grep 'WARNING topology.machine.caches: base .* candidate (an array of 9 items, [0-9]* characters; in --format json)' \
    "$out" "named by its size"
bb_expect_true "no JSON cut short" test "$(grep -c '\.\.\.' "$out")" -eq 0

# Unmatched points grouped: one line per benchmark and rank count.
python3 - "$D/base.json" "$BB_TMP/many.json" <<'PY'
import json, sys, copy
d = json.load(open(sys.argv[1]))
p = d["points"][0]
for c in range(100, 140):
    q = copy.deepcopy(p); q["parameters"]["count"] = c; d["points"].append(q)
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
run 0 "40 extra points" "$D/base.json" "$BB_TMP/many.json"
bb_expect_grep '^  candidate only: sum n=2: 40 points$' "$out" "one line for the group"
bb_expect_true "the report fits a screen" test "$(wc -l <"$out")" -le 20

# Markdown stays under 60,000 characters; the rest is in --details FILE.
python3 - "$D/base.json" "$BB_TMP/huge.json" <<'PY'
import json, sys, copy
d = json.load(open(sys.argv[1]))
p = d["points"][1]
for c in range(1000, 1700):
    q = copy.deepcopy(p); q["parameters"]["count"] = c; d["points"].append(q)
json.dump(d, open(sys.argv[2], "w"))
PY
run 0 "a long markdown report" --format markdown --all --details "$BB_TMP/details.md" "$BB_TMP/huge.json" "$BB_TMP/huge.json"
bb_expect_true "under 60,000 characters" test "$(wc -c <"$out")" -lt 60000
bb_expect_grep "the whole report is in $BB_TMP/details.md" "$out" "the details file named"
bb_expect_grep 'count=1699' "$BB_TMP/details.md" "the details file has the last point"

# The machine-speed check: the MPI-free kernel rate and the load average the
# records hold.  A candidate machine 2.5x slower is said; 10% is not.
speed() {  # speed OUT RATE LOAD
    python3 - "$D/base.json" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["system"] = {"cpu_model": "X", "kernel": "6.1", "os": "Debian", "load_average":
               {"before": [float(sys.argv[4])] * 3, "after": [float(sys.argv[4])] * 3},
               "kernel_rate": {"value": float(sys.argv[3]), "unit": "1/s", "scope": "run/rank",
                               "reason": None, "deterministic": False}}
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}
speed "$BB_TMP/fast-machine.json" 1e9 0.1
speed "$BB_TMP/slow-machine.json" 4e8 0.2
speed "$BB_TMP/same-machine.json" 9e8 0.3
speed "$BB_TMP/busy-machine.json" 9e8 6
run 0 "a slower machine" "$BB_TMP/fast-machine.json" "$BB_TMP/slow-machine.json"
bb_expect_grep 'WARNING kernel rate: base 1e+09, candidate 4e+08 1/s (x0.40): base and candidate ran on visibly different machines' \
    "$out" "the kernel rate warns"
bb_expect_grep '1 machine warnings' "$out" "counted in the summary"
run 0 "the same machine" "$BB_TMP/fast-machine.json" "$BB_TMP/same-machine.json"
bb_expect_grep '^  kernel rate: base 1e+09, candidate 9e+08 1/s (x0.90)$' "$out" "10% is no warning"
run 0 "a loaded machine" "$BB_TMP/fast-machine.json" "$BB_TMP/busy-machine.json"
bb_expect_grep 'WARNING load average (1 min, max): base 0.1, candidate 6 runnable' "$out" "the load warns"

bb_finish
