#!/bin/sh
# --output onto what a record must never replace: a device node (all four
# programs), a FIFO, a symbolic link to either; names over NAME_MAX or
# PATH_MAX.  Each is exit 2 on every rank before anything is measured, and
# the thing at the path is left as it was.  A link to a regular file is
# replaced (its target kept).  Then one run with bytes that are not UTF-8
# in the file name and in captured environment variables, beside a stale
# temporary of a killed writer: the record is valid UTF-8 and the
# temporary is gone.  Scratch nodes only (never the real /dev).
. "$(dirname "$0")/../lib.sh"

BB_TIMEOUT=60
T="$BB_TMP/t"
mkdir "$T"
codes="$BB_TMP/codes"
err="$BB_TMP/err"
out="$BB_TMP/out"

# refused WHAT TARGET-PATTERN PROGRAM ARGS...: every rank of a 2-rank run
# exits 2, the message matches, nothing was measured.
refused() {
    rwhat=$1 want=$2
    shift 2
    : >"$codes"
    rm -f "$BB_TMP"/err.*
    bb_mpirun 2 sh -c '"$0" "$@" 2>>"'"$BB_TMP"'/err.$PMI_RANK"; echo "rank $PMI_RANK exit $?" >>"'"$codes"'"' \
        "$@" >"$out" 2>&1 </dev/null
    cat "$BB_TMP"/err.* >"$err" 2>/dev/null
    bb_expect_true "$rwhat: both ranks exited 2" test "$(grep -c ' exit 2$' "$codes")" -eq 2
    bb_expect_grep "$want" "$err" "$rwhat: message"
    bb_checks=$((bb_checks + 1))
    if grep -q 'point 1/' "$err"; then
        echo "FAIL: $rwhat: a point was measured before the refusal" >&2
        bb_failures=$((bb_failures + 1))
    else
        echo "ok: $rwhat: refused before measuring"
    fi
}

sum="$B/bench/bbench-sum --count 8 --samples 3 --reps 1 --warmup 0"
if mknod "$T/null" c 1 3 2>/dev/null; then
    # shellcheck disable=SC2086
    refused "sum onto a device node" 'null: a character device; a record replaces only a regular file' \
        $sum --output "$T/null"
    refused "transfer onto a device node" 'character device' \
        "$B/bench/bbench-transfer" --bytes 8 --batches 0 --samples 3 --reps 1 --output "$T/null"
    refused "overlap onto a device node" 'character device' \
        "$B/bench/bbench-overlap" --bytes 8 --samples 3 --reps 1 --warmup 0 --output "$T/null"
    refused "redist onto a device node" 'character device' \
        "$B/bench/bbench-redist" --elements 10 --samples 3 --reps 1 --output "$T/null"
    bb_expect_true "the device node is still a character device" test -c "$T/null"
    ln -s null "$T/to-null.json"
    # shellcheck disable=SC2086
    refused "onto a link to a device node" 'to-null.json: a symbolic link to a character device' \
        $sum --output "$T/to-null.json"
    bb_expect_true "the link is still a link to the device" test -L "$T/to-null.json" -a -c "$T/to-null.json"
else
    echo "note: mknod not permitted here, device-node checks skipped"
fi
mkfifo "$T/fifo.json"
# shellcheck disable=SC2086
refused "onto a FIFO" 'fifo.json: a FIFO; a record replaces only a regular file' $sum --output "$T/fifo.json"
bb_expect_true "the FIFO is still a FIFO" test -p "$T/fifo.json"
ln -s fifo.json "$T/to-fifo.json"
# shellcheck disable=SC2086
refused "onto a link to a FIFO" 'symbolic link to a FIFO' $sum --output "$T/to-fifo.json"

long=$(printf '%0300d' 0)
# shellcheck disable=SC2086
refused "a name of 305 bytes" 'a name in the path is 305 bytes, the limit is 255' $sum --output "$T/$long.json"
deep=$T
while [ ${#deep} -lt 4200 ]; do deep="$deep/dd"; done
# shellcheck disable=SC2086
refused "a path over PATH_MAX" 'the path is [0-9]* bytes, the limit is 4095' $sum --output "$deep/r.json"

# A link to a regular file: the link is replaced, the target kept.
echo keep >"$T/target.txt"
ln -s target.txt "$T/link.json"
# shellcheck disable=SC2086
bb_mpirun 2 $sum --output "$T/link.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "onto a link to a regular file"
bb_expect_true "the link became the record" test -f "$T/link.json" -a ! -L "$T/link.json"
bb_expect_true "its target was left alone" test "$(cat "$T/target.txt")" = keep

# Not UTF-8: the file name and captured variables; a stale temporary.
stale="$T/.bbench-record.kIlLd1"
echo '{"half": ' >"$stale"
touch -d '2 hours ago' "$stale"
rec="$T/r$(printf '\377').json"
# shellcheck disable=SC2086
MPIR_CVAR_BBTEST_NOT_A_CVAR="x$(printf '\376\377')y" BBTEST_NUM_THREADS="$(printf '\351')" \
    bb_mpirun 2 $sum --output "$rec" >"$out" 2>"$err"
bb_expect_rc 0 $? "a run with non-UTF-8 bytes in its name and environment"
bb_expect_true "the record is valid UTF-8 JSON" python3 -c '
import json, sys
r = json.loads(open(sys.argv[1], encoding="utf-8", errors="strict").read())
assert r["command"][-1].endswith("r\ufffd.json"), r["command"]
env = r["runtime"]["env"]
assert env["MPIR_CVAR_BBTEST_NOT_A_CVAR"] == "x\ufffd\ufffdy", env
assert env["BBTEST_NUM_THREADS"] == "\ufffd", env' "$rec"
bb_expect_true "the stale temporary was removed" test ! -e "$stale"
bb_expect_true "no temporary left" test -z "$(ls -A "$T" | grep '^\.bbench-record\.')"

# Variable names that are not UTF-8 (two that would become one name) are
# left out: the record stays readable.
# shellcheck disable=SC2086
bb_serial env "$(printf 'MPIR_CVAR_BBTEST\377')=1" "$(printf 'MPIR_CVAR_BBTEST\376')=2" \
    $sum --output "$T/names.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "a singleton run with non-UTF-8 variable names"
"$B/bench/bbench-compare" --extract "$T/names.json" >"$out" 2>"$err"
bb_expect_rc 0 $? "its record reads back"

# The table is output too: lost on a full device, the run does not pass.
if [ -w /dev/full ]; then
    # shellcheck disable=SC2086
    bb_serial $sum >/dev/full 2>"$err"
    bb_expect_rc 1 $? "a singleton run whose table went to /dev/full"
    bb_expect_grep 'the table on stdout was not fully written' "$err" "the lost table named"
fi

bb_finish
