#!/bin/sh
# Contracts are declared in the record, not guessed by the compare tool: two
# quick runs of bbench-sum and bbench-redist taken with different --budget
# and --reps (so different repetitions, calls and messages checked) show no
# contract change; a changed contract quantity (payload bytes) is caught,
# named and fails even in report mode.  Also: every quantity says
# "deterministic", and every record carries the run's provenance.
. "$(dirname "$0")/../lib.sh"

C="$B/bench/bbench-compare"
out="$BB_TMP/out"
err="$BB_TMP/err"
mkdir "$BB_TMP/a" "$BB_TMP/b"

# run DIR SETTINGS...: one small record of each benchmark into DIR.
run() {
    dir=$1; shift
    bb_mpirun 2 "$B/bench/bbench-sum" --count 8,1K --samples 3 "$@" \
        --output "$dir/sum-n2.json" >"$out" 2>"$err"
    bb_expect_rc 0 $? "bbench-sum $*"
    bb_mpirun 2 "$B/bench/bbench-redist" --elements 1e3 --samples 3 "$@" \
        --output "$dir/redist-n2.json" >>"$out" 2>>"$err"
    bb_expect_rc 0 $? "bbench-redist $*"
}
run "$BB_TMP/a" --budget 0.002
bb_expect_grep '^# reps per sample: [0-9]* to [0-9]* (chosen by --budget 0.002 s a sample)' "$out" \
    "the table says the reps per sample"
run "$BB_TMP/b" --reps 3 --warmup 1
bb_expect_grep '^# reps per sample: 3 (--reps); warmup 1' "$out" "the reps given"

"$C" --report "$BB_TMP/a" "$BB_TMP/b" >"$out" 2>"$err"
bb_expect_rc 0 $? "different --budget and --reps: no contract change"
bb_expect_grep '0 contract changes, 0 unmatched' "$out" "0 contract changes, every point matched"

# The declarations, read from the records.
# The launcher is named as it was run (the first word of $MPIEXEC); the
# variable it tells each rank the world size by is its own.
launcher_name=$(set -- $MPIEXEC; basename "$1")
case $BB_LAUNCHER_KIND in
hydra) size_var=PMI_SIZE ;;
openmpi) size_var=OMPI_COMM_WORLD_SIZE ;;
slurm) size_var=SLURM_NTASKS ;;
*) size_var= ;;
esac
python3 - "$BB_TMP/a/sum-n2.json" "$BB_TMP/a/redist-n2.json" $size_var >"$out" <<'PY'
import json, sys
for path in sys.argv[1:3]:
    d = json.load(open(path))
    for p in d["points"]:
        for member in ("quantities", "first_call"):
            for name, q in (p.get(member) or {}).items():
                if not isinstance(q.get("deterministic"), bool):
                    print("UNDECLARED", path, name)
    q = d["points"][0]["quantities"]
    for name in sorted(q):
        print(d["benchmark"], name, q[name]["deterministic"])
    s, l = d["system"], d["runtime"]["launcher"]
    src = d["source"]
    # From a git checkout: the revision and its dirty flag; from a release
    # tarball (no git above the source tree): null with the reason.
    if isinstance(src.get("git"), str):
        print("git_dirty", type(src.get("git_dirty")).__name__)
    else:
        print("git", src.get("git"), bool(src.get("git_reason")))
    print("cpu", bool(s["cpu_model"]), "kernel", bool(s["kernel"]), "os", bool(s["os"]))
    print("load", len(s["load_average"]["before"]), len(s["load_average"]["after"]))
    print("rate", s["kernel_rate"]["value"] > 0, s["kernel_rate"]["deterministic"])
    print("launcher", l["name"], (l["command"] or ["-"])[-1] == path,
          l["env"].get(sys.argv[3]) if len(sys.argv) > 3 else "-")
    print("binding", l["binding"]["policy"])
PY
bb_expect_true "every quantity declares itself" test "$(grep -c UNDECLARED "$out")" -eq 0
bb_expect_grep '^sum communication.payload True$' "$out" "payload bytes: a contract"
bb_expect_grep '^sum memory.tracked_live True$' "$out" "tracked bytes: a contract"
bb_expect_grep '^sum communication.max_inflight True$' "$out" "request credit: a contract"
bb_expect_grep '^sum elapsed False$' "$out" "a timing: a measurement"
bb_expect_grep '^sum memory.rss_peak False$' "$out" "rss: a measurement"
bb_expect_grep '^redist redist.messages_checked False$' "$out" "messages checked: a measurement"
bb_expect_grep '^redist communication.payload True$' "$out" "redist payload: a contract"
bb_expect_grep '^redist redist.steps True$' "$out" "redist steps: a contract"
bb_expect_grep '^git_dirty bool$\|^git None True$' "$out" \
    "the git revision has a dirty flag, or is null with a reason (no git checkout)"
bb_expect_grep '^cpu True kernel True os True$' "$out" "CPU model, kernel and OS"
bb_expect_grep '^load 3 3$' "$out" "load average before and after"
bb_expect_grep '^rate True False$' "$out" "the kernel rate, a measurement"
size_want=${size_var:+2}
bb_expect_grep "^launcher $launcher_name True ${size_want:--}\$" "$out" \
    "the launcher ($launcher_name): its command line and ${size_var:-no} environment"
if [ "$BB_LAUNCHER_KIND" = hydra ]; then
    bb_expect_grep '^binding none$' "$out" "hydra binds nothing by default"
fi

# A real contract change: one point's payload bytes.
python3 - "$BB_TMP/b/sum-n2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["points"][0]["quantities"]["communication.payload"]["value"] += 8
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
"$C" --report "$BB_TMP/a" "$BB_TMP/b" >"$out" 2>"$err"
bb_expect_rc 1 $? "a changed payload fails report mode"
bb_expect_grep '^  CONTRACT CHANGE sum n=2 count=8 .*: communication.payload: base 64 byte, candidate 72 byte$' \
    "$out" "the change named: point, quantity, values"
bb_expect_grep '1 contract changes' "$out" "counted once"

bb_finish
