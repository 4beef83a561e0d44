#!/bin/sh
# The MDI examples (examples/mdi-driver.c, examples/mdi-engine.c, doc/mdi.md)
# as their users launch them, two programs MPMD: an MD step (>COORDS,
# <FORCES, <ENERGY) exact on every element and rank, the engine moving its
# atoms every 2 steps alone (the '>' converted inside the engine, the first
# '<' carrying the map) or followed by MDI_Update_Maps; each library call's
# MPI_Alltoallw and MPI_Allreduce counted by the interposer (tests/fault.c)
# against doc/mdi.md's figures (the examples fail otherwise).  The codes
# found from MPI_APPNUM and from MDI's -mdi option string; the driver
# moving its own atoms (">MAP" again).  Misuse (wrong order, another N, a
# command the engine set no map for, update on one code alone, a driver map
# whose epoch does not increase, >MAP on the driver alone) refused on every rank of both codes: exit 1, the message on each
# rank, nothing written.  The unequal shapes 1:3, 2:2, 3:1 oversubscribe 2
# cores: the full tier, but for 1:2.
. "$(dirname "$0")/../lib.sh"
bb_skip_without_appnum

out="$BB_TMP/out"
D="$B/examples/mdi-driver"
E="$B/examples/mdi-engine"

# exact WHAT ND NE ARGS...: a clean run of ND driver and NE engine ranks,
# ARGS given to both; its summary line names the shape.
exact() {
    what=$1 nd=$2 ne=$3; shift 3
    bb_mpmd_codes "$nd" "$ne" "$D" "$@" : "$E" "$@" > "$out" 2>&1
    rc=$?
    bb_expect_rc 0 $rc "$what"
    [ $rc -eq 0 ] || head -n 40 "$out" >&2
    bb_expect_grep "exact on every element and rank: driver $nd ranks, engine $ne ranks" "$out" \
        "$what: exact"
}

# every tier (mdi): 1 driver, 1 engine; MPI_APPNUM finds the codes
exact "1:1 appnum" 1 1 --steps 6 --remap 2
bb_expect_grep "codes found by appnum, engine moves every 2 steps, update no" "$out" "1:1 found by appnum"
# The counts the examples checked, as they printed them: a stale '>'
# converted inside the engine (2 Alltoallw there, 1 on the driver), the
# first '<' after a move carrying the map (3 more Allreduce on both).
bb_expect_grep "mdi-engine: rank 1: >COORDS: 2 Alltoallw, 1 Allreduce" "$out" "stale >COORDS: 2 exchanges on the engine"
bb_expect_grep "mdi-driver: rank 0: >COORDS: 1 Alltoallw, 1 Allreduce" "$out" "stale >COORDS: 1 on the driver"
bb_expect_grep "mdi-driver: rank 0: <FORCES: 1 Alltoallw, 4 Allreduce" "$out" "<FORCES carrying the map"
exact "1:1 update" 1 1 --steps 6 --remap 2 --update
bb_expect_grep "UPDATE_MAPS: 0 Alltoallw, 4 Allreduce" "$out" "update: 4 agreements, no exchange"
if grep -q ">COORDS: 2 Alltoallw" "$out"; then
    bb_expect_true "after MDI_Update_Maps no '>' takes two exchanges" false
else
    bb_expect_true "after MDI_Update_Maps no '>' takes two exchanges" true
fi
# The driver moves its own atoms every 3 steps: ">MAP" again
# (bb_redist_plan_set_driver_map), 6 agreements on the engine, 7 on the
# driver (its own validation), no exchange; then '<' needs no map.
exact "1:1 driver moves" 1 1 --steps 7 --remap 2 --driver-remap 3
bb_expect_grep "mdi-engine: rank 1: >MAP >COORDS: 0 Alltoallw, 6 Allreduce" "$out" "driver map: 6 agreements on the engine"
bb_expect_grep "mdi-driver: rank 0: >MAP <FORCES: 0 Alltoallw, 7 Allreduce" "$out" "driver map: 7 on the driver"
# MDI's option string names the codes (the engine launched first).
bb_mpmd_codes 1 1 "$E" -mdi "-role ENGINE -name md -method MPI" : \
    "$D" -mdi "-role DRIVER -name md -method MPI" > "$out" 2>&1
