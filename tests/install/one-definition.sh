#!/bin/sh
# Every function is defined in one library: the record library (no MPI) and
# libbbench share text through the header-only include/private/bbtext.h, never by
# compiling the same source twice, and the record library's objects name
# no lib/ header.
. "$(dirname "$0")/../lib.sh"
globals() { nm --defined-only -g "$1" | awk 'NF == 3 { print $3 }' | sort -u; }
rec="$B/record/.libs/libbbrecord.a"
run="$B/runner/.libs/libbbrunner.a $B/common/.libs/libbbcommon.a $B/runtime/.libs/libbbruntime.a"
for a in "$rec" "$B/lib/.libs/libbbench-core.a" $run; do
    bb_expect_true "$(basename "$a") built" test -f "$a"
done
globals "$rec" > "$BB_TMP/record"
globals "$B/lib/.libs/libbbench-core.a" > "$BB_TMP/lib"
for a in $run; do globals "$a"; done | sort -u > "$BB_TMP/harness"
bb_expect_true "the record library defines functions" test -s "$BB_TMP/record"
comm -12 "$BB_TMP/record" "$BB_TMP/lib" > "$BB_TMP/both"
comm -12 "$BB_TMP/record" "$BB_TMP/harness" >> "$BB_TMP/both"
comm -12 "$BB_TMP/lib" "$BB_TMP/harness" >> "$BB_TMP/both"
bb_expect_true "no function defined in two libraries" test ! -s "$BB_TMP/both"
sed 's/^/    twice: /' "$BB_TMP/both"
# Sources only: lib/ headers in the record library's or compare's includes.
grep -l '#include "\(lib/\|internal\|private/hooks\|private/mpi-compat\|private/redist-\|redist-[a-z]*\)' \
    "$S"/record/*.[ch] "$S"/compare/*.[ch] > "$BB_TMP/libhdr" 2>/dev/null
bb_expect_true "record/ and compare/ include no lib/ header" test ! -s "$BB_TMP/libhdr"
sed 's/^/    includes lib\/: /' "$BB_TMP/libhdr"
bb_finish
