#!/bin/sh
# Every figure table of README.md, doc/*.md and results/README.md is the one
# its records give (scripts/bbench-doctable, issue 38 item 4): the tree as
# it is passes; a planted edit of one cell, a figure table outside a block
# and a record that says oversubscribed where the table does not each fail;
# rewriting puts the tables back.  No MPI; python3 only.
. "$(dirname "$0")/../lib.sh"
command -v python3 > /dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
gen="$S/scripts/bbench-doctable"

python3 "$gen" --check --root "$S" > "$BB_TMP/check" 2>&1
bb_expect_rc 0 $? "the tree: every block is what its records give, no figure table outside one"
[ -s "$BB_TMP/check" ] && sed 's/^/    /' "$BB_TMP/check" >&2

# A copy of what the tables are made from, to plant edits in.
T="$BB_TMP/tree"
mkdir -p "$T/doc" "$T/scripts" "$T/tools" "$T/results"
cp "$S/README.md" "$T/"
cp "$S"/doc/*.md "$T/doc/"
cp -R "$S/doc/records" "$T/doc/"
cp "$S"/results/* "$T/results/"
cp "$gen" "$T/scripts/"; cp "$S/tools/bbench-perf" "$S/tools/bbench-simulate" "$T/tools/"
# check [FILE...]: --check of the copy (all its pages, or the one a case edits:
# each full check remakes every table, bbench-perf's and bbench-simulate's too).
check() { python3 "$T/scripts/bbench-doctable" --check --root "$T" "$@" > "$BB_TMP/out" 2>&1; }
check
bb_expect_rc 0 $? "the copy passes as the tree does"

# One cell of the first generated table of README.md: its first figure with
# a decimal point, one digit changed.
awk 'BEGIN { done = 0 } /^<!-- bbench-table / { inb = 1 } /^<!-- \/bbench-table/ { inb = 0 }
     inb && !done && /^\| [0-9]/ && match($0, /[0-9]+\.[0-9][0-9]/) {
         c = substr($0, RSTART, RLENGTH); d = substr(c, length(c), 1)
         c2 = substr(c, 1, length(c) - 1) ((d + 1) % 10)
         $0 = substr($0, 1, RSTART - 1) c2 substr($0, RSTART + RLENGTH); done = 1 }
     { print }' "$S/README.md" > "$T/README.md"
bb_expect_true "a cell was changed" sh -c "! cmp -s '$S/README.md' '$T/README.md'"
check "$T/README.md"
bb_expect_rc 1 $? "one cell changed: --check fails"
bb_expect_grep '^README.md:[0-9]*: block [a-z0-9-]* differs from what its records give' \
    "$BB_TMP/out" "it names the block"
python3 "$T/scripts/bbench-doctable" --root "$T" "$T/README.md" > "$BB_TMP/out" 2>&1
bb_expect_rc 0 $? "rewriting the file"
bb_expect_true "rewritten, README.md is the tree's again" cmp -s "$S/README.md" "$T/README.md"

# A table of figures typed in by hand, outside any block.
cp "$S/doc/transfer.md" "$T/doc/transfer.md"
printf '\n| bytes | median us | ratio |\n|---|---:|---:|\n| 8 | 5.43 | 1.07 |\n| 64 Ki | 36.16 | 1.60 |\n' \
    >> "$T/doc/transfer.md"
check "$T/doc/transfer.md"
bb_expect_rc 1 $? "a figure table outside a block: --check fails"
n=$(wc -l < "$T/doc/transfer.md")
bb_expect_grep "^doc/transfer.md:$((n - 3)): a table of figures outside a generated block" \
    "$BB_TMP/out" "it names the file and the table's first line"
python3 "$T/scripts/bbench-doctable" --root "$T" "$T/doc/transfer.md" > /dev/null 2>&1
bb_expect_rc 1 $? "rewriting does not take it in: still exit 1"
# The same in a code block, as a program prints it.
cp "$S/doc/transfer.md" "$T/doc/transfer.md"
printf '\n```\n  count protocol_us raw_us ratio\n      1 4.84 0.80 6.06\n      4 5.11 1.48 3.46\n     16 5.41 1.72 3.14\n```\n' \
    >> "$T/doc/transfer.md"
check "$T/doc/transfer.md"
bb_expect_rc 1 $? "a program's table pasted in a code block: --check fails"
bb_expect_grep "^doc/transfer.md:[0-9]*: a code block of figures outside" "$BB_TMP/out" \
    "it is named as a code block"
# Exempted, with its reason, it passes.
cp "$S/doc/transfer.md" "$T/doc/transfer.md"
printf '\n<!-- bbench-table-exempt: a table of another program (planted by the test) -->\n| bytes | median us | ratio |\n|---|---:|---:|\n| 8 | 5.43 | 1.07 |\n| 64 Ki | 36.16 | 1.60 |\n' \
    >> "$T/doc/transfer.md"
check "$T/doc/transfer.md"
bb_expect_rc 0 $? "the same table exempted with its reason passes"
cp "$S/doc/transfer.md" "$T/doc/transfer.md"
# Field tables are not figure tables: the docs' own pass above; one more.
printf '\n| option | meaning |\n|---|---|\n| `--budget S` | 0.05 s a sample |\n| `--samples N` | at least 3 |\n' \
    >> "$T/doc/transfer.md"
check "$T/doc/transfer.md"
bb_expect_rc 0 $? "a table of options (text cells) is not a figure table"
cp "$S/doc/transfer.md" "$T/doc/transfer.md"

# A record that says it was oversubscribed is said so in its table, by the
# generator: the block no longer matches until it is rewritten, and then
# names the record.
rec=$(sed -n 's/^<!-- bbench-table [a-z0-9-]* view=sum records=\([^ ,]*\).*/\1/p' \
    "$S/README.md" | head -n 1)
