# tests/lib.sh: sourced by every *.sh test.  Provides the configured paths,
# a launcher that always runs under a timeout (with the flags of the kind of
# launcher it is: tools/bb-launcher.sh), and small assertions.
# A hang is a failure: timeout exits 124 (or 137 after -k), never 0.
set -u
. "${BB_TEST_ENV:?run through make check (BB_TEST_ENV unset)}"
B="$abs_top_builddir"
S="$abs_top_srcdir"
BB_TIMEOUT="${BB_TIMEOUT:-120}"
# Hydra and Open MPI honour MPIEXEC_TIMEOUT as well; keep it just inside our
# own timeout.
MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-$((BB_TIMEOUT - 5))}"
export MPIEXEC_TIMEOUT
# env.sh's BB_LAUNCHER_KIND (configure's answer) is also the layer's
# override: bb_launcher_kind answers with it instead of asking again.
. "$S/tools/bb-launcher.sh"
# Launches the tests do not spell themselves (scripts run with $MPIEXEC) use
# the configured launcher, never the system's default mpiexec (which would
# start another MPI's programs as singletons), and are allowed to run as root
# too (Open MPI refuses root otherwise).
export MPIEXEC
bb_launcher_root_export
bb_failures=0
bb_checks=0
BB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/bbtest.XXXXXX")
trap 'rm -rf "$BB_TMP"' EXIT

# The suite's tiers (doc/testing.md): quick (make check-quick), default
# (make check) and full (make check-full, CI's MPICH build).  A launch of
# more ranks than the machine has cores waits for the scheduler's slice at
# every collective (milliseconds each); the quick and default tiers launch
# those only where a test says "every tier" (one per protocol at least),
# the full tier all of them.  BB_CORES: the cores a launch may fill.
BB_TIER="${BB_TIER:-default}"
BB_CORES="${BB_CORES:-$(nproc 2>/dev/null || echo 1)}"
[ "$BB_CORES" -ge 2 ] 2>/dev/null || BB_CORES=2

# bb_ranks NP...: the rank counts of this list that the tier launches (0 is
# a singleton, 1 rank): all in the full tier, those within BB_CORES in the
# others; the ones left out are said on stderr (the test's log).  The
# declaration of a test's launches:  for np in $(bb_ranks 1 2 3 4); do
bb_ranks() {
    _kept= _left=
    for _np; do
        if [ "$BB_TIER" = full ] || [ "$_np" -le "$BB_CORES" ]; then
            _kept="$_kept $_np"
        else
            _left="$_left $_np"
        fi
    done
    [ -z "$_left" ] || echo "tier $BB_TIER: -n$_left left to make check-full (over $BB_CORES cores)" >&2
    echo "$_kept"
}

# bb_tier_full: true in the full tier; a test's oversubscribed extras
# (beyond its every-tier launch) run under it:  if bb_tier_full; then ...
bb_tier_full() {
    [ "$BB_TIER" = full ] && return 0
    echo "tier $BB_TIER: $(basename "$0")'s launches over $BB_CORES cores beyond its every-tier one are left to make check-full" >&2
    return 1
}

# bb_full_tier_only: a test of oversubscribed launches alone (BB_FULL_TESTS,
# BB_FULL_ONLY=yes before it sources this file) exits 77 outside the full
# tier, saying why.
bb_full_tier_only() {
    [ "$BB_TIER" = full ] && return 0
    echo "SKIP: $(basename "$0") launches more ranks than $BB_CORES cores only: make check-full (tier $BB_TIER)"
    exit 77
}
[ "${BB_FULL_ONLY:-no}" = yes ] && bb_full_tier_only

