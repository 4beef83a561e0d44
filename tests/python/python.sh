#!/bin/sh
# The Python tier (python/, issue 41): the pure-Python reference of both
# phases on its own, and against libbbench's C phases through ctypes case by
# case (tests/python/test_*.py), under pytest at -n 1..4; the protocol
# document's statements for the three implementations (test_conformance.py,
# issue 59), its MPI calls counted by the PMPI interposer (tests/fault.c).  Skipped (77),
# saying why, without a Python that has mpi4py, NumPy and pytest, when
# mpi4py is built on another MPI than this build (Debian's is Open MPI's:
# configure MPICC=mpicc.openmpi MPIEXEC=mpiexec.openmpi), and in a
# sanitizer build (a Python process cannot load an ASan libbbench).
. "$(dirname "$0")/../lib.sh"

if [ -z "$BB_PYTHON" ]; then
    echo "SKIP: no Python with mpi4py, numpy and pytest (on Debian: apt-get install python3-mpi4py python3-numpy python3-pytest)"
    exit 77
fi
if [ "$BB_PYTHON_MPI" != "$BB_MPI_LIBRARY" ]; then
    echo "SKIP: $BB_PYTHON's mpi4py is built on $BB_PYTHON_MPI, this build on $BB_MPI_LIBRARY"
    exit 77
fi
if [ -n "$BB_SAN_CFLAGS" ]; then
    echo "SKIP: a sanitizer build: Python cannot load an AddressSanitizer libbbench"
    exit 77
fi
lib="$B/lib/.libs/libbbench.so.0"
bb_expect_true "the library the binding loads is built" test -f "$lib"
out="$BB_TMP/out"
# The record validator (bb_record_read: a ci must be its samples' interval).
get="$B/tests/record-get"
# The sum phase's C extension, when built, lives in the build tree apart
# from the sources (BBENCH_EXT_PATH); BBENCH_BINDING=ctypes turns it off.
ext="$B/python/bbench/.libs"
fault="$B/tests/.libs/libbbfault.so"
bb_expect_true "the PMPI interposer the conformance test counts with is built" test -f "$fault"
binding=ctypes
if [ "$BB_PYTHON_EXT" = yes ]; then
    binding=extension
    bb_expect_true "the extension is built" test -f "$ext/_cphase.so"
fi
# runs NP [ENV...]: the pytest files at -n NP (no bytecode or cache written
# into the source tree: it is read-only in distcheck); the conformance test
# too unless conformance=no (it takes every binding itself: once at -n 1, 2
# and 3 is enough).
runs() {
    np=$1
    shift
    conf="$S/tests/python/test_conformance.py"
    [ "$conformance" = yes ] || conf=
    bb_mpirun "$np" env "$@" PYTHONPATH="$S/python" BBENCH_EXT_PATH="$ext" \
        PYTHONDONTWRITEBYTECODE=1 BBENCH_LIB="$lib" BBENCH_MPI="$BB_MPI_LIBRARY" \
        LD_PRELOAD="$fault" BBFAULT_LIB="$fault" \
        "$BB_PYTHON" -m pytest -q --color=no -p no:cacheprovider \
        "$S/tests/python/test_reference.py" "$S/tests/python/test_differential.py" \
        "$S/tests/python/test_stats.py" $conf > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "pytest at -n $np $*"
    [ $rc -eq 0 ] || tail -n 40 "$out" >&2
    # Every rank prints its own summary; none may report a failure (words
    # counted, not lines: Open MPI may join two ranks' lines).
    n=$(grep -o '[0-9][0-9]* passed' "$out" | wc -l)
    bb_expect_true "-n $np $*: $n ranks report, none failed" \
        test "$n" -eq "$np" -a "$(grep -o '[0-9][0-9]* failed' "$out" | wc -l)" -eq 0
}
# import bbench imports no mpi4py and initializes no MPI (the document's
# serial construction); making a phase does (a singleton: a world of one).
env PYTHONPATH="$S/python" PYTHONDONTWRITEBYTECODE=1 "$BB_PYTHON" -c '
import sys, bbench
print("import", "mpi4py.MPI" in sys.modules)
bbench.BoundedSumPhase()
from mpi4py import MPI
print("phase", "mpi4py.MPI" in sys.modules, MPI.Is_initialized())' > "$out" 2>&1
bb_expect_rc 0 $? "a serial import, then a phase"
bb_expect_true "import bbench: no mpi4py.MPI; a phase: MPI imported and initialized" \
    sh -c "grep -qx 'import False' '$out' && grep -qx 'phase True True' '$out'"
