#!/bin/sh
# The allocator in the open (issue 38 item 2): every row of a record carries
# its minor page faults per call, the record names the allocator and the
# --malloc policy, and --malloc no-trim removes what glibc's heap trim costs
# a fresh-buffer row: at 512 KiB a fresh call faults its buffers in again
# under the default (the trimmed heap top, or mmap below the raised
# threshold), and reuses the last call's pages under no-trim.  Faults are
# counted, not timed: load does not move them.
. "$(dirname "$0")/../lib.sh"
. "$S/tests/mpi/record-lib.sh"
SUM="$B/bench/bbench-sum"

bb_mpirun 2 "$SUM" --count 8 --malloc sometimes >"$BB_TMP/out" 2>"$BB_TMP/err"
bb_expect_rc 2 $? "--malloc sometimes: a usage error"
bb_expect_grep "malloc: 'sometimes' is not default or no-trim" "$BB_TMP/err" \
    "the message names the policies"

policies="default no-trim"
bb_mpirun 2 "$SUM" --count 8 --samples 3 --reps 1 -q -o "$BB_TMP/lib.json" >/dev/null 2>&1
lib=$(rec "$BB_TMP/lib.json" run.allocator.library)
echo "allocator: $lib"
if [ "$lib" != glibc ]; then
    # A sanitizer build allocates through the sanitizer: nothing to untrim.
    bb_mpirun 2 "$SUM" --count 8 --malloc no-trim >"$BB_TMP/out" 2>"$BB_TMP/err"
    bb_expect_rc 2 $? "$lib: --malloc no-trim is a usage error"
    bb_expect_grep "malloc no-trim: " "$BB_TMP/err" "$lib: the message says why"
    policies=default
elif bb_mpmd_supported; then
    # Refused on one rank alone (its C library tuned otherwise; MPMD): agreed,
    # exit 2 on every rank, said once, naming the rank (it stranded the others).
    bb_mpmd -n 1 "$SUM" --count 8 --malloc no-trim : \
        -n 1 env LD_PRELOAD="$B/tests/.libs/libbbnomallopt.so" "$SUM" --count 8 --malloc no-trim \
        >"$BB_TMP/out" 2>"$BB_TMP/err"
    bb_expect_rc 2 $? "--malloc no-trim refused on rank 1 alone: exit 2 on every rank"
    bb_expect_true "said once, naming rank 1" \
        test "$(grep -c '^bbench-sum: rank 1: --malloc no-trim: mallopt refused' "$BB_TMP/err")" -eq 1
fi
for policy in $policies; do
    r="$BB_TMP/$policy.json"
    bb_mpirun 2 "$SUM" --count 64K --mode protocol --buffers fresh,retained --samples 3 \
        --reps 4 --malloc "$policy" -o "$r" >"$BB_TMP/out-$policy" 2>"$BB_TMP/err"
    bb_expect_rc 0 $? "--malloc $policy: a run"
    bb_expect_true "--malloc $policy: run.allocator.policy says so" \
        test "$(rec "$r" run.allocator.policy)" = "$policy"
    for i in 0 1; do
        n=$(rec "$r" "points.$i.quantities.memory.minor_faults.samples.#")
        bb_expect_true "--malloc $policy, point $i: 3 samples of minor faults per call ($n)" \
            test "$n" = 3
        bb_expect_true "--malloc $policy, point $i: the cold call's faults are in first_call" \
            test -n "$(rec "$r" "points.$i.first_call.memory.minor_faults.value")"
    done
done
bb_expect_true "default: no allocator note" \
    sh -c "! grep -q '^# allocator' '$BB_TMP/out-default'"

# rec FILE I: point I's median faults per call, as an integer.
faults() {
    v=$(rec "$1" "points.$2.quantities.memory.minor_faults.median")
    printf '%.0f\n' "${v:-0}"
}
if [ "$lib" = glibc ]; then
    bb_expect_grep '^# allocator: --malloc no-trim' "$BB_TMP/out-no-trim" \
        "no-trim: a table note"
    d=$(faults "$BB_TMP/default.json" 0)
    n=$(faults "$BB_TMP/no-trim.json" 0)
    # A 512 KiB buffer is 128 pages; how many faults the kernel takes for
    # them varies (fault-around, huge pages, and 75 rather than ~290 was
    # seen on a loaded machine), so the rule is an order apart, not a count.
    bb_expect_true "glibc: a fresh 512 KiB call faults pages in again ($d per call, at least 32)" \
        test "$d" -ge 32
    bb_expect_true "glibc, no-trim: a fresh call reuses the last one's pages ($n per call, under 10)" \
        test "$n" -lt 10
    bb_expect_true "glibc: default faults at least 4x no-trim's ($d vs $n)" \
        test "$d" -ge $((4 * n))
fi
bb_finish
