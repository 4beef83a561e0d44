#!/bin/sh
# schema/bbench.record-1.schema.json: valid draft 2020-12, met by the baseline
# records in results/, and able to fail (a unit no record may have, a null
# without its reason, a point without status).  schema/bbench.compare-1:
# met by a bbench-compare --format json report, and able to fail.
. "$(dirname "$0")/../lib.sh"
if [ -z "${BB_SCHEMA_PYTHON:-}" ]; then
    echo "skipped: configure found no python3 with jsonschema (apt-get install python3-jsonschema)"
    exit 77
fi
v() { "$BB_SCHEMA_PYTHON" "$S/tests/validate-records.py" "$S/schema" "$@"; }
bb_expect_true "results/ records match the schema" v "$S"/results/*.json
src=$(ls "$S"/results/sum-*.json | head -n 1)
"$BB_SCHEMA_PYTHON" - "$src" "$BB_TMP" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
def write(name, mutate):
    d = json.load(open(src))
    mutate(d)
    json.dump(d, open(f"{out}/bad-{name}.json", "w"))
write("unit", lambda d: d["points"][0]["quantities"]["elapsed"].update(unit="ms"))
write("reason", lambda d: d["points"][0]["quantities"]["network.bytes"].update(reason=None))
write("status", lambda d: d["points"][0].pop("status"))
write("median", lambda d: d["points"][0]["quantities"]["elapsed"].pop("median"))
PY
"$B/bench/bbench-compare" --format json "$S/results" "$S/results" >"$BB_TMP/report.json"
bb_expect_rc 0 $? "a compare report of results/ against itself"
bb_expect_true "the compare report matches bbench.compare-1" v "$BB_TMP/report.json"
bb_expect_true "and was checked" sh -c "'$BB_SCHEMA_PYTHON' '$S/tests/validate-records.py' '$S/schema' '$BB_TMP/report.json' | grep -q '1 records checked, 0 invalid'"
"$BB_SCHEMA_PYTHON" - "$BB_TMP/report.json" "$BB_TMP" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
d = json.load(open(src))
d["points"][0]["timings"][0]["verdict"] = "same"
json.dump(d, open(f"{out}/bad-verdict.json", "w"))
PY
for f in "$BB_TMP"/bad-*.json; do
    v "$f" > "$BB_TMP/out" 2>&1
    bb_expect_rc 1 $? "$(basename "$f"): invalid"
    mv "$f" "$BB_TMP/$(basename "$f" .json).txt"  # not a record for bb_finish
done
bb_finish
