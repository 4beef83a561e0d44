#!/bin/sh
# bbench-redist as the two programs of an MPMD launch (issue 56): the codes
# named by --role, or found from a launch of two programs (MPI_APPNUM), give
# the same points and contract quantities as one program split at
# --driver-ranks (bbench-compare: 0 contract changes), root (MDI's rank-0
# path of today) among the methods, every message checked; run.codes says
# how the codes were found.  Every argument but --role's value must be the
# same on every rank: a difference (before: one program left on a usage
# error, the other waiting), --role with --driver-ranks, with --link intra
# or --cases, a code that is neither, no engine: exit 2 on every rank, said
# once, no record.  Every tier: -n 1 : -n 1; the full tier adds -n 2 : -n 2
# against --driver-ranks 2 (4 ranks over 2 cores) and a third program.
. "$(dirname "$0")/../lib.sh"
bb_skip_without_appnum

X="$B/bench/bbench-redist"
C="$B/bench/bbench-compare"
out="$BB_TMP/out"
err="$BB_TMP/err"
# Few calls: the contract quantities do not depend on them.
quick="--samples 3 --reps 2 --warmup 0 --warmup-blocks 0 --canary none -q"
md="--workload md --methods root,direct --elements 1e3,3e3 $quick"
msg="--methods root,root-gatherv,direct,sparse --elements 1e3 --from spatial --from random:1 \
--no-bound $quick"

# codes DIR ND NE FOUND_BY [ENGINE_FIRST]: both workloads into DIR, launched
# as two programs (FOUND_BY role: with --role; appnum: without), the engine
# first when asked.
codes() {
    dir=$1 nd=$2 ne=$3 how=$4 first=${5:-}
    mkdir -p "$dir"
    for w in md msg; do
        eval "args=\$$w"
        if [ "$how" = appnum ]; then
            a= b=
        else
            a="--role driver" b="--role engine"
        fi
        # shellcheck disable=SC2086
        if [ -n "$first" ]; then
            bb_mpmd_codes "$ne" "$nd" "$X" $b $args -o "$dir/$w.json" : \
                "$X" $a $args -o "$dir/$w.json" > "$out" 2> "$err"
        else
            bb_mpmd_codes "$nd" "$ne" "$X" $a $args -o "$dir/$w.json" : \
                "$X" $b $args -o "$dir/$w.json" > "$out" 2> "$err"
        fi
        rc=$?
        bb_expect_rc 0 $rc "$nd:$ne by $how${first:+, the engine first}, $w"
        [ $rc -eq 0 ] || head -n 20 "$err" >&2
    done
}

# split DIR ND NE: the same, one program split at --driver-ranks ND.
split() {
    dir=$1 nd=$2 ne=$3
    mkdir -p "$dir"
    for w in md msg; do
        eval "args=\$$w"
        # shellcheck disable=SC2086
        bb_mpirun $((nd + ne)) "$X" --driver-ranks "$nd" $args -o "$dir/$w.json" \
            > "$out" 2> "$err"
        rc=$?
        bb_expect_rc 0 $rc "split at --driver-ranks $nd of $((nd + ne)), $w"
        [ $rc -eq 0 ] || head -n 20 "$err" >&2
    done
}

# same BASE CAND WHAT: every point matched, no contract change.
same() {
    "$C" --report "$1" "$2" > "$out" 2> "$err"
    bb_expect_rc 0 $? "$3: bbench-compare --report"
    bb_expect_grep ' 0 contract changes, 0 unmatched (base 0, candidate 0)' "$out" \
        "$3: the split's points, 0 contract changes"
}

# recorded DIR ND NE FOUND_BY FIRST: run.codes as launched; every point ok,
# root's among them; the message points name the split's driver ranks.
recorded() {
    python3 - "$@" > "$out" 2>&1 <<'PY'
import json, sys
d, nd, ne, how, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
for w in ("md", "msg"):
    r = json.load(open(f"{d}/{w}.json"))
    c = r["run"]["codes"]
    want = {"found_by": how, "driver_ranks": nd, "engine_ranks": ne,
            "driver_first_in_world": first == "yes"}
    print(w, "codes", "ok" if c == want else f"{c} != {want}")
    bad = [p["parameters"] for p in r["points"] if p["status"] != "ok"]
    print(w, "status", "ok" if not bad else bad)
    methods = {p["parameters"]["method"] for p in r["points"]}
    print(w, "root", "ok" if "root" in methods else sorted(methods))
    wrong = [p["parameters"] for p in r["points"]
             if (p["quantities"].get("redist.wrong_messages") or {}).get("value")]
    print(w, "wrong", "ok" if not wrong else wrong)
    if w == "msg":
        ranks = {(p["parameters"]["driver_ranks"], p["parameters"]["engine_ranks"])
                 for p in r["points"]}
        print(w, "ranks", "ok" if ranks == {(nd, ne)} else ranks)
PY
    bb_expect_true "$1: run.codes $4 $2:$2, every point ok with root, no wrong message" \
        sh -c "test \$(grep -c ' ok\$' '$out') -eq 9"
    grep -v ' ok$' "$out" >&2
}

