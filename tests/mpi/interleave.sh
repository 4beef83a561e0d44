#!/bin/sh
# Every benchmark interleaves the rows of a point sample by sample: the
# engine's block trace (BB_TRACE_BLOCKS, runner/measure.c) must show, in
# every measurement set, sample k of every variant before sample k + 1 of
# any, in the same variant order each time, each variant's reps the same in
# every sample, and one reps figure for all of a set's variants - except in
# sum and transfer, whose rows keep their own reps when one fits more than
# 10 times the fewest (BB_SHARE_FIT).  Each benchmark must measure at least
# one set of two or more variants; a set of one is overlap's t_comm alone
# (it sizes the others' compute).  Bookkeeping only, never speed: a short
# budget (reps still fitted to it) keeps a loaded machine's run short (the
# default budget's transfer --mode all took 181 s at load 15).
. "$(dirname "$0")/../lib.sh"

# check TRACE SAMPLES FIT: the trace's sets, each "NVARIANTS:ok" or a
# complaint; FIT 1: a set may give each variant its own reps when the most
# is over 10 times the fewest.
check() {
    python3 - "$1" "$2" "$3" <<'PY'
import sys
samples, fit = int(sys.argv[2]), sys.argv[3] == "1"
sets, cur = [], None
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "set":
        cur = {"n": int(w[1]), "blocks": []}
        sets.append(cur)
    else:
        cur["blocks"].append((int(w[1]), int(w[3]), int(w[5])))
for s in sets:
    want = [(k, i) for k in range(samples) for i in range(s["n"])]
    got = [(k, i) for k, i, _ in s["blocks"]]
    reps = {r for _, _, r in s["blocks"]}
    own = {i: {r for _, j, r in s["blocks"] if j == i} for i in range(s["n"])}
    if got != want:
        print("%d:order %s" % (s["n"], got))
    elif any(len(r) != 1 for r in own.values()):
        print("%d:reps changed between samples %s" % (s["n"], own))
    elif len(reps) != 1 and not (fit and max(reps) > 10 * min(reps)):
        print("%d:reps %s" % (s["n"], sorted(reps)))
    else:
        print("%d:ok" % s["n"])
PY
}

for b in "sum --count 1,64 --mode all" "transfer --bytes 8,1K --batches 0,2 --mode all" \
         "overlap --bytes 1K --batches 1" "redist --elements 1000"; do
    name=${b%% *}
    trace="$BB_TMP/trace.$name"
    # The launcher's own flag sets the variable in every rank (rank 0 writes).
    # shellcheck disable=SC2046,SC2086
    timeout -k 5 "$BB_TIMEOUT" $MPIEXEC $(bb_launcher_np_flags "$BB_LAUNCHER_KIND" 2) \
        $(bb_launcher_root_flags "$BB_LAUNCHER_KIND") \
        $(bb_launcher_env_flags "$BB_LAUNCHER_KIND" "BB_TRACE_BLOCKS=$trace") \
        $B/bench/bbench-$b --samples 3 --budget 0.01 --warmup-blocks 2 -q \
        > "$BB_TMP/out" 2> "$BB_TMP/err"
    bb_expect_rc 0 $? "bbench-$b"
    fit=0
    case $name in sum|transfer) fit=1 ;; esac
    check "$trace" 3 "$fit" > "$BB_TMP/sets"
    bb_expect_true "bbench-$name: every set interleaved, sample by sample, reps as shared" \
        test -s "$BB_TMP/sets" -a "$(grep -vc ':ok$' "$BB_TMP/sets")" -eq 0
    grep -v ':ok$' "$BB_TMP/sets" | head -3 | sed 's/^/    /' >&2
    bb_expect_true "bbench-$name: a set of two or more variants" \
        grep -q '^\([2-9]\|[1-9][0-9]\):ok$' "$BB_TMP/sets"
    if [ "$name" != overlap ]; then
        bb_expect_true "bbench-$name: no variant measured alone" \
            sh -c "! grep -q '^1:' '$BB_TMP/sets'"
    fi
done
bb_finish
