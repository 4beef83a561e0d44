#!/bin/sh
# OSU's letters and the stdout formats: -m MIN:MAX (bytes) gives the same
# points and parameters as the long list it stands for; -i and -x set reps
# and warm-up in the record; -f adds the mean and calls columns; -T changes
# the raw references' type at the same bytes; csv parses to one column count
# per row and json parses (python3); -m usage errors exit 2.  Timings are
# never compared.
. "$(dirname "$0")/../lib.sh"

sum="$B/bench/bbench-sum"
ovl="$B/bench/bbench-overlap"
out="$BB_TMP/out"
err="$BB_TMP/err"

# The parameters of every point, one JSON line per point, in order.
params() {
    python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["points"]:
    print(json.dumps(p["parameters"], sort_keys=True))' "$1"
}

# -m 8:64 = --count 1:8:x2 (doubles: bytes / 8).
bb_mpirun 2 "$sum" -m 8:64 -i 3 -x 1 -f -o "$BB_TMP/m.json" > "$out" 2> "$err"
bb_expect_rc 0 $? "bbench-sum -m 8:64 -i 3 -x 1 -f"
bb_mpirun 2 "$sum" --count 1:8:x2 --reps 3 --warmup 1 -o "$BB_TMP/c.json" \
    > "$BB_TMP/out.c" 2> "$err"
bb_expect_rc 0 $? "bbench-sum --count 1:8:x2 --reps 3 --warmup 1"
params "$BB_TMP/m.json" > "$BB_TMP/m.params"
params "$BB_TMP/c.json" > "$BB_TMP/c.params"
bb_expect_true "-m 8:64 and --count 1:8:x2: 8 points (4 counts x 2 modes)" \
    test "$(wc -l < "$BB_TMP/m.params")" -eq 8
bb_expect_true "-m 8:64 and --count 1:8:x2: the same parameters, point by point" \
    cmp -s "$BB_TMP/m.params" "$BB_TMP/c.params"
bb_expect_grep '"count": 8, .*"type": "mpi_double"' "$BB_TMP/m.params" "the type is a parameter"
bb_expect_grep '^# -m 8:64: 4 sizes' "$out" "the conversion is a note"
bb_expect_true "-i 3: reps 3 in the record" \
    test "$("$B/tests/record-get" "$BB_TMP/m.json" run.measurement.reps)" = 3
bb_expect_true "-x 1: warmup 1 in the record" \
    test "$("$B/tests/record-get" "$BB_TMP/m.json" run.measurement.warmup)" = 1
bb_expect_grep 'raw_mean_us *raw_calls' "$out" "-f: mean and calls columns"
bb_expect_grep '^ *8 *64 .* 9 .* ok$' "$out" "-f: 3 samples x 3 reps = 9 calls timed"
if grep -q 'raw_mean_us' "$BB_TMP/out.c"; then
    bb_expect_true "no mean column without -f" false
else
    bb_expect_true "no mean column without -f" true
fi

# Open ranges: :16 starts at the default list's first size (1 double = 8 B);
# a size under one element is dropped, one not a multiple rounded down, and
# the note says so.
bb_mpirun 2 "$sum" -m :16 -i 1 -x 0 -s 3 -o "$BB_TMP/o.json" > "$out" 2> "$err"
bb_expect_rc 0 $? "-m :16"
bb_expect_true "-m :16: counts 1 and 2" \
    test "$(params "$BB_TMP/o.json" | grep -c '"mode": "raw"')" -eq 2
bb_mpirun 2 "$sum" -m 6:50 -i 1 -x 0 --mode raw -o "$BB_TMP/o.json" > "$out" 2> "$err"
bb_expect_rc 0 $? "-m 6:50"
bb_expect_grep '^# -m 6:50: 3 sizes.*(1 rounded, 1 under one element dropped)' "$out" \
    "-m 6:50: 6 B dropped, 12 B rounded down to one double, 24 B and 48 B exact"
bb_expect_true "-m 6:50: counts 1, 3, 6" \
    test "$(params "$BB_TMP/o.json" | sed 's/.*"count": \([0-9]*\).*/\1/' | tr '\n' ,)" = "1,3,6,"

# -T: raw references in mpi_float at the same bytes; the protocol stays double.
bb_mpirun 2 "$sum" -m 64 -T mpi_float -i 2 -x 0 -o "$BB_TMP/t.json" > "$out" 2> "$err"
bb_expect_rc 0 $? "-T mpi_float"
params "$BB_TMP/t.json" > "$BB_TMP/t.params"
bb_expect_grep '"count": 8, .*"mode": "protocol", .*"type": "mpi_double"' "$BB_TMP/t.params" \
    "-T mpi_float: the protocol sums 8 doubles"