# bb_mpirun NP CMD...: run CMD on NP ranks under a timeout (more ranks than
# cores allowed, root allowed).  Over the cores the ranks yield when their
# MPI finds nothing to progress (doc/testing.md): Open MPI's own
# mpi_yield_when_idle, and for UCX-based MPIs tests/suite/yield.c preloaded
# (after what LD_PRELOAD holds); BB_YIELD=no launches them as they are.
bb_mpirun() {
    np=$1
    bb_yield_over "$np" bb_mpirun_as_is "$@"
}
# bb_yield_over NP CMD...: CMD, with the ranks yielding when idle (as above)
# when NP ranks are more than the cores.
bb_yield_over() {
    if [ "$1" -gt "$BB_CORES" ] && [ "${BB_YIELD:-yes}" = yes ] && \
        [ -f "$B/tests/.libs/libbbyield.so" ]; then
        shift
        (LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD }$B/tests/.libs/libbbyield.so"
         OMPI_MCA_mpi_yield_when_idle=1
         ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
         export LD_PRELOAD OMPI_MCA_mpi_yield_when_idle ASAN_OPTIONS
         "$@")
    else
        shift
        "$@"
    fi
}
bb_mpirun_as_is() {
    _np=$1; shift
    # shellcheck disable=SC2046
    timeout -k 5 "$BB_TIMEOUT" $MPIEXEC $(bb_launcher_np_flags "$BB_LAUNCHER_KIND" "$_np") \
        $(bb_launcher_root_flags "$BB_LAUNCHER_KIND") "$@"
}

# bb_mpmd_supported: true when the configured launcher takes an MPMD launch
# ("-n 1 A : -n 1 B": Hydra, Open MPI); else says so and is false.
bb_mpmd_supported() {
    case $BB_LAUNCHER_KIND in
    hydra|openmpi) return 0 ;;
    esac
    echo "MPMD launch not checked: a launcher of kind $BB_LAUNCHER_KIND has no ':' form"
    return 1
}

# bb_mpmd ARGS...: an MPMD launch under a timeout, ARGS as the launcher takes
# them after its own flags (-n 1 [-wdir D] A... : -n 1 B...).
bb_mpmd() {
    # shellcheck disable=SC2046
    timeout -k 5 "$BB_TIMEOUT" $MPIEXEC $(bb_launcher_root_flags "$BB_LAUNCHER_KIND") "$@"
}

# bb_mpmd_codes ND NE A... : B...: the MDI launch of two codes under a
# timeout, ND ranks running A and NE ranks running B (A and B as the
# launcher takes a program and its arguments); over the cores as bb_mpirun
# (Open MPI's --oversubscribe, the ranks yielding when idle).  Slurm's form
# is srun --multi-prog (tests/slurm/srun.sh).
bb_mpmd_codes() {
    _nd=$1 _ne=$2; shift 2
    _first=yes
    for _a; do
        if [ $_first = yes ]; then set -- -n "$_nd"; _first=no; fi
        if [ "$_a" = : ]; then set -- "$@" : -n "$_ne"; else set -- "$@" "$_a"; fi
    done
    _tot=$((_nd + _ne))
    [ "$_tot" -gt "$BB_CORES" ] && [ "$BB_LAUNCHER_KIND" = openmpi ] && \
        set -- --oversubscribe "$@"
    bb_yield_over "$_tot" bb_mpmd "$@"
}

# bb_skip_without_appnum: exit 77 (skipped), saying why, when this MPI has no
# MPI_APPNUM (configure's probe) or the launcher no MPMD form.
bb_skip_without_appnum() {
    if [ "$BB_MPI_APPNUM" != yes ]; then
        echo "SKIP: this MPI has no MPI_APPNUM: the codes of an MPMD launch are not found from it"
        exit 77
    fi
    bb_mpmd_supported || exit 77
}

# bb_skip_without_persistent: exit 77 (skipped), saying why, when this MPI
# has no persistent collectives (configure found neither MPI_Allreduce_init
# nor MPIX_Allreduce_init, and the programs refuse --requests persistent).
bb_skip_without_persistent() {
    [ -n "$BB_ALLREDUCE_INIT" ] && return 0
    echo "SKIP: this MPI has no persistent collectives (neither MPI_Allreduce_init nor MPIX_Allreduce_init)"
    exit 77
}

# bb_skip_without_scalapack OUT: exit 77 (skipped) with configure's reason
# when bbench-redist was built without its ScaLAPACK reference; otherwise
# one check that test-redist-scalapack says it is there (its words in OUT).
bb_skip_without_scalapack() {
    bb_serial "$B/tests/mpi/test-redist-scalapack" available > "$1" 2>&1
    _rc=$?
    if [ $_rc -eq 77 ]; then
        cat "$1"
        exit 77
    fi
    bb_expect_rc 0 $_rc "built with ScaLAPACK: $(cat "$1")"
}

