#!/bin/sh
# bbench-sweep and bbench-plot against hostile use: a stale record must not
# pass for a new one (the launch writes nothing, or fails, and the old
# record is put back); numbers too large for test(1) are usage errors with
# a message, not shell noise; a quote in --out reaches gnuplot as text;
# --plot fields are checked; a failure of bbench-compare other than bad
# input is not reported as unreadable records; a rank count given twice is
# refused; the hostfile checked is the one passed; bbench-perf refuses bad
# options before launching anything; bbench-baseline never globs a row's
# arguments.
. "$(dirname "$0")/../lib.sh"

SW="$S/tools/bbench-sweep"
PL="$S/tools/bbench-plot"
SUM="$B/bench/bbench-sum"
D="$S/tests/tools/data"
out="$BB_TMP/out"
err="$BB_TMP/err"
export MPIEXEC
export BBENCH_COMPARE="$B/bench/bbench-compare"

# An old record, and a launch that writes none (--help exits 0).
mkdir "$BB_TMP/o"
cp "$D/base.json" "$BB_TMP/o/sum-n1.json"
before=$(cksum <"$BB_TMP/o/sum-n1.json")
sh "$SW" --force --ranks 1 --out "$BB_TMP/o" --timeout 60 -- "$SUM" --help >"$out" 2>"$err"
bb_expect_rc 1 $? "a launch that wrote no record fails the sweep"
bb_expect_grep 'exited 0 but wrote no record .*sum-n1.json' "$err" "the missing record named"
bb_expect_grep 'the previous .*sum-n1.json was put back' "$err" "the old record put back, and said so"
bb_expect_true "the old record is back unchanged" test "$(cksum <"$BB_TMP/o/sum-n1.json")" = "$before"
bb_expect_true "no file left beside it" test "$(ls -A "$BB_TMP/o")" = sum-n1.json
# A failed launch: the old record comes back too.
sh "$SW" --force --ranks 1 --out "$BB_TMP/o" --timeout 60 -- "$SUM" --count 8 --samples 1 >"$out" 2>"$err"
bb_expect_rc 1 $? "a failed launch fails the sweep"
bb_expect_true "the old record is back after a failed launch" \
    test "$(cksum <"$BB_TMP/o/sum-n1.json")" = "$before"
# A real launch replaces it.
sh "$SW" --force --ranks 1 --out "$BB_TMP/o" --timeout 60 -- "$SUM" --count 8 --samples 3 --reps 1 >"$out" 2>"$err"
bb_expect_rc 0 $? "a launch that writes its record"
bb_expect_true "the record is new" test "$(cksum <"$BB_TMP/o/sum-n1.json")" != "$before"
bb_expect_true "only the record is there" test "$(ls -A "$BB_TMP/o")" = sum-n1.json

# A FIFO where a record goes is never moved aside or replaced, even with
# --force; nothing is launched.
mkdir "$BB_TMP/of"
mkfifo "$BB_TMP/of/sum-n1.json"
sh "$SW" --force --ranks 1 --out "$BB_TMP/of" --timeout 60 -- "$SUM" --count 8 >"$out" 2>"$err"
bb_expect_rc 2 $? "a FIFO in place of a record"
bb_expect_grep 'sum-n1.json exists and is not a regular file' "$err" "the FIFO named"
bb_expect_true "the FIFO is still there, alone" test -p "$BB_TMP/of/sum-n1.json" -a "$(ls -A "$BB_TMP/of")" = sum-n1.json

# Numbers as text: no test(1) noise, a message and exit 2.
sweep_usage() {
    rwhat=$1 want=$2
    shift 2
    sh "$SW" "$@" >"$out" 2>"$err"
    bb_expect_rc 2 $? "$rwhat"
    bb_expect_grep "$want" "$err" "$rwhat: message"
    bb_expect_true "$rwhat: no shell noise" test "$(grep -c -e 'expression' -e 'out of range' -e 'Illegal' "$err")" -eq 0
}
sweep_usage "--timeout 20 digits" "--timeout: '99999999999999999999' seconds is more than the limit" \
    --timeout 99999999999999999999 --ranks 1 --out "$BB_TMP/u" -- "$SUM"
sweep_usage "--timeout 0" "--timeout: '0' must be a positive" --timeout 0 --ranks 1 --out "$BB_TMP/u" -- "$SUM"
sweep_usage "--ranks 20 digits" "rank count '99999999999999999999' is more than the limit" \
    --ranks 1,99999999999999999999 --out "$BB_TMP/u" -- "$SUM"
sweep_usage "--ranks 0" "rank count '0' must be at least 1" --ranks 0 --out "$BB_TMP/u" -- "$SUM"
sweep_usage "--name with a leading dot" "--name: '.hidden' is not a file name stem" \
    --name .hidden --ranks 1 --out "$BB_TMP/u" -- "$SUM"
