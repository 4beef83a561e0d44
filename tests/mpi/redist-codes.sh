#!/bin/sh
# A redistribution link between two codes launched as two programs
# (bb_redist_link_create_codes): the codes found from MPI_APPNUM or named by
# each rank, the drivers ordered first whatever the MPMD order, a '>' and a
# '<' exact across them; a launch that cannot name two codes (one program,
# mixed roles, a third program, no engine) refused on every rank, none
# hanging.  The unequal shapes of issue 56 (1:3, 2:2, 3:1) oversubscribe 2
# cores: the full tier.
. "$(dirname "$0")/../lib.sh"
bb_skip_without_appnum

out="$BB_TMP/out"
T="$B/tests/mpi/test-redist-codes"

# run WHAT ND NE ARGS-A : ARGS-B: one launch, its exit 0 and summary.
run() {
    what=$1; shift
    _np=$(($1 + $2))
    bb_mpmd_codes "$@" > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "$what"
    [ $rc -eq 0 ] || head -n 40 "$out" >&2
    bb_expect_grep "on $_np ranks: [0-9]* passed, 0 failed" "$out" "$what: summary"
}

# every tier (mdi): 1 driver, 1 engine
run "appnum 1:1" 1 1 "$T" launch ok:1:1:appnum : "$T" launch ok:1:1:appnum
run "roles 1:1" 1 1 "$T" driver ok:1:1:role : "$T" engine ok:1:1:role
# The engine launched first: the link still puts the driver first.
run "roles engine first" 1 1 "$T" engine ok:1:1:role : "$T" driver ok:1:1:role
# Refusals, the same on both ranks.
run "mixed roles refused" 1 1 "$T" launch refused:mixed : "$T" engine refused:mixed
run "two drivers refused" 1 1 "$T" driver refused:no_engine : "$T" driver refused:no_engine
run "a mode differing refused" 1 1 "$T" bad-mode arg : "$T" engine arg
# One program: every rank's MPI_APPNUM is 0, no engine.
bb_mpirun 2 "$T" launch refused:no_engine > "$out" 2>&1
bb_expect_rc 0 $? "one program refused"
bb_expect_grep "on 2 ranks: [0-9]* passed, 0 failed" "$out" "one program: summary"

if bb_tier_full; then
    for shape in "1 3" "2 2" "3 1"; do
        set -- $shape
        run "appnum $1:$2" "$1" "$2" "$T" launch "ok:$1:$2:appnum" : "$T" launch "ok:$1:$2:appnum"
        run "roles $1:$2, engine first" "$2" "$1" "$T" engine "ok:$1:$2:role" : \
            "$T" driver "ok:$1:$2:role"
    done
    # A third program: MPI_APPNUM 2 is no code.
    over=
    [ "$BB_LAUNCHER_KIND" = openmpi ] && over=--oversubscribe
    bb_mpmd $over -n 1 "$T" launch refused:bad_appnum : -n 1 "$T" launch refused:bad_appnum : \
        -n 1 "$T" launch refused:bad_appnum > "$out" 2>&1
    bb_expect_rc 0 $? "a third program refused"
    bb_expect_grep "on 3 ranks: [0-9]* passed, 0 failed" "$out" "third program: summary"
fi
bb_finish
