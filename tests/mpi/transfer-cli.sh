#!/bin/sh
# bbench-transfer end to end: table, record, census, same-rank and inactive
# ranks, both APIs, the policies and their references, refusal
# demonstrations, the payload check, usage errors.
. "$(dirname "$0")/../lib.sh"
bb_skip_without_persistent  # every policy is measured, persistent among them

tr="$B/bench/bbench-transfer"
get="$B/tests/record-get"
out="$BB_TMP/out"
err="$BB_TMP/err"
rec="$BB_TMP/r.json"
quick="--samples 3 --reps 3 --warmup 1 --compute 2e-6"

# A measured run on 2 ranks, with a record.
bb_mpirun 2 "$tr" --bytes 8,64K --batches 0,2 $quick --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "2 ranks, 8 B and 64 KiB, batches 0 and 2"
bb_expect_grep "protocol_us.*raw_us.*protocol_raw_ratio" "$out" "table header with both modes"
bb_expect_grep "^ *65536  *2 .* ok$" "$out" "a row for 64K, 2 batches"
bb_expect_grep "^# protocol_agree_us: .*in the median sample of the whole" "$out" \
    "the agreements' column says its parts come from the whole's median sample"
bb_expect_grep "census (measured.*source 65768 B, 2 requests; destination 65768 B, 1 requests; within the bound" \
    "$out" "census line: 232 (spec control arrays and receipt, no staging) + 64K bytes, credit 2 and 1"
bb_expect_true "record schema" test "$("$get" "$rec" schema)" = bbench.record/1
bb_expect_true "benchmark transfer" test "$("$get" "$rec" benchmark)" = transfer
bb_expect_true "8 points (2 sizes x 2 batch counts x 2 modes)" test "$("$get" "$rec" points.#)" = 8
bb_expect_true "protocol first" test "$("$get" "$rec" points.6.parameters.mode)" = protocol
bb_expect_true "3 raw samples" test "$("$get" "$rec" points.6.quantities.elapsed.samples.#)" = 3
bb_expect_true "tracked bytes 232 + 65536" \
    test "$("$get" "$rec" points.6.quantities.memory.tracked_live.value)" = 65768
bb_expect_true "request credit 2" \
    test "$("$get" "$rec" points.6.quantities.communication.max_inflight.value)" = 2
bb_expect_true "census: destination credit 1" \
    test "$("$get" "$rec" points.6.census.per_rank.1.max_inflight)" = 1
bb_expect_true "census: nothing held between calls" \
    test "$("$get" "$rec" points.6.census.per_rank.0.tracked_between_calls)" = 0
bb_expect_true "census within bound" test "$("$get" "$rec" points.6.census.within_bound)" = true
bb_expect_true "2 batches executed" \
    test "$("$get" "$rec" points.6.quantities.phase.batches_executed.value)" = 2
bb_expect_true "2 polls" test "$("$get" "$rec" points.6.quantities.phase.polls.value)" = 2
bb_expect_true "payload 65536 bytes" \
    test "$("$get" "$rec" points.6.quantities.communication.payload.value)" = 65536
bb_expect_true "raw has no receipt wait" \
    test "$("$get" "$rec" points.7.quantities.communication.wait.receipt.value)" = null
bb_expect_true "network.bytes is null" \
    test "$("$get" "$rec" points.6.quantities.network.bytes.value)" = null
bb_expect_true "first call kept apart" "$get" "$rec" points.6.first_call.elapsed.value
bb_expect_true "calibration recorded" "$get" "$rec" run.compute_kernel.iterations_per_s_slowest_rank
bb_expect_true "record meets tests/expect/transfer.json" \
    "$B/tests/check-record" --expect "$S/tests/expect/transfer.json" "$rec"
bb_expect_true "every provider array released" \
    test "$("$get" "$rec" run.provider_arrays_prepared)" = "$("$get" "$rec" run.provider_arrays_released)"
for q in elapsed phase.admission phase.compute phase.progress communication.wait \
         communication.wait.payload communication.wait.receipt phase.consumer \
         phase.status_agreement phase.batches_executed phase.polls completed_during_batches \
         communication.payload communication.max_inflight memory.tracked_live; do
    bb_expect_true "quantity $q" "$get" "$rec" "points.6.quantities.$q.unit"
done

# Every reference, both policies of each kind, interleaved in one run.
bb_mpirun 2 "$tr" --bytes 8,4K --batches 1 --mode all --buffers both --admission both $quick \
    --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "--mode all --buffers both --admission both"
