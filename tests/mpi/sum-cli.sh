#!/bin/sh
# bbench-sum end to end: tables, records, refusal demonstrations, usage errors.
. "$(dirname "$0")/../lib.sh"
bb_skip_without_persistent  # every policy is measured, persistent among them

sum="$B/bench/bbench-sum"
get="$B/tests/record-get"
out="$BB_TMP/out"
err="$BB_TMP/err"
rec="$BB_TMP/r.json"

# A measured run on 2 ranks, with a record.
bb_mpirun 2 "$sum" --count 1,1K --samples 3 --reps 5 --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "2 ranks, counts 1 and 1K"
bb_expect_grep "protocol_us.*raw_us.*ratio" "$out" "table header with both modes"
bb_expect_grep "^ *1024 *8192 .* ok$" "$out" "a row for 1K (count and bytes)"
bb_expect_grep "record written" "$out" "record announced"
bb_expect_true "record schema" test "$("$get" "$rec" schema)" = bbench.record/1
bb_expect_true "4 points (2 counts x 2 modes)" test "$("$get" "$rec" points.#)" = 4
bb_expect_true "ranks recorded" test "$("$get" "$rec" topology.ranks)" = 2
bb_expect_true "3 raw samples" test "$("$get" "$rec" points.2.quantities.elapsed.samples.#)" = 3
bb_expect_true "protocol mode first" test "$("$get" "$rec" points.2.parameters.mode)" = protocol
bb_expect_true "payload bytes of 1K doubles" \
    test "$("$get" "$rec" points.2.quantities.communication.payload.value)" = 8192
bb_expect_true "tracked bytes 144 + 16*1024 (the three arrays, no staging under spec; payload)" \
    test "$("$get" "$rec" points.2.quantities.memory.tracked_live.value)" = 16528
bb_expect_true "network.bytes is null with a reason" \
    test "$("$get" "$rec" points.2.quantities.network.bytes.value)" = null
bb_expect_true "first call kept apart" "$get" "$rec" points.0.first_call.elapsed.value
bb_expect_true "mpi library recorded" "$get" "$rec" runtime.mpi_library

# Window timing's bookkeeping (its counts depend on load; their shape does not):
# the run's late, overrun and left-out calls and retakes, and per point the
# calls left out of each sample, adding up to their total.
bb_mpirun 2 "$sum" --count 1 --samples 3 --reps 4 --timing window -q --output "$BB_TMP/w.json" \
    > "$out" 2> "$err"
bb_expect_rc 0 $? "--timing window"
for m in windows_missed calls_overrun calls_excluded samples_retaken; do
    bb_expect_true "run.measurement.window.$m recorded" \
        test "$("$get" "$BB_TMP/w.json" "run.measurement.window.$m")" -ge 0
done
bb_expect_true "window.calls_excluded: 3 per-sample counts adding up to the total" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
run = d["run"]["measurement"]["window"]
tot = 0
for p in d["points"]:
    q = p["quantities"]["window.calls_excluded"]
    assert len(q["per_sample"]) == 3 and sum(q["per_sample"]) == q["value"], q
    assert q["deterministic"] is False
    tot += q["value"]
assert tot == run["calls_excluded"], (tot, run)' "$BB_TMP/w.json"
bb_expect_true "record meets tests/expect/sum.json" \
    "$B/tests/check-record" --expect "$S/tests/expect/sum.json" "$rec"

# Oversubscription is said, on 3 and 4 ranks of this 2-core machine.
# every tier (sum): the sum protocol over the cores at -n 3
# (non-power-of-two); -n 4 where the tier launches it
cores=$(nproc)
for np in 3 $(bb_ranks 4); do
    bb_mpirun "$np" "$sum" --count 1,64 --samples 3 --reps 2 > "$out" 2> "$err"
    bb_expect_rc 0 $? "$np ranks"
    if [ "$cores" -lt "$np" ]; then
        bb_expect_grep "OVERSUBSCRIBED" "$out" "$np ranks on $cores cores said to be oversubscribed"
    fi
done

