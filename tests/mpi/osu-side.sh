#!/bin/sh
# tools/bbench-osu: its usage errors launch nothing (exit 2), and a run
# reads OSU 7.4's -f table and bbench-sum's records under both rank
# statistics into one row per size, every ratio of the figures printed in
# it.  OSU itself is not in the project: a stand-in osu_allreduce prints
# OSU 7.4's -f lines with known figures (avg 10, min 5, max 20 us);
# bbench-sum runs for real at -n 2 (its figures are not checked).  An OSU
# average of 0.00 (below its resolution) gets no ratio, and no traceback.
. "$(dirname "$0")/../lib.sh"
osu="$S/tools/bbench-osu"
out="$BB_TMP/out"
err="$BB_TMP/err"
mkdir "$BB_TMP/osu"
cat > "$BB_TMP/osu/osu_allreduce" <<'OSU'
#!/bin/sh
# OSU 7.4's osu_allreduce -f output for the one size of -m A:A.
size=
while [ $# -gt 0 ]; do
    [ "$1" = -m ] && size=${2%%:*}
    shift
done
printf '\n# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_FLOAT.\n'
printf '# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n'
printf '%-10s%18s%18s%18s%12s\n' "$size" "${OSU_AVG:-10.00}" 5.00 "${OSU_MAX:-20.00}" 3
OSU
chmod +x "$BB_TMP/osu/osu_allreduce"

MPIEXEC=$MPIEXEC BBENCH_PERF_TIMEOUT=$BB_TIMEOUT timeout -k 5 "$BB_TIMEOUT" sh "$osu" \
    --osu "$BB_TMP/osu" --bindir "$B/bench" --launches 1 --sizes 8K -i 3 -x 1 \
    --out "$BB_TMP/rec" > "$out" 2> "$err"
bb_expect_rc 0 $? "bbench-osu at 8 KiB, one launch"
[ -s "$err" ] && sed 's/^/    /' "$err" >&2
n='[0-9][0-9]*\.[0-9][0-9]'
bb_expect_grep "^ *8192  *10\.00  *$n  *$n  *20\.00  *$n  *$n  *10\.00  *$n\$" "$out" \
    "one row: OSU's average and maximum beside bbench-sum's mean and max"
bb_expect_true "both statistics' records kept, each naming its own" \
    test "$(python3 -c 'import json, sys
print(" ".join(json.load(open(f))["run"]["measurement"]["rank_stat"] for f in sys.argv[1:]))' \
            "$BB_TMP"/rec/bbench-mean-8192-1.json "$BB_TMP"/rec/bbench-max-8192-1.json)" \
         = "mean max"
# The row's ratios are of its printed figures.
bb_expect_true "mean/avg and max/max are the printed figures' ratios" python3 -c '
import sys
for line in open(sys.argv[1]):
    c = line.split()
    if c and c[0] == "8192":
        ok = abs(float(c[3]) - float(c[2]) / float(c[1])) <= 0.006 \
             and abs(float(c[6]) - float(c[5]) / float(c[4])) <= 0.006
        sys.exit(0 if ok else 1)
sys.exit(1)' "$out"

# An average (and maximum) that OSU rounds to 0.00: kept as printed, no
# ratio to it, said so; no traceback.
OSU_AVG=0.00 OSU_MAX=0.00 MPIEXEC=$MPIEXEC BBENCH_PERF_TIMEOUT=$BB_TIMEOUT \
    timeout -k 5 "$BB_TIMEOUT" sh "$osu" --osu "$BB_TMP/osu" --bindir "$B/bench" \
    --launches 1 --sizes 8 -i 3 -x 1 > "$out" 2> "$err"
bb_expect_rc 0 $? "bbench-osu with OSU's average 0.00"
bb_expect_true "... no traceback" test "$(grep -c Traceback "$err")" -eq 0
bb_expect_grep "^ *8  *0\.00  *$n  *-  *0\.00  *$n  *-  *0\.00  *$n\$" "$out" \
    "... the row with 0.00 and no ratio"
bb_expect_grep "^# 8 bytes: osu_avg printed 0\.00 us, below its resolution" "$out" "... and why"

for bad in "--sizes 6" "--np 1" "--launches 0" "-i x" "--bogus"; do
    # shellcheck disable=SC2086
    sh "$osu" --osu "$BB_TMP/osu" --bindir "$B/bench" $bad --out "$BB_TMP/bad" \
        > "$out" 2> "$err"
    bb_expect_rc 2 $? "bbench-osu $bad is a usage error"
done
bb_expect_true "a usage error launches nothing" test ! -e "$BB_TMP/bad"
sh "$osu" --bindir "$B/bench" > "$out" 2> "$err"
bb_expect_rc 2 $? "--osu is required"
bb_expect_grep "osu_allreduce" "$err" "the message names osu_allreduce"
bb_finish