# Per point (in this order): 4 protocol rows (fresh spec, retained spec, fresh
# fused, retained fused), raw, raw-pingpong, and raw-rounds, agreements,
# admission once per admission (spec, then fused).
bb_expect_true "12 rows per point" test "$("$get" "$rec" points.#)" = 24
bb_expect_true "row 1: retained fresh-admission protocol" \
    test "$("$get" "$rec" points.1.parameters.buffers),$("$get" "$rec" points.1.parameters.admission)" = retained,spec
bb_expect_true "row 3: retained fused protocol" \
    test "$("$get" "$rec" points.15.parameters.buffers),$("$get" "$rec" points.15.parameters.admission)" = retained,fused
bb_expect_true "row 5: raw-pingpong" test "$("$get" "$rec" points.17.parameters.mode)" = raw-pingpong
bb_expect_true "raw-pingpong waits for its receipt" \
    "$get" "$rec" points.17.quantities.communication.wait.receipt.samples.0
bb_expect_true "raw-rounds-fused is fused" \
    test "$("$get" "$rec" points.19.parameters.mode),$("$get" "$rec" points.19.parameters.admission)" = raw-rounds,fused
bb_expect_true "raw-rounds times its admission" \
    "$get" "$rec" points.18.quantities.phase.admission.samples.0
bb_expect_true "admission has no payload" \
    test "$("$get" "$rec" points.23.quantities.communication.payload.value)" = null
bb_expect_true "retained: the buffer held between tickets, source" \
    test "$("$get" "$rec" points.13.census.per_rank.0.tracked_between_calls)" = 4096
bb_expect_true "retained: tracked_between_calls quantity" \
    test "$("$get" "$rec" points.13.quantities.memory.tracked_between_calls.value)" = 4096
bb_expect_true "fresh: nothing between tickets" \
    test "$("$get" "$rec" points.12.quantities.memory.tracked_between_calls.value)" = 0
bb_expect_true "run.modes names what raw-rounds differs in" \
    "$get" "$rec" run.modes.raw-rounds
bb_expect_grep "protocol-retained-fused_rounds_ratio" "$out" "a ratio to its own round trips"
bb_expect_grep "^# raw-pingpong_us: raw made a round trip" "$out" \
    "the legend says what raw-pingpong differs in"
bb_expect_true "default requests: per-call, on the protocol" \
    test "$("$get" "$rec" points.15.parameters.requests)" = per-call
pair() {  # mode,buffers,admission,requests of point $1 (- for no buffers)
    printf '%s,%s,%s,%s' "$("$get" "$rec" "points.$1.parameters.mode")" \
        "$("$get" "$rec" "points.$1.parameters.buffers" 2> /dev/null || echo -)" \
        "$("$get" "$rec" "points.$1.parameters.admission")" \
        "$("$get" "$rec" "points.$1.parameters.requests")"
}
bb_expect_true "raw-rounds-fused: no buffers, fused, per call" \
    test "$(pair 19)" = raw-rounds,-,fused,per-call

# Every admission under both request policies: six protocol rows (spec,
# fused, fused-op per call, then the same persistent), then raw-rounds and
# admission once per pair, in the same order.
bb_mpirun 2 "$tr" --bytes 8 --batches 1 --mode protocol,raw-rounds,admission \
    --admission all --requests both $quick --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "--admission all --requests both"
bb_expect_true "18 rows (6 protocol, 6 raw-rounds, 6 admission)" \
    test "$("$get" "$rec" points.#)" = 18
bb_expect_true "row 0: the default protocol" test "$(pair 0)" = protocol,fresh,spec,per-call
bb_expect_true "row 2: fused-op per call" test "$(pair 2)" = protocol,fresh,fused-op,per-call
bb_expect_true "row 3: spec persistent" test "$(pair 3)" = protocol,fresh,spec,persistent
bb_expect_true "row 5: fused-op persistent" \
    test "$(pair 5)" = protocol,fresh,fused-op,persistent
bb_expect_true "row 6: raw-rounds, spec per call" test "$(pair 6)" = raw-rounds,-,spec,per-call
bb_expect_true "row 11: raw-rounds, fused-op persistent" \
    test "$(pair 11)" = raw-rounds,-,fused-op,persistent
bb_expect_true "row 17: admission, fused-op persistent" \
    test "$(pair 17)" = admission,-,fused-op,persistent
bb_expect_true "persistent protocol: census within bound" \
    test "$("$get" "$rec" points.5.census.within_bound)" = true
bb_expect_true "persistent protocol: status ok" test "$("$get" "$rec" points.5.status)" = ok
bb_expect_grep "^# protocol-fused-op-persistent_rounds_ratio: protocol-fused-op-persistent / raw-rounds-fused-op-persistent: the median over rounds" \
    "$out" "the persistent fused-op protocol against its own round trips"
