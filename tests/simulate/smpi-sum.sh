#!/bin/sh
# A tiny simulated job (doc/simulate.md): bbench-sum of an SMPI build at
# P = 4 on the flat cluster platform, through bbench-smpirun; its record
# says it is simulated (simulator, platform and hash, configuration), has
# the platform's hosts and no launcher, oversubscription verdict or RSS of
# the simulator.  The persistent policy is refused with its message, and an
# MPI_Abort is an exit other than 0 (smpirun itself exits 0 then).  At 64
# ranks on the fat tree, a median is the same at --reps 5 and 50.
# Skipped (77) without SimGrid (smpicc, smpirun).  An ordinary build makes
# its own SMPI build of bbench-sum in tests/simulate/smpi-build (configure
# --with-smpi, kept for the next run); an SMPI build uses its own.
. "$(dirname "$0")/../lib.sh"

for t in smpicc smpirun; do
    if ! command -v "$t" >/dev/null 2>&1; then
        echo "SKIP: no $t (SimGrid SMPI; on Debian: apt-get install libsimgrid-dev)"
        exit 77
    fi
done

if grep -q '^#define BB_SMPI 1' "$B/config.h"; then
    sum=$B/bench/bbench-sum
else
    sb=$B/tests/simulate/smpi-build
    mkdir -p "$sb"
    # The parent make's flags (jobserver, TESTS=...) are not the sub-build's.
    if [ ! -f "$sb/Makefile" ]; then
        (cd "$sb" && timeout 600 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
            "$S/configure" --with-smpi --disable-dependency-tracking) \
            >"$BB_TMP/configure.log" 2>&1
        rc=$?
        bb_expect_rc 0 $rc "configure --with-smpi (a build of our own)"
        [ "$rc" -eq 0 ] || { tail -20 "$BB_TMP/configure.log" >&2; rm -rf "$sb"; bb_finish; exit 1; }
    fi
    (cd "$sb" && timeout 900 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
        make record/bb-git.h bench/bbench-sum) >"$BB_TMP/make.log" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "make bench/bbench-sum in the SMPI build"
    [ "$rc" -eq 0 ] || { tail -20 "$BB_TMP/make.log" >&2; bb_finish; exit 1; }
    sum=$sb/bench/bbench-sum
fi

run="$S/tools/bbench-smpirun"
plat="$S/share/platforms/flat-cluster.xml"
rec="$BB_TMP/sim-n4.json"
out="$BB_TMP/out"
err="$BB_TMP/err"

"$run" --platform "$plat" -n 4 --timeout "$BB_TIMEOUT" \
    --cfg=smpi/simulate-computation:no -- "$sum" --count 1 --reps 3 \
    --mode raw,admission --admission spec,fused,fused-op --output "$rec" >"$out" 2>"$err"
bb_expect_rc 0 $? "bbench-sum, 4 simulated ranks"
bb_expect_grep '4 ranks on 4 simulated hosts (SimGrid SMPI' "$out" "the header says simulated"

sha=$(sha256sum "$plat" | sed 's/ .*//')
python3 - "$rec" "$plat" "$sha" >"$BB_TMP/facts" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
rt, t = r["runtime"], r["topology"]
sim = rt["simulated"]
print("simulator", sim["simulator"], sim["version"].split(".")[0])
print("platform", sim["platform"]["file"] == os.path.abspath(sys.argv[2]),
      sim["platform"]["sha256"] == sys.argv[3], sim["platform"]["hosts"])
print("config", " ".join(sim["configuration"]))
print("launcher", rt["launcher"], bool(rt.get("launcher_reason")))
print("topology", t["ranks"], t["hosts"], t["machines"], t["oversubscribed"],
      bool(t.get("oversubscribed_reason")), t["machine"],
      sorted(h["host"] for h in t["per_host"]) == ["node-0", "node-1", "node-2", "node-3"],
      all(p["cpuset"] is None for p in t["per_rank"]))
for p in r["points"]:
    q = p["quantities"]
    name = p["parameters"]["mode"] + "/" + p["parameters"].get("admission", "-")
    e = q["elapsed"]["value"]
    print("point", name, p["status"], isinstance(e, float) and e > 0,
          q["memory.rss_peak"]["value"], bool(q["memory.rss_peak"].get("reason")))
