#!/bin/sh
# bbench-compare against hostile inputs: FIFOs and other non-regular files
# (never waited on), output that cannot be written (/dev/full), and
# candidates made from the base record that must never pass: another unit,
# a missing timing, a plain value for a timing, a member twice, a negative
# or infinite time, bytes that are not UTF-8.  Each is exit 2 (3 for lost
# output) with the file, point and quantity named.  No MPI.
. "$(dirname "$0")/compare-lib.sh"

# hostile NAME PYTHON: $BB_TMP/NAME.json, the base record changed by the
# python statements (r is the record, q the quantities of points[1]).
hostile() {
    edit "$D/base.json" "$BB_TMP/$1.json" "$2"
}

# FIFOs: as an operand and inside a directory, refused at once.
mkfifo "$BB_TMP/fifo.json"
run 2 "a FIFO operand" "$D/base.json" "$BB_TMP/fifo.json"
bb_expect_grep 'fifo.json: a FIFO, not a regular file' "$err" "the FIFO named"
mkdir "$BB_TMP/d"
cp "$D/base.json" "$BB_TMP/d/a.json"
mkfifo "$BB_TMP/d/b.json"
run 2 "a FIFO in a directory" "$D/base.json" "$BB_TMP/d"
bb_expect_grep 'd/b.json: a FIFO, not a regular file' "$err" "the FIFO in the directory named"
run 2 "a FIFO for --extract" --extract "$BB_TMP/d"
rm "$BB_TMP/d/b.json"
mkdir "$BB_TMP/d/c.json"
run 2 "a directory named *.json in a directory" "$D/base.json" "$BB_TMP/d"
bb_expect_grep 'c.json: a directory, not a regular file' "$err" "the directory entry named"
rmdir "$BB_TMP/d/c.json"

# Output that is lost is an error, never exit 0.
if [ -w /dev/full ]; then
    # The stored results: more than one stdio buffer, so a write fails
    # before the final flush (which alone was checked).
    bb_serial "$C" --extract "$S/results" >/dev/full 2>"$err"
    bb_expect_rc 3 $? "--extract to /dev/full"
    bb_expect_grep 'writing the output failed' "$err" "lost output reported"
    bb_serial "$C" "$D/base.json" "$D/base.json" >/dev/full 2>"$err"
    bb_expect_rc 3 $? "table report to /dev/full"
    bb_serial "$C" --format json "$S/results" "$S/results" >/dev/full 2>"$err"
    bb_expect_rc 3 $? "json report to /dev/full"
    bb_serial "$C" "$D/base.json" "$D/slow.json" >/dev/full 2>"$err"
    bb_expect_rc 3 $? "a regression report to /dev/full is lost output, not a verdict"
    bb_serial "$C" --help >/dev/full 2>"$err"
    bb_expect_rc 3 $? "--help to /dev/full"
else
    echo "note: no writable /dev/full, lost-output checks skipped"
fi

# Candidates that are worse but were judged "unmeasured" or "same".
hostile ms 'q["elapsed"].update(unit="ms", value=21000, median=21000, range=[20000, 22000], samples=[20000, 22000, 21000])'
run 2 "elapsed in ms" "$D/base.json" "$BB_TMP/ms.json"
bb_expect_grep 'ms.json: points\[1\].quantities.elapsed: unit "ms" where the base (.*base.json: points\[1\]) has "s"' \
    "$err" "unit mismatch names file, point and quantity"
hostile missing 'del q["elapsed"]'
run 2 "elapsed missing" "$D/base.json" "$BB_TMP/missing.json"
bb_expect_grep 'missing.json: points\[1\].quantities.elapsed: missing; the base .* has this timing' \
    "$err" "missing timing named"
hostile plain 'q["elapsed"] = {"value": 0.021, "unit": "s", "scope": "call/max-rank", "reason": None}'
run 2 "elapsed as a plain value 1000x slower" "$D/base.json" "$BB_TMP/plain.json"
bb_expect_grep 'plain.json: points\[1\].quantities.elapsed: a value without median and range' \
    "$err" "plain value named"
