#!/bin/sh
# bbench-smpirun and bbench-simulate against hostile input, without
# SimGrid (fake smpirun and gnuplot stand in): platform-file values and
# paths are data, never sed, awk or gnuplot program text; a hostfile short
# of -n, or a radical the shell cannot count, is an error with a message.
. "$(dirname "$0")/../lib.sh"
out="$BB_TMP/out"
err="$BB_TMP/err"

# bbench-smpirun: platform values are data.  A <cluster> prefix never
# reaches a sed program (whose 'e' would run it), a prefix with a '/' makes
# its hosts, and a hostfile short of -n is an error.  A fake smpirun keeps
# the hostfile it was given.
SR="$S/scripts/bbench-smpirun"
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

bb_finish
