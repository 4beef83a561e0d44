#!/bin/sh
# bbench-redist command line: help, version, usage errors with exit 2 and a
# message on every launch shape, a small measured run in both modes whose
# record has every method's quantities.
# The -n 3 run is oversubscribed with one call per sample, and each sample
# block of several rows starts after two untimed calls: allow for a loaded
# machine (Hydra's MPIEXEC_TIMEOUT follows it).
BB_TIMEOUT="${BB_TIMEOUT:-300}"
. "$(dirname "$0")/../lib.sh"

X="$B/bench/bbench-redist"
out="$BB_TMP/out"
err="$BB_TMP/err"

bb_serial "$X" --help > "$out" 2> "$err"
bb_expect_rc 0 $? "--help"
bb_expect_grep "^Usage: bbench-redist" "$out" "--help prints usage on stdout"
bb_serial "$X" --version > "$out" 2> "$err"
bb_expect_rc 0 $? "--version"
bb_expect_grep "bbench-redist (bbench)" "$out" "--version names the program"

# mdi needs two codes: one rank is a usage error, as a singleton and under mpiexec
bb_serial "$X" --link mdi --elements 10 > "$out" 2> "$err"
bb_expect_rc 2 $? "--link mdi on one rank (singleton)"
bb_expect_grep "mdi needs a driver and an engine" "$err" "mdi on one rank: message"
bb_mpirun 1 "$X" --link mdi --elements 10 > "$out" 2> "$err"
bb_expect_rc 2 $? "--link mdi at -n 1"
bb_expect_grep "at least 2 ranks" "$err" "mdi at -n 1: message"

for pd in 0 2; do
    bb_mpirun 2 "$X" --driver-ranks "$pd" --elements 10 > "$out" 2> "$err"
    bb_expect_rc 2 $? "--driver-ranks $pd at -n 2"
    bb_expect_grep "driver-ranks: $pd leaves the .* without ranks" "$err" \
        "--driver-ranks $pd: message"
    n=$(grep -c "driver-ranks" "$err")
    bb_expect_true "--driver-ranks $pd: only rank 0 prints ($n lines)" [ "$n" -eq 1 ]
done
bb_mpirun 2 "$X" --methods direct,bogus > "$out" 2> "$err"
bb_expect_rc 2 $? "unknown method"
bb_expect_grep "'bogus' is not root" "$err" "unknown method: message"
bb_mpirun 2 "$X" --from spatial:2,2,2 > "$out" 2> "$err"
bb_expect_rc 2 $? "spatial dims that do not fit the driver"
bb_expect_grep "does not fit a code of 1 ranks" "$err" "spatial dims: message"
bb_mpirun 2 "$X" --to nowhere > "$out" 2> "$err"
bb_expect_rc 2 $? "unknown layout"
bb_expect_grep "'nowhere' is not a layout" "$err" "unknown layout: message"
# a matrix layout that does not fit: N not ROWS times columns, a grid not P
bb_mpirun 2 "$X" --link intra --from bc2d:4,2,2 --elements 1000,30 > "$out" 2> "$err"
bb_expect_rc 2 $? "bc2d rows that do not divide N"
bb_expect_grep "'bc2d:4,2,2' does not fit N = 30: N must be ROWS times the column count" "$err" \
    "bc2d rows: message"
bb_mpirun 2 "$X" --link intra --to bc2d:4,2,2,2,2 --elements 40 > "$out" 2> "$err"
bb_expect_rc 2 $? "bc2d grid of 4 on 2 ranks"
bb_expect_grep "'bc2d:4,2,2,2,2' does not fit a code of 2 ranks (PR\*PC must not exceed" "$err" \
    "bc2d grid: message"
bb_mpirun 2 "$X" --from bc2d:4,2 > "$out" 2> "$err"
bb_expect_rc 2 $? "bc2d with two numbers"
bb_expect_grep "bc2d takes ROWS,MB,NB\[,PR,PC\[,RSRC,CSRC\]\]" "$err" "bc2d arguments: message"
bb_mpirun 2 "$X" --direction sideways > "$out" 2> "$err"
bb_expect_rc 2 $? "bad direction"
bb_mpirun 2 "$X" --element-bytes 12 > "$out" 2> "$err"
bb_expect_rc 2 $? "element size 12"
bb_mpirun 2 "$X" --link intra --driver-ranks 1 > "$out" 2> "$err"
bb_expect_rc 2 $? "--driver-ranks with --link intra"

