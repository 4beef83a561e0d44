#!/bin/sh
# The README is a front page that points into doc/ (issue 55 item 2), so its
# links and the pages' links to each other must lead somewhere: every
# relative link of README.md, doc/*.md, results/README.md and
# python/README.md names a file that exists and, for #ANCHOR into a page, a
# heading of that page (anchors made as GitHub makes them).  Links in code
# blocks and to other sites are not followed.  Planted: a link to a missing
# page and one to a missing heading each fail, named by file and line.  No
# MPI; python3 only.
. "$(dirname "$0")/../lib.sh"
command -v python3 > /dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }

# links ROOT: every link of ROOT's pages that leads nowhere, one a line.
links() {
    python3 - "$1" <<'PY'
import glob, os, re, sys
root = sys.argv[1]
pages = ["README.md"] + sorted(os.path.relpath(p, root) for p in
                               glob.glob(os.path.join(root, "doc", "*.md")))
pages += [p for p in ("results/README.md", "python/README.md")
          if os.path.exists(os.path.join(root, p))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def lines(path):
    """(number, line) outside fenced code blocks."""
    fenced = False
    with open(os.path.join(root, path), encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced:
                yield n, line


def anchors(path):
    out, seen = set(), {}
    for _, line in lines(path):
        m = re.match(r"^#{1,6} +(.*?)\s*$", line)
        if m:
            a = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            k = seen.get(a, 0)
            seen[a] = k + 1
            out.add(a if k == 0 else "%s-%d" % (a, k))
    return out


for page in pages:
    for n, line in lines(page):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, frag = target.partition("#")
            rel = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(os.path.join(root, rel)):
                print("%s:%d: %s: no such file" % (page, n, target))
            elif frag and rel.endswith(".md") and frag not in anchors(rel):
                print("%s:%d: %s: no heading makes that anchor" % (page, n, target))
PY
}

links "$S" > "$BB_TMP/found" 2>&1
bb_expect_true "every link of the README and doc/ leads to a file (and heading)" \
    test ! -s "$BB_TMP/found"
[ -s "$BB_TMP/found" ] && sed 's/^/    /' "$BB_TMP/found" >&2

# Planted, in a copy of the pages.
T="$BB_TMP/tree"
mkdir -p "$T/doc" "$T/results" "$T/python" "$T/schema"
cp "$S/README.md" "$T/"
cp "$S"/doc/*.md "$T/doc/"
cp -R "$S/doc/records" "$S/doc/img" "$S/doc/ci" "$T/doc/"
cp "$S/results/README.md" "$T/results/"
cp "$S/python/README.md" "$T/python/"
cp "$S"/schema/*.json "$T/schema/"
links "$T" > "$BB_TMP/found" 2>&1
bb_expect_true "the copy passes as the tree does" test ! -s "$BB_TMP/found"
printf '\nSee [the options](doc/no-such-page.md).\n' >> "$T/README.md"
n=$(wc -l < "$T/README.md")
printf '\nSee [the layout](layout.md#no-such-heading).\n' >> "$T/doc/index.md"
m=$(wc -l < "$T/doc/index.md")
printf '\n```\n[not a link](nowhere.md)\n```\n' >> "$T/doc/index.md"
links "$T" > "$BB_TMP/found" 2>&1
bb_expect_grep "^README.md:$n: doc/no-such-page.md: no such file" "$BB_TMP/found" \
    "a link to a missing page is named"
bb_expect_grep "^doc/index.md:$m: layout.md#no-such-heading: no heading makes that anchor" \
    "$BB_TMP/found" "a link to a missing heading is named"
bb_expect_true "a code block's text is not followed" sh -c "! grep -q nowhere.md '$BB_TMP/found'"
bb_expect_true "nothing else is found" test "$(wc -l < "$BB_TMP/found")" -eq 2
# The copy holds the schemas, which are not records for bb_finish to check.
rm -rf "$T"
bb_finish
