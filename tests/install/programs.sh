#!/bin/sh
# Every program make install puts in bin/ (the benchmarks, bbench-compare
# and the tools of tools/) answers --help with exit 0 and its usage on
# stdout, --version with the package's version, and has its man page in
# man1/ (when configure found help2man; mk/man.am); nothing of scripts/
# (developer tooling) is installed.  A planted program without either
# shows that the check finds what it looks for.
. "$(dirname "$0")/../lib.sh"
stage="$BB_TMP/stage"
# A nested make of this build tree: everything is built already.
make -C "$B" install DESTDIR="$stage" > "$BB_TMP/install.log" 2>&1
bb_expect_rc 0 $? "make install DESTDIR=..."
root="$stage$prefix"
man1="$root/share/man/man1"
want=$("$B/bench/bbench-compare" --version | sed -n '1s/.* //p')
bb_expect_true "the package version known ($want)" test -n "$want"

# check_bin: what is wrong with the programs of $root/bin, one a line.
check_bin() {
    for f in "$root"/bin/*; do
        p=$(basename "$f")
        LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            bb_serial "$f" --help > "$BB_TMP/help" 2> "$BB_TMP/help.err" < /dev/null
        rc=$?
        [ $rc -eq 0 ] || echo "$p: --help exits $rc"
        sed -n 1p "$BB_TMP/help" | grep -q "^Usage: $p" \
            || echo "$p: --help prints no 'Usage: $p' line first on stdout"
        v=$(LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            bb_serial "$f" --version 2>/dev/null < /dev/null | sed -n 1p)
        [ "$v" = "$p (bbench) $want" ] || echo "$p: --version says '$v', not '$p (bbench) $want'"
        if [ "$BB_MAN_PAGES" = yes ]; then
            if [ ! -s "$man1/$p.1" ]; then
                echo "$p: no man page $p.1"
            else
                # help2man's NAME line: "PROGRAM \- WHAT", WHAT from the "# man:" line.
                grep -A1 '^\.SH NAME' "$man1/$p.1" | grep -q "^$p \\\\- [a-zA-Z]" \
                    || echo "$p: $p.1 has no NAME line (no '# man: $p:' line in its fragment?)"
            fi
        fi
    done
}

ls "$root/bin" > "$BB_TMP/bin"
echo "$(wc -l < "$BB_TMP/bin") programs in bin/:" $(cat "$BB_TMP/bin")
[ "$BB_MAN_PAGES" = yes ] && echo "$(ls "$man1" | wc -l) man pages in man1/:" $(ls "$man1")
bb_expect_true "at least 14 programs installed" test "$(wc -l < "$BB_TMP/bin")" -ge 14
for p in bbench-sum bbench-compare bbench-sweep bbench-netns-delay; do
    bb_expect_true "$p installed" test -x "$root/bin/$p"
done
check_bin > "$BB_TMP/bad"
bb_expect_true "every installed program: --help, --version, man page" test ! -s "$BB_TMP/bad"
sed 's/^/    /' "$BB_TMP/bad"
# Nothing of scripts/ installed, under any name it has there.
for f in "$S"/scripts/*; do
    n=$(basename "$f")
    find "$stage" -name "$n" -o -name "${n%.sh}"
done > "$BB_TMP/dev"
bb_expect_true "no developer tool of scripts/ installed" test ! -s "$BB_TMP/dev"
sed 's/^/    installed: /' "$BB_TMP/dev"

# Planted: a program that fails --help and --version and has no page.
printf '#!/bin/sh\necho "bbench-planted: no options" >&2\nexit 2\n' > "$root/bin/bbench-planted"
chmod +x "$root/bin/bbench-planted"
check_bin | grep '^bbench-planted: ' > "$BB_TMP/planted"
n=3
[ "$BB_MAN_PAGES" = yes ] && n=4
bb_expect_rc $n "$(wc -l < "$BB_TMP/planted")" "the planted program's $n faults found"
sed 's/^/    planted: /' "$BB_TMP/planted"
bb_finish