bb_expect_grep "^# protocol-persistent_rounds_ratio: protocol-persistent / raw-rounds-persistent: the median over rounds" \
    "$out" "the persistent spec protocol against its own round trips"
bb_expect_grep "^# -persistent: " "$out" "a note says what -persistent means"
bb_expect_grep "^ *8  *1 .* ok$" "$out" "the row ends with its status"
# A refused row has no ratio.
bb_mpirun 2 "$tr" --bytes 64 --batches 0 --mode protocol,raw,raw-rounds --refuse-rank 1 \
    $quick --format csv > "$out" 2> "$err"
bb_expect_rc 0 $? "refused with references, csv"
bb_expect_grep "^64,0,.*,,,refused:preflight:seq0:rank1$" "$out" "refused: ratios missing"

# The ticket API, and a world of one (same-rank transfer, no request).
bb_mpirun 2 "$tr" --bytes 1K --batches 3 --api ticket $quick --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "--api ticket"
bb_expect_true "ticket API: 3 batches" \
    test "$("$get" "$rec" points.0.quantities.phase.batches_executed.value)" = 3
bb_serial "$tr" --bytes 0,100 --batches 0,1 $quick --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "singleton: same rank, zero bytes"
bb_expect_true "same rank: role" test "$("$get" "$rec" points.2.census.per_rank.0.role)" = same-rank
bb_expect_true "same rank: no request" \
    test "$("$get" "$rec" points.2.quantities.communication.max_inflight.value)" = 0
bb_expect_true "same rank: completed_during_batches null" \
    test "$("$get" "$rec" points.2.quantities.completed_during_batches.value)" = null

# Three ranks: the middle one holds no data but enters every agreement.
# every tier (transfer): the transfer protocol over the cores, a rank idle
bb_mpirun 3 "$tr" --bytes 4K --batches 1 --mode protocol $quick --output "$rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "3 ranks"
bb_expect_true "inactive rank: role none" test "$("$get" "$rec" points.0.census.per_rank.1.role)" = none
bb_expect_true "inactive rank: 232 bytes (control arrays and receipt)" \
    test "$("$get" "$rec" points.0.census.per_rank.1.tracked_bytes)" = 232
bb_expect_true "inactive rank: no request" \
    test "$("$get" "$rec" points.0.census.per_rank.1.max_inflight)" = 0

# Refusals asked for: recorded, identical provenance, exit 0.
demo() {
    np=$1 stage=$2 rank=$3; shift 3
    bb_mpirun "$np" "$tr" --bytes 64 --batches 2 --mode protocol $quick --output "$rec" "$@" \
        > "$out" 2> "$err"
    bb_expect_rc 0 $? "-n $np $*"
    bb_expect_true "-n $np $*: refused" test "$("$get" "$rec" points.0.status)" = refused
    bb_expect_true "-n $np $*: stage $stage" test "$("$get" "$rec" points.0.refusal.stage)" = "$stage"
    bb_expect_true "-n $np $*: rank $rank" test "$("$get" "$rec" points.0.refusal.rank)" = "$rank"
}
demo 2 compute 1 --fail-compute 1:1
demo 2 consumer 1 --fail-consumer
demo 2 preflight 0 --refuse-rank 0
demo 2 contract null --mismatch-rank 1:epoch
demo 2 contract null --mismatch-rank 0:sequence
if bb_tier_full; then
    demo 3 compute 2 --fail-compute 0:0 --fail-compute 2:1
    demo 3 preflight 1 --refuse-rank 1
    demo 3 preflight 2 --refuse-rank 2 --mismatch-rank 0:nbytes
fi
bb_expect_true "preflight refusal: no payload" \
    test "$("$get" "$rec" points.0.quantities.communication.payload.value)" = null

bb_mpirun 2 "$tr" --bytes 64K --batches 1 $quick --delay-post 1:0.02 > "$out" 2> "$err"
bb_expect_rc 0 $? "--delay-post 1:0.02"

# The payload check: one flipped byte is a failure, not a number.
bb_mpirun 2 "$tr" --bytes 4K --batches 1 $quick --corrupt-byte 100 --output "$rec" > "$out" 2> "$err"
bb_expect_rc 1 $? "--corrupt-byte 100 exits 1"
bb_expect_grep "payload check failed" "$err" "the mismatch is reported"
bb_expect_true "protocol: a consumer refusal" test "$("$get" "$rec" points.0.refusal.stage)" = consumer
bb_mpirun 2 "$tr" --bytes 4K --batches 1 --mode protocol $quick --corrupt-byte 4095 \
    > "$out" 2> "$err"
