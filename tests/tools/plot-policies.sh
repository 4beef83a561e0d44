#!/bin/sh
# bbench-plot draws every record the project writes (issue 28, finding 2):
# records with several policies (bbench-sum --buffers both, bbench-transfer
# --requests both, a bbench-sweep with --buffers both --admission all
# --requests both, and bbench-perf's own records) give one series per
# policy, the references one series each (raw points carry no policy), and
# a protocol/raw ratio per policy against the raw reference of the same run.
# Small runs at -n 1 and 2; without gnuplot the test is a skip (77).
. "$(dirname "$0")/../lib.sh"

PL="$S/tools/bbench-plot"
export BBENCH_COMPARE="$B/bench/bbench-compare"
out="$BB_TMP/out"
err="$BB_TMP/err"

command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || { echo "no gnuplot: skipped"; exit 77; }

is_png() {
    [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}
# entries GP: every legend entry of the script, one a line.
entries() {
    grep '^plot ' "$1" | grep -o "title '[^']*'" | sed -e "s/^title '//" -e "s/'\$//"
}
# plot WHAT DIR: bbench-plot of DIR into DIR.png/ and DIR.gp/, exit 0.
plot() {
    rm -rf "$2.png" "$2.gp"
    bb_serial sh "$PL" --out "$2.png" --script "$2.gp" "$2" >"$out" 2>"$err"
    bb_expect_rc 0 $? "$1: plotted"
}

# The reproduction: two policies of the protocol's buffers.
mkdir "$BB_TMP/r"
bb_mpirun 2 "$B/bench/bbench-sum" --count 1,8 --buffers both --samples 3 --reps 2 \
    -o "$BB_TMP/r/sum-n2.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "bbench-sum --buffers both"
plot "sum --buffers both" "$BB_TMP/r"
bb_expect_true "sum.png written" is_png "$BB_TMP/r.png/sum.png"
entries "$BB_TMP/r.gp/sum.gp" >"$out"
bb_expect_grep '^protocol fresh$' "$out" "a series for fresh buffers"
bb_expect_grep '^protocol retained$' "$out" "a series for retained buffers"
bb_expect_grep '^raw$' "$out" "one raw series, without a policy"
bb_expect_grep '^fresh / raw$' "$out" "the ratio of fresh buffers against raw"
bb_expect_grep '^retained / raw$' "$out" "the ratio of retained buffers against raw"
bb_expect_true "buffers make no panel" test "$(grep -c "set title 'buffers" "$BB_TMP/r.gp/sum.gp")" -eq 0
bb_expect_grep "admission=spec, requests=per-call" "$BB_TMP/r.gp/sum.gp" "the policies every protocol point shares, in the title"
# Each ratio is its series over the raw point of the same count.
python3 - "$BB_TMP/r/sum-n2.json" "$BB_TMP/r.gp/sum.gp" >"$out" <<'PY'
import json, re, sys
pts = json.load(open(sys.argv[1]))["points"]
med = {(p["parameters"]["count"], p["parameters"]["mode"], p["parameters"].get("buffers")):
       p["quantities"]["elapsed"]["median"] for p in pts}
gp = open(sys.argv[2]).read()
blocks = dict(re.findall(r"\$(R\d+) << EOD\n(.*?)EOD", gp, re.S))
titles = re.findall(r"\$(R\d+) using 1:2 .*? title '([^']*)'", gp)
for block, title in titles:
    buffers = title.split(" / ")[0]
    for line in blocks[block].split("\n"):
        if line:
            x, r = line.split()
            want = med[(int(float(x)), "protocol", buffers)] / med[(int(float(x)), "raw", None)]
            print("ok" if abs(float(r) - want) <= 1e-9 * want else "BAD", buffers, x, r, want)
PY
bb_expect_true "four ratio points, each its protocol median over raw" \
    test "$(grep -c '^ok' "$out")" -eq 4 -a "$(grep -c BAD "$out")" -eq 0

# Transfer with two request policies.
mkdir "$BB_TMP/t"
bb_mpirun 2 "$B/bench/bbench-transfer" --bytes 8,1K --batches 0 --requests both --samples 3 \
    --reps 2 -o "$BB_TMP/t/transfer-n2.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "bbench-transfer --requests both"
plot "transfer --requests both" "$BB_TMP/t"
bb_expect_true "transfer.png written" is_png "$BB_TMP/t.png/transfer.png"
entries "$BB_TMP/t.gp/transfer.gp" >"$out"
bb_expect_grep '^protocol persistent$' "$out" "a series for persistent requests"
bb_expect_grep '^persistent / raw$' "$out" "its ratio against raw"

# A sweep over every policy.
bb_serial sh "$S/tools/bbench-sweep" --ranks 1,2 --out "$BB_TMP/s" -- \
    "$B/bench/bbench-sum" --count 1,8 --buffers both --admission all --requests both \
    --samples 3 --reps 2 >"$out" 2>"$err"
bb_expect_rc 0 $? "sum sweep over every policy"
bb_serial sh "$S/tools/bbench-sweep" --ranks 1,2 --out "$BB_TMP/s" -- \
    "$B/bench/bbench-transfer" --bytes 8,1K --batches 0 --buffers both --admission all \
    --requests both --samples 3 --reps 2 >"$out" 2>"$err"
bb_expect_rc 0 $? "transfer sweep over every policy"
plot "the sweep over every policy" "$BB_TMP/s"
bb_expect_true "sum.png written" is_png "$BB_TMP/s.png/sum.png"
bb_expect_true "transfer.png written" is_png "$BB_TMP/s.png/transfer.png"
entries "$BB_TMP/s.gp/sum.gp" >"$out"
bb_expect_grep '^n=2 protocol retained fused-op persistent$' "$out" "a series per policy and rank count"
bb_expect_grep '^n=1 raw$' "$out" "raw at each rank count"
bb_expect_grep '^n=2 retained fused-op persistent / raw$' "$out" "a ratio per policy and rank count"
bb_expect_true "at most 8 legend entries a panel" \
    test "$(grep '^plot ' "$BB_TMP/s.gp/sum.gp" | awk '{ n = gsub(/ title /, ""); if (n > m) m = n } END { print m + 0 }')" -le 8

# bbench-perf's own records (every policy beside every reference).
bb_serial env BBENCH_BINDIR="$B/bench" sh "$S/tools/bbench-perf" --out "$BB_TMP/perf" \
    --sum-count 1,8 --transfer-bytes 8,1K --samples 3 --reps 2 >"$out" 2>"$err"
bb_expect_rc 0 $? "bbench-perf"
plot "bbench-perf's records" "$BB_TMP/perf"
bb_expect_true "sum.png written" is_png "$BB_TMP/perf.png/sum.png"
bb_expect_true "transfer.png written" is_png "$BB_TMP/perf.png/transfer.png"
entries "$BB_TMP/perf.gp/sum.gp" >"$out"
bb_expect_grep '^protocol fresh spec per-call untimed$' "$out" "the untimed policy a series of its own"
bb_expect_grep '^admission fused persistent$' "$out" "a reference with policies a series of its own"
bb_expect_grep '^raw-persistent$' "$out" "a reference without one"

bb_finish
