#!/bin/sh
# Issue 24 item 3 and issue 23 item 10: a record is true under whichever
# MPI runs it.  The binding is what the ranks' cpusets are (taskset pins
# them whatever the launcher's default), the finalize guard says whether it
# is active or why not, bbench-overlap explains progress for the library
# that runs; a bad BB_FINALIZE_TIMEOUT is exit 2 on every rank with no
# record, and -q prints nothing on stderr.
. "$(dirname "$0")/../lib.sh"
. "$S/tests/mpi/record-lib.sh"
SUM="$B/bench/bbench-sum"
r="$BB_TMP/r.json"

# run WHAT ARGS...: bbench-sum $FEW on 2 ranks, exit 0, a record.
run() {
    what=$1
    shift
    rm -f "$r"
    bb_mpirun 2 "$@" $FEW -q -o "$r" >"$BB_TMP/out" 2>"$BB_TMP/err"
    bb_expect_rc 0 $? "$what: run"
}

# The binding: the policy the cpusets give, and consistent with per_rank.
consistent() {
    b0=$(rec "$r" topology.per_rank.0.bound_to)
    b1=$(rec "$r" topology.per_rank.1.bound_to)
    want=$b0
    [ "$b0" = "$b1" ] || want=mixed
    bb_expect_true "$1: binding.policy $(rec "$r" runtime.launcher.binding.policy) is the ranks' ($b0, $b1)" \
        test "$(rec "$r" runtime.launcher.binding.policy)" = "$want"
}
run "default binding" "$SUM"
consistent "the launcher's default"
case $bb_launcher in
openmpi) pin="--bind-to none" ;;
*) pin= ;;
esac
# shellcheck disable=SC2086
run "taskset -c 0" $pin taskset -c 0 "$SUM"
policy=$(rec "$r" runtime.launcher.binding.policy)
bb_expect_true "pinned by taskset: the policy is core or hwthread, not '$policy'" \
    sh -c "test '$policy' = core || test '$policy' = hwthread"
consistent "taskset -c 0"
bb_expect_true "both ranks counted bound" \
    test "$(rec "$r" runtime.launcher.binding.ranks_bound)" = 2

# The finalize guard: active exactly when the launcher gave a PMI-1 socket.
run "finalize guard" "$SUM"
if [ -n "$(rec "$r" runtime.launcher.env.PMI_FD)" ]; then
    bb_expect_true "PMI_FD set: the guard is active" \
        test "$(rec "$r" runtime.launcher.finalize_guard.active)" = true
else
    bb_expect_true "no PMI_FD: the guard is not active" \
        test "$(rec "$r" runtime.launcher.finalize_guard.active)" = false
    rec "$r" runtime.launcher.finalize_guard.reason >"$BB_TMP/why"
    bb_expect_grep "no PMI_FD" "$BB_TMP/why" "and says why"
fi
BB_FINALIZE_TIMEOUT=0 run "BB_FINALIZE_TIMEOUT=0" "$SUM"
rec "$r" runtime.launcher.finalize_guard.reason >"$BB_TMP/why"
bb_expect_grep "BB_FINALIZE_TIMEOUT=0\|no PMI_FD" "$BB_TMP/why" "BB_FINALIZE_TIMEOUT=0: off, and why"

# A bad BB_FINALIZE_TIMEOUT: exit 2 on every rank, named, no record.
for bad in 5x abc -1 nan 1e999 3601; do
    rm -f "$r"
    BB_FINALIZE_TIMEOUT=$bad bb_mpirun 2 sh -c \
        '"$0" "$@"; echo "exit $?" >>"'"$BB_TMP"'/codes"' "$SUM" $FEW -o "$r" \
        >"$BB_TMP/out" 2>"$BB_TMP/err" </dev/null
    bb_expect_true "BB_FINALIZE_TIMEOUT=$bad: both ranks exit 2" \
        test "$(grep -c '^exit 2$' "$BB_TMP/codes")" -eq 2
    rm -f "$BB_TMP/codes"
    bb_expect_true "BB_FINALIZE_TIMEOUT=$bad: the message, once" test "$(grep -c \
        "BB_FINALIZE_TIMEOUT='$bad' is not a number of seconds" "$BB_TMP/err")" -eq 1
    bb_expect_true "BB_FINALIZE_TIMEOUT=$bad: no record" test ! -e "$r"