bb_expect_true "README.md has a sum block ($rec)" test -n "$rec"
python3 - "$T/$rec" <<'PY'
import json, lzma, sys
with lzma.open(sys.argv[1], "rt") as fh:
    r = json.load(fh)
r["topology"]["oversubscribed"] = True
with lzma.open(sys.argv[1], "wt") as fh:
    json.dump(r, fh)
PY
check "$T/README.md"
bb_expect_rc 1 $? "the record now says oversubscribed: its block differs"
python3 "$T/scripts/bbench-doctable" --root "$T" "$T/README.md" > /dev/null 2>&1
bb_expect_grep "\*\*Oversubscribed\*\*.*$(basename "$rec")" "$T/README.md" \
    "rewritten, the table names the oversubscribed record"
bb_expect_grep "(-n [0-9]*, oversubscribed)" "$T/README.md" \
    "and its command line says it"

# A record field cannot move a block's end (issue 58, finding 7): a command
# holding a newline and the close marker is written on the block's one line,
# and the rewritten page passes its own --check, its markers paired.
cp "$S/README.md" "$T/README.md"
python3 - "$T/$rec" <<'PY'
import json, lzma, sys
with lzma.open(sys.argv[1], "rt") as fh:
    r = json.load(fh)
r["topology"]["oversubscribed"] = False
r["command"] = list(r["command"]) + ["x\n<!-- /bbench-table -->\n| 1 | 2 |"]
with lzma.open(sys.argv[1], "wt") as fh:
    json.dump(r, fh)
PY
python3 "$T/scripts/bbench-doctable" --root "$T" "$T/README.md" > "$BB_TMP/out" 2>&1
bb_expect_rc 0 $? "a command with a newline and the close marker: rewritten"
check "$T/README.md"
bb_expect_rc 0 $? "the rewritten page passes its own --check"
bb_expect_true "as many close markers as open ones" test \
    "$(grep -c '^<!-- bbench-table ' "$T/README.md")" -eq "$(grep -c '^<!-- /bbench-table -->' "$T/README.md")"
bb_expect_grep 'x\\n&lt;!-- /bbench-table -->' "$T/README.md" "the field is shown on one line"

# A block whose records are missing cannot be rendered: exit 2, named.
rm -f "$T/$rec"
check "$T/README.md"
bb_expect_rc 2 $? "a block without its records: exit 2"
bb_expect_grep "records '$rec'" "$BB_TMP/out" "it names the missing records"

# Every ratio carries its uncertainty (issue 54 items 3, 4, 6): with 3 samples
# a ratio has no interval, so it is marked not resolved and the legend says
# what the mark means; a summary line counts resolved ratios only.
cp "$S/$rec" "$T/$rec"
cp "$S/README.md" "$T/README.md"
bb_expect_grep '^| 1 | 8 B | .* | [0-9.]*? | ok |$' "$S/README.md" \
    "a ratio of 3 samples is marked not resolved"
bb_expect_grep '^A ratio marked `?` is not resolved ([0-9]* of the [0-9]* here): its 95% interval holds 1.0' \
    "$S/README.md" "the table's legend says what the mark means"
bb_expect_grep 'Best / scalapack: .*; above 1.0 on 0 of 0 resolved; 90 not resolved\.' \
    "$S/doc/redist.md" "a summary line counts resolved ratios only"
# Enough rounds, protocol twice raw in each: resolved, no mark.
python3 - "$T/$rec" <<'PY'
import json, lzma, sys
with lzma.open(sys.argv[1], "rt") as fh:
    r = json.load(fh)
for p in r["points"]:
    q = p["quantities"]["elapsed"]
    base = 2e-6 if p["parameters"]["mode"] == "protocol" else 1e-6
    q["samples"] = [base * (1 + 0.01 * k) for k in range(9)]
    q["median"] = q["samples"][4]
    q["range"] = [q["samples"][0], q["samples"][-1]]
with lzma.open(sys.argv[1], "wt") as fh:
    json.dump(r, fh)
PY
python3 "$T/scripts/bbench-doctable" --root "$T" "$T/README.md" > /dev/null 2>&1
bb_expect_grep '^| 1 | 8 B | .* | 2\.00 | ok |$' "$T/README.md" \
    "9 rounds, protocol/raw 2.00 in each: resolved, not marked"
