#!/bin/sh
# The docs' evidence does not weigh the tree (issue 55 item 3): the records
# under doc/records/ hold at most 4 MB (4,000,000 bytes) and every record is
# kept compressed (NAME.json.xz, which scripts/bbench-doctable reads through
# Python's lzma).  Each record is decompressed into this test's scratch
# directory, so that bb_finish checks it against schema/ as it checks the
# records the other tests write.  Planted: a tree over the budget and a
# record left uncompressed each fail.  No MPI; python3 only.
. "$(dirname "$0")/../lib.sh"
command -v python3 > /dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }

budget=4000000

# findings DIR: what breaks the rules in DIR, one line each (none: ok).
findings() {
    python3 - "$1" "$budget" <<'PY'
import os, sys
top, budget = sys.argv[1], int(sys.argv[2])
total = 0
for d, _, files in os.walk(top):
    for f in sorted(files):
        p = os.path.join(d, f)
        total += os.path.getsize(p)
        if f.endswith(".json"):
            print("%s: a record not compressed (xz -6 it: %s.xz)" % (os.path.relpath(p, top), f))
if total > budget:
    print("%d bytes, over the budget of %d" % (total, budget))
PY
}

R="$S/doc/records"
bb_expect_true "doc/records is there" test -d "$R"
findings "$R" > "$BB_TMP/found"
bb_expect_true "doc/records: at most $budget bytes, every record .json.xz" test ! -s "$BB_TMP/found"
[ -s "$BB_TMP/found" ] && sed 's/^/    /' "$BB_TMP/found" >&2
echo "doc/records: $(du -sb "$R" | cut -f1) bytes on disk (du -sb), budget $budget"

# Every compressed record reads back as a bbench.record/1 (and, at
# bb_finish, matches the schema).
mkdir -p "$BB_TMP/records"
python3 - "$R" "$BB_TMP/records" > "$BB_TMP/read" 2>&1 <<'PY'
import json, lzma, os, sys
top, out = sys.argv[1], sys.argv[2]
n = bad = 0
for d, _, files in os.walk(top):
    for f in sorted(files):
        if not f.endswith(".json.xz"):
            continue
        p = os.path.join(d, f)
        rel = os.path.relpath(p, top)
        try:
            with lzma.open(p, "rt", encoding="utf-8") as fh:
                text = fh.read()
            if json.loads(text).get("schema") != "bbench.record/1":
                raise ValueError("not a bbench.record/1")
        except (OSError, ValueError, lzma.LZMAError, EOFError) as e:
            print("%s: %s" % (rel, e))
            bad += 1
            continue
        with open(os.path.join(out, rel[:-3].replace(os.sep, "--")), "w", encoding="utf-8") as fh:
            fh.write(text)
        n += 1
print("%d records read, %d unreadable" % (n, bad))
sys.exit(1 if bad or not n else 0)
PY
bb_expect_rc 0 $? "every doc record decompresses to a bbench.record/1"
sed 's/^/    /' "$BB_TMP/read"

# Planted: one record left plain, then a tree over the budget.
P="$BB_TMP/planted"
mkdir -p "$P/study"
f=$(cd "$BB_TMP/records" && ls | head -n 1)
cp "$BB_TMP/records/$f" "$P/study/plain.json"
findings "$P" > "$BB_TMP/found"
bb_expect_grep '^study/plain.json: a record not compressed' "$BB_TMP/found" \
    "a record left uncompressed is named"
rm "$P/study/plain.json"
findings "$P" > "$BB_TMP/found"
bb_expect_true "without it, the planted tree passes" test ! -s "$BB_TMP/found"
head -c $((budget + 1)) /dev/zero > "$P/study/big.bin"
findings "$P" > "$BB_TMP/found"
bb_expect_grep "^$((budget + 1)) bytes, over the budget of $budget" "$BB_TMP/found" \
    "one byte over the budget fails, with the size"
bb_finish
