#!/bin/sh
# tools/bbench-perf at tiny sizes: it runs both benchmarks at -n 2, keeps
# their records and prints one row per policy and size (its figures are not
# checked: they are measurements).
. "$(dirname "$0")/../lib.sh"
bb_skip_without_persistent  # every policy is measured, persistent among them
perf="$S/tools/bbench-perf"
out="$BB_TMP/out"
err="$BB_TMP/err"
# --canary none: one table of each kind whatever mode the machine is in (with
# canaries, a run that sees two modes prints each table once per mode).
BBENCH_PERF_TIMEOUT=$BB_TIMEOUT MPIEXEC=$MPIEXEC timeout -k 5 "$BB_TIMEOUT" sh "$perf" \
    --bindir "$B/bench" --out "$BB_TMP/rec" --sum-count 1,64 --transfer-bytes 8,1K \
    --reps 2 --samples 3 --launches 2 --canary none > "$out" 2> "$err"
bb_expect_rc 0 $? "bbench-perf at tiny sizes"
[ -s "$err" ] && sed 's/^/    /' "$err" >&2
bb_expect_true "the sum records are kept" test -s "$BB_TMP/rec/sum-1.json" -a -s "$BB_TMP/rec/sum-2.json"
bb_expect_true "the transfer records are kept" test -s "$BB_TMP/rec/transfer-2.json"
# 2 sizes x 2 buffers x 3 admissions x 2 requests in each table.
bb_expect_true "48 rows, 24 of each table" \
    test "$(grep -c '^ *\(8B\|512B\|1KiB\)  *\(fresh\|retained\)  *\(spec\|fused\|fused-op\)  *\(per-call\|persistent\) .* \(ok\|implausible:[^ ]*\)$' "$out")" -eq 48
bb_expect_true "24 rows at 1 KiB and 512 B" \
    test "$(grep -c '^ *\(512B\|1KiB\)  *\(fresh\|retained\)' "$out")" -eq 24
# A ratio: paired, '?' when not resolved, then the per-launch range (a-b).
n='[0-9][0-9.]*?\{0,1\}\(([0-9.]*-[0-9.]*)\)\{0,1\}'
bb_expect_true "every sum row has its untimed twin, its parts' ratio, raw-copy's and raw-fresh's" \
    test "$(sed -n '/^# sum/,/^# transfer/p' "$out" \
        | grep -c "^ *[0-9]*B  *[a-z]*  *[a-z-]*  *[a-z-]*\(  *$n\)\{12\}  *ok  *\(ok\|implausible:[^ ]*\)\$")" -eq 24
# Every row is checked: ok, or implausible when a phase measured faster than a
# reference it contains (a measurement's verdict, not the script's failure).
ok_rows=$(grep -c ' \(ok\|implausible:[^ ]*\)$' "$out")
bb_expect_true "every row has its check" test "$ok_rows" -eq 60
bb_expect_true "with two launches a ratio has its per-launch range" \
    grep -q ' [0-9.]*?\{0,1\}([0-9.]*-[0-9.]*) ' "$out"
# The tables, for the failure's reader.
[ "$ok_rows" -eq 60 ] || sed 's/^/    /' "$out" >&2
bb_expect_grep "protocol/(pingpong+agreements)" "$out" "the transfer ratio to its parts"
sh "$perf" --version > "$out" 2>&1
bb_expect_rc 0 $? "--version"
bb_expect_true "--version is the package's" \
    test "$(cat "$out")" = "bbench-perf (bbench) $("$B/bench/bbench-compare" --version | sed -n '1s/.* //p')"
sh "$perf" --help > "$out" 2>&1
bb_expect_grep "^Usage: bbench-perf" "$out" "--help"
sh "$perf" --np x --bindir "$B/bench" > "$out" 2>&1
bb_expect_rc 2 $? "--np x is a usage error"
sh "$perf" --bogus > "$out" 2>&1
bb_expect_rc 2 $? "an unknown argument is a usage error"
bb_finish