# A small run on two codes, 1e2-style sizes, every method, both directions.
bb_mpirun 2 "$X" --elements 1e2,3e2 --from random:3 --to cyclic --reps 2 \
    --messages 3 -o "$BB_TMP/mdi.json" > "$out" 2> "$err"
rc=$?
bb_expect_rc 0 $rc "mdi run at -n 2"
[ $rc -eq 0 ] || cat "$err" >&2
for m in root root-gatherv two-step direct pack sparse pack-mpi overlap auto bound; do
    bb_expect_grep "^ *300 *< *random:3 *cyclic *$m " "$out" "table row N=300 '<' $m"
done
# Bookkeeping only, never timing (which method is fastest, or whether a
# median sits above the bound, depends on the MPI library and the load):
# each point names one fastest method, whose row says fastest, or
# bound-failure where the bound was above its median; no other row says
# fastest; every row's status is one of those the table documents.
n=$(grep -c "^# N=[0-9]* '[<>]' random:3->cyclic: fastest [a-z-]* (" "$out")
bb_expect_true "one fastest method named for each of the 4 points ($n)" [ "$n" -eq 4 ]
bb_expect_true "each point's rows agree with its fastest note" awk '
    $1 ~ /^[0-9]+$/ && $3 == "random:3" && $5 != "bound" {
        k = $1 $2
        if ($NF == "fastest") { rows[k]++; fastest[k] = $5 }
        else if ($NF == "bound-failure") failed[k " " $5] = 1
        else if ($NF != "ok" && $NF != "reference" && $NF != "not-measured") bad = 1
    }
    /^# N=[0-9]* .[<>]. random:3->cyclic: fastest / {
        split($2, a, "="); k = a[2] substr($3, 2, 1); m = $6
        named[k] = m; notes++
    }
    END {
        if (bad || notes != 4) exit 1
        for (k in named) {
            if (rows[k] > 1) exit 1
            if (!(fastest[k] == named[k] || (rows[k] == 0 && failed[k " " named[k]]))) exit 1
        }
    }' "$out"
bb_expect_grep "^ *300 *< *random:3 *cyclic *bound *[0-9][0-9.]* " "$out" "the bound's row has its value"
bb_expect_grep "^# ratios root msg_us / method msg_us" "$out" "the ratio summary"
bb_expect_true "no row says 0 for what was not measured (memcpy 0.0 us)" \
    sh -c "! grep -q 'memcpy 0.0 us' '$out'"
bb_expect_true "the mdi record holds 36 points, each method's quantities" \
    "$B/tests/mpi/test-redist" record "$BB_TMP/mdi.json" 36
bb_expect_true "the mdi record meets tests/expect/redist.json" \
    "$B/tests/check-record" --expect "$S/tests/expect/redist.json" "$BB_TMP/mdi.json"

# One code, two of its own layouts, on one rank (no mpiexec).
bb_serial "$X" --link intra --elements 64 --from block-reverse --to random:1 \
    --direction '>' --reps 2 -o "$BB_TMP/intra.json" > "$out" 2> "$err"
rc=$?
bb_expect_rc 0 $rc "intra run on one rank"
[ $rc -eq 0 ] || cat "$err" >&2
bb_expect_true "the intra record holds 9 points" \
    "$B/tests/mpi/test-redist" record "$BB_TMP/intra.json" 9