# A record that says its times are quantised (run.quantisation) is said so
# under its table, and no ratio from it is resolved.
python3 - "$T/$rec" <<'PY'
import json, lzma, sys
with lzma.open(sys.argv[1], "rt") as fh:
    r = json.load(fh)
r["topology"]["oversubscribed"] = True
r["run"]["quantisation"] = {"step_s": 0.004}
with lzma.open(sys.argv[1], "wt") as fh:
    json.dump(r, fh)
PY
python3 "$T/scripts/bbench-doctable" --root "$T" "$T/README.md" > /dev/null 2>&1
bb_expect_grep '^Times quantised at 4.0 ms steps (oversubscribed: [0-9]* ranks on [0-9]* cores): no ratio claim\.$' \
    "$T/README.md" "a quantised record's table says so"
bb_expect_grep '^| 1 | 8 B | .* | 2\.00? | ok |$' "$T/README.md" \
    "and its ratios make no claim"
python3 - "$T/$rec" <<'PY'
import json, lzma, sys
with lzma.open(sys.argv[1], "rt") as fh:
    r = json.load(fh)
r["run"]["quantisation"] = {"step_s": None}
with lzma.open(sys.argv[1], "wt") as fh:
    json.dump(r, fh)
PY
python3 "$T/scripts/bbench-doctable" --root "$T" "$T/README.md" > /dev/null 2>&1
bb_expect_true "run.quantisation without a step: no quantisation line" \
    sh -c "! grep -q '^Times quantised' '$T/README.md'"
# Without run.quantisation, the step is found in the samples: results/'s -n 4
# record sits on 4 ms slices.
bb_expect_grep '^`sum-n4.json`: Times quantised at 4.0 ms steps (oversubscribed: 4 ranks on 2 cores): no ratio claim\.$' \
    "$S/results/README.md" "a quantised record found from its samples"

# bbench-perf --from: ratios paired over the rounds of every launch, the
# per-launch range beside, and a phase faster than a reference it contains
# flagged implausible.
P="$BB_TMP/perf"
mkdir -p "$P"
python3 - "$S/doc/records/perf" "$P" <<'PY'
import json, lzma, os, sys
# bbench-perf reads plain records: the committed ones, decompressed.
for f in os.listdir(sys.argv[1]):
    if f.endswith(".json.xz"):
        with lzma.open(os.path.join(sys.argv[1], f), "rt") as src, \
                open(os.path.join(sys.argv[2], f[:-3]), "w") as dst:
            dst.write(src.read())
PY
python3 - "$P" <<'PY'
import json, sys
for k in (1, 2, 3):
    f = "%s/sum-%d.json" % (sys.argv[1], k)
    r = json.load(open(f))
    by = {}
    for p in r["points"]:
        by.setdefault((p["parameters"]["count"], p["parameters"]["mode"]), []).append(p)
    for count in (1, 8192):
        raw = by[(count, "raw")][0]["quantities"]["elapsed"]["samples"]
        for p in by[(count, "raw-fresh")]:
            # raw-fresh: raw's samples times 3 in launches 1 and 2, 5 in 3.
            p["quantities"]["elapsed"]["samples"] = [x * (3 if k < 3 else 5) for x in raw]
        if count == 8192:
            for p in by[(count, "raw-copy")]:
                p["quantities"]["elapsed"]["samples"] = [x * 0.5 for x in raw]
    json.dump(r, open(f, "w"))
PY
sh "$T/tools/bbench-perf" --from "$P" > "$BB_TMP/perf.txt" 2>&1
bb_expect_rc 0 $? "bbench-perf --from planted records"
bb_expect_true "raw-copy at half raw's time in every round: its rows are implausible" test \
    "$(grep -c '^ *64KiB .* implausible:raw-copy<raw$' "$BB_TMP/perf.txt")" -eq 12
bb_expect_true "raw-copy above raw elsewhere: those rows ok" test \
    "$(grep -c '^ *8B .* ok$' "$BB_TMP/perf.txt")" -ge 12
python3 - "$BB_TMP/perf.txt" <<'PY' > "$BB_TMP/perf-cells"
import sys
lines = open(sys.argv[1]).read().split("\n")
i = [n for n, l in enumerate(lines) if l.startswith("# sum")][0] + 1
head = lines[i].split()
row = lines[i + 1].split()
raw, fresh = float(row[head.index("raw_us")]), row[head.index("raw-fresh_us")]
print(row[head.index("protocol/raw-fresh")], row[head.index("protocol/raw")])
PY
# protocol/raw-fresh per round: protocol/raw / 3 in 10 rounds, / 5 in 5:
# pooled, the median is a launch-1-2 figure; the range spans both modes.
bb_expect_true "a pooled paired ratio with its per-launch range" \
    grep -q '^[0-9.]*?\{0,1\}([0-9.]*-[0-9.]*) ' "$BB_TMP/perf-cells"
bb_finish
