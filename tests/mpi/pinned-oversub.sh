#!/bin/sh
# Oversubscription counts the PUs the ranks are pinned to: two ranks on one
# PU (taskset -c 0) are oversubscribed however many cores the host has.
. "$(dirname "$0")/../lib.sh"

get="$B/tests/record-get"
rec="$BB_TMP/r.json"
if ! command -v taskset > /dev/null 2>&1 || ! taskset -c 0 true 2> /dev/null; then
    echo "SKIP: taskset cannot pin to CPU 0"
    exit 77
fi

bb_mpirun 2 taskset -c 0 "$B/bench/bbench-sum" --count 8 --reps 1 --samples 3 \
    --warmup 0 --output "$rec" > "$BB_TMP/out" 2>&1
bb_expect_rc 0 $? "two ranks pinned to CPU 0"
bb_expect_true "both cpusets are \"0\"" \
    test "$("$get" "$rec" topology.per_rank.0.cpuset)$("$get" "$rec" topology.per_rank.1.cpuset)" = 00
bb_expect_true "oversubscribed: true" test "$("$get" "$rec" topology.oversubscribed)" = true
bb_expect_true "ranks_per_core: 2" test "$("$get" "$rec" topology.ranks_per_core)" = 2
bb_expect_grep "OVERSUBSCRIBED" "$BB_TMP/out" "the header says oversubscribed"

# One rank pinned to one PU is not oversubscribed.
rm -f "$rec"
bb_mpirun 1 taskset -c 0 "$B/bench/bbench-sum" --count 8 --reps 1 --samples 3 \
    --warmup 0 --output "$rec" > "$BB_TMP/out" 2>&1
bb_expect_rc 0 $? "one rank pinned to CPU 0"
bb_expect_true "one pinned rank: oversubscribed: false" \
    test "$("$get" "$rec" topology.oversubscribed)" = false
bb_expect_true "one pinned rank: ranks_per_core: 1" \
    test "$("$get" "$rec" topology.ranks_per_core)" = 1
bb_finish
