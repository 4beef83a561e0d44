#!/bin/sh
# A lost host: host 2's ranks are killed (by PID) in the middle of a run on
# 2 hosts x 2 ranks.  The job ends well within its timeout, every surviving
# process is gone, the launcher says which rank died, no record (nor a
# temporary file) is written, and the exit status is not 0.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mh-lib.sh"

rec="$BB_TMP/lost.json"
out="$BB_TMP/out" err="$BB_TMP/err"
# One world of 4 ranks, not 4 singletons (which would not notice a loss).
mh_run 2 4 "$B/bench/bbench-sum" --count 8 --samples 3 --reps 1 --warmup 0 \
    --output "$BB_TMP/world.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "a short run on 2 hosts x 2"
bb_expect_true "one world of 4 ranks" test "$("$get" "$BB_TMP/world.json" topology.ranks)" = 4
# Long enough to be killed in the middle: thousands of samples.
# A survivor's fatal message also goes to a file: the launcher may end
# before it relays the survivor's stderr.
tstart=$(date +%s)
BB_FATAL_VERDICT="$BB_TMP/fatal.txt" BBNC_LEFTOVERS=keep MPIEXEC_TIMEOUT=90 timeout -k 5 120 sh "$NC" run 2 4 \
    "$B/bench/bbench-sum" --count 8 --samples 100000 --reps 1 --warmup 0 \
    --output "$rec" >"$out" 2>"$err" &
job=$!
ranks_on() {
    for p in $(ip netns pids "$1" 2>/dev/null); do
        [ "$(cat /proc/"$p"/comm 2>/dev/null)" = bbench-sum ] && echo "$p"
    done
}
# Wait until the measurement runs (its progress line), at most 60 s.
i=0
while [ $i -lt 600 ] && ! grep -q "point 1/1" "$err" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
bb_expect_grep "point 1/1" "$err" "the run reached its measurement"
victims=$(ranks_on bbnc-h2)
survivors=$(ranks_on bbnc-h1)
bb_expect_true "2 ranks on each host before the kill" \
    test "$(echo $victims | wc -w)" -eq 2 -a "$(echo $survivors | wc -w)" -eq 2
sleep 0.5
t0=$(date +%s)
# shellcheck disable=SC2086
kill -KILL $victims
wait $job
rc=$?
t1=$(date +%s)
echo "job ended $((t1 - t0)) s after the kill, exit $rc"
bb_expect_true "exit status is not 0 (got $rc)" test "$rc" -ne 0
# Open MPI's launcher exits 137 itself for a rank killed by signal 9: the
# test's own timeout is told by the time it took.
bb_expect_true "not ended by the test's own timeout (got $rc after $((t1 - tstart)) s)" \
    test "$rc" -ne 124 -a $((t1 - tstart)) -lt 120
bb_expect_true "the job ended within 60 s of the kill (MPIEXEC_TIMEOUT is 90)" \
    test $((t1 - t0)) -le 60
# Parent-death signals reach them as the launcher's processes go: a few
# seconds at most.
i=0
while :; do
    left=
    for p in $survivors; do
        [ "$(cat /proc/"$p"/comm 2>/dev/null)" = bbench-sum ] \
            && ! grep -q '^State:.*Z' /proc/"$p"/status 2>/dev/null && left="$left $p"
    done
    [ -z "$left" ] || [ $i -ge 100 ] && break
    sleep 0.1
    i=$((i + 1))
done
echo "survivors gone $i tenths of a second after the job ended"
bb_expect_true "no surviving rank is left on host 1:${left:- none}" test -z "$left"
bb_expect_true "nothing left in host 2 either" test -z "$(ranks_on bbnc-h2)"
cat "$out" "$err" "$BB_TMP/fatal.txt" >"$BB_TMP/all" 2>/dev/null
bb_expect_grep "BAD TERMINATION\|KILLED BY SIGNAL: 9\|killed by signal 9\|exited on signal 9\|fatal" "$BB_TMP/all" \
    "a clear message says the job lost a process"
bb_expect_true "no record written" test ! -e "$rec"
bb_expect_true "no temporary record left" test -z "$(ls "$BB_TMP" | grep 'lost\.json.')"
bb_finish
