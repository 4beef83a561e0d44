#!/bin/sh
# The Slurm tier: the benchmarks started by srun instead of the MPI's own
# launcher, on a running Slurm (scripts/slurm-local.sh starts a one-node
# cluster; CI does).  srun is the slurm kind of the launcher layer; the MPI
# plugin is the library's (pmi2 for MPICH, pmix for Open MPI); -n 2 runs
# both ranks in one job, -n 3 needs --overcommit on two cores.  Skipped
# (77), saying why, when srun is not installed or no controller answers.
. "$(dirname "$0")/../lib.sh"
if ! command -v srun >/dev/null 2>&1; then
    echo "SKIP: srun not installed (Debian: slurm-client slurmd slurmctld munge)"
    exit 77
fi
if ! timeout 20 sinfo -h -o '%a %t' > "$BB_TMP/sinfo" 2>&1 || ! grep -q '^up idle\|^up mix\|^up alloc' "$BB_TMP/sinfo"; then
    echo "SKIP: no Slurm controller with an up node answers (sinfo: $(head -c 300 "$BB_TMP/sinfo"))"
    echo "      start one with: sh scripts/slurm-local.sh start DIR, then export SLURM_CONF=DIR/slurm.conf"
    exit 77
fi
case $BB_MPI_LIBRARY in
mpich) plugin=pmi2 ;;
openmpi) plugin=pmix ;;
*) echo "SKIP: no known srun --mpi plugin for the MPI library '$BB_MPI_LIBRARY'"; exit 77 ;;
esac
# Asked, not the configured launcher's kind (env.sh's BB_LAUNCHER_KIND).
kind=$(unset BB_LAUNCHER_KIND; bb_launcher_kind srun)
bb_expect_true "srun is the slurm kind" test "$kind" = slurm
out="$BB_TMP/out"
# every tier (sum under srun): the Slurm tier runs in CI alone, one small
# launch over the cores with --overcommit
for np in 2 3; do
    # shellcheck disable=SC2046
    timeout -k 5 "$BB_TIMEOUT" srun --mpi=$plugin $(BB_LAUNCHER_CORES=2 bb_launcher_np_flags slurm $np) \
        "$B/bench/bbench-sum" --count 8,1K --samples 3 --output "$BB_TMP/sum-n$np.json" > "$out" 2>&1
    bb_expect_rc 0 $? "srun --mpi=$plugin -n $np bbench-sum ($BB_MPI_LIBRARY)"
    bb_expect_grep "^# bbench-sum [0-9.]*: $np ranks on 1 host" "$out" "-n $np: one job of $np ranks"
    "$B/tests/record-get" "$BB_TMP/sum-n$np.json" points.0.status > "$BB_TMP/st" 2>&1
    bb_expect_grep '^ok$' "$BB_TMP/st" "-n $np: a record, its first point ok"
    "$B/tests/record-get" "$BB_TMP/sum-n$np.json" runtime.launcher.name > "$BB_TMP/ln" 2>&1
    bb_expect_grep '^srun$' "$BB_TMP/ln" "-n $np: the record names srun as the launcher"
done
# srun without the MPI's plugin: refused, and no record is written.
timeout -k 5 "$BB_TIMEOUT" srun --mpi=none -n 2 "$B/bench/bbench-sum" --count 8 --samples 3 \
    --output "$BB_TMP/none.json" > "$out" 2>&1
rc=$?
bb_expect_true "srun --mpi=none -n 2: refused (exit $rc)" test $rc -ne 0
# MPICH runs singletons, which bbench refuses; Open MPI's MPI_Init refuses a
# direct launch without PMIx itself, before bbench can say anything.
if [ "$BB_MPI_LIBRARY" = mpich ]; then
    bb_expect_grep "launch with srun --mpi=$plugin" "$out" "--mpi=none: the message names --mpi=$plugin"
    bb_expect_true "--mpi=none: said once" test "$(grep -c 'alone in its MPI_COMM_WORLD' "$out")" -eq 1
fi
bb_expect_true "--mpi=none: no record" test ! -e "$BB_TMP/none.json"
# The MDI examples as srun starts two programs (doc/mdi.md): --multi-prog,
# rank 0 the driver, the others the engine, each named by MDI's -mdi string
# (srun gives every rank the same MPI_APPNUM); exact on every element and
# rank at 1:1 and 1:2, the engine moving alone every 2 steps.  The
# wrappers keep the string's blanks out of the --multi-prog file's quoting.
printf '#!/bin/sh\nexec "%s" -mdi "-role DRIVER -name md -method MPI" --steps 4 --remap 2\n' \
    "$B/examples/mdi-driver" > "$BB_TMP/mdi-driver.sh"
printf '#!/bin/sh\nexec "%s" -mdi "-role ENGINE -name md -method MPI" --steps 4 --remap 2\n' \
    "$B/examples/mdi-engine" > "$BB_TMP/mdi-engine.sh"
chmod +x "$BB_TMP/mdi-driver.sh" "$BB_TMP/mdi-engine.sh"
for ne in 1 2; do
    np=$((1 + ne))
    printf '0 %s\n1-%d %s\n' "$BB_TMP/mdi-driver.sh" "$ne" "$BB_TMP/mdi-engine.sh" > "$BB_TMP/mdi.conf"
    # shellcheck disable=SC2046
    timeout -k 5 "$BB_TIMEOUT" srun --mpi=$plugin $(BB_LAUNCHER_CORES=2 bb_launcher_np_flags slurm $np) \
        --multi-prog "$BB_TMP/mdi.conf" > "$out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || head -n 40 "$out" >&2
    bb_expect_rc 0 $rc "srun --multi-prog mdi-driver 1 : mdi-engine $ne ($BB_MPI_LIBRARY)"
    bb_expect_grep "exact on every element and rank: driver 1 ranks, engine $ne ranks, codes found by role" \
        "$out" "srun --multi-prog 1:$ne: exact, codes found by role"
done
# doc/running.md's batch job for this MPI, as written there (its build
# directory made this build's), submitted and waited for: exit 0, a record.
python3 - "$S/doc/running.md" "$BB_MPI_LIBRARY" "$B" > "$BB_TMP/job.sh" <<'PY'
import re, sys
text, lib, build = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
for block in re.findall(r"```sh\n(#!/bin/sh\n#SBATCH.*?)```", text, re.S):
    if "--job-name=bbench-%s\n" % lib in block:
        sys.stdout.write(block.replace("build-%s/" % lib, build + "/"))
PY
bb_expect_grep "^#SBATCH --job-name=bbench-$BB_MPI_LIBRARY" "$BB_TMP/job.sh" \
    "doc/running.md has a batch job for $BB_MPI_LIBRARY"
(cd "$BB_TMP" && timeout -k 5 "$BB_TIMEOUT" sbatch --wait --output="$BB_TMP/job.out" \
    "$BB_TMP/job.sh" > "$BB_TMP/sbatch.out" 2>&1)
rc=$?
[ $rc -eq 0 ] || cat "$BB_TMP/sbatch.out" "$BB_TMP/job.out" >&2
bb_expect_rc 0 $rc "doc/running.md's $BB_MPI_LIBRARY batch job"
bb_expect_true "the batch job wrote its record" \
    test -n "$(find "$BB_TMP" -name "sum-$BB_MPI_LIBRARY-*.json" -size +0)"
bb_finish