bb_expect_true "nothing was created for usage errors" test ! -e "$BB_TMP/u"

# A rank count given twice would overwrite its own first record.
sweep_usage "--ranks 2,2" "rank count '2' is given twice" --ranks 2,1,2 --out "$BB_TMP/u" -- "$SUM"
bb_expect_true "nothing was created for usage errors" test ! -e "$BB_TMP/u"

# The hostfile checked is the hostfile passed: a name with glob characters
# (or blanks) reaches the launcher as one word, not a file it matches.  A
# launcher that only says what it was given (as Hydra, for the flags).
mkdir "$BB_TMP/hf"
printf 'localhost:1\n' >"$BB_TMP/hf/h[1]"
printf 'elsewhere:1\n' >"$BB_TMP/hf/h1"
cat >"$BB_TMP/say-args" <<'SH'
#!/bin/sh
for a; do printf '[%s]\n' "$a"; done >"$SAY_ARGS"
exit 3
SH
chmod +x "$BB_TMP/say-args"
SAY_ARGS="$BB_TMP/args" BB_LAUNCHER_KIND=hydra MPIEXEC="$BB_TMP/say-args" \
    sh "$SW" --ranks 1 --hostfile "$BB_TMP/hf/h[1]" --out "$BB_TMP/hfo" -- "$SUM" >"$out" 2>"$err"
bb_expect_rc 1 $? "the launcher that fails is a failed launch"
bb_expect_grep "^\[-f\]$" "$BB_TMP/args" "Hydra's hostfile option"
bb_expect_true "the hostfile passed is 'h[1]', the one checked" \
    grep -q -x -F "[$BB_TMP/hf/h[1]]" "$BB_TMP/args"
printf 'localhost slots=1\n' >"$BB_TMP/hf/h 2"
SAY_ARGS="$BB_TMP/args" BB_LAUNCHER_KIND=openmpi MPIEXEC="$BB_TMP/say-args" \
    sh "$SW" --ranks 1 --hostfile "$BB_TMP/hf/h 2" --out "$BB_TMP/hfo" -- "$SUM" >"$out" 2>"$err"
bb_expect_grep "^\[--hostfile\]$" "$BB_TMP/args" "Open MPI's hostfile option"
bb_expect_true "a hostfile with a blank passed whole" grep -q -x -F "[$BB_TMP/hf/h 2]" "$BB_TMP/args"

# bbench-perf refuses what the benchmarks would refuse before launching
# anything (exit 2, not a failed measurement), in true words.
PF="$S/tools/bbench-perf"
perf_usage() {
    pwhat=$1 want=$2
    shift 2
    rm -f "$BB_TMP/args"
    SAY_ARGS="$BB_TMP/args" MPIEXEC="$BB_TMP/say-args" sh "$PF" --bindir "$B/bench" \
        --out "$BB_TMP/pf-out" "$@" >"$out" 2>"$err"
    bb_expect_rc 2 $? "bbench-perf $pwhat"
    bb_expect_grep "$want" "$err" "bbench-perf $pwhat: message"
    bb_expect_true "bbench-perf $pwhat: nothing launched" test ! -e "$BB_TMP/args"
    bb_expect_true "bbench-perf $pwhat: no shell noise" \
        test "$(grep -c -e 'expression' -e 'Illegal' "$err")" -eq 0
}
perf_usage "--samples 0" "--samples: 0 is out of range \[3, 100000\]" --samples 0
perf_usage "--samples 2" "--samples: 2 is out of range \[3, 100000\]" --samples 2
perf_usage "--samples 20 digits" "--samples: 99999999999999999999 is out of range" \
    --samples 99999999999999999999
perf_usage "--reps 0" "--reps: 0 is out of range" --reps 0
perf_usage "--np 0" "--np: 0 is out of range" --np 0
perf_usage "--launches 20 digits" "--launches: 99999999999999999999 is out of range" \
    --launches 99999999999999999999
perf_usage "--sum-count 1:8:x1" "--sum-count: '1:8:x1' is not a list of sizes" --sum-count 1:8:x1
perf_usage "--transfer-bytes 8,,64" "--transfer-bytes: '8,,64' is not a list of sizes" \
    --transfer-bytes 8,,64
BBENCH_PERF_TIMEOUT=soon perf_usage "BBENCH_PERF_TIMEOUT=soon" "BBENCH_PERF_TIMEOUT: 'soon'"
: >"$BB_TMP/pf-file"
perf_usage "--out a file" "--out: '.*pf-file' exists and is not a directory" --out "$BB_TMP/pf-file"

