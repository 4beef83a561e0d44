#!/bin/sh
# Oversubscribed records (issue 38 item 4): a pair where either record says
# topology.oversubscribed true gets no timing verdict unless asked
# (--time-oversubscribed): each timing "withheld" with the side named, exit
# 0 where the same figures on cores of their own are a regression; the
# contract is still checked.  No MPI.
. "$(dirname "$0")/compare-lib.sh"
over='r["topology"]["oversubscribed"] = True'

run 1 "not oversubscribed, slower: a regression (exit 1)" "$D/base.json" "$D/slow.json"

edit "$D/slow.json" "$BB_TMP/over-slow.json" "$over"
run 0 "an oversubscribed candidate, the same figures: no verdict (exit 0)" \
    "$D/base.json" "$BB_TMP/over-slow.json"
bb_expect_grep '^summary: [0-9]* points matched, 0 timing regressions, 0 improvements, 0 within noise' \
    "$out" "oversubscribed: no timing judged"
run 0 "the same as JSON" --format json "$D/base.json" "$BB_TMP/over-slow.json"
python3 - "$out" > "$BB_TMP/json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = [x for p in r["points"] for x in p["timings"]]
w = {x.get("reason") for x in t if x["verdict"] == "withheld"}
print("withheld=%d regressions=%d reasons=%s" % (
    r["summary"]["withheld"], r["summary"]["regressions"], sorted(w)))
PY
bb_expect_grep "^withheld=[1-9][0-9]* regressions=0 reasons=\['oversubscribed (candidate): timings include time-sharing; not judged without --time-oversubscribed'\]$" \
    "$BB_TMP/json" "every timing withheld, the oversubscribed side named"

edit "$D/base.json" "$BB_TMP/over-base.json" "$over"
run 0 "both oversubscribed: no verdict either" "$BB_TMP/over-base.json" "$BB_TMP/over-slow.json"
bb_expect_grep 'withheld' "$out" "both: withheld"

run 1 "--time-oversubscribed judges them: the regression (exit 1)" --time-oversubscribed \
    "$D/base.json" "$BB_TMP/over-slow.json"
bb_expect_grep '^summary: .* 1 timing regressions' "$out" "asked: the regression counted"

# The contract still holds: a payload change is a contract change either way.
edit "$D/payload.json" "$BB_TMP/over-payload.json" "$over"
run 1 "oversubscribed, a contract change still fails" "$D/base.json" "$BB_TMP/over-payload.json"
bb_finish