# every tier (python): only Open MPI builds run this tier (mpi4py is Open
# MPI's here), so its -n 3 and 4 stay in every tier
for np in 1 2 3 4; do
    conformance=yes
    [ $np -le 3 ] || conformance=no
    runs $np BBENCH_BINDING=$binding
done
# The binding the differential cases went through, and the other one too.
bb_mpirun 1 env PYTHONPATH="$S/python" BBENCH_EXT_PATH="$ext" BBENCH_LIB="$lib" \
    BBENCH_MPI="$BB_MPI_LIBRARY" PYTHONDONTWRITEBYTECODE=1 "$BB_PYTHON" -c '
import bbench
print("binding", bbench.CBoundedSumPhase().binding, bbench.CBoundedTransferPhase().binding)' \
    > "$out" 2>&1
bb_expect_grep "^binding $binding $binding\$" "$out" "the C phases go through the $binding"
conformance=no
[ "$binding" = extension ] && runs 2 BBENCH_BINDING=ctypes
conformance=yes
# Freed memory poisoned and never cached: a binding that frees what the C
# phase still uses fails here (issue 58, findings 3 and 4).
runs 2 BBENCH_BINDING=$binding MALLOC_PERTURB_=85 GLIBC_TUNABLES=glibc.malloc.tcache_count=0

# The benchmark: a tiny run beside a bbench-sum record of this build; a table
# with every ratio, the binding's included, and a record (bb_finish checks it
# against schema/); a bad option is exit 2 on every rank, printed once.
bb_mpirun 2 "$B/bench/bbench-sum" --count 1,1K --mode raw,protocol --samples 3 --reps 2 \
    -q --output "$BB_TMP/c.json" > "$out" 2>&1
bb_expect_rc 0 $? "bbench-sum for the C-from-C figure"
bb_mpirun 2 "$B/bench/bbench-transfer" --bytes 8,64K --batches 0 --mode raw,protocol \
    --samples 3 --reps 2 -q --output "$BB_TMP/t.json" > "$out" 2>&1
bb_expect_rc 0 $? "bbench-transfer for the C-from-C figure"
py() {
    bb_mpirun 2 env PYTHONPATH="$S/python" BBENCH_EXT_PATH="$ext" PYTHONDONTWRITEBYTECODE=1 \
        BBENCH_LIB="$lib" BBENCH_MPI="$BB_MPI_LIBRARY" "$BB_PYTHON" -m bbench.bench "$@"
}
# A C record rank 0 cannot use (missing, not JSON, not a record) is exit 2
# on every rank, said once (issue 58, finding 2: the other ranks waited in
# the broadcast until they were killed).
echo '{"points": [' > "$BB_TMP/bad.rec"
echo '[1, 2]' > "$BB_TMP/list.rec"
for bad in "--c-record $BB_TMP/missing.rec" "--c-record $BB_TMP/bad.rec" \
    "--c-transfer-record $BB_TMP/list.rec"; do
    # shellcheck disable=SC2086
    py --count 1 --bytes 8 --samples 3 --budget 0.002 $bad > "$out" 2> "$BB_TMP/err"
    bb_expect_rc 2 $? "bbench.bench $bad: usage on every rank"
    bb_expect_true "bbench.bench $bad: said once" \
        test "$(grep -c "^bbench.bench: ${bad% *} .*: not a usable record" "$BB_TMP/err")" -eq 1
done
# --output that cannot be written: exit 2 on every rank before the run, said once.
py --count 1 --bytes 8 --samples 3 --output "$BB_TMP/no/such/dir/r.json" > "$out" 2> "$BB_TMP/err"
bb_expect_rc 2 $? "bbench.bench --output in a missing folder: usage on every rank"
bb_expect_true "--output: said once, before the run" \
    sh -c "test \$(grep -c '^bbench.bench: --output .*: cannot write in' '$BB_TMP/err') -eq 1 && ! grep -q '^ *1 ' '$out'"
