#!/bin/sh
# ci-compare.sh BUILD BASELINE: the CI step that doc/ci/*.yml run and .ci/run
# (through scripts/quickstart.sh) tests: a quick sweep of every benchmark,
# compared with the baseline records in report mode, into BUILD/artifacts/:
#
#   records/              the quick sweep's records (bbench.record/1)
#   compare.md            the markdown report (under 60,000 characters)
#   compare-details.md    the whole report, every timing
#   compare.json          the report as bbench.compare/1 JSON
#   compare-summary.txt   its summary lines (the job summary)
#   *.png                 plots of the records (when gnuplot is there)
#
# Exit status: that of bbench-compare --report (0, or 1 for a contract
# change, 2 unusable input), or 1 when the sweep failed.  Timings never fail,
# nor do the baseline's points the quick sweep does not run (lost points,
# which fail a comparison outside report mode).
set -u
[ $# -eq 2 ] || { echo "usage: sh scripts/ci-compare.sh BUILD BASELINE" >&2; exit 2; }
build=$1 base=$2
src=$(cd "$(dirname "$0")/.." && pwd)
art="$build/artifacts"
cmp="$build/bench/bbench-compare"
# The build's own launcher unless MPIEXEC says otherwise: the machine's
# `mpiexec` may be another MPI's (Debian's alternatives), whose processes
# the programs refuse as singletons.
if [ -z "${MPIEXEC:-}" ] && [ -f "$build/tests/env.sh" ]; then
    MPIEXEC=$(sed -n 's/^MPIEXEC="\(.*\)"$/\1/p' "$build/tests/env.sh")
    export MPIEXEC
fi
rm -rf "$art/records"
mkdir -p "$art/records"
sh "$src/tools/bbench-baseline" --quick --bindir "$build/bench" --out "$art/records" \
    || { echo "ci-compare: the quick sweep failed" >&2; exit 1; }
"$cmp" --report --format markdown --details "$art/compare-details.md" "$base" "$art/records" \
    >"$art/compare.md"
rc=$?
"$cmp" --report --format json "$base" "$art/records" >"$art/compare.json"
# The text report on the log; its summary block (up to the first blank line,
# then the warnings) is the job summary.
"$cmp" --report "$base" "$art/records" | tee "$art/compare.txt"
sed -n '1,/^$/p' "$art/compare.txt" >"$art/compare-summary.txt"
grep 'WARNING\|CONTRACT CHANGE' "$art/compare.txt" >>"$art/compare-summary.txt"
if command -v gnuplot >/dev/null 2>&1; then
    BBENCH_COMPARE="$cmp" sh "$src/tools/bbench-plot" --out "$art" "$art/records" \
        || echo "ci-compare: plots failed (not fatal)" >&2
else
    echo "ci-compare: no gnuplot: no plots" >&2
fi
exit $rc