# The new layouts and csv output at -n 3: spatial-shuffled and root, from and to,
# one direction, two methods and the root reference: 8 points (test-redist
# checks every method slot by slot on other maps; redist-md.sh runs five from
# spatial-shuffled).  Oversubscribed, every call costs scheduler slices: the
# 32-point run of both directions and four methods took 53 s.
# every tier (redist): the redistribution over the cores, a driver of 1 and
# an engine of 2 ranks; the bound's own measurements (15 of the launch's 24
# s here, checked at -n 2 above) in the full tier only
bound=--no-bound
[ "$BB_TIER" = full ] && bound=
# shellcheck disable=SC2086
bb_mpirun 3 "$X" --elements 50 --from spatial-shuffled:2 --from root --to root \
    --to spatial-shuffled --methods direct,auto --direction '>' --reps 1 --warmup-blocks 0 \
    $bound --format csv -o "$BB_TMP/lay.json" > "$out" 2> "$err"
rc=$?
bb_expect_rc 0 $rc "new layouts at -n 3"
[ $rc -eq 0 ] || cat "$err" >&2
bb_expect_grep "^N,dir,from,to,method,msg_us," "$out" "csv header"
bb_expect_true "the layouts record holds 8 points" \
    "$B/tests/mpi/test-redist" record "$BB_TMP/lay.json" 8
# ScaLAPACK's Cpdgemr2d as a reference line where it is built: checked slot by
# slot like the methods, '-' with the reason where it cannot express the
# layouts; without it, --methods scalapack is a usage error naming why.
bb_serial "$B/tests/mpi/test-redist-scalapack" available > "$out" 2>&1
if [ $? -eq 0 ]; then
    bb_mpirun 2 "$X" --link intra --from block-cyclic:64 --to block-cyclic:1000 \
        --elements 3000 --element-bytes 8 --methods pack,scalapack --reps 2 \
        -o "$BB_TMP/sc.json" > "$out" 2> "$err"
    bb_expect_rc 0 $? "scalapack beside pack"
    for d in '>' '<'; do
        bb_expect_grep "^ *3000 *$d *block-cyclic:64 *block-cyclic:1000 *scalapack .* reference$" \
            "$out" "scalapack's line '$d'"
    done
    bb_expect_true "scalapack: two record points, no wrong message" \
        test "$(grep -c '"method": *"scalapack"' "$BB_TMP/sc.json")" -eq 2 -a \
        "$(grep -c 'wrong-data$' "$out")" -eq 0
    bb_mpirun 2 "$X" --elements 100 -d '>' --methods root,scalapack --reps 1 > "$out" 2> "$err"
    bb_expect_rc 0 $? "scalapack on a layout it cannot express"
    bb_expect_grep " scalapack .* not-measured$" "$out" "its line says not-measured"
    bb_expect_grep "^# scalapack: not measured at this point: cannot express" "$out" \
        "and why"
else
    bb_mpirun 2 "$X" --methods scalapack > "$out" 2> "$err"
    bb_expect_rc 2 $? "--methods scalapack without ScaLAPACK"
    bb_expect_grep "scalapack is not built in" "$err" "it says why"
fi

# --cases FILE on hosts without a shared folder (issue 58, finding 1): two
# ranks, each in its own folder (MPMD, -wdir).  Rank 0 reads the file for
# every rank: a file on rank 0's host alone runs, a different file on rank
# 1's is not read, and a file rank 0 cannot read is exit 2 on every rank,
# said once (before: a hang, or each rank with its own file).
if bb_mpmd_supported; then
    mkdir -p "$BB_TMP/h0" "$BB_TMP/h1"
    echo "20 20 20 20 0 0 1 1 1 2 3 3 20 20 0 0 1 1 2 1 4 2" > "$BB_TMP/h0/c.dat"
    cq="--cases c.dat --methods pack --no-bound --reps 1 --warmup 0 --warmup-blocks 0"
    # mpmd DIR0 DIR1: one rank in each folder.
    mpmd() {
        # shellcheck disable=SC2086
        bb_mpmd -n 1 -wdir "$1" "$X" $cq : -n 1 -wdir "$2" "$X" $cq > "$out" 2> "$err"
    }
    mpmd "$BB_TMP/h0" "$BB_TMP/h1"
    bb_expect_rc 0 $? "--cases: the file on rank 0's host alone"
    bb_expect_grep "^ *400 *> *bc2d:20,3,3,1,2 .* pack " "$out" "--cases: rank 0's case ran"
    echo "30 30 30 30 0 0 1 1 1 2 3 3 30 30 0 0 1 1 2 1 4 2" > "$BB_TMP/h1/c.dat"
    mpmd "$BB_TMP/h0" "$BB_TMP/h1"
    bb_expect_rc 0 $? "--cases: another file on rank 1's host"
    bb_expect_true "--cases: rank 0's file alone counts (its 400 elements, not 900)" \
        sh -c "grep -q '^ *400 *> ' '$out' && ! grep -q '^ *900 ' '$out'"
    mkdir -p "$BB_TMP/h2"
    mpmd "$BB_TMP/h2" "$BB_TMP/h1"
    bb_expect_rc 2 $? "--cases: rank 0 cannot read the file: exit 2 on every rank"
    bb_expect_true "--cases: said once, naming rank 0" \
        test "$(grep -c "rank 0 cannot read 'c.dat'" "$err")" -eq 1