# A binding that differs by rank (BBENCH_BINDING set on one host): exit 2 on
# every rank, said once, before any row (the c-in row's collectives would
# meet other ones on the ranks without it).
if [ "$binding" = extension ] && bb_mpmd_supported; then
    set -- env PYTHONPATH="$S/python" BBENCH_EXT_PATH="$ext" PYTHONDONTWRITEBYTECODE=1 \
        BBENCH_LIB="$lib" BBENCH_MPI="$BB_MPI_LIBRARY"
    bb_mpmd -n 1 "$@" "$BB_PYTHON" -m bbench.bench --count 1 --bytes 8 --samples 3 : \
        -n 1 "$@" BBENCH_BINDING=ctypes "$BB_PYTHON" -m bbench.bench --count 1 --bytes 8 --samples 3 \
        > "$out" 2> "$BB_TMP/err"
    bb_expect_rc 2 $? "bbench.bench with another binding on rank 1: usage on every rank"
    bb_expect_true "the bindings' difference said once" \
        test "$(grep -c '^bbench.bench: the ranks load different bindings' "$BB_TMP/err")" -eq 1
fi
# --samples 6: the fewest with an interval of the median at 0.95.
py --count 1,1K --bytes 8,64K --samples 6 --budget 0.002 --c-record "$BB_TMP/c.json" \
    --c-transfer-record "$BB_TMP/t.json" --output "$BB_TMP/py.json" > "$out" 2> "$BB_TMP/err"
bb_expect_rc 0 $? "bbench.bench at -n 2"
# With the extension, c-in (the C phase from C in this process) too: one
# more row per size, and its ratio given.
ways=3 cin='$6 == "-"'
[ "$binding" = extension ] && ways=4 cin='$5 != "-" && $10 != "-"'
bb_expect_true "a row for each count and each bytes, every ratio given" test "$(awk '
    $1 ~ /^[0-9]+$/ && NF == 12 && $6 != "-" && $11 != "-" && '"$cin"' { n++ }
    END { print n + 0 }' "$out")" -eq 4
bb_expect_true "the record holds $ways ways x 2 counts, x 2 bytes" "$BB_PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
ph = [p["parameters"]["phase"] for p in r["points"]]
k = 2 * int(sys.argv[2])
sys.exit(0 if r["benchmark"] == "py" and ph.count("sum") == k and ph.count("transfer") == k
         else 1)' "$BB_TMP/py.json" "$ways"
"$get" "$BB_TMP/py.json" points.# > "$BB_TMP/get" 2>&1
bb_expect_rc 0 $? "bbench.bench's record passes the C validator ($(cat "$BB_TMP/get"))"
# The document's record (issue 59): the first call apart, full-run time,
# network bytes and process memory null with reasons, and the phases' census
# (the document's numbers, the C rows' too) and request credit.
bb_expect_true "first call, null-with-reason quantities, tracked_live and max_inflight" \
    "$BB_PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
for p in r["points"]:
    q, par = p["quantities"], p["parameters"]
    assert p["first_call"]["elapsed"]["value"] > 0, p["first_call"]
    for name in ("time.full_run", "network.bytes", "memory.rss_peak"):
        assert q[name]["value"] is None and q[name]["reason"], (name, q[name])
    if par["mode"] in ("python", "c-py"):
        sum_ = par["phase"] == "sum"
        assert q["memory.tracked_live"]["unit"] == "byte", q["memory.tracked_live"]
        assert q["communication.max_inflight"]["value"] == (1 if sum_ else 2), par
        want = 144 + 16 * par["count"] if sum_ else 232 + par["bytes"]
        assert q["memory.tracked_live"]["value"] == want, (par, q["memory.tracked_live"])
' "$BB_TMP/py.json"
# Every summarized timing has its interval at 0.95 (6 samples: [min, max]),
# and every ratio of the table its paired figure beside it: the per-round
# ratios summarized as a timing is (ci checked by the validator above),
# their rounds and whether resolved; c-c's unpaired, saying why.
bb_expect_true "ci on every summarized timing, a paired figure beside every ratio" \
    "$BB_PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
