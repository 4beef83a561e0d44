#!/bin/sh
# Records of two MPI libraries (issue 39 item 6): an MPICH record against an
# Open MPI one gets no timing verdict (each timing "withheld", the summary
# says why, exit 0 where the same figures under one library are a
# regression), while contracts are still checked; two versions of one
# library are still judged.  No MPI.
. "$(dirname "$0")/compare-lib.sh"
ompi='r["runtime"]["mpi_library"] = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4"'

run 1 "one library, slower: a regression (exit 1)" "$D/base.json" "$D/slow.json"
bb_expect_grep '^summary: .* 1 timing regressions' "$out" "one library: the regression counted"

edit "$D/slow.json" "$BB_TMP/ompi-slow.json" "$ompi"
run 0 "MPICH against Open MPI, the same figures: no verdict (exit 0)" \
    "$D/base.json" "$BB_TMP/ompi-slow.json"
bb_expect_grep '^summary: [0-9]* points matched, 0 timing regressions, 0 improvements, 0 within noise' \
    "$out" "two libraries: no timing judged"
bb_expect_grep ', [1-9][0-9]* withheld (timings not judged: two MPI libraries, or oversubscribed; each says which)' \
    "$out" "two libraries: the summary says why"
run 0 "the same as JSON" --format json "$D/base.json" "$BB_TMP/ompi-slow.json"
python3 - "$out" > "$BB_TMP/json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = [x for p in r["points"] for x in p["timings"]]
w = [x for x in t if x["verdict"] == "withheld"]
print("withheld=%d summary=%d regressions=%d pairs=%s reason=%s" % (
    len(w), r["summary"]["withheld"], r["summary"]["regressions"],
    ",".join(sorted(set(p["verdict"] for p in r["points"]))), w[0]["reason"] if w else ""))
PY
bb_expect_grep '^withheld=\([1-9][0-9]*\) summary=\1 regressions=0 pairs=timings withheld reason=measured under two MPI libraries (MPICH against Open MPI): not judged$' \
    "$BB_TMP/json" "two libraries: every measured timing withheld, with its reason"

edit "$D/base.json" "$BB_TMP/ompi-vocab.json" "$ompi"'; r["vocabulary"] = "mpp-99"'
run 1 "two libraries: a contract change still fails (exit 1)" "$D/base.json" "$BB_TMP/ompi-vocab.json"
bb_expect_grep 'vocabulary: base mpp-01, candidate mpp-99' "$out" "two libraries: the contract change named"

edit "$D/slow.json" "$BB_TMP/mpich41-slow.json" \
    'r["runtime"]["mpi_library"] = "MPICH Version:\t4.1.2\nMPICH Device:\tch4:ofi"'
run 1 "two versions of MPICH, slower: still a regression (exit 1)" \
    "$D/base.json" "$BB_TMP/mpich41-slow.json"
bb_finish