hostile dup 'r = json.dumps(r, indent=1).replace("\"elapsed\": {", "\"elapsed\": {\"value\": 1, \"unit\": \"s\", \"median\": 1, \"range\": [1, 1]},\n \"elapsed\": {", 1)'
run 2 "elapsed twice in one point" "$D/base.json" "$BB_TMP/dup.json"
bb_expect_grep 'dup.json: points\[0\].first_call: member "elapsed" appears twice' "$err" "duplicate member named"
hostile dupq 'r = json.dumps(r, indent=1).replace("\"memory.tracked_live\"", "\"elapsed\"", 1)'
run 2 "a second elapsed in the quantities" "$D/base.json" "$BB_TMP/dupq.json"
bb_expect_grep 'dupq.json: points\[0\].quantities: member "elapsed" appears twice' "$err" "duplicate quantity named"
hostile neg 'q["elapsed"].update(value=-1e-05, median=-1e-05, range=[-1.1e-05, -0.9e-05], samples=[-1.1e-05, -1e-05, -0.9e-05])'
run 2 "a negative time" "$D/base.json" "$BB_TMP/neg.json"
bb_expect_grep 'neg.json: points\[1\].quantities.elapsed.value: -1e-05 s is not a duration' "$err" "negative time named"
run 2 "a negative time in the base" "$BB_TMP/neg.json" "$D/base.json"
hostile inf 'q["elapsed"]["range"][1] = "INF"; r = json.dumps(r, indent=1).replace("\"INF\"", "1e999")'
run 2 "an infinite time" "$D/base.json" "$BB_TMP/inf.json"
bb_expect_grep 'inf.json: points\[1\].quantities.elapsed.range\[...\]: inf s is not a duration' "$err" "infinite time named"
hostile strs 'q["elapsed"]["samples"] = ["fast", "faster"]'
run 2 "samples that are not numbers" "$D/base.json" "$BB_TMP/strs.json"
bb_expect_grep 'strs.json: points\[1\].quantities.elapsed.samples: not an array of numbers' "$err" "samples named"
hostile unitdet 'q["communication.payload"]["unit"] = "count"'
run 2 "a deterministic quantity in another unit" "$D/base.json" "$BB_TMP/unitdet.json"
bb_expect_grep 'unitdet.json: points\[1\].quantities.communication.payload: unit "count"' "$err" "deterministic unit named"
# Still fine: a timing null with its reason on the candidate side is shown
# as not measured, and a timing the base lacks is not judged.
hostile nulled 'q["elapsed"] = {"value": None, "unit": "s", "scope": "call/max-rank", "reason": "not measured"}'
run 0 "a candidate timing null with a reason" "$D/base.json" "$BB_TMP/nulled.json"
bb_expect_grep 'unmeasured' "$out" "shown as unmeasured"

# Text that would forge report lines: a control character in a quantity
# name is refused; one in a parameter value stays inside its label.
hostile ctlname 'q["elapsed\nsummary: forged"] = q.pop("elapsed")'
run 2 "a quantity name with a newline" "$D/base.json" "$BB_TMP/ctlname.json"
bb_expect_grep 'ctlname.json: points\[1\].quantities: a quantity name holds a control character' "$err" "control character named"
hostile ctlval 'r["points"][1]["parameters"]["mode"] = "protocol\nsummary: 99 points matched, 0 timing regressions"'
run 0 "a parameter value with a newline" "$BB_TMP/ctlval.json" "$BB_TMP/ctlval.json"
bb_expect_true "no forged line in the report" test "$(grep -c '^summary: 99' "$out")" -eq 0

# Extraction has one column per parameter name: a record with thousands
# is refused at once rather than searched for minutes.
hostile wide 'r["points"][0]["parameters"].update({"p%d" % i: i for i in range(5000)})'
run 2 "--extract of 5000 parameter names" --extract "$BB_TMP/wide.json"
bb_expect_grep 'wide.json: more than 1000 distinct parameter names' "$err" "too many columns named"

hostile many 'q.update({"x%d" % i: {"value": i, "unit": "count"} for i in range(10001)})'
run 2 "a point of 10001 quantities" "$BB_TMP/many.json" "$BB_TMP/many.json"
bb_expect_grep 'many.json: points\[1\].quantities: more than 10000 quantities' "$err" "too many quantities named"

# Bytes that are not UTF-8: not a record (JSON text is UTF-8).
sed 's/"node1"/"node\xff"/' "$D/base.json" >"$BB_TMP/latin.json"
run 2 "a record that is not UTF-8" "$D/base.json" "$BB_TMP/latin.json"
bb_expect_grep 'latin.json: byte [0-9]*: not UTF-8' "$err" "the byte named"
# A file name that is not UTF-8 still gives a UTF-8 JSON report.
cp "$D/base.json" "$BB_TMP/r$(printf '\377').json"
run 0 "a record whose name is not UTF-8" --format json "$D/base.json" "$BB_TMP/r$(printf '\377').json"
bb_expect_true "the JSON report is UTF-8" \
    python3 -c 'import json, sys; json.loads(open(sys.argv[1], encoding="utf-8", errors="strict").read())' "$out"

bb_finish
