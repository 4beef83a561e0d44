#!/bin/sh
# The shared libbbench exports exactly what include/bbench.h and
# include/bbench/status.h declare, and every function those headers declare
# carries BB_EXPORT; the test and demonstration hooks
# (include/private/hooks.h, BB_HOOK) are defined in libbbench-core, where
# the programs and tests link them, and not exported.
. "$(dirname "$0")/../lib.sh"
so="$B/lib/.libs/libbbench.so"
headers="$S/include/bbench.h $S/include/bbench/status.h"
hooks="$S/include/private/hooks.h"
bb_expect_true "shared library built" test -f "$so"
# A function declaration: a line that starts a type and names bb_...( .
sed -n 's/^BB_EXPORT [^(]*[^a-zA-Z0-9_]\(bb_[a-zA-Z0-9_]*\)(.*/\1/p' $headers \
    | sort -u > "$BB_TMP/declared"
grep -h '^[a-z][a-zA-Z0-9_ *]*[ *]bb_[a-zA-Z0-9_]*(' $headers > "$BB_TMP/unmarked"
bb_expect_true "every declaration carries BB_EXPORT" test ! -s "$BB_TMP/unmarked"
cat "$BB_TMP/unmarked"
# Defined dynamic symbols, without the linker's own and the sanitizers'.
nm -D --defined-only "$so" | awk '{ print $NF }' \
    | grep -v '^_init$\|^_fini$\|^_edata$\|^_end$\|^__bss_start$\|^__odr_asan\|^__asan\|^__ubsan' \
    | sort -u > "$BB_TMP/exported"
echo "$(wc -l < "$BB_TMP/declared") declared, $(wc -l < "$BB_TMP/exported") exported"
comm -13 "$BB_TMP/declared" "$BB_TMP/exported" > "$BB_TMP/extra"
comm -23 "$BB_TMP/declared" "$BB_TMP/exported" > "$BB_TMP/missing"
bb_expect_true "no undeclared symbol exported" test ! -s "$BB_TMP/extra"
sed 's/^/    extra: /' "$BB_TMP/extra"
bb_expect_true "every declared function exported" test ! -s "$BB_TMP/missing"
sed 's/^/    missing: /' "$BB_TMP/missing"
# The hooks: declared, defined in the static core, absent from the exports.
sed -n 's/^BB_HOOK [^(]*[^a-zA-Z0-9_]\(bb_[a-zA-Z0-9_]*\)(.*/\1/p' "$hooks" | sort -u > "$BB_TMP/hooks"
nm --defined-only -g "$B/lib/.libs/libbbench-core.a" | awk 'NF == 3 { print $3 }' \
    | sort -u > "$BB_TMP/core"
echo "$(wc -l < "$BB_TMP/hooks") hooks declared"
bb_expect_true "at least 10 hooks declared" test "$(wc -l < "$BB_TMP/hooks")" -ge 10
comm -23 "$BB_TMP/hooks" "$BB_TMP/core" > "$BB_TMP/hook-missing"
bb_expect_true "every hook defined in libbbench-core" test ! -s "$BB_TMP/hook-missing"
sed 's/^/    hook not in the core: /' "$BB_TMP/hook-missing"
comm -12 "$BB_TMP/hooks" "$BB_TMP/exported" > "$BB_TMP/hook-exported"
bb_expect_true "no hook exported by libbbench.so" test ! -s "$BB_TMP/hook-exported"
sed 's/^/    hook exported: /' "$BB_TMP/hook-exported"
bb_expect_true "at least 60 functions declared" test "$(wc -l < "$BB_TMP/declared")" -ge 60

# The installed API's prefixes (bb_sum_, bb_redist_, bb_map_, ...: those of
# its exported functions) are libbbench's own: no symbol defined elsewhere
# (the runner, the runtime, the record library, common/, a benchmark's
# folder or program, bbench-compare) bears one; bench/redist's are bb_rd_*,
# bench/sum's fixture bb_allreduce_fixture_*.
sed -n 's/^\(bb_[a-z0-9]*_\).*/\1/p' "$BB_TMP/exported" | sort -u > "$BB_TMP/prefixes"
echo "$(wc -l < "$BB_TMP/prefixes") API prefixes:" $(cat "$BB_TMP/prefixes")
bb_expect_true "at least 10 API prefixes" test "$(wc -l < "$BB_TMP/prefixes")" -ge 10
# squatters FILE...: the symbols these objects or archives define under a prefix.
squatters() {
    nm --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u \
        | grep -F -f "$BB_TMP/prefixes" | awk 'NR == FNR { p[$1] = 1; next }
            { for (k in p) if (index($1, k) == 1) { print; next } }' "$BB_TMP/prefixes" -
}
set -- "$B/runner/.libs/libbbrunner.a" "$B/runtime/.libs/libbbruntime.a" \
    "$B/record/.libs/libbbrecord.a" "$B/common/.libs/libbbcommon.a" \
    "$B"/bench/*/.libs/libbb*.a "$B"/bench/*/bbench_*-bbench-*.o "$B"/compare/*.o
bb_expect_true "at least 10 archives and program objects read" test $# -ge 10
squatters "$@" > "$BB_TMP/squat"
bb_expect_true "no symbol outside libbbench under its API prefixes" test ! -s "$BB_TMP/squat"
sed 's/^/    outside libbbench: /' "$BB_TMP/squat"
# Planted: bench/sum's fixture under the sum phase's prefix, as it was.
printf 'int bb_sum_fixture_setup(void) { return 0; }\nstatic int bb_sum_quiet(void) { return 1; }\nint f(void) { return bb_sum_quiet(); }\n' \
    > "$BB_TMP/planted.c"
$MPICC -c -o "$BB_TMP/planted.o" "$BB_TMP/planted.c" > /dev/null 2>&1
bb_expect_rc 0 $? "the planted object compiles"
squatters "$BB_TMP/planted.o" > "$BB_TMP/planted"
bb_expect_true "the planted bb_sum_fixture_setup and static bb_sum_quiet found" \
    test "$(tr '\n' ' ' < "$BB_TMP/planted")" = "bb_sum_fixture_setup bb_sum_quiet "
sed 's/^/    planted: /' "$BB_TMP/planted"
bb_finish