bb_expect_grep '"count": 16, "element_bytes": 4, .*"mode": "raw", .*"type": "mpi_float"' \
    "$BB_TMP/t.params" "-T mpi_float: raw reduces 16 floats (64 B)"
bb_expect_grep '^# -T mpi_float: .*same bytes' "$out" "-T: said in a note"
bb_mpirun 2 "$sum" -m 64 -T mpi_int -i 2 -x 0 --mode all > "$out" 2> "$err"
bb_expect_rc 0 $? "-T mpi_int, every mode (the sums checked in int)"

# Refusals name the refusing rank in the status cell and the record.
bb_mpirun 2 "$sum" -m 8 -i 2 -x 0 --mode protocol --refuse-rank 1 -o "$BB_TMP/r.json" \
    > "$out" 2> "$err"
bb_expect_rc 0 $? "--refuse-rank 1"
bb_expect_grep ' refused:preflight:seq0:rank1$' "$out" "status cell names stage, sequence, rank"
bb_expect_true "the record's refusal names rank 1" \
    test "$("$B/tests/record-get" "$BB_TMP/r.json" points.0.refusal.rank)" = 1
bb_mpirun 2 "$sum" -m 8:16 -i 2 -x 0 --refuse-rank 0 > "$out" 2> "$err"
bb_expect_grep '^ *2 .* - refused:preflight:seq[0-9]*:rank0$' "$out" "no ratio on a refused row"

# csv: the header and rows alone on stdout, the same number of fields each;
# json: one document with columns, notes (the runtime's header lines) and rows.
for prog in "$sum -m 8:64" "$ovl -m 4K --batches 0,2 --kinds isend,transfer"; do
    name=$(basename "${prog%% *}")
    # shellcheck disable=SC2086
    bb_mpirun 2 $prog -i 2 -x 0 -f --format csv > "$out" 2> "$err"
    bb_expect_rc 0 $? "$name --format csv"
    bb_expect_true "$name csv: every row has the header's fields, no note on stdout" \
        python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) >= 3, rows
assert all(len(r) == len(rows[0]) for r in rows), [len(r) for r in rows]
assert not any(r[0].startswith("#") for r in rows)
assert len(set(rows[0])) == len(rows[0]), "column names not unique"
assert rows[0][-1] == "status" and all(r[-1] == "ok" for r in rows[1:])' "$out"
    bb_expect_grep "rank.*on 1 host" "$err" "$name csv: the header lines on stderr"
    # shellcheck disable=SC2086
    bb_mpirun 2 $prog -i 2 -x 0 --format json -o "$BB_TMP/j.json" > "$out" 2> "$err"
    bb_expect_rc 0 $? "$name --format json"
    bb_expect_true "$name json: parses; header lines are notes; a value per column" \
        python3 -c 'import json, sys
d = json.loads(open(sys.argv[1]).read())
names = [c["name"] for c in d["columns"]]
assert len(set(names)) == len(names)
assert any("on 1 host" in n for n in d["notes"]), d["notes"]
assert d["rows"] and all(sorted(r) == sorted(names) for r in d["rows"])
assert all(" " not in c["name"] for c in d["columns"])' "$out"
    bb_expect_grep "record written" "$err" "$name json: 'record written' on stderr"
done

# Table cells hold no spaces: every row splits into the header's fields.
bb_mpirun 2 "$ovl" -m 4K --batches 2 --kinds isend -i 2 -x 0 > "$out" 2> "$err"
bb_expect_rc 0 $? "bbench-overlap -m 4K"
bb_expect_true "overlap table: every row has the header's field count" \
    sh -c 'grep -v "^#" "$1" | awk "NR == 1 { n = NF } NF != n { exit 1 }"' sh "$out"
bb_expect_grep '^ *isend  *4096 ' "$out" "-m 4K: a 4096-byte isend row"

# -m usage errors: exit 2, a message naming the option.
usage() {
    what=$1; pattern=$2; shift 2
    bb_mpirun 2 "$@" > "$out" 2> "$err"
    bb_expect_rc 2 $? "usage: $what"
    bb_expect_grep "$pattern" "$err" "usage: $what: message"
}
usage "-m MIN above MAX" "MIN 64 is above MAX 8" "$sum" -m 64:8
usage "-m with --count" "--message-size and --count both" "$sum" -m 8:64 --count 1
# (a lone ":" argument is mpiexec's own separator of programs)
usage "-m with nothing" "not MIN:MAX" "$sum" --message-size=:
usage "-m two colons" "not MIN:MAX" "$sum" -m 1:2:3
usage "-m under one element" "no size holds one 8-byte element" "$sum" -m 4
usage "-m open range past the default" "is empty" "$ovl" -m 8M:
usage "-T unknown" "--type" "$sum" -T mpi_char
usage "--full-sweep with --count" "--full-sweep" "$sum" --full-sweep --count 8
bb_finish
