# tests/tools/compare-lib.sh: sourced by the bbench-compare tests that build
# hostile or edited records from tests/tools/data (no MPI): tests/lib.sh,
# the tool, its data, a runner under a timeout and a record editor.
. "$(dirname "$0")/../lib.sh"
# Their records are edited on purpose: no schema check of them.
BB_SCHEMA_CHECK=no

C="$B/bench/bbench-compare"
D="$S/tests/tools/data"
out="$BB_TMP/out"
err="$BB_TMP/err"
BB_TIMEOUT=20

# run WANT WHAT ARGS...: the tool under a timeout (a FIFO must not hang
# it), stdin closed; stdout in $out, stderr in $err.
run() {
    want=$1; what=$2; shift 2
    bb_serial "$C" "$@" >"$out" 2>"$err" </dev/null
    bb_expect_rc "$want" $? "$what"
}

# edit SRC DEST PYTHON: DEST is the record SRC changed by the python
# statements: r is the record (it may be replaced by the text to write),
# p its points, q the quantities of points[1].
edit() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["points"]
q = p[1]["quantities"]
exec(sys.argv[3])
if not isinstance(r, str):
    r = json.dumps(r, indent=1)
open(sys.argv[2], "w").write(r)
PY
}
