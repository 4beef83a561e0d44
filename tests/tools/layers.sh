#!/bin/sh
# The layers (doc/layout.md): every #include "..." of a folder names a
# folder that folder may use, a cross-folder include names its folder, each
# folder's Makefile.include lists only its own sources, no call goes from
# one folder into another that calls back (a cycle), read from the built
# libraries' symbols, nor against the layers (a benchmark into the
# runtime).  BB_LAYERS_SRC checks another source tree's includes
# (the test's own planted violation below).
. "$(dirname "$0")/../lib.sh"

# The folder of a source file, relative to the tree: bench/NAME for a
# benchmark's, include/private for the private headers, else the first part.
folder_of() {
    case "$1" in
        bench/*/*) echo "$1" | cut -d/ -f1-2 ;;
        include/private/*) echo private ;;
        include/*) echo include ;;
        *) echo "${1%%/*}" ;;
    esac
}

# The folder an include names, from the including file's folder: a bare
# name is that folder's own (bbench.h and config.h are the installed API
# and configure's); "bbench/status.h" is include/.
target_of() {   # FILE-FOLDER INCLUDED
    case "$2" in
        config.h) echo config ;;
        bbench.h|bbench/*) echo include ;;
        ../*|*/../*) echo "../" ;;
        private/*) echo private ;;
        bench/*/*) echo "$2" | cut -d/ -f1-2 ;;
        */*) echo "${2%%/*}" ;;
        *) echo "$1" ;;
    esac
}

# May FOLDER include TARGET (INCLUDED the name as written)?
allowed() {   # FOLDER TARGET INCLUDED
    [ "$2" = "$1" ] || [ "$2" = config ] && return 0
    case "$1:$2" in
        include:*|private:include) [ "$2" = include ] ;;
        lib:include|lib:private) return 0 ;;
        record:include|common:include) [ "$3" = bbench/status.h ] ;;
        record:private|common:private|compare:private) [ "$3" = private/bbtext.h ] ;;
        compare:record|compare:common) return 0 ;;
        compare:include) [ "$3" = bbench/status.h ] ;;
        runtime:include|runtime:private|runtime:record|runtime:common) return 0 ;;
        runner:include|runner:private|runner:runtime|runner:record|runner:common) return 0 ;;
        bench/*:include) [ "$3" = bbench.h ] ;;
        bench/*:private|bench/*:record) return 0 ;;
        bench/*:runner) [ "$3" != runner/runner-int.h ] ;;
        tests:*|python:*|examples:*) return 0 ;;
        *) return 1 ;;
    esac
}

# Every quoted include of the layered folders, as "FILE INCLUDED".
includes() {   # TREE
    (cd "$1" && for f in include/*.h include/*/*.h lib/*.[ch] record/*.[ch] \
            common/*.[ch] compare/*.[ch] runtime/*.[ch] runner/*.[ch] bench/*/*.[ch]; do
        [ -f "$f" ] || continue
        sed -n "s|^[[:space:]]*#[[:space:]]*include[[:space:]]*\"\\([^\"]*\\)\".*|$f \\1|p" "$f"
    done)
}

