#!/bin/sh
# Issue 23, reproductions 2 and 6: a record holds no secret given to the
# launcher, and a long launcher command line keeps the program and its
# options.  Values passed with Hydra's -genv/-env or Open MPI's -x, and
# launcher variables with secret-looking names, are nowhere in the record
# (the whole file is searched), which says how many it redacted.  The
# flag cases of the other launcher skip with their reason.
. "$(dirname "$0")/../lib.sh"
. "$S/tests/mpi/record-lib.sh"
SUM="$B/bench/bbench-sum"
r="$BB_TMP/r.json"
cd "$BB_TMP" || exit 1

# secret_run WHAT SECRET... -- LAUNCHER-ARGS...: run bbench-sum $FEW with the
# launcher arguments, then no SECRET may be in the record.
secret_run() {
    what=$1
    shift
    secrets=
    while [ "$1" != -- ]; do
        secrets="$secrets $1"
        shift
    done
    shift
    rm -f "$r"
    timeout -k 5 "$BB_TIMEOUT" $MPIEXEC "$@" "$SUM" $FEW -q -o "$r" >"$BB_TMP/out" 2>&1
    bb_expect_rc 0 $? "$what: run"
    for s in $secrets; do
        bb_expect_absent "$s" "$r" "$what: '$s' is not in the record"
    done
}

# The record says what it redacted, and the command still ends with the
# program's options (its output path).
says_redacted() {
    bb_expect_true "$1: command_capture.redacted is $2" \
        test "$(rec "$r" runtime.launcher.command_capture.redacted)" = "$2"
    n=$(rec "$r" 'runtime.launcher.command.#')
    bb_expect_true "$1: the command ends with -o $r" \
        test "$(rec "$r" "runtime.launcher.command.$((${n:-1} - 1))")" = "$r"
    bb_expect_grep "<redacted>" "$r" "$1: the marker is in the record"
}

big=$(awk 'BEGIN { for (i = 0; i < 100000; i++) printf "q"; print "" }')
case $bb_launcher in
hydra)
    # Reproduction 2, as filed.
    secret_run "hydra -genv/-env" xyz s3 -- -genv AWS_SECRET_ACCESS_KEY xyz -n 2 \
        -env MY_API_TOKEN s3
    says_redacted "hydra -genv/-env" 2
    # Reproduction 6: a 100 kB value no longer pushes the program out.
    secret_run "hydra 100 kB -genv" qqqqqqqq -- -genv BIG "$big" -n 2
    says_redacted "hydra 100 kB -genv" 1
    ;;
*) echo "skipped: the -genv/-env cases need Hydra (launcher: $bb_launcher)" ;;
esac
case $bb_launcher in
openmpi)
    secret_run "open mpi -x" xyz s3 -- -x AWS_SECRET_ACCESS_KEY=xyz -x MY_API_TOKEN=s3 \
        -n 2
    says_redacted "open mpi -x" 2
    secret_run "open mpi 100 kB -x" qqqqqqqq -- -x "BIG=$big" -n 2
    says_redacted "open mpi 100 kB -x" 1
    # Open MPI's per-job key reaches every rank under a name that hides it.
    bb_expect_true "open mpi: OMPI_MCA_orte_precondition_transports is redacted" \
        test "$(rec "$r" runtime.launcher.env.OMPI_MCA_orte_precondition_transports)" = "<redacted>"
    ;;
*) echo "skipped: the -x cases need Open MPI (launcher: $bb_launcher)" ;;
esac

# Any launcher: a launcher variable with a secret-looking name that the
# ranks inherit is kept by name, its value redacted.
rm -f "$r"
MPI_LOCAL_TEST_TOKEN=zq9s3cret bb_mpirun 2 "$SUM" $FEW -q -o "$r" >"$BB_TMP/out" 2>&1
bb_expect_rc 0 $? "inherited MPI_LOCAL_TEST_TOKEN: run"
bb_expect_absent zq9s3cret "$r" "its value is not in the record"
bb_expect_true "its name is, redacted" \
    test "$(rec "$r" runtime.launcher.env.MPI_LOCAL_TEST_TOKEN)" = "<redacted>"
# Open MPI's job key counts as one more.
want=1
[ -z "$(rec "$r" runtime.launcher.env.OMPI_MCA_orte_precondition_transports)" ] || want=2
bb_expect_true "env_capture.redacted is $want" \
    test "$(rec "$r" runtime.launcher.env_capture.redacted)" = $want
# The launcher's own families: what it told rank 0 about the job size.
size=$(rec "$r" runtime.launcher.env.PMI_SIZE)
[ -n "$size" ] || size=$(rec "$r" runtime.launcher.env.OMPI_COMM_WORLD_SIZE)
[ -n "$size" ] || size=$(rec "$r" runtime.launcher.env.SLURM_NTASKS)
bb_expect_true "the launcher's variables give the job size (PMI_SIZE, OMPI_COMM_WORLD_SIZE or SLURM_NTASKS)" \
    test "$size" = 2
bb_finish
