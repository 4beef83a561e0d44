#!/bin/sh
# bbench-smpirun and bbench-simulate against hostile input, without
# SimGrid (fake smpirun and gnuplot stand in): platform-file values and
# paths are data, never sed, awk or gnuplot program text; a hostfile short
# of -n, or a radical the shell cannot count, is an error with a message;
# --cfg settings and platform paths that would split or glob are refused.
. "$(dirname "$0")/../lib.sh"
out="$BB_TMP/out"
err="$BB_TMP/err"

# bbench-smpirun: platform values are data.  A <cluster> prefix never
# reaches a sed program (whose 'e' would run it), a prefix with a '/' makes
# its hosts, and a hostfile short of -n is an error.  A fake smpirun keeps
# the hostfile it was given.
SR="$S/tools/bbench-smpirun"
cat >"$BB_TMP/fake-smpirun" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do
    case $1 in -hostfile) cp "$2" "$FAKE_HOSTS"; shift ;; esac
    shift
done
exit 0
SH
chmod +x "$BB_TMP/fake-smpirun"
platform() {
    printf '<?xml version="1.0"?>\n<platform version="4.1">\n  <cluster id="c" prefix="%s" suffix="%s" radical="%s" speed="1Gf" bw="1Gbps" lat="1us"/>\n</platform>\n' \
        "$1" "$2" "$3" >"$BB_TMP/plat.xml"
}
smpi() {
    rm -f "$BB_TMP/hosts-got"
    FAKE_HOSTS="$BB_TMP/hosts-got" SMPIRUN="$BB_TMP/fake-smpirun" \
        sh "$SR" --platform "$BB_TMP/plat.xml" "$@" -- /bin/true >"$out" 2>"$err"
}
platform "n/;e touch $BB_TMP/ran;#" "" 0-3
smpi -n 2
bb_expect_rc 2 $? "smpirun: a prefix holding a sed command is refused"
bb_expect_true "smpirun: ... and its command did not run" test ! -e "$BB_TMP/ran"
bb_expect_grep 'prefix=.*holds a blank' "$err" "smpirun: the prefix named"
bb_expect_true "smpirun: ... nothing launched" test ! -e "$BB_TMP/hosts-got"
platform "rack/n" ".x" 1-4
smpi -n 3
bb_expect_rc 0 $? "smpirun: a prefix with a '/'"
printf 'rack/n1.x\nrack/n2.x\nrack/n3.x\n' >"$BB_TMP/hosts-want"
bb_expect_true "smpirun: ... its three hosts in the hostfile" cmp -s "$BB_TMP/hosts-got" "$BB_TMP/hosts-want"
platform 'a\tb' "" 0-1
smpi -n 2
bb_expect_rc 0 $? "smpirun: a prefix with a backslash"
printf 'a\\tb0\na\\tb1\n' >"$BB_TMP/hosts-want"
bb_expect_true "smpirun: ... kept as written" cmp -s "$BB_TMP/hosts-got" "$BB_TMP/hosts-want"
for r in 08-09 1-99999999999999999999 5 3-1 1-2-3 x-4; do
    platform n "" "$r"
    smpi -n 1
    bb_expect_rc 2 $? "smpirun: radical=\"$r\" refused"
    bb_expect_grep 'no <cluster> with a radical="A-B" range' "$err" "smpirun: radical=\"$r\": message"
    bb_expect_true "smpirun: radical=\"$r\": no shell noise" \
        test "$(grep -c -e 'expression' -e 'Illegal' -e 'arithmetic' -e 'out of range' "$err")" -eq 0
done

# bbench-simulate: a quote in --out or in a platform's name reaches gnuplot
# as text (a quote doubled in its single-quoted strings); a line break in
# --out is refused before any simulation.  A fake bbench-smpirun writes a
# minimal simulated record; a fake gnuplot keeps its script and fails on a
# line with an odd number of quotes (a string left open).
SIM="$S/tools/bbench-simulate"
# The fake records are not bbench's schema.
# shellcheck disable=SC2034  # read by bb_finish (tests/lib.sh)
BB_SCHEMA_CHECK=no
cat >"$BB_TMP/fake-bbsmpirun" <<'SH'
#!/bin/sh
: >"$FAKE_RAN"
rec=
while [ $# -gt 0 ]; do
    case $1 in --output) rec=$2; shift ;; esac
    shift
done
pt() { printf '{"parameters": {"mode": "%s"%s}, "quantities": {"elapsed": {"value": %s}}}' "$@"; }
printf '{"runtime": {"simulated": {}}, "points": [%s, %s, %s, %s]}\n' \
    "$(pt raw '' 1e-6)" "$(pt admission ', "admission": "spec"' 2e-6)" \
    "$(pt admission ', "admission": "fused"' 3e-6)" \
    "$(pt admission ', "admission": "fused-op"' 4e-6)" >"$rec"
