#!/bin/sh
# valgrind-check.sh: Valgrind memcheck on -n 2 runs of every executable, tiny sizes.
#   sh scripts/valgrind-check.sh [BUILD_DIR]
# Prints each run's error summary and definite leaks per rank; exit 1 if any
# run has an invalid read or write, or a definite leak not suppressed by
# tests/valgrind.supp (which covers MPI library internals only).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
# $vg and $lt below are split into words when run: a path in them that
# would split or glob is refused rather than mangled.
case $src:$build in
*[[:space:]*?[]*)
    echo "valgrind-check.sh: '$src' or '$build' holds a blank or glob character (* ? [), which its command lines would split; give a build directory without (and a checkout path without)" >&2
    exit 2 ;;
esac
mpiexec=${MPIEXEC:-mpiexec}
logs=$(mktemp -d "${TMPDIR:-/tmp}/bbvg.XXXXXX")
vg="valgrind --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
--suppressions=$src/tests/valgrind.supp --error-exitcode=99"
status=0
# The programs link the static libbbench-core (doc/layout.md), so they
# are real binaries; libtool's execute mode still hands valgrind the real
# binary should a program ever become a wrapper script again.
lt="$build/libtool --mode=execute"

run() {
    name=$1; shift
    np=$1; shift
    mkdir -p "$logs/$name"
    if [ "$np" = serial ]; then
        # shellcheck disable=SC2086
        timeout 600 $lt $vg --log-file="$logs/$name/rank-%p.log" "$@" > "$logs/$name/out" 2>&1
    else
        # shellcheck disable=SC2086
        timeout 600 "$mpiexec" -n "$np" $lt $vg --log-file="$logs/$name/rank-%p.log" "$@" \
            > "$logs/$name/out" 2>&1
    fi
    rc=$?
    for log in "$logs/$name"/rank-*.log; do
        errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log")
        lost=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$log")
        invalid=$(grep -c "Invalid read\|Invalid write" "$log")
        suppressed=$(sed -n 's/.*suppressed: \([0-9,]*\) bytes.*/\1/p' "$log")
        printf '%-16s %-12s exit %3s  errors %s  invalid r/w %s  definitely lost %s bytes (%s suppressed, MPI_Init)\n' \
            "$name" "$(basename "$log" .log)" "$rc" "${errors:-?}" "$invalid" "${lost:-0}" \
            "${suppressed:-0}"
        [ "${errors:-1}" = 0 ] || status=1
    done
    [ "$rc" -eq 0 ] || status=1
}

# Every benchmark of bench/benchmarks.list, with its valgrind arguments (field 5).
sed -e '/^#/d' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*|[[:space:]]*/|/g' \
    "$src/bench/benchmarks.list" | cut -d'|' -f1,5 > "$logs/list"
while IFS='|' read -r bench args; do
    # The arguments are split into words, never globbed.
    set -f
    # shellcheck disable=SC2086
    set -- "$build/bench/bbench-$bench" $args
    set +f
    run "bbench-$bench" 2 "$@" < /dev/null
done < "$logs/list"
rec=$(ls "$src"/tests/tools/data/base.json)
run bbench-compare serial "$build/bench/bbench-compare" "$rec" "$rec"
echo "logs in $logs"
exit $status