fi
# --ratios at -n 2 with 6 samples: every ratio root/method is paired over the
# point's rounds, printed with its marks ('?' not resolved, '!' the ratio of
# the medians outside the paired interval) and recorded beside ratio.root's
# value (the per-round ratios as samples, their ci, rounds, interval,
# resolved, moved), the marks as the record says.
bb_mpirun 2 "$X" --ratios -s 6 --elements 1e4 --methods root,direct,pack,sparse --no-bound \
    -o "$BB_TMP/ratios.json" > "$out" 2> "$err"
rc=$?
bb_expect_rc 0 $rc "--ratios -s 6 at -n 2"
[ $rc -eq 0 ] || cat "$err" >&2
bb_expect_grep "^# ratios root msg_us / method msg_us (> 1: faster than root), paired over the point's rounds" \
    "$out" "--ratios: the note says the ratios are paired"
bb_expect_grep "^# ratios root msg_us / method msg_us .*'?': its 95% interval holds 1.0 .*'!': the ratio of the medians lies outside" \
    "$out" "--ratios: the note says what the marks mean"
n=$(grep -Ec "^#   P=2 (spatial|random:1)->std 24B N=10000 '>': direct [0-9]+\.[0-9][0-9]\??!? pack [0-9]+\.[0-9][0-9]\??!? sparse [0-9]+\.[0-9][0-9]\??!?$" "$out")
bb_expect_true "--ratios: a line of paired figures per point ($n of 2)" [ "$n" -eq 2 ]
bb_expect_true "--ratios: the printed figures and marks are the record's paired ratios" \
    python3 - "$out" "$BB_TMP/ratios.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
doc = json.load(open(sys.argv[2]))
printed = {}
for m in re.finditer(r"^#   P=2 (\S+)->std 24B N=10000 '>':(.*)$", text, re.M):
    for meth, fig in re.findall(r" (\S+) (\S+)", m.group(2)):
        printed[(m.group(1), meth)] = fig
seen = 0
for p in doc["points"]:
    par, q = p["parameters"], p["quantities"]["ratio.root"]
    if par["method"] == "root":
        assert q["value"] == 1, q
        continue
    # 6 rounds, less those the canary marks or puts in another mode (load
    # decides how many): an interval with all 6, none under 6.
    assert 1 <= q["rounds"] == len(q["samples"]) <= 6, q
    assert q["interval_from"] == "paired" and q["level"] == 0.95, q
    assert (q["ci"] is not None) == (q["rounds"] == 6), q
    assert isinstance(q["resolved"], bool) and isinstance(q["moved"], bool), q
    if q["ci"] is None:
        assert q["interval"] is None and not q["resolved"] and not q["moved"], q
    else:
        assert q["interval"] == [q["ci"]["low"], q["ci"]["high"]], q
        lo, hi = q["interval"]
        assert q["resolved"] == (lo > 1 or hi < 1), q
        assert q["moved"] == (q["value"] < lo or q["value"] > hi), q
    want = "%.2f%s%s" % (q["median"], "" if q["resolved"] else "?", "!" if q["moved"] else "")
    got = printed[(par["from"], par["method"])]
    assert got == want, (par, got, want)
    seen += 1
assert seen == 6, seen
PY
bb_finish
