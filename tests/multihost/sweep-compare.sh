#!/bin/sh
# bbench-sweep drives a multi-host sweep from a hostfile through the
# namespace cluster's launcher; bbench-compare never matches a 1-host point
# with the same point on 2 hosts, and matches 2-host records with each other.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mh-lib.sh"

SW="$S/tools/bbench-sweep"
CMP="$B/bench/bbench-compare"
SUM="$B/bench/bbench-sum"
tiny="--count 8 --samples 3 --reps 1 --warmup 0"
# The hostfile in the launcher's own format.
# shellcheck disable=SC2086
bb_launcher_hostfile_write "$(bb_launcher_kind $MPIEXEC)" "$BB_TMP/hosts" bbnc-h1:1 bbnc-h2:1

# shellcheck disable=SC2086
MPIEXEC="sh $NC mpiexec" sh "$SW" --ranks 2 --hostfile "$BB_TMP/hosts" --out "$BB_TMP/two" \
    --timeout "$BB_TIMEOUT" -- "$SUM" $tiny >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_rc 0 $? "sweep over a hostfile of 2 fake hosts"
rec="$BB_TMP/two/sum-n2.json"
bb_expect_true "sweep record written" test -s "$rec"
[ -s "$rec" ] && mh_topology "$rec" 2 "swept record"
sh "$SW" --ranks 2 --hostfile "$BB_TMP/missing" --out "$BB_TMP/x" -- "$SUM" >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_rc 2 $? "unreadable hostfile is a usage error"

# The same point on one host (shared memory), plain mpiexec.
mkdir -p "$BB_TMP/one"
# shellcheck disable=SC2086
bb_mpirun 2 "$SUM" $tiny --output "$BB_TMP/one/sum-n2.json" >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_rc 0 $? "the same point on 1 host"
bb_expect_true "1-host record says 1 host" test "$("$get" "$BB_TMP/one/sum-n2.json" topology.hosts)" = 1

"$CMP" "$BB_TMP/one" "$BB_TMP/two" >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_grep '0 points matched' "$BB_TMP/out" "1 host and 2 hosts are not matched"
bb_expect_grep 'hosts=2' "$BB_TMP/out" "the unmatched 2-host points are named with their hosts"
"$CMP" --report "$BB_TMP/two" "$BB_TMP/two" >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_grep '2 points matched' "$BB_TMP/out" "2-host records match each other"
bb_finish