done
# One rank alone with a bad value: every rank still leaves (no hang).
case $bb_launcher in
hydra) one="-n 1 $SUM $FEW : -n 1 -env BB_FINALIZE_TIMEOUT bad $SUM $FEW" ;;
openmpi) one="-n 1 $SUM $FEW : -n 1 -x BB_FINALIZE_TIMEOUT=bad $SUM $FEW" ;;
*) one= ;;
esac
if [ -n "$one" ]; then
    # shellcheck disable=SC2086
    timeout -k 5 "$BB_TIMEOUT" $MPIEXEC $one >"$BB_TMP/out" 2>"$BB_TMP/err"
    bb_expect_rc 2 $? "bad BB_FINALIZE_TIMEOUT on rank 1 only"
    bb_expect_grep "rank 1: BB_FINALIZE_TIMEOUT='bad'" "$BB_TMP/err" "rank 0 names rank 1's value"
else
    echo "skipped: one rank's environment needs Hydra's -env or Open MPI's -x (launcher: $bb_launcher)"
fi

# -q: nothing on stderr in any format; the table and its notes stay on stdout.
for fmt in table csv json; do
    rm -f "$r"
    bb_mpirun 2 "$SUM" $FEW -q --format $fmt -o "$r" >"$BB_TMP/out" 2>"$BB_TMP/err"
    bb_expect_rc 0 $? "-q --format $fmt"
    bb_expect_true "-q --format $fmt: stderr is empty" test ! -s "$BB_TMP/err"
    bb_expect_true "-q --format $fmt: stdout has the table" test -s "$BB_TMP/out"
    bb_expect_true "-q --format $fmt: the record is written" test -s "$r"
done
bb_mpirun 2 "$SUM" $FEW -q --format table >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_grep "^# bbench-sum .* ranks\? on" "$BB_TMP/out" "-q keeps the table's header notes"

# Progress explained for the library that runs (bbench-overlap).
o="$BB_TMP/o.json"
bb_mpirun 2 "$B/bench/bbench-overlap" --bytes 8 --batches 2 --compute 1e-5 --kinds isend \
    --samples 3 --reps 1 --warmup 0 -q -o "$o" >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_rc 0 $? "bbench-overlap run"
lib=$(rec "$o" runtime.mpi_library)
case $lib in
MPICH*) want=MPICH ;;
*"Open MPI"*) want="Open MPI" ;;
*) want=other ;;
esac
bb_expect_true "progress.library is '$want' (runtime.mpi_library: ${lib%%
*})" test "$(rec "$o" progress.library)" = "$want"
rec "$o" progress.explanation >"$BB_TMP/why"
case $want in
MPICH) bb_expect_grep "^MPICH makes asynchronous progress only with MPIR_CVAR_ASYNC_PROGRESS" \
    "$BB_TMP/why" "MPICH's progress explained in MPICH's terms" ;;
"Open MPI") bb_expect_grep "^Open MPI has no asynchronous progress thread" "$BB_TMP/why" \
    "Open MPI's progress explained in its own terms" ;;
*) bb_expect_true "no explanation claimed for an unknown library" test ! -s "$BB_TMP/why" ;;
esac
bb_expect_true "threads before MPI_Init recorded" \
    test -n "$(rec "$o" progress.process_threads.before_init_min_rank)"
# Open MPI's TCP progress thread is a possibility only where TCP carries
# the messages: on one host ob1 uses shared memory unless btl excludes it.
if [ "$want" = "Open MPI" ]; then
    for btl in default self,tcp; do
        sel=
        [ $btl = default ] || sel=OMPI_MCA_btl=$btl
        # shellcheck disable=SC2086
        bb_mpirun 2 env OMPI_MCA_btl_tcp_progress_thread=1 OMPI_MCA_pml=ob1 $sel \
            "$B/bench/bbench-overlap" --bytes 8 --batches 2 --compute 1e-5 --kinds isend \
            --samples 3 --reps 1 --warmup 0 -q -o "$o" >"$BB_TMP/out" 2>&1
        bb_expect_rc 0 $? "bbench-overlap, btl_tcp_progress_thread=1, btl $btl"
        [ $btl = default ] && expect=false || expect=true
        bb_expect_true "btl $btl: async_progress_possible is $expect ($(rec "$o" progress.async_progress_possible_reason))" \
            test "$(rec "$o" progress.async_progress_possible)" = $expect
    done
fi
bb_finish
