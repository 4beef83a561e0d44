#!/bin/sh
# fuzz-record.sh: fuzz the record reader with clang's libFuzzer (+ ASan, UBSan).
#
#   sh scripts/fuzz-record.sh [SECONDS] [CORPUS_DIR]
#
# Needs clang (Debian: apt-get install clang).  Builds the target from the
# library sources into build-fuzz/, runs it for SECONDS (default 60) over a
# working copy of CORPUS_DIR (default tests/fuzz/corpus) and prints the
# executions; new inputs that increase coverage land in build-fuzz/corpus/,
# and crashes in build-fuzz/crash-*.  Add the interesting ones to
# tests/fuzz/corpus so make check replays them.
set -eu
seconds=${1:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
corpus=${2:-$src/tests/fuzz/corpus}
out=${FUZZ_BUILD:-$src/build-fuzz}
mkdir -p "$out/corpus"
cp -n "$corpus"/* "$src"/tests/tools/data/*.json "$out/corpus/" 2>/dev/null || true
config=$(ls "$src"/build*/config.h 2>/dev/null | head -n 1)
[ -n "$config" ] || { echo "fuzz-record.sh: configure bbench first (build/config.h)" >&2; exit 2; }
# $cflags is split into words when clang runs: a path in it that would
# split or glob is refused rather than mangled.
case $config in
*[[:space:]*?[]*)
    echo "fuzz-record.sh: '$config' holds a blank or glob character (* ? [), which the compiler's command line would split; use a checkout path without" >&2
    exit 2 ;;
esac
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -I$(dirname "$config") -I$(dirname "$config")/lib \
-I$src/include -I$src/lib -I$src/record -I$src/tests/fuzz \
$(pkg-config --cflags libcjson)"
# The record library needs no MPI: plain clang.
# shellcheck disable=SC2086
clang $cflags -o "$out/fuzz-record" "$src/tests/fuzz/fuzz-record.c" \
    "$src/record/record.c" "$src/record/stats.c" "$src/lib/status.c" \
    "$src/compare/text.c" "$src/compare/load.c" "$src/compare/match.c" \
    "$src/compare/judge.c" "$src/compare/statistics.c" "$src/compare/report.c" \
    "$src/compare/table.c" "$src/compare/render.c" "$src/compare/extract.c" \
    $(pkg-config --libs libcjson) -lm
cd "$out"
./fuzz-record -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -print_final_stats=1 corpus 2>&1 | tee fuzz.log | tail -n 25