# A singleton launch, without mpiexec.
bb_serial "$sum" --count 8 --samples 3 --reps 2 > "$out" 2> "$err"
bb_expect_rc 0 $? "singleton bbench-sum"

# Refusals asked for: recorded as refused, exit 0, and the run goes on.
for np in $(bb_ranks 2 3); do
    last=$((np - 1))
    bb_mpirun "$np" "$sum" --count 1,16 --reps 2 --mode protocol --refuse-rank "$last" \
        --output "$rec" > "$out" 2> "$err"
    bb_expect_rc 0 $? "-n $np --refuse-rank $last"
    bb_expect_true "-n $np both points refused" \
        test "$("$get" "$rec" points.1.status)" = refused
    bb_expect_true "-n $np refusal stage preflight" \
        test "$("$get" "$rec" points.1.refusal.stage)" = preflight
    bb_expect_true "-n $np refused payload is null" \
        test "$("$get" "$rec" points.1.quantities.communication.payload.value)" = null
    for field in phase_id epoch count cap sequence; do
        bb_mpirun "$np" "$sum" --count 4 --reps 2 --mode protocol \
            --mismatch-rank "0:$field" --output "$rec" > "$out" 2> "$err"
        bb_expect_rc 0 $? "-n $np --mismatch-rank 0:$field"
        bb_expect_true "-n $np $field mismatch is a contract refusal" \
            test "$("$get" "$rec" points.0.refusal.stage)" = contract
    done
done

# A refusal nobody asked for (count over the cap) is a measured failure.
bb_mpirun 2 "$sum" --count 100 --max-elements 10 --reps 2 --output "$rec" > "$out" 2> "$err"
bb_expect_rc 1 $? "count over --max-elements exits 1"
bb_expect_true "and is recorded as refused" test "$("$get" "$rec" points.0.status)" = refused

# Slow participants complete.
bb_mpirun 2 "$sum" --count 1K --reps 1 --warmup 0 --delay-prepare 0:0.05 > "$out" 2> "$err"
bb_expect_rc 0 $? "--delay-prepare 0:0.05"
bb_mpirun 2 "$sum" --count 1K --reps 1 --warmup 0 --delay-post 1:0.05 > "$out" 2> "$err"
bb_expect_rc 0 $? "--delay-post 1:0.05"

# Usage errors: exit 2 on every rank, a message, no record.
# Every policy and reference in one run: retained buffers under the three
# admissions, per call and persistent, then raw, raw-nb, raw-fresh, one
# admission reference per admission and requests pair, raw-persistent, raw-copy,
# raw-user-op (fixed-raw has no row without --shape fixed).
bb_mpirun 2 "$sum" --count 8 --samples 3 --reps 3 --mode all --buffers retained \
    --admission all --requests both --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "--mode all --admission all --requests both"
bb_expect_true "18 rows: 6 protocol, 3 raw, 6 admission, raw-persistent, raw-copy, raw-user-op" \
    test "$("$get" "$rec" points.#)" = 18
policy() {  # point index: mode buffers admission requests (- when absent)
    for k in mode buffers admission requests; do
        printf '%s ' "$("$get" "$rec" "points.$1.parameters.$k" 2> /dev/null || echo -)"
    done
}
bb_expect_true "row 5: the last protocol policy" \
    test "$(policy 5)" = "protocol retained fused-op persistent "
bb_expect_true "row 9: the spec admission per call, without buffers" \
    test "$(policy 9)" = "admission - spec per-call "
bb_expect_true "row 14: the fused-op admission, persistent" \
    test "$(policy 14)" = "admission - fused-op persistent "
bb_expect_true "row 15: raw-persistent, no policy" test "$(policy 15)" = "raw-persistent - - - "
bb_expect_true "row 16: raw-copy, no policy" test "$(policy 16)" = "raw-copy - - - "
bb_expect_true "row 17: raw-user-op, no policy" test "$(policy 17)" = "raw-user-op - - - "
bb_expect_true "every row measured its sums right" \
    test "$(grep -c ' ok$' "$out")" = 1
