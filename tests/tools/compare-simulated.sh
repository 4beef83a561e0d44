#!/bin/sh
# bbench-compare never matches a simulated point (runtime.simulated: an
# object, doc/simulate.md) with a measured one, nor points simulated on
# different platforms; points simulated alike match.  The simulated records
# are tests/tools/data/base.json with runtime.simulated added.  No MPI.
. "$(dirname "$0")/../lib.sh"

C="$B/bench/bbench-compare"
D="$S/tests/tools/data"
out="$BB_TMP/out"
err="$BB_TMP/err"

# simulate IN OUT SHA: IN as if simulated on a platform of hash SHA.
simulate() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rt = d["runtime"]
rt.pop("simulated_reason", None)
rt["simulated"] = {"simulator": "SimGrid SMPI", "version": "3.32.0",
                   "platform": {"file": "/p/flat-cluster.xml", "sha256": sys.argv[3],
                                "hosts": 1024},
                   "configuration": ["--cfg=smpi/test:0"]}
json.dump(d, open(sys.argv[2], "w"))
PY
}
sha_a=aaaaaaaaaaaa0000000000000000000000000000000000000000000000000000
sha_b=bbbbbbbbbbbb0000000000000000000000000000000000000000000000000000
simulate "$D/base.json" "$BB_TMP/sim-a.json" "$sha_a"
simulate "$D/base.json" "$BB_TMP/sim-a2.json" "$sha_a"
simulate "$D/base.json" "$BB_TMP/sim-b.json" "$sha_b"

"$C" "$D/base.json" "$BB_TMP/sim-a.json" >"$out" 2>"$err"
bb_expect_rc 2 $? "measured against simulated: nothing matches"
bb_expect_grep 'no point of .*base.json matches a point of .*sim-a.json' "$err" \
    "the files are named"

"$C" "$BB_TMP/sim-a.json" "$BB_TMP/sim-a2.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "simulated alike: the points match"
bb_expect_grep 'summary: 3 points matched' "$out" "all three simulated points matched"

"$C" "$BB_TMP/sim-a.json" "$BB_TMP/sim-b.json" >"$out" 2>"$err"
bb_expect_rc 2 $? "simulated on another platform: nothing matches"

# Beside measured points that match, the simulated ones are listed
# unmatched, labelled as simulated.
mkdir "$BB_TMP/mixed"
cp "$D/base.json" "$BB_TMP/mixed/measured.json"
cp "$BB_TMP/sim-a.json" "$BB_TMP/mixed/simulated.json"
"$C" --all "$D/base.json" "$BB_TMP/mixed" >"$out" 2>"$err"
bb_expect_rc 0 $? "a measured and a simulated record against the measured one"
bb_expect_grep '3 points matched' "$out" "the measured points match"
bb_expect_grep 'candidate only: sum n=2 simulated=3.32.0/aaaaaaaaaaaa count=8' "$out" \
    "a simulated point is unmatched, and says why"
bb_expect_true "no simulated point is matched" \
    test "$(grep -c 'candidate only: sum n=2 simulated=' "$out")" -eq 3

bb_finish
