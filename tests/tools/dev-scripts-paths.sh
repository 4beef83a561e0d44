#!/bin/sh
# The developer scripts whose command lines are split into words
# (valgrind-check.sh's valgrind and libtool words, fuzz-record.sh's compiler
# flags) refuse a path with a blank or glob character, with a message,
# before running anything; neither valgrind nor clang is needed to check it.
. "$(dirname "$0")/../lib.sh"
out="$BB_TMP/out"
err="$BB_TMP/err"

mkdir -p "$BB_TMP/t" "$BB_TMP/a b"
TMPDIR="$BB_TMP/t" MPIEXEC=false sh "$S/scripts/valgrind-check.sh" "$BB_TMP/a b" >"$out" 2>"$err"
bb_expect_rc 2 $? "valgrind-check.sh with a blank in the build path"
bb_expect_grep "holds a blank or glob character" "$err" "... said why"
bb_expect_true "... nothing run (no log directory)" test -z "$(ls -A "$BB_TMP/t")"

# fuzz-record.sh finds its source beside itself: a copy in a path with a blank.
mkdir -p "$BB_TMP/s p/scripts" "$BB_TMP/s p/build"
cp "$S/scripts/fuzz-record.sh" "$BB_TMP/s p/scripts/"
: >"$BB_TMP/s p/build/config.h"
FUZZ_BUILD="$BB_TMP/fb" sh "$BB_TMP/s p/scripts/fuzz-record.sh" 1 "$BB_TMP/none" >"$out" 2>"$err"
bb_expect_rc 2 $? "fuzz-record.sh in a checkout path with a blank"
bb_expect_grep "holds a blank or glob character" "$err" "... said why"
bb_expect_true "... nothing compiled" test ! -e "$BB_TMP/fb/fuzz-record"
bb_finish