bb_expect_rc 0 $? "-mdi roles, engine first"
bb_expect_grep "codes found by role" "$out" "-mdi: found by role"
bb_mpmd_codes 1 1 "$D" -mdi "-role DRIVER -name md -method TCP" : \
    "$E" -mdi "-role ENGINE -name md -method MPI" > "$out" 2>&1
bb_expect_rc 1 $? "-mdi -method TCP refused on both codes"
bb_expect_grep "not \"-role DRIVER|ENGINE -name NAME -method MPI\"" "$out" "-method TCP: said"
# The programs in each other's place by MPI_APPNUM: both stop, exit 2, each
# rank saying which code it was launched as.
bb_mpmd_codes 1 1 "$E" : "$D" > "$out" 2>&1
bb_expect_rc 2 $? "the engine launched as the driver's code: exit 2 on both"
bb_expect_grep "mdi-engine: rank 0: launched as the driver's code" "$out" "the engine says so"
bb_expect_grep "mdi-driver: rank 1: launched as the engine's code" "$out" "the driver says so"
# every tier (mdi): 1 driver, 2 engines
exact "1:2 appnum" 1 2 --steps 4 --remap 2

# hostile CASE WANT [ARGS...]: refused on every rank of a 1:2 launch
# (ARGS given to both programs), exit 1, WANT said once per rank (3), no
# received element written.
hostile() {
    case=$1 want=$2; shift 2
    bb_mpmd_codes 1 2 "$D" --hostile "$case" "$@" : "$E" --hostile "$case" "$@" > "$out" 2>&1
    rc=$?
    set -- "$case" "$want"
    bb_expect_rc 1 $rc "hostile $1: exit 1"
    n=$(grep -c "$2" "$out")
    bb_expect_true "hostile $1: \"$2\" on all 3 ranks ($n)" test "$n" -eq 3
    bb_expect_true "hostile $1: nothing written" test "$(grep -c ' [1-9][0-9]* received elements written' "$out")" -eq 0
}
# every tier (mdi): the misuse of each call at 1:2
hostile order "refused: stage contract, sequence 1"
bb_expect_true "order: the receive buffers checked on every rank" \
    test "$(grep -c ' 0 received elements written' "$out")" -eq 3
hostile n "refused: engine map missing 0, the codes disagree on N 1"
hostile unset ">MAP >VELOCITIES refused: engine map missing 1"
hostile update "refus"
bb_expect_grep "mdi-driver: rank 0: >COORDS refused: stage contract" "$out" "update alone: the driver's '>' refused"
hostile driver-map ">MAP >COORDS refused: stale epoch 1" --driver-remap 2
# ">MAP" on the driver while the engine sends '<': both refused.
hostile map-alone "refus" --driver-remap 2
bb_expect_grep "mdi-engine: rank 1: <FORCES (for >MAP) refused: stage contract" "$out" \
    "map alone: the engine's '<' refused by the contract"
bb_expect_grep "mdi-driver: rank 0: >MAP >COORDS refused: stale epoch 0, the codes disagree on N 0 (collective refusal)" \
    "$out" "map alone: the driver's >MAP refused, its map not at fault"

if bb_tier_full; then
    for shape in "1 3" "2 2" "3 1"; do
        set -- $shape
        exact "$1:$2 appnum" "$1" "$2" --steps 6 --remap 2 --atoms 997
        exact "$1:$2 update" "$1" "$2" --steps 6 --remap 3 --update --atoms 1001
        exact "$1:$2 driver moves" "$1" "$2" --steps 6 --remap 2 --driver-remap 2 --atoms 999
    done
fi
bb_finish
