#!/bin/sh
# bench/benchmarks.list is the one list of benchmarks: each listed benchmark
# has its folder (program and Makefile.include with its man page), CLI test,
# README entry and program (tests/install/programs.sh: every installed
# program's --help, --version and man page), and
# every short option letter means the same long option in every program.
. "$(dirname "$0")/../lib.sh"

list="$S/bench/benchmarks.list"
sed -e '/^#/d' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*|[[:space:]]*/|/g' "$list" \
    | cut -d'|' -f1 > "$BB_TMP/names"
bb_expect_true "benchmarks.list names at least one benchmark" test -s "$BB_TMP/names"
: > "$BB_TMP/letters"
while read -r name; do
    bb_expect_true "$name: bench/$name/bbench-$name.c" test -f "$S/bench/$name/bbench-$name.c"
    bb_expect_true "$name: bench/$name/Makefile.include" test -f "$S/bench/$name/Makefile.include"
    bb_expect_true "$name: Makefile.am includes its fragment" \
        grep -q "^include \$(srcdir)/bench/$name/Makefile.include" "$S/Makefile.am"
    # Its man page (mk/man.am): the fragment names the page and its NAME line.
    bb_expect_true "$name: its fragment carries its man page and '# man:' line" \
        sh -c "grep -q '^bb_man_programs += man/bbench-$name.1\$' '$S/bench/$name/Makefile.include' &&
               grep -q '^# man: bbench-$name: ' '$S/bench/$name/Makefile.include'"
    bb_expect_true "$name: tests/mpi/$name-cli.sh" test -f "$S/tests/mpi/$name-cli.sh"
    bb_expect_true "$name: README.md describes bbench-$name" \
        grep -q "bbench-$name" "$S/README.md"
    bb_serial "$B/bench/bbench-$name" --help > "$BB_TMP/help" 2>&1 < /dev/null
    bb_expect_rc 0 $? "bbench-$name --help"
    # "  -c, --count LIST": the letter and the long name it stands for.
    sed -n 's/^  -\([A-Za-z]\), --\([a-z-]*\).*/\1 \2/p' "$BB_TMP/help" \
        | sed "s/\$/ bbench-$name/" >> "$BB_TMP/letters"
done < "$BB_TMP/names"
# The compare tool speaks the same vocabulary.
bb_serial "$B/bench/bbench-compare" --help > "$BB_TMP/help" 2>&1 < /dev/null
sed -n 's/^  -\([A-Za-z]\), --\([a-z-]*\).*/\1 \2 bbench-compare/p' "$BB_TMP/help" \
    >> "$BB_TMP/letters"
# doc/index.md's table of benchmarks is the one the list makes.
sed -n '/made by scripts\/bbench-docindex/,/end of the generated table/p' "$S/doc/index.md" \
    | sed '1d;$d' > "$BB_TMP/index-table"
sh "$S/scripts/bbench-docindex" > "$BB_TMP/index-want"
bb_expect_true "doc/index.md lists the benchmarks of benchmarks.list" \
    cmp -s "$BB_TMP/index-table" "$BB_TMP/index-want"
# One meaning per letter: a letter that stands for two long names is reported.
sort -u -k1,2 "$BB_TMP/letters" | awk '{ n[$1]++; w[$1] = w[$1] " --" $2 " (" $3 ")" }
    END { for (l in n) if (n[l] > 1) print "-" l ":" w[l] }' > "$BB_TMP/clash"
bb_expect_true "every short option letter means one long option across the programs" \
    test ! -s "$BB_TMP/clash"
[ -s "$BB_TMP/clash" ] && sed 's/^/    /' "$BB_TMP/clash" >&2
bb_finish