# every tier (redist): -n 1 : -n 1, two programs by --role and by MPI_APPNUM
split "$BB_TMP/split-1-1" 1 1
codes "$BB_TMP/role-1-1" 1 1 role
codes "$BB_TMP/appnum-1-1" 1 1 appnum
codes "$BB_TMP/first-1-1" 1 1 role engine-first
recorded "$BB_TMP/split-1-1" 1 1 split yes
recorded "$BB_TMP/role-1-1" 1 1 role yes
recorded "$BB_TMP/appnum-1-1" 1 1 appnum yes
recorded "$BB_TMP/first-1-1" 1 1 role no
same "$BB_TMP/split-1-1" "$BB_TMP/role-1-1" "1:1 by --role"
same "$BB_TMP/split-1-1" "$BB_TMP/appnum-1-1" "1:1 by MPI_APPNUM"
same "$BB_TMP/split-1-1" "$BB_TMP/first-1-1" "1:1 by --role, the engine first"
# The compare can fail here: 16-byte elements relabelled as 24 match the
# split's points, and their byte quantities are contract changes.
mkdir -p "$BB_TMP/other" "$BB_TMP/base" "$BB_TMP/relabelled"
# shellcheck disable=SC2086
bb_mpmd_codes 1 1 "$X" --role driver $msg --element-bytes 16 -o "$BB_TMP/other/msg.json" : \
    "$X" --role engine $msg --element-bytes 16 -o "$BB_TMP/other/msg.json" > "$out" 2> "$err"
bb_expect_rc 0 $? "1:1 by --role, 16-byte elements"
cp "$BB_TMP/split-1-1/msg.json" "$BB_TMP/base/msg.json"
python3 - "$BB_TMP/other/msg.json" "$BB_TMP/relabelled/msg.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for p in r["points"]:
    p["parameters"]["element_bytes"] = 24
json.dump(r, open(sys.argv[2], "w"))
PY
"$C" --report "$BB_TMP/base" "$BB_TMP/relabelled" > "$out" 2>&1
bb_expect_rc 1 $? "16-byte elements relabelled as 24: exit 1"
bb_expect_grep ' [1-9][0-9]* contract changes, 0 unmatched' "$out" \
    "16-byte elements relabelled as 24: contract changes"

# refused WHAT PATTERN A... : B...: a launch of the two programs A and B
# (each with -o "$rec"): exit 2 on every rank, PATTERN said once, no record.
rec="$BB_TMP/refused/r.json"
mkdir -p "$BB_TMP/refused"
refused() {
    what=$1 pattern=$2
    shift 2
    rm -f "$rec"
    bb_mpmd_codes 1 1 "$@" > "$out" 2> "$err"
    bb_expect_rc 2 $? "$what: exit 2"
    bb_expect_true "$what: said once" test "$(grep -c -e "$pattern" "$err")" -eq 1
    bb_expect_true "$what: no record" test ! -e "$rec"
}
# An argument differing between the programs (one of them malformed):
# before, that program left on its usage error while the other waited.
refused "--elements differing" \
    "rank 0: '--role CODE --elements 1e3 -o [^']*'; rank 1: '--role CODE --elements x -o " \
    "$X" --role driver --elements 1e3 -o "$rec" : "$X" --role engine --elements x -o "$rec"
refused "--role on one program alone" \
    "given different arguments: every argument but the value of --role must be the same" \
    "$X" --role driver -o "$rec" : "$X" -o "$rec"
refused "--role with --driver-ranks" "--role and --driver-ranks: give one" \
    "$X" --role driver --driver-ranks 1 -o "$rec" : "$X" --role engine --driver-ranks 1 -o "$rec"
refused "--role with --link intra" "--role applies to --link mdi only" \
    "$X" --role driver --link intra -o "$rec" : "$X" --role engine --link intra -o "$rec"
refused "--role with --cases" "--role applies to --link mdi only" \
    "$X" --role driver --cases "$S/tests/data/gemr2d.dat" -o "$rec" : \
    "$X" --role engine --cases "$S/tests/data/gemr2d.dat" -o "$rec"
refused "a code that is neither" "--role: 1 of 2 ranks gave a code other than driver or engine" \
    "$X" --role driver -o "$rec" : "$X" --role typo -o "$rec"
refused "no driver" "--role: every rank is an engine: launch both codes" \
    "$X" --role engine -o "$rec" : "$X" --role engine -o "$rec"
bb_mpirun 2 "$X" --role driver -o "$rec" > "$out" 2> "$err"
bb_expect_rc 2 $? "one program, every rank --role driver: exit 2"
bb_expect_grep "every rank is a driver" "$err" "one program with --role: no engine, said"

if bb_tier_full; then
    # 2 drivers and 2 engines: 4 ranks over 2 cores (oversubscribed)
    split "$BB_TMP/split-2-2" 2 2
    codes "$BB_TMP/role-2-2" 2 2 role
    codes "$BB_TMP/appnum-2-2" 2 2 appnum
    recorded "$BB_TMP/role-2-2" 2 2 role yes
    recorded "$BB_TMP/appnum-2-2" 2 2 appnum yes
    same "$BB_TMP/split-2-2" "$BB_TMP/role-2-2" "2:2 by --role"
    same "$BB_TMP/split-2-2" "$BB_TMP/appnum-2-2" "2:2 by MPI_APPNUM"
    # A third program is no code: said, exit 2 on every rank.
    over=
    [ "$BB_LAUNCHER_KIND" = openmpi ] && over=--oversubscribe
    bb_mpmd $over -n 1 "$X" : -n 1 "$X" : -n 1 "$X" > "$out" 2> "$err"
    bb_expect_rc 2 $? "three programs: exit 2"
    bb_expect_true "three programs: said once" \
        test "$(grep -c 'the launch started more programs than two' "$err")" -eq 1
fi
bb_finish