# The drawing cases need gnuplot (bbench-plot exits 77 without it).
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    # A quote in --out reaches gnuplot as part of a string.
    q="$BB_TMP/q'uote"
    sh "$PL" --out "$q" "$D/base.json" >"$out" 2>"$err"
    bb_expect_rc 0 $? "--out with a quote"
    bb_expect_true "the plot is in the quoted directory" test -s "$q/sum.png"
    # A FIFO where a PNG goes: not written into (gnuplot would wait), not
    # replaced; the other plots are still made.
    mkdir "$BB_TMP/pf"
    mkfifo "$BB_TMP/pf/sum.png"
    cp "$D/base.json" "$BB_TMP/transfer.json"
    sed -i 's/"benchmark": "sum"/"benchmark": "transfer"/; s/"count":/"bytes":/g' "$BB_TMP/transfer.json"
    BB_TIMEOUT=60 bb_serial sh "$PL" --out "$BB_TMP/pf" "$D/base.json" "$BB_TMP/transfer.json" >"$out" 2>"$err"
    bb_expect_rc 1 $? "a FIFO in place of sum.png fails that plot"
    bb_expect_grep 'sum.png exists and is not a regular file' "$err" "the FIFO named"
    bb_expect_true "the FIFO is still a FIFO" test -p "$BB_TMP/pf/sum.png"
    bb_expect_true "transfer.png was still drawn" test -s "$BB_TMP/pf/transfer.png"
    # A quote in TMPDIR (the data files pasted into the script).
    mkdir "$BB_TMP/t'mp"
    TMPDIR="$BB_TMP/t'mp" sh "$PL" --out "$BB_TMP/pt" "$D/base.json" >"$out" 2>"$err"
    bb_expect_rc 0 $? "TMPDIR with a quote"
    bb_expect_true "the plot drawn from the quoted TMPDIR" test -s "$BB_TMP/pt/sum.png"
fi
# --plot fields.
for spec in 'a/b:count:elapsed' 'sum:count' 'sum:count:elapsed::cubic:' 'sum:c\n:elapsed'; do
    sh "$PL" --out "$BB_TMP/pp" --plot "$spec" "$D/base.json" >"$out" 2>"$err"
    bb_expect_rc 2 $? "--plot '$spec' refused"
done
# A --plot BENCH is a name, not a pattern: s.m leaves sum's own plot.
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    sh "$PL" --out "$BB_TMP/pdot" --plot 's.m:count:elapsed' "$D/base.json" >"$out" 2>"$err"
    bb_expect_rc 0 $? "--plot s.m:... beside a sum record"
    bb_expect_true "... sum's plot still drawn" test -s "$BB_TMP/pdot/sum.png"
fi
# bbench-compare failing other than on its input (3: lost output) is not
# "unreadable records".
cat >"$BB_TMP/compare3" <<'SH'
#!/bin/sh
exit 3
SH
chmod +x "$BB_TMP/compare3"
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    sh "$PL" --compare "$BB_TMP/compare3" --out "$BB_TMP/p3" "$D/base.json" >"$out" 2>"$err"
    bb_expect_rc 1 $? "bbench-compare exit 3 fails the plot"
    bb_expect_grep 'compare3 --extract failed on .*base.json (exit 3)' "$err" \
        "the failed helper named"
fi

# bbench-baseline: a row's arguments are split, never globbed (a '*' stays
# a '*', not the files of the current directory).  A launcher that only
# says what it was given.
mkdir -p "$BB_TMP/bl/bin" "$BB_TMP/bl/cwd"
cp "$BB_TMP/say-args" "$BB_TMP/bl/bin/bbench-sum"
: >"$BB_TMP/bl/cwd/zz-file"
printf 'sum | a glob | 1 | --count * --samples 3 | | count | elapsed | | log |\n' >"$BB_TMP/bl/list"
rm -f "$BB_TMP/args"
(cd "$BB_TMP/bl/cwd" && SAY_ARGS="$BB_TMP/args" BB_LAUNCHER_KIND=hydra MPIEXEC="$BB_TMP/say-args" \
    BBENCH_LIST="$BB_TMP/bl/list" sh "$S/tools/bbench-baseline" --bindir "$BB_TMP/bl/bin" \
    --out "$BB_TMP/bl/out") >"$out" 2>"$err"
bb_expect_true "bbench-baseline: the launch was tried" test -s "$BB_TMP/args"
bb_expect_true "bbench-baseline: '*' passed as '*'" grep -q -x -F '[*]' "$BB_TMP/args"
bb_expect_true "bbench-baseline: ... not globbed" test "$(grep -c zz-file "$BB_TMP/args")" -eq 0

bb_finish
