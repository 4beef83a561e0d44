# bbench-overlap: a tiny -n 2 run gives a valid record with every quantity
# (with and without asynchronous progress, fixed and auto compute); -n 1 is
# refused with a clear message; bad input exits 2 on every rank with no
# record written; the record checker (tests/check-record with
# tests/expect/overlap.json) fails what it should.
. "$(dirname "$0")/../lib.sh"
X="$B/bench/bbench-overlap"
CHECK="$B/tests/check-record"
EXPECT="$S/tests/expect/overlap.json"
get="$B/tests/record-get"

# The one kernel policy: every rank runs the iterations that last
# compute.per_batch at the slowest rank's calibrated rate.
kernel_policy() {
    rate=$("$get" "$1" run.compute_kernel.iterations_per_s_slowest_rank)
    n=$("$get" "$1" points.#)
    i=0
    while [ "$i" -lt "${n:-0}" ]; do
        per=$("$get" "$1" "points.$i.quantities.compute.per_batch.value")
        it=$("$get" "$1" "points.$i.quantities.compute.iterations_per_batch.value")
        awk -v r="$rate" -v p="$per" -v it="$it" \
            'BEGIN { w = p * r; w = int(w + 0.5); exit !(it == w) }' || return 1
        i=$((i + 1))
    done
    [ "${n:-0}" -gt 0 ]
}
# compute.ran_over_asked: null without batches; else the median t_compute
# over what was asked, and "matched" exactly when it lies in [0.8, 1.25] (a
# loaded machine may leave it unmatched: the table then says so).
compute_ran() {
    n=$("$get" "$1" points.#)
    i=0
    while [ "$i" -lt "${n:-0}" ]; do
        b=$("$get" "$1" "points.$i.parameters.batches")
        v=$("$get" "$1" "points.$i.quantities.compute.ran_over_asked.value")
        m=$("$get" "$1" "points.$i.quantities.compute.ran_over_asked.matched" 2>/dev/null)
        t=$("$get" "$1" "points.$i.quantities.overlap.t_compute.median")
        if [ "$b" = 0 ]; then
            [ "$v" = null ] || return 1
        else
            awk -v v="$v" -v m="$m" -v t="$t" -v b="$b" -v c=2e-5 'BEGIN {
                want = t / (c * b); ok = v > 0.999 * want && v < 1.001 * want
                in_range = v >= 0.8 && v <= 1.25
                exit !(ok && ((m == "true") == in_range)) }' || return 1
            if [ "$m" = false ]; then
                grep -q "the compute ran .* times what was asked" "$2" || return 1
            fi
        fi
        i=$((i + 1))
    done
    [ "${n:-0}" -gt 0 ]
}
tiny="--bytes 8,4K --samples 3 --reps 2 --warmup 0"

# Fixed compute, batches 0 (figures undefined) and 2, every kind.
rec="$BB_TMP/fixed.json"
env -u MPIR_CVAR_ASYNC_PROGRESS timeout -k 5 "$BB_TIMEOUT" $MPIEXEC -n 2 \
    "$X" $tiny --batches 0,2 --compute 2e-5 -o "$rec" >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_rc 0 $? "-n 2 fixed compute run"
bb_expect_grep '^ *transfer ' "$BB_TMP/out" "table has transfer rows"
bb_expect_grep '^ *isend ' "$BB_TMP/out" "table has isend rows"
bb_expect_grep '^ *iallreduce ' "$BB_TMP/out" "table has iallreduce rows"
bb_expect_grep 'MPIR_CVAR_ASYNC_PROGRESS=(unset)\|btl_tcp_progress_thread=(unset)' "$BB_TMP/out" \
    "header states the library's async progress setting unset"
bb_expect_true "record meets tests/expect/overlap.json (async unset)" \
    "$CHECK" --expect "$EXPECT" "$rec" progress.MPIR_CVAR_ASYNC_PROGRESS.value=null
bb_expect_true "iterations per batch from the slowest rank's rate" kernel_policy "$rec"
bb_expect_true "compute.ran_over_asked: t_compute over what was asked, matched or noted" \
    compute_ran "$rec" "$BB_TMP/out"
# Measured through the runner: the run summary counts the measurements (it
# said 0 when bbench-overlap called the engine around the runner).
sed 's/"measurements":[[:space:]]*[0-9]*/"measurements": 0/' "$rec" >"$BB_TMP/zero.hostile"
"$CHECK" --expect "$EXPECT" "$BB_TMP/zero.hostile" >"$BB_TMP/check.out"
bb_expect_rc 1 $? "check-record fails a record that counts 0 measurements"
bb_expect_grep "FAIL run.measurement.measurements" "$BB_TMP/check.out" \
    "check-record names the uncounted measurements"

# The checker itself: one wrong unit fails that check, which is not counted
# as passed.
"$CHECK" --expect "$EXPECT" "$rec" >"$BB_TMP/check.out"
good=$(sed -n 's/.* \([0-9]*\) checks passed, 0 failed$/\1/p' "$BB_TMP/check.out")
awk '!d && /"quantities"/ {q=1} q && !d && /"overlap.t_comm"/ {t=1}
     t && !d && /"unit": "s"/ {sub(/"s"/, "\"ms\""); d=1} {print}' "$rec" >"$BB_TMP/ms.hostile"
"$CHECK" --expect "$EXPECT" "$BB_TMP/ms.hostile" >"$BB_TMP/check.out"
bb_expect_rc 1 $? "checker fails a record with t_comm in ms"
bb_expect_grep "FAIL points\[0\].overlap.t_comm: unit differs" "$BB_TMP/check.out" \
    "checker names the wrong unit"
bb_expect_grep " $((${good:-0} - 1)) checks passed, 1 failed$" "$BB_TMP/check.out" \
    "checker counts no pass for the failed check"
"$CHECK" --expect "$EXPECT" "$rec" progress.MPIR_CVAR_ASYNC_PROGRESS.value=1 \
    >"$BB_TMP/check.out"
bb_expect_rc 1 $? "checker fails a launch value the record does not hold"

# Auto compute (total compute = median t_comm) under asynchronous progress;
# the runtime then requests MPI_THREAD_MULTIPLE.
rec="$BB_TMP/auto.json"
# One size and batch count: with a spinning progress thread per rank on a
# small machine every call is slow.
MPIR_CVAR_ASYNC_PROGRESS=1 bb_mpirun 2 "$X" --bytes 4K --samples 3 --reps 2 --warmup 0 \
    --batches 2 --compute auto --kinds isend,transfer -o "$rec" >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_rc 0 $? "-n 2 auto compute run with MPIR_CVAR_ASYNC_PROGRESS=1"
# The header names the library's own progress setting (MPICH's variable, or
# Open MPI's statement that it has no progress thread).
bb_expect_grep '\(MPIR_CVAR_ASYNC_PROGRESS=1\|Open MPI (.*)\), thread level provided MPI_THREAD_MULTIPLE' \
    "$BB_TMP/out" "async progress run gets MPI_THREAD_MULTIPLE"
bb_expect_true "record meets tests/expect/overlap.json (async 1)" \
    "$CHECK" --expect "$EXPECT" "$rec" progress.MPIR_CVAR_ASYNC_PROGRESS.value=1
bb_expect_grep '"compute":[[:space:]]*"auto"' "$rec" "auto compute recorded"
if grep -q '"kind":[[:space:]]*"iallreduce"' "$rec"; then
    bb_expect_true "--kinds isend,transfer measures no iallreduce" false
else
    bb_expect_true "--kinds isend,transfer measures no iallreduce" true
fi

# One rank: refused with a clear message, exit 2, no record; --help works.
rec="$BB_TMP/one.json"
bb_mpirun 1 "$X" $tiny -o "$rec" >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_rc 2 $? "-n 1 is a usage error"
bb_expect_grep 'needs at least 2 ranks' "$BB_TMP/err" "-n 1 says why"
bb_expect_true "-n 1 writes no record" test ! -e "$rec"
bb_mpirun 1 "$X" --help >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_rc 0 $? "--help on one rank"
bb_expect_grep 'Needs at least 2 ranks' "$BB_TMP/out" "--help documents the -n 1 choice"
bb_expect_grep 'max(0, min(1, (t_comm + t_compute - t_polled)' "$BB_TMP/out" \
    "--help states the formula"

# Bad input: exit 2 on every rank (the launcher reports the worst), a
# message from rank 0 only, and no record.
bad() {
    what=$1; pattern=$2; shift 2
    rec="$BB_TMP/bad.json"
    bb_mpirun 2 "$X" "$@" -o "$rec" >"$BB_TMP/out" 2>"$BB_TMP/err"
    bb_expect_rc 2 $? "$what"
    bb_expect_grep "$pattern" "$BB_TMP/err" "$what: message"
    n=$(grep -c -e "$pattern" "$BB_TMP/err")
    bb_expect_true "$what: one message (rank 0)" test "$n" -eq 1
    bb_expect_true "$what: no record" test ! -e "$rec"
}
bad "negative compute" "--compute:" --compute -1e-3
bad "compute not a number" "--compute:" --compute fast
bad "unknown kind" "--kinds: 'bogus' is not transfer, isend, iallreduce or all" \
    --kinds isend,bogus
bad "kind given twice" "--kinds: 'isend' is given twice" --kinds isend,isend
bad "no -k (--kinds is long-only)" "unknown option '-k'" -k isend
bad "no suffix on a sample count" "--samples:" --samples 1K
bad "two samples" "--samples:" --samples 2
bad "negative batches" "--batches:" --batches -1
bad "unknown option" "unknown option" --frobnicate
bb_finish
