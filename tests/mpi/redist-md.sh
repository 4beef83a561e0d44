#!/bin/sh
# bbench-redist --workload md with --remap at -n 1 (intra) to 4: every step's
# >COORDS, <FORCES and <ENERGY checked after the engine's map changed by
# map update and by rebuild (data checked, not timed); the new layouts as
# the driver's; bad --remap values are usage errors; every md record meets
# tests/expect/redist-md.json (the runner's quantities, measurements counted).
. "$(dirname "$0")/../lib.sh"

X="$B/bench/bbench-redist"
out="$BB_TMP/out"
err="$BB_TMP/err"

bb_mpirun 2 "$X" --remap 2:0.5 > "$out" 2> "$err"
bb_expect_rc 2 $? "--remap without --workload md"
bb_expect_grep "remap applies to --workload md only" "$err" "--remap alone: message"
for bad in 0:0.5 2:0 2:1.5 2 x:0.5; do
    bb_mpirun 2 "$X" --workload md --remap "$bad" > "$out" 2> "$err"
    bb_expect_rc 2 $? "--remap $bad"
done
bb_mpirun 2 "$X" --workload md --direction '<' > "$out" 2> "$err"
bb_expect_rc 2 $? "--workload md with --direction"

# Remap every step (K = 1) so that every measured step follows a change.
# -n 1: one code (intra); -n 2..4: two codes.
for np in $(bb_ranks 1 2 3 4); do
    link=""
    [ "$np" -eq 1 ] && link="--link intra"
    # every method's remap path somewhere, few per launch, no warm-up
    # blocks (keeps it fast: at -n 3 they were 72 of the run's 212 calls,
    # each about 150 ms oversubscribed)
    case $np in
        1) from=spatial-shuffled:3; methods="root two-step direct pack sparse" ;;
        2) from=root; methods="root direct pack overlap" ;;
        3) from=random:2; methods="two-step sparse direct" ;;
        *) from=spatial-shuffled; methods="root pack" ;;
    esac
    nm=$(echo $methods | wc -w)
    bb_mpirun "$np" "$X" $link --workload md --remap 1:0.4 --elements 0,37 --from "$from" \
        --methods "$(echo $methods | tr ' ' ,)" --reps 1 --warmup 0 --warmup-blocks 0 \
        -o "$BB_TMP/md$np.json" > "$out" 2> "$err"
    rc=$?
    bb_expect_rc 0 $rc "md with remap at -n $np (from $from)"
    [ $rc -eq 0 ] || cat "$err" >&2
    for m in $methods; do
        for r in update rebuild; do
            bb_expect_grep "^ *37 .* $m *$r .*\(ok\|fastest\)$" "$out" "-n $np: $m $r row"
        done
    done
    want=$((4 * nm))
    if [ "$np" -gt 1 ]; then
        bb_expect_grep "^ *37 .* replicated *n/a .*\(ok\|fastest\)$" "$out" \
            "-n $np: replicated baseline row"
        want=$((want + 2))
    fi
    bb_expect_true "-n $np: no wrong data" sh -c "! grep -q 'wrong-data$' '$out'"
    bb_expect_true "-n $np: the md record meets tests/expect/redist-md.json" \
        "$B/tests/check-record" --expect "$S/tests/expect/redist-md.json" "$BB_TMP/md$np.json"
    # 2 sizes x (methods x 2 remap modes, + replicated on two codes)
    n=$(grep -c '"workload": *"md"' "$BB_TMP/md$np.json")
    bb_expect_true "-n $np: $want md points in the record ($n)" [ "$n" -eq "$want" ]
done
bb_finish
