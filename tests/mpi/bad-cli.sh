#!/bin/sh
# Table-driven invalid command lines across all executables (bad-cli.table):
# each exits 2 on every rank, with a message, within its timeout, and writes
# no record.  Each rank's exit code is captured through a small wrapper.
. "$(dirname "$0")/../lib.sh"

table="$S/tests/mpi/bad-cli.table"
BB_TIMEOUT=60
rows=0
while IFS='|' read -r prog args want; do
    case "$prog" in ''|\#*) continue ;; esac
    prog=$(echo "$prog" | tr -d ' ')
    want=$(echo "$want" | sed 's/^ *//; s/ *$//')
    args=$(echo "$args" | sed 's/^ *//; s/ *$//')
    if [ ! -x "$B/bench/$prog" ]; then
        bb_expect_true "$prog: a program the table names exists" false
        continue
    fi
    rows=$((rows + 1))
    codes="$BB_TMP/codes"
    : > "$codes"
    # shellcheck disable=SC2086
    if [ "$prog" = bbench-compare ]; then
        (cd "$BB_TMP" && bb_serial "$B/bench/$prog" $args > out 2> err < /dev/null)
        echo "rank 0 exit $?" > "$codes"
        nranks=1
    else
        (cd "$BB_TMP" && bb_mpirun 2 sh -c '"$0" "$@" 2>> err.$PMI_RANK; echo "rank $PMI_RANK exit $?" >> codes' \
            "$B/bench/$prog" $args > out 2>&1 < /dev/null)
        cat "$BB_TMP"/err.* > "$BB_TMP/err" 2>/dev/null
        rm -f "$BB_TMP"/err.*
        nranks=2
    fi
    what="$prog $args"
    bb_expect_true "$what: $nranks ranks exited 2" \
        test "$(grep -c ' exit 2$' "$codes")" -eq "$nranks"
    if [ -n "$want" ]; then
        bb_checks=$((bb_checks + 1))
        if grep -Eq -- "$want" "$BB_TMP/err"; then
            echo "ok: $what: message"
        else
            echo "FAIL: $what: stderr does not match /$want/:" >&2
            sed 's/^/    /' "$BB_TMP/err" >&2
            bb_failures=$((bb_failures + 1))
        fi
    fi
    bb_expect_true "$what: no record left" test -z "$(ls "$BB_TMP" | grep '\.json$')"
done < "$table"
echo "$rows command lines"
bb_expect_true "at least 40 command lines ran" test "$rows" -ge 40
bb_finish
