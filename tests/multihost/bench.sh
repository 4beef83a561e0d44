#!/bin/sh
# Every measuring benchmark across 2 fake hosts (network namespaces, TCP
# between them) at 1 and 2 ranks per host: exit 0, a record, and a topology
# that tells where each rank ran.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mh-lib.sh"

tiny="--samples 3 --reps 1 --warmup 0 --warmup-blocks 0"
for np in $(bb_ranks 2 4); do
    for bench in sum transfer overlap redist; do
        case $bench in
        sum) args="--count 1,1K" ;;
        transfer) args="--bytes 8,4K --batches 0,1" ;;
        overlap) args="--bytes 4K --batches 1" ;;
        redist) args="--elements 100 --methods root,direct" ;;
        esac
        rec="$BB_TMP/$bench-$np.json"
        # shellcheck disable=SC2086
        mh_run 2 "$np" "$B/bench/bbench-$bench" $args $tiny --output "$rec" \
            >"$BB_TMP/out" 2>"$BB_TMP/err"
        rc=$?
        bb_expect_rc 0 $rc "bbench-$bench on 2 hosts x $((np / 2))"
        [ $rc -eq 0 ] || sed 's/^/    /' "$BB_TMP/err" | tail -20 >&2
        bb_expect_grep "$np ranks on 2 hosts" "$BB_TMP/out" "bbench-$bench header names 2 hosts"
        if [ -s "$rec" ]; then
            mh_topology "$rec" "$np" "bbench-$bench 2x$((np / 2))"
            bb_expect_true "bbench-$bench 2x$((np / 2)): every point ok" \
                test "$("$get" "$rec" points.0.status)" = ok
        else
            bb_expect_true "bbench-$bench 2x$((np / 2)): record written" false
        fi
    done
done
bb_finish