bb_expect_rc 1 $? "--corrupt-byte 4095, protocol only, exits 1"
bb_expect_grep "payload check failed" "$err" "the consumer's check caught the last byte"
bb_mpirun 2 "$tr" --bytes 4K --batches 1 --mode raw $quick --corrupt-byte 0 > "$out" 2> "$err"
bb_expect_rc 1 $? "--corrupt-byte 0, raw only, exits 1"
bb_expect_grep "raw 4096 bytes, 1 batches: payload check failed" "$err" "raw mode checks the same way"
bb_mpirun 2 "$tr" --bytes 8 --batches 0 $quick --corrupt-byte 100 > "$out" 2> "$err"
bb_expect_rc 0 $? "--corrupt-byte past the payload changes nothing"

# A refusal nobody asked for is a measured failure.
bb_mpirun 2 "$tr" --bytes 100 --batches 0 --max-bytes 10 $quick --output "$rec" > "$out" 2> "$err"
bb_expect_rc 1 $? "bytes over --max-bytes exits 1"
bb_expect_true "and is recorded as refused" test "$("$get" "$rec" points.0.status)" = refused

# Usage errors: exit 2 on every rank, a message, no record.
usage() {
    what=$1; shift
    rm -f "$rec"
    bb_mpirun 2 "$tr" "$@" > "$out" 2> "$err"
    bb_expect_rc 2 $? "usage: $what"
    bb_expect_grep "bbench-transfer: " "$err" "usage: $what: message"
    bb_expect_true "usage: $what: no record" test ! -e "$rec"
}
usage "range with HI < LO" --bytes 8:1 --output "$rec"
usage "bad batches" --batches 1,x --output "$rec"
usage "too few samples" --samples 2 --output "$rec"
usage "unknown api" --api async --output "$rec"
usage "unknown mode" --mode fast --output "$rec"
usage "unknown buffers" --buffers warm --output "$rec"
usage "unknown admission" --admission quick --output "$rec"
usage "buffers without the protocol" --mode raw --buffers retained --output "$rec"
usage "admission without an agreement" --mode raw,raw-pingpong --admission fused --output "$rec"
usage "unknown requests" --requests always --output "$rec"
bb_expect_grep "requests: 'always' is not" "$err" "--requests always: the option named"
usage "requests without an agreement" --mode raw,raw-pingpong --requests persistent \
    --output "$rec"
usage "negative compute" --compute -1 --output "$rec"
usage "source out of range" --source 2 --output "$rec"
usage "destination not a rank" --destination one --output "$rec"
usage "unknown field" --mismatch-rank 0:colour --output "$rec"
usage "fail-compute without a batch" --fail-compute 1 --output "$rec"
usage "unknown option" --bogus --output "$rec"
usage "stray argument" extra --output "$rec"
usage "missing output directory" --output "$BB_TMP/none/r.json"
# The shared vocabulary: -m is OSU's --message-size, not --mode (long-only), and
# counts of samples take no size suffixes.
usage "-m is not --mode" -m raw --output "$rec"
bb_expect_grep "message-size: invalid size" "$err" "-m is --message-size"
usage "samples with a suffix" --samples 3K --output "$rec"
bb_expect_grep "samples: '3K' is not an integer" "$err" "--samples 3K refused as not an integer"

bb_mpirun 2 "$tr" --help > "$out" 2> "$err"
bb_expect_rc 0 $? "--help"
bb_expect_grep "^Usage: bbench-transfer" "$out" "--help text on stdout"
bb_expect_true "--help lists --mode as long-only" grep -q "^      --mode LIST" "$out"
bb_expect_grep "^      --full-sweep" "$out" "--help lists --full-sweep"
bb_expect_grep "^      --requests LIST" "$out" "--help lists --requests"

# -b is --bytes; -q keeps the progress lines off stderr, the table stays.
bb_mpirun 2 "$tr" -b 8 --batches 0 $quick > "$out" 2> "$err"
bb_expect_rc 0 $? "-b 8"
bb_expect_grep "point 1/1: 8 bytes, 0 batches" "$err" "a progress line without -q"
bb_mpirun 2 "$tr" -b 8 --batches 0 -q $quick > "$out" 2> "$err"
bb_expect_rc 0 $? "-b 8 -q"
bb_expect_grep "^ *8  *0 .* ok$" "$out" "-q: the table row"
bb_expect_true "-q: no progress line" test -z "$(grep 'point 1/1' "$err")"
bb_mpirun 1 "$tr" --version > "$out" 2> "$err"
bb_expect_rc 0 $? "--version"
bb_expect_grep "bbench-transfer (bbench)" "$out" "--version text"
bb_finish
