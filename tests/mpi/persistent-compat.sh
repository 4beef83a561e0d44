#!/bin/sh
# The persistent collectives as configure found them (include/private/mpi-compat.h):
# with MPI_Allreduce_init or MPIX_Allreduce_init, libbbench calls that one
# and --requests persistent runs; with neither, --requests persistent,
# --mode raw-persistent and bbench-transfer's --requests persistent are
# usage errors (exit 2 on every rank, saying why).
. "$(dirname "$0")/../lib.sh"
out="$BB_TMP/out"
sum="$B/bench/bbench-sum"
if [ -n "$BB_ALLREDUCE_INIT" ]; then
    echo "this MPI makes persistent collectives with $BB_ALLREDUCE_INIT"
    nm -D "$B/lib/.libs/libbbench.so" > "$out" 2>&1
    bb_expect_grep " U $BB_ALLREDUCE_INIT\$" "$out" "libbbench calls $BB_ALLREDUCE_INIT"
    bb_mpirun 2 "$sum" --count 8 --samples 3 --requests persistent --mode protocol,raw-persistent \
        --output "$BB_TMP/sum.json" > "$out" 2>&1
    bb_expect_rc 0 $? "bbench-sum --requests persistent --mode protocol,raw-persistent"
    bb_expect_grep "raw-persistent" "$out" "the raw-persistent row"
else
    echo "this MPI has no persistent collectives: they are refused"
    for args in "--requests persistent" "--requests both" "--mode raw-persistent"; do
        # shellcheck disable=SC2086
        bb_mpirun 2 "$sum" --count 8 --samples 3 $args > "$out" 2>&1
        bb_expect_rc 2 $? "bbench-sum $args: a usage error"
        bb_expect_grep "no persistent collectives (neither MPI_Allreduce_init nor MPIX_Allreduce_init)" \
            "$out" "bbench-sum $args: says why"
    done
    bb_mpirun 2 "$B/bench/bbench-transfer" --samples 3 --requests persistent > "$out" 2>&1
    bb_expect_rc 2 $? "bbench-transfer --requests persistent: a usage error"
    bb_expect_grep "no persistent collectives" "$out" "bbench-transfer: says why"
fi
bb_finish