PY
bb_expect_rc 0 $? "the record reads"
bb_expect_grep '^simulator SimGrid SMPI 3$' "$BB_TMP/facts" "runtime.simulated names SimGrid"
bb_expect_grep '^platform True True 1024$' "$BB_TMP/facts" "the platform file, its SHA-256 and hosts"
bb_expect_grep '^config .*--cfg=smpi/simulate-computation:no' "$BB_TMP/facts" \
    "the configuration given"
bb_expect_grep '^config .*--cfg=smpi/test:0' "$BB_TMP/facts" "smpi/test:0 added by bbench-smpirun"
bb_expect_grep '^launcher None True$' "$BB_TMP/facts" "no launcher, with a reason"
bb_expect_grep '^topology 4 4 4 None True None True True$' "$BB_TMP/facts" \
    "the platform's hosts; no verdict, hwloc or cpusets of the simulating host"
for m in raw/- admission/spec admission/fused admission/fused-op; do
    bb_expect_grep "^point $m ok True None True\$" "$BB_TMP/facts" \
        "$m: simulated time measured, no RSS of the simulator"
done

# Blocks that start clean: in simulated time a figure is exact, so a row's
# median must not depend on how many calls its samples hold.  With one
# untimed call before each block, raw at 64 ranks read 21.002 us at
# --reps 5 against 20.277 at --reps 50 (the previous block's closing
# skew); with the engine's two, 20.197 at both.
fat="$S/share/platforms/fat-tree-stampede.xml"
for r in 5 50; do
    "$run" --platform "$fat" -n 64 --timeout "$BB_TIMEOUT" --cfg=smpi/simulate-computation:no \
        --cfg=smpi/coll-selector:mpich -- "$sum" -q --count 1 --reps "$r" \
        --mode raw,admission --admission spec --output "$BB_TMP/reps$r.json" >"$out" 2>"$err"
    bb_expect_rc 0 $? "64 simulated ranks, --reps $r"
done
bb_expect_true "raw and spec medians at --reps 5 within 0.1% of --reps 50" python3 - \
    "$BB_TMP/reps5.json" "$BB_TMP/reps50.json" <<'PY'
import json, sys
def medians(path):
    return {p["parameters"]["mode"]: p["quantities"]["elapsed"]["median"]
            for p in json.load(open(path))["points"]}
a, b = medians(sys.argv[1]), medians(sys.argv[2])
for mode in ("raw", "admission"):
    print("%s: %.3f us at --reps 5, %.3f at --reps 50" % (mode, a[mode] * 1e6, b[mode] * 1e6))
sys.exit(0 if set(a) == set(b) == {"raw", "admission"}
         and all(abs(a[m] / b[m] - 1) <= 1e-3 for m in a) else 1)
PY

# What SMPI cannot do is refused with its message, and no record is left.
"$run" --platform "$plat" -n 4 --timeout "$BB_TIMEOUT" -- "$sum" -q --count 1 \
    --requests persistent --output "$BB_TMP/refused.json" >"$out" 2>"$err"
bb_expect_rc 2 $? "--requests persistent: a usage error"
bb_expect_grep 'no persistent collectives' "$err" "the persistent policy refused, said why"
bb_expect_true "no record of the refused run" test ! -e "$BB_TMP/refused.json"

# smpirun exits 0 after MPI_Abort; bbench-smpirun does not.
if smpicc -o "$BB_TMP/abort" "$S/tests/simulate/abort.c" >"$BB_TMP/cc.log" 2>&1; then
    "$run" --platform "$plat" -n 4 --timeout "$BB_TIMEOUT" -- "$BB_TMP/abort" >"$out" 2>"$err"
    bb_expect_rc 1 $? "an MPI_Abort under smpirun is a failure"
    bb_expect_grep 'ended in MPI_Abort' "$err" "and said so"
else
    bb_expect_true "smpicc builds tests/simulate/abort.c" false
    cat "$BB_TMP/cc.log" >&2
fi

bb_finish
