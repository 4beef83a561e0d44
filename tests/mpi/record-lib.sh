# tests/mpi/record-lib.sh: sourced by the record-*.sh tests after lib.sh.
# Which launcher configure found (its flags differ), Open MPI's consent to
# run as root (CI runs as root), and reading a record.
case "$($MPIEXEC --version 2>&1)" in
*HYDRA*) bb_launcher=hydra ;;
*"Open MPI"* | *OpenRTE*)
    bb_launcher=openmpi
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
    ;;
*) bb_launcher=other ;;
esac
echo "launcher: $MPIEXEC ($bb_launcher)"

# rec FILE PATH: one value of a record (tests/record-get), "" when absent.
rec() {
    "$B/tests/record-get" "$1" "$2" 2>/dev/null
}

# bb_expect_absent STRING FILE WHAT: the fixed STRING is nowhere in FILE.
bb_expect_absent() {
    bb_checks=$((bb_checks + 1))
    if [ -f "$2" ] && ! grep -q -F -e "$1" "$2"; then
        echo "ok: $3"
    else
        echo "FAIL: $3: '$1' found in $2 (or no such file):" >&2
        grep -n -F -e "$1" "$2" 2>/dev/null | cut -c 1-200 | sed 's/^/    /' >&2
        bb_failures=$((bb_failures + 1))
    fi
}

# A short run of fixed length: calls chosen by --budget can take minutes on
# a loaded machine (a call timed fast, then slowed by the load).
# shellcheck disable=SC2034
FEW="-c 8 -r 2 -w 0"
