#!/bin/sh
# Replays the fuzz corpus of the record reader (no clang needed).
. "$(dirname "$0")/../lib.sh"
out="$BB_TMP/out"
# The corpus, and the compare fixtures it grew from.
bb_serial "$B/tests/fuzz/replay-record" "$S/tests/fuzz/corpus" "$S/tests/tools/data" \
    > "$out" 2>&1
bb_expect_rc 0 $? "replay of the record-reader corpus"
bb_expect_grep "replayed [1-9][0-9]* inputs" "$out" "corpus not empty"
bb_finish