n = 0
for p in r["points"]:
    for name, q in p["quantities"].items():
        if q["unit"] == "s" and "samples" in q:
            n += 1
            ci = q["ci"]
            assert ci["level"] == 0.95 and ci["order"] == 1 and ci["coverage"] == 0.96875, q
            assert ci["low"] == min(q["samples"]) and ci["high"] == max(q["samples"]), q
    mode = p["parameters"]["mode"]
    dens = {"python": ["raw", "c-py"], "c-py": ["raw", "c-in", "c-c"]}.get(mode, [])
    for den in dens:
        q, pq = p["quantities"]["ratio." + den], p["quantities"]["ratio.%s.paired" % den]
        assert q["unit"] == pq["unit"] == "ratio", (q, pq)
        if den == "c-c":
            assert pq["rounds"] == 0 and pq["ci"] is None and not pq["resolved"], pq
            assert "not paired" in pq["ci_reason"] and pq["value"] is None, pq
        elif q["value"] is not None:
            assert pq["rounds"] == 6 == len(pq["samples"]) and pq["ci"]["order"] == 1, pq
            assert pq["resolved"] == (pq["ci"]["low"] > 1 or pq["ci"]["high"] < 1), pq
        n += 1
assert r["run"]["measurement"]["confidence"] == 0.95
sys.exit(0 if n > 0 else 1)' "$BB_TMP/py.json"
bb_expect_true "the table of paired ratios: a row per ratio and size" test "$(awk '
    $1 ~ /^[0-9]+$/ && NF == 8 && $2 ~ /\// && ($8 == "yes" || $8 == "?") { n++ }
    END { print n + 0 }' "$out")" -eq 20
# Too few samples for the level: ci null and its reason, still valid.
py --count 1 --bytes none --samples 3 --budget 0.002 --confidence 0.9 \
    --output "$BB_TMP/py3.json" > "$out" 2> "$BB_TMP/err"
bb_expect_rc 0 $? "bbench.bench --samples 3 --confidence 0.9"
"$get" "$BB_TMP/py3.json" points.# > "$BB_TMP/get" 2>&1
bb_expect_rc 0 $? "its record passes the C validator"
bb_expect_true "ci null with ci_reason on every timing (3 samples at 0.9)" "$BB_PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
qs = [q for p in r["points"] for q in p["quantities"].values() if "samples" in q]
sys.exit(0 if qs and all(q["ci"] is None and q["ci_reason"].startswith(
    "3 samples: an interval of the median at level 0.9 needs 5 or more") for q in qs)
    else 1)' "$BB_TMP/py3.json"
bb_expect_grep "^# python/c-py: 3 samples: an interval of the median at level 0.9 needs 5" \
    "$out" "the paired table says why it has no interval"
# bench.py's order statistic against the C rule: records of quantity() at
# n = 1..120 and four levels pass the validator, which recomputes each ci.
env PYTHONPATH="$S/python" BBENCH_MPI="$BB_MPI_LIBRARY" PYTHONDONTWRITEBYTECODE=1 \
    "$BB_PYTHON" -c '
import json, random, sys
from bbench.bench import quantity
rnd = random.Random(7)
pts = [{"parameters": {"n": n, "level": lev}, "status": "ok",
        "quantities": {"elapsed": quantity([rnd.random() for _ in range(n)], lev)}}
       for n in range(1, 121) for lev in (0.5, 0.9, 0.95, 0.99)]
json.dump({"schema": "bbench.record/1", "benchmark": "py", "points": pts},
          open(sys.argv[1], "w"))' "$BB_TMP/ci.rec" > "$BB_TMP/get" 2>&1
bb_expect_rc 0 $? "quantity() at n = 1..120 and four levels"
"$get" "$BB_TMP/ci.rec" points.# > "$BB_TMP/get" 2>&1
bb_expect_rc 0 $? "the C validator agrees with each interval ($(cat "$BB_TMP/get"))"
# --confidence outside (0, 1) or not a number: exit 2 on every rank, said once.
for bad in 0 1 1.5 -0.1 nan x; do
    py --confidence $bad > "$out" 2> "$BB_TMP/err"
    bb_expect_rc 2 $? "--confidence $bad: a usage error"
    bb_expect_true "--confidence $bad: said once" \
        test "$(grep -c "error: .*confidence" "$BB_TMP/err")" -eq 1