# bb_serial CMD...: a singleton launch (no mpiexec) under a timeout.
bb_serial() {
    timeout -k 5 "$BB_TIMEOUT" "$@"
}

# bb_np_test NP OUT CMD...: run a C test (tests/check.h) on NP ranks, or as
# a singleton without a launcher when NP is 0, its output in OUT; two checks:
# it exits 0 and prints its summary "on N ranks: M passed, 0 failed" (its
# output goes to stderr when it fails).  The -n loop of the library tests.
bb_np_test() {
    np=$1 out=$2
    shift 2
    if [ "$np" -eq 0 ]; then bb_serial "$@"; else bb_mpirun "$np" "$@"; fi > "$out" 2>&1
    rc=$?
    what=$(basename "$1")
    [ $# -gt 1 ] && what="$what $2"
    ranks=$np
    [ "$np" -eq 0 ] && ranks=1 && what="singleton $what"
    bb_expect_rc 0 $rc "$what at -n $ranks"
    [ $rc -eq 0 ] || head -n 60 "$out" >&2
    bb_expect_grep "on $ranks ranks: [0-9]* passed, 0 failed" "$out" "$what: -n $ranks summary"
    return $rc
}

# bb_expect_rc WANT GOT WHAT: record one check.
bb_expect_rc() {
    bb_checks=$((bb_checks + 1))
    if [ "$2" -ne "$1" ]; then
        echo "FAIL: $3: exit $2, expected $1" >&2
        bb_failures=$((bb_failures + 1))
    else
        echo "ok: $3 (exit $2)"
    fi
}

# bb_expect_grep PATTERN FILE WHAT
bb_expect_grep() {
    bb_checks=$((bb_checks + 1))
    if grep -q -e "$1" "$2"; then
        echo "ok: $3"
    else
        echo "FAIL: $3: /$1/ not in $2:" >&2
        sed 's/^/    /' "$2" >&2
        bb_failures=$((bb_failures + 1))
    fi
}

# bb_expect_true WHAT CMD...: CMD must exit 0.
bb_expect_true() {
    what=$1; shift
    bb_checks=$((bb_checks + 1))
    if "$@"; then
        echo "ok: $what"
    else
        echo "FAIL: $what" >&2
        bb_failures=$((bb_failures + 1))
    fi
}

# bb_preload_fault CALL RANK CMD...: run CMD (a command or bb_mpirun) with
# the PMPI fault interposer preloaded, failing CALL ("MPI_Wait:2": its
# second call) on RANK.  ASan (when configured) must not insist on coming
# first, and LeakSanitizer stays out: these jobs are aborted on purpose,
# with their poisoned objects retained, so a leak report would only turn the
# abort's exit code 3 into its own.
bb_preload_fault() {
    bb_fault_call=$1 bb_fault_rank=$2
    shift 2
    LD_PRELOAD="$B/tests/.libs/libbbfault.so" BB_FAULT="$bb_fault_call" \
        BB_FAULT_RANK="$bb_fault_rank" \
        ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0:detect_leaks=0" "$@"
}

# bb_check_schemas: every record this test left in its scratch directory
# matches schema/ (one check; skipped, and said, without a validator).
bb_check_schemas() {
    # A test that writes hostile records on purpose sets BB_SCHEMA_CHECK=no.
    if [ "${BB_SCHEMA_CHECK:-yes}" = no ]; then
        echo "schema: not checked (this test writes invalid records on purpose)"
        return 0
    fi
    files=$(find "$BB_TMP" -type f -name '*.json' 2>/dev/null)
    [ -n "$files" ] || return 0
    if [ -z "${BB_SCHEMA_PYTHON:-}" ]; then
        echo "schema: not checked (configure found no python3 with jsonschema)"
        return 0
    fi
    # shellcheck disable=SC2086
    bb_expect_true "records written by this test match schema/" \
        "$BB_SCHEMA_PYTHON" "$S/tests/validate-records.py" "$S/schema" $files
}

# bb_finish: exit status of the test script (1 if any check failed or none ran).
bb_finish() {
    bb_check_schemas
    echo "$bb_checks checks, $bb_failures failed"
    [ "$bb_checks" -gt 0 ] && [ "$bb_failures" -eq 0 ]
}