bb_expect_grep "protocol-retained-fused-op-persistent_ratio" "$out" "a ratio per policy"
bb_expect_grep "admission-fused-op-persistent_us" "$out" "the admission column per policy"
bb_expect_grep "requests persistent" "$out" "the legend names the policy"

# The fixed shape and borrowed buffers (issue 25): every row ok with the
# exact sum, the combined reduction's reference and the two-collective phase
# as ratios, the census of the fixed phase (144 + 2 * (8 * 64 + 56)); a
# mismatch refused by the fixed phase too, stage contract.
bb_mpirun 2 "$sum" --count 64 --reps 3 --mode protocol,raw,fixed-raw --shape both \
    --buffers retained,borrowed --requests both --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "--shape both --buffers retained,borrowed"
bb_expect_grep "protocol-retained-fixed_vs_combined" "$out" "fixed against its combined reduction"
bb_expect_grep "protocol-retained-fixed-persistent_vs_free" "$out" "fixed against the free shape"
bb_expect_grep "^ *64 *512 .* ok$" "$out" "every row ok"
n=$("$get" "$rec" points.#)
bb_expect_true "9 points (6 protocol, raw, 2 fixed-raw)" test "$n" = 9
i=0
while [ "$i" -lt "$n" ]; do
    if [ "$("$get" "$rec" points.$i.parameters.shape 2>/dev/null)" = fixed ] \
        && [ "$("$get" "$rec" points.$i.parameters.mode)" = protocol ]; then
        bb_expect_true "fixed point $i: census of the combined buffers" \
            test "$("$get" "$rec" points.$i.quantities.memory.tracked_live.value)" = 1280
    fi
    i=$((i + 1))
done
bb_mpirun 2 "$sum" --count 16 --reps 2 --mode protocol --shape fixed --mismatch-rank 1:epoch \
    --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "--shape fixed --mismatch-rank 1:epoch"
bb_expect_true "fixed shape: a mismatch is a contract refusal" \
    test "$("$get" "$rec" points.0.refusal.stage)" = contract

usage() {
    what=$1; shift
    [ -e "$rec" ] && mv "$rec" "$BB_TMP/kept-$bb_checks.json"  # still schema-checked
    bb_mpirun 2 "$sum" "$@" > "$out" 2> "$err"
    bb_expect_rc 2 $? "usage: $what"
    bb_expect_grep "bbench-sum: " "$err" "usage: $what: message"
    bb_expect_true "usage: $what: no record" test ! -e "$rec"
}
usage "range with HI < LO" --count 8:1 --output "$rec"
usage "bad suffix" --count 4Q --output "$rec"
usage "too few samples" --samples 2 --output "$rec"
usage "unknown mode" --mode fast --output "$rec"
usage "unknown requests" --requests warm --output "$rec"
usage "unknown admission" --admission quick --output "$rec"
usage "requests without an agreement" --mode raw,raw-nb --requests persistent --output "$rec"
usage "buffers without the protocol" --mode admission --buffers retained --output "$rec"
usage "unknown option" --bogus --output "$rec"
usage "missing value" --output "$rec" --count
usage "rank out of range" --refuse-rank 5 --output "$rec"
usage "unknown field" --mismatch-rank 0:colour --output "$rec"
usage "negative delay" --delay-post 0:-1 --output "$rec"
usage "stray argument" extra --output "$rec"
usage "missing output directory" --output "$BB_TMP/none/r.json"
bb_expect_grep "none" "$err" "the bad directory is named"

bb_mpirun 2 "$sum" --help > "$out" 2> "$err"
bb_expect_rc 0 $? "--help"
bb_expect_grep "^Usage: bbench-sum" "$out" "--help text on stdout"
bb_expect_grep "or both; borrowed (the sum phase only" "$out" "--help lists --buffers borrowed"
bb_mpirun 1 "$sum" --version > "$out" 2> "$err"
bb_expect_rc 0 $? "--version"
bb_expect_grep "bbench-sum (bbench)" "$out" "--version text"
bb_finish