done
bb_expect_true "the record says the bindings ($binding)" "$BB_PYTHON" -c '
import json, sys
b = json.load(open(sys.argv[1]))["source"]["build"]
sys.exit(0 if b["binding"] == b["transfer_binding"] == sys.argv[2] else 1)' \
    "$BB_TMP/py.json" "$binding"
py --samples 2 > "$out" 2> "$BB_TMP/err"
bb_expect_rc 2 $? "--samples 2: a usage error"
bb_expect_true "said once" test "$(grep -c 'samples must be' "$BB_TMP/err")" -eq 1

# make install: the package goes where this Python looks under the prefix,
# with _build.py naming the installed library and its MPI; the installed
# package (not the source tree's) runs the C phase at -n 2.
stage="$BB_TMP/stage"
make -C "$B" install DESTDIR="$stage" > "$BB_TMP/install.log" 2>&1
bb_expect_rc 0 $? "make install DESTDIR=..."
built=$(find "$stage" -path '*/bbench/_build.py' | head -n 1)
bb_expect_true "bbench/_build.py installed under the prefix ($built)" \
    test -n "$built" -a -z "${built##"$stage$prefix"/*}"
pydir=$(dirname "$(dirname "$built")")
bb_expect_true "the package's modules installed beside it" test -f "$pydir/bbench/__init__.py" \
    -a -f "$pydir/bbench/_clib.py" -a -f "$pydir/bbench/reference.py" -a -f "$pydir/bbench/bench.py"
if [ "$binding" = extension ]; then
    bb_expect_true "the C extension installed, without its libtool archive" \
        test -f "$pydir/bbench/_cphase.so" -a ! -e "$pydir/bbench/_cphase.la"
fi
if [ "$prefix" = /usr/local ] || [ "$prefix" = /usr ]; then
    rel=${pydir#"$stage"}
    bb_expect_true "$rel is on $BB_PYTHON's path" "$BB_PYTHON" -c '
import sys; sys.exit(0 if sys.argv[1] in sys.path else 1)' "$rel"
fi
lib_installed=$("$BB_PYTHON" -c '
import runpy, sys; print(runpy.run_path(sys.argv[1])["LIB"])' "$built")
bb_expect_true "_build.py names the installed library ($lib_installed)" \
    test -f "$stage$lib_installed" -a -z "${lib_installed##"$prefix"/*}"
bb_expect_true "and this build's MPI" "$BB_PYTHON" -c '
import runpy, sys; sys.exit(0 if runpy.run_path(sys.argv[1])["MPI"] == sys.argv[2] else 1)' \
    "$built" "$BB_MPI_LIBRARY"
# The staged library stands in for the installed one (the tree is not
# installed); everything else comes from the staged package.
bb_mpirun 2 env PYTHONPATH="$pydir" PYTHONDONTWRITEBYTECODE=1 \
    BBENCH_LIB="$stage$lib_installed" "$BB_PYTHON" -c '
import numpy as np, bbench
from mpi4py import MPI
assert bbench.__file__.startswith(__import__("sys").argv[1]), bbench.__file__
x = np.full(4, 1.0 + MPI.COMM_WORLD.rank)
phase = bbench.CBoundedSumPhase(MPI.COMM_WORLD)
assert phase.binding == __import__("sys").argv[2], phase.binding
total = phase.sum(lambda: x, phase_id=1, epoch=0, count=4, max_elements=4)
phase.close()
assert list(total) == [3.0] * 4, total
print("installed sum ok")' "$pydir" "$binding" > "$out" 2>&1
bb_expect_rc 0 $? "the installed package's C sum phase at -n 2, through the $binding"
# (Open MPI may join two ranks' lines: count the words, not the lines.)
bb_expect_true "both ranks summed exactly" test "$(grep -o 'installed sum ok' "$out" | wc -l)" -eq 2
bb_finish