check_tree() {   # TREE OUT: forbidden includes into OUT, one a line
    : > "$2"
    includes "$1" | while read -r file inc; do
        from=$(folder_of "$file")
        to=$(target_of "$from" "$inc")
        if [ "$to" = "$from" ] && [ "${inc#*/}" = "$inc" ] && [ "$inc" != config.h ] \
                && [ "$inc" != bbench.h ] && [ ! -f "$1/$(dirname "$file")/$inc" ]; then
            echo "$file: \"$inc\": not in $from/ (a cross-folder include names its folder)"
        elif ! allowed "$from" "$to" "$inc"; then
            echo "$file: \"$inc\": $from/ may not include it ($to/)"
        fi
    done > "$2"
    # MPI stays out of the MPI-free folders.
    (cd "$1" && grep -l '#[[:space:]]*include[[:space:]]*<mpi\.h>' record/*.[ch] \
        compare/*.[ch] common/*.[ch] 2>/dev/null | sed 's|$|: includes <mpi.h> (MPI-free folder)|') \
        >> "$2"
}

# Each folder's fragment lists only its own sources: every word of a
# *_SOURCES or *_sources list in DIR/Makefile.include starts with DIR/ (a
# source of another folder is listed in that folder's fragment or in mk/).
check_fragments() {   # TREE OUT: the words out of place into OUT
    (cd "$1" && for f in */Makefile.include bench/*/Makefile.include; do
        [ -f "$f" ] || continue
        awk -v f="$f" -v d="${f%/Makefile.include}" '
            /^[A-Za-z0-9_]*(_SOURCES|_sources)[ \t]*[+]?=/ { on = 1; sub(/^[^=]*=/, "") }
            on {
                for (i = 1; i <= NF; i++)
                    if ($i != "\\" && index($i, d "/") != 1)
                        printf "%s:%d: %s: not in %s/ (list it in its own folder'"'"'s fragment)\n", f, FNR, $i, d
                on = ($NF == "\\")
            }' "$f"
    done) > "$2"
}

src=${BB_LAYERS_SRC:-$S}
check_tree "$src" "$BB_TMP/bad"
n=$(includes "$src" | wc -l)
echo "$n includes checked"
bb_expect_true "at least 200 includes read" test "$n" -ge 200
bb_expect_true "every include within its folder's layers" test ! -s "$BB_TMP/bad"
sed 's/^/    /' "$BB_TMP/bad"
check_fragments "$src" "$BB_TMP/frag"
echo "$(cd "$src" && ls */Makefile.include bench/*/Makefile.include | wc -l) fragments' source lists read"
bb_expect_true "every fragment lists only its own folder's sources" test ! -s "$BB_TMP/frag"
sed 's/^/    /' "$BB_TMP/frag"

# The guard: runner-int.h refuses to compile inside a benchmark.
printf '#include "runner/runner-int.h"\n' > "$BB_TMP/guard.c"
$MPICC -DBB_INSIDE_BENCHMARK -I"$S/include" -I"$S" -I"$B" \
    -fsyntax-only "$BB_TMP/guard.c" > "$BB_TMP/guard.out" 2>&1
bb_expect_rc 1 $? "runner-int.h inside a benchmark does not compile"
bb_expect_grep "runner-int.h is the runner's own" "$BB_TMP/guard.out" "the guard says why"

# The test fails on what it forbids: a planted include of the runner's
# internals in a benchmark and of the runner in the runtime, in a copy.
if [ -z "${BB_LAYERS_SRC:-}" ]; then
    mkdir -p "$BB_TMP/plant"
    (cd "$S" && tar cf - include lib record common compare runtime runner bench) \
        | (cd "$BB_TMP/plant" && tar xf -)
    printf '#include "runner/runner-int.h"\n' >> "$BB_TMP/plant/bench/sum/allreduce-ref.c"
    printf '#include "runner/table.h"\n' >> "$BB_TMP/plant/runtime/topo.c"
    printf '#include "measure.h"\n' >> "$BB_TMP/plant/bench/overlap/op.c"
    check_tree "$BB_TMP/plant" "$BB_TMP/planted"
    bb_expect_rc 3 "$(wc -l < "$BB_TMP/planted")" "the three planted includes found"
    sed 's/^/    planted: /' "$BB_TMP/planted"
    # A benchmark's fragment listing a library source, as bench/sum's did.
    printf 'bb_lib_sources += lib/sum.c\n' >> "$BB_TMP/plant/bench/sum/Makefile.include"
    check_fragments "$BB_TMP/plant" "$BB_TMP/planted-frag"
    bb_expect_rc 1 "$(wc -l < "$BB_TMP/planted-frag")" "the planted library source in bench/sum's fragment found"
    sed 's/^/    planted: /' "$BB_TMP/planted-frag"
fi

# Calls: folder A -> B when A's objects need a symbol B's define.  No two
# folders may call each other, directly or around a longer loop.
libs="lib:lib/.libs/libbbench-core.a record:record/.libs/libbbrecord.a
runtime:runtime/.libs/libbbruntime.a runner:runner/.libs/libbbrunner.a
common:common/.libs/libbbcommon.a"
# A benchmark's folder library, where its fragment builds one.
for d in "$S"/bench/*/; do
    name=$(basename "$d")
    grep -q "libbb$name.la" "$d/Makefile.include" 2>/dev/null \
        && libs="$libs bench/$name:bench/$name/.libs/libbb$name.a"
done
: > "$BB_TMP/defs"; : > "$BB_TMP/uses"
for pair in $libs; do
    f=${pair%%:*}; a="$B/${pair#*:}"
    bb_expect_true "$f: $(basename "$a") built" test -f "$a"
    [ -f "$a" ] || continue
    nm --defined-only -g "$a" 2>/dev/null | awk -v f="$f" 'NF == 3 { print $3, f }' >> "$BB_TMP/defs"
    nm -u "$a" 2>/dev/null | awk -v f="$f" 'NF == 2 { print $2, f }' >> "$BB_TMP/uses"
done
# A benchmark's program objects call through its folder too.
for o in "$B"/bench/*/bbench_*-bbench-*.o; do
    [ -f "$o" ] || continue
    f=bench/$(basename "$(dirname "$o")")
    nm -u "$o" | awk -v f="$f" 'NF == 2 { print $2, f }' >> "$BB_TMP/uses"
done
awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1] }' \
    "$BB_TMP/defs" "$BB_TMP/uses" | sort -u > "$BB_TMP/edges"
echo "$(wc -l < "$BB_TMP/edges") call edges across folders:"
awk '{ print "    " $1 " -> " $2 }' "$BB_TMP/edges"
bb_expect_true "calls cross folders" test -s "$BB_TMP/edges"
# Cycles: the transitive closure has no A -> A.
awk '{ e[$1, $2] = 1; n[$1] = 1; n[$2] = 1 }
     END { for (k in n) for (i in n) for (j in n)
               if (e[i, k] && e[k, j]) e[i, j] = 1
           for (i in n) if (e[i, i]) print i }' "$BB_TMP/edges" > "$BB_TMP/cycles"
bb_expect_true "no call cycle across folders" test ! -s "$BB_TMP/cycles"
sed 's/^/    in a cycle: /' "$BB_TMP/cycles"
# And no call against the layers: lib and record call no other folder, the
# runtime never the runner or a benchmark, the runner never a benchmark,
# and a benchmark reaches the runtime only through the runner (one fatal
# path, bb_run_fatal; runner.h does not expose runtime/bench.h).
against_layers() {   # EDGES OUT
    awk '$1 == "lib" || $1 == "record" || ($1 == "runtime" && $2 != "lib" && $2 != "record") ||
         ($1 == "runner" && $2 ~ /^bench\//) || ($1 ~ /^bench\// && $2 ~ /^bench\//) ||
         ($1 ~ /^bench\// && $2 == "runtime")' "$1" > "$2"
}
against_layers "$BB_TMP/edges" "$BB_TMP/upward"
bb_expect_true "no call against the layers" test ! -s "$BB_TMP/upward"
sed 's/^/    against the layers: /' "$BB_TMP/upward"

# runner.h, as a benchmark includes it, declares nothing of the runtime.
printf '#include "runner/runner.h"\n#ifdef BB_RUNTIME_BENCH_H\n#error "runtime/bench.h reached through runner.h"\n#endif\nvoid f(void *b) { bb_bench_fatal(b, "x"); }\n' \
    > "$BB_TMP/exposed.c"
$MPICC -DBB_INSIDE_BENCHMARK -I"$S/include" -I"$S" -I"$B" -Werror=implicit-function-declaration \
    -fsyntax-only "$BB_TMP/exposed.c" > "$BB_TMP/exposed.out" 2>&1
bb_expect_rc 1 $? "a benchmark including runner.h cannot call bb_bench_fatal"
bb_expect_grep "bb_bench_fatal" "$BB_TMP/exposed.out" "the compiler names the runtime call"

# Planted: a benchmark object that calls the runtime's fatal path itself,
# as bench/redist did; its calls join the edges as bench/sum's.
printf 'void bb_bench_fatal(void *bench, const char *fmt, ...);\nvoid planted(void *b) { bb_bench_fatal(b, "x"); }\n' \
    > "$BB_TMP/planted-call.c"
$MPICC -c -o "$BB_TMP/planted-call.o" "$BB_TMP/planted-call.c" > /dev/null 2>&1
bb_expect_rc 0 $? "the planted benchmark object compiles"
{ cat "$BB_TMP/uses"; nm -u "$BB_TMP/planted-call.o" | awk 'NF == 2 { print $2, "bench/sum" }'; } \
    > "$BB_TMP/uses-planted"
awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1] }' \
    "$BB_TMP/defs" "$BB_TMP/uses-planted" | sort -u > "$BB_TMP/edges-planted"
against_layers "$BB_TMP/edges-planted" "$BB_TMP/upward-planted"
bb_expect_true "the planted bench/sum -> runtime call found" \
    test "$(cat "$BB_TMP/upward-planted")" = "bench/sum runtime"
sed 's/^/    planted: against the layers: /' "$BB_TMP/upward-planted"
bb_finish
