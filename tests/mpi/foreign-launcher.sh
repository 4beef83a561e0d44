#!/bin/sh
# A launcher of the other MPI starts each process as a singleton of its own
# (Debian's `mpiexec` is Open MPI's once its package is in, whatever built
# bbench): every program refuses the run (exit 2) instead of running the
# job once per process, says so once, naming the right launcher, and writes
# no record.  Without the other MPI's launcher on this machine: skipped.
. "$(dirname "$0")/../lib.sh"
case $BB_MPI_LIBRARY in
mpich) other=mpiexec.openmpi fix=mpiexec.mpich foreign="OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1" ;;
openmpi) other=mpiexec.mpich fix=mpiexec.openmpi foreign="PMI_SIZE=2 PMI_RANK=1" ;;
*) echo "SKIP: no other MPI's launcher known for '$BB_MPI_LIBRARY'"; exit 77 ;;
esac
if ! command -v "$other" >/dev/null 2>&1; then
    echo "SKIP: $other not installed: no foreign launcher to start singletons with"
    exit 77
fi
kind=$(unset BB_LAUNCHER_KIND; bb_launcher_kind "$other")
for prog in sum transfer overlap redist; do
    out="$BB_TMP/$prog.out"
    # shellcheck disable=SC2046
    timeout -k 5 "$BB_TIMEOUT" "$other" $(bb_launcher_np_flags "$kind" 2) \
        $(bb_launcher_root_flags "$kind") "$B/bench/bbench-$prog" --samples 3 \
        --output "$BB_TMP/$prog.json" > "$out" 2>&1
    rc=$?
    bb_expect_true "$other -n 2 bbench-$prog: refused (exit $rc)" test $rc -ne 0 -a $rc -ne 124
    bb_expect_grep "bbench-$prog: .* but each is alone in its MPI_COMM_WORLD.*launch with .*$fix" \
        "$out" "bbench-$prog: the message names $fix"
    bb_expect_true "bbench-$prog: said once" \
        test "$(grep -c 'alone in its MPI_COMM_WORLD' "$out")" -eq 1
    bb_expect_true "bbench-$prog: no record" test ! -e "$BB_TMP/$prog.json"
done
# Each singleton exits 2 itself (a launcher may report its own code): the
# other launcher's variables on a process started alone.
# shellcheck disable=SC2086
env $foreign timeout -k 5 "$BB_TIMEOUT" "$B/bench/bbench-sum" --samples 3 > "$BB_TMP/one.out" 2>&1
bb_expect_rc 2 $? "a singleton numbered 1 of 2 by its launcher"
bb_expect_true "the process numbered 1 says nothing" test ! -s "$BB_TMP/one.out"
bb_finish
