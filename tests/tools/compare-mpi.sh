#!/bin/sh
# Records of two MPI libraries (issue 39 item 6): an MPICH record against an
# Open MPI one gets no timing verdict (each timing "withheld", the summary
# says why, exit 0 where the same figures under one library are a
# regression), while contracts are still checked; two versions of one
# library are still judged.  No MPI.
. "$(dirname "$0")/compare-lib.sh"
# withheld_json REPORT: a JSON report's withheld timings (their count, the
# summary's, the regressions, the points' verdicts, the first reason).
withheld_json() {
    python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = [x for p in r["points"] for x in p["timings"]]
w = [x for x in t if x["verdict"] == "withheld"]
print("withheld=%d summary=%d regressions=%d pairs=%s reason=%s" % (
    len(w), r["summary"]["withheld"], r["summary"]["regressions"],
    ",".join(sorted(set(p["verdict"] for p in r["points"]))), w[0]["reason"] if w else ""))
PY
}
ompi='r["runtime"]["mpi_library"] = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4"'

run 1 "one library, slower: a regression (exit 1)" "$D/base.json" "$D/slow.json"
bb_expect_grep '^summary: .* 1 timing regressions' "$out" "one library: the regression counted"

edit "$D/slow.json" "$BB_TMP/ompi-slow.json" "$ompi"
run 0 "MPICH against Open MPI, the same figures: no verdict (exit 0)" \
    "$D/base.json" "$BB_TMP/ompi-slow.json"
bb_expect_grep '^summary: [0-9]* points matched, 0 timing regressions, 0 improvements, 0 within noise' \
    "$out" "two libraries: no timing judged"
bb_expect_grep ', [1-9][0-9]* withheld (timings not judged: two MPI libraries, canaries in two modes, or oversubscribed; each says which)' \
    "$out" "two libraries: the summary says why"
run 0 "the same as JSON" --format json "$D/base.json" "$BB_TMP/ompi-slow.json"
withheld_json "$out" > "$BB_TMP/json"
bb_expect_grep '^withheld=\([1-9][0-9]*\) summary=\1 regressions=0 pairs=timings withheld reason=measured under two MPI libraries (MPICH against Open MPI): not judged$' \
    "$BB_TMP/json" "two libraries: every measured timing withheld, with its reason"

edit "$D/base.json" "$BB_TMP/ompi-vocab.json" "$ompi"'; r["vocabulary"] = "mpp-99"'
run 1 "two libraries: a contract change still fails (exit 1)" "$D/base.json" "$BB_TMP/ompi-vocab.json"
bb_expect_grep 'vocabulary: base mpp-01, candidate mpp-99' "$out" "two libraries: the contract change named"

edit "$D/slow.json" "$BB_TMP/mpich41-slow.json" \
    'r["runtime"]["mpi_library"] = "MPICH Version:\t4.1.2\nMPICH Device:\tch4:ofi"'
run 1 "two versions of MPICH, slower: still a regression (exit 1)" \
    "$D/base.json" "$BB_TMP/mpich41-slow.json"

# Canaries (issue 60 item 2): two records whose paths between ranks sat in
# different modes are not judged against each other; the same modes are.
fast='r.setdefault("run", {})["canary"] = {"mode_values": [{"median_s": 1.8e-7, "values": 40}]}'
slow='r.setdefault("run", {})["canary"] = {"mode_values": [{"median_s": 6.1e-7, "values": 38}, {"median_s": 1.9e-7, "values": 3}]}'
edit "$D/base.json" "$BB_TMP/canary-fast.json" "$fast"
edit "$D/slow.json" "$BB_TMP/canary-slow.json" "$slow"
edit "$D/slow.json" "$BB_TMP/canary-same.json" "$fast"
run 0 "canaries in two modes, slower: no verdict (exit 0)" \
    "$BB_TMP/canary-fast.json" "$BB_TMP/canary-slow.json"
bb_expect_grep '^summary: [0-9]* points matched, 0 timing regressions.*, [1-9][0-9]* withheld' \
    "$out" "two modes: no regression called, the timings withheld"
run 0 "the same as JSON" --format json "$BB_TMP/canary-fast.json" "$BB_TMP/canary-slow.json"
withheld_json "$out" > "$BB_TMP/json"
bb_expect_grep '^withheld=\([1-9][0-9]*\) summary=\1 regressions=0 pairs=timings withheld reason=canaries in different modes (base 0.18 us, candidate 0.61 us between ranks 0 and 1): the machine, not the code; not judged$' \
    "$BB_TMP/json" "two modes: each timing says why"
run 1 "canaries in one mode, slower: a regression (exit 1)" \
    "$BB_TMP/canary-fast.json" "$BB_TMP/canary-same.json"
bb_finish