SH
cat >"$BB_TMP/fake-gnuplot" <<'SH'
#!/bin/sh
[ $# -gt 0 ] && exit 0
cat >"$FAKE_GP"
awk -v q="'" '{ n = gsub(q, q); if (n % 2) { print "gnuplot: unbalanced quote, line " NR ": " $0; bad = 1 } }
     END { exit bad }' "$FAKE_GP" >&2
SH
chmod +x "$BB_TMP/fake-bbsmpirun" "$BB_TMP/fake-gnuplot"
mkdir "$BB_TMP/plat"
cp "$S/share/platforms/flat-cluster.xml" "$BB_TMP/plat/bob's.xml"
simulate() {
    rm -f "$BB_TMP/ran" "$BB_TMP/gp"
    FAKE_RAN="$BB_TMP/ran" FAKE_GP="$BB_TMP/gp" BBENCH_SMPIRUN="$BB_TMP/fake-bbsmpirun" \
        GNUPLOT="$BB_TMP/fake-gnuplot" sh "$SIM" --sum /bin/true --ranks 2,4 "$@" >"$out" 2>"$err"
}
if command -v python3 >/dev/null 2>&1; then
    study="$BB_TMP/bob's study"
    simulate --out "$study" "$BB_TMP/plat/bob's.xml"
    bb_expect_rc 0 $? "simulate: --out and a platform with a quote"
    bb_expect_true "simulate: the runs wrote the table" test -s "$study/table.md"
    bb_expect_true "simulate: gnuplot's output is the quoted --out" \
        grep -q -x -F "set output '$BB_TMP/bob''s study/ratio.png'" "$BB_TMP/gp"
    bb_expect_true "simulate: the platform's data file and title quoted" \
        grep -q -F "'$BB_TMP/bob''s study/bob''s.dat' using 2:7 with linespoints title 'bob''s spec'" "$BB_TMP/gp"
    bb_expect_true "simulate: the data file written" test -s "$study/bob's.dat"
    # The same with the real gnuplot, where there is one.
    if command -v gnuplot >/dev/null 2>&1; then
        BBENCH_SMPIRUN="$BB_TMP/fake-bbsmpirun" FAKE_RAN="$BB_TMP/ran" sh "$SIM" --sum /bin/true \
            --ranks 2,4 --out "$BB_TMP/bob's real" "$BB_TMP/plat/bob's.xml" >"$out" 2>"$err"
        bb_expect_rc 0 $? "simulate: gnuplot draws into --out with a quote"
        bb_expect_true "simulate: ... ratio.png" test -s "$BB_TMP/bob's real/ratio.png"
    else
        echo "simulate: gnuplot not installed; its script checked with a stand-in only"
    fi
else
    echo "simulate: python3 not installed; only the refusals are checked"
fi
nl="$BB_TMP/a
b"
simulate --out "$nl" "$BB_TMP/plat/bob's.xml"
bb_expect_rc 2 $? "simulate: a line break in --out refused"
bb_expect_grep "a line break or control character" "$err" "simulate: ... with a message"
bb_expect_true "simulate: ... before any simulation" test ! -e "$BB_TMP/ran"
bb_expect_true "simulate: ... nothing created" test ! -e "$nl"

# --cfg settings and platform paths are split into words when passed on: a
# blank or glob character is refused, nothing run (smpirun would have taken
# the word after the blank for its program).
platform n "" 0-3
for c in '--cfg=smpi/a:b c' '--cfg=smpi/a:*'; do
    smpi -n 1 "$c"
    bb_expect_rc 2 $? "smpirun: '$c' refused"
    bb_expect_grep "cannot be passed in --cfg" "$err" "smpirun: '$c': message"
    bb_expect_true "smpirun: '$c': nothing launched" test ! -e "$BB_TMP/hosts-got"
    simulate --out "$BB_TMP/cfg" "$c" "$BB_TMP/plat/bob's.xml"
    bb_expect_rc 2 $? "simulate: '$c' refused"
    bb_expect_true "simulate: '$c': nothing run" test ! -e "$BB_TMP/ran"
done
cp "$BB_TMP/plat/bob's.xml" "$BB_TMP/plat/p1.xml"
cp "$BB_TMP/plat/bob's.xml" "$BB_TMP/plat/p[1].xml"
simulate --out "$BB_TMP/glob" "$BB_TMP/plat/p[1].xml"
bb_expect_rc 2 $? "simulate: a platform path with glob characters refused"
bb_expect_grep "no blanks or glob characters" "$err" "simulate: ... with a message"
bb_expect_true "simulate: ... nothing run" test ! -e "$BB_TMP/ran"

bb_finish
