# tests/multihost/mh-lib.sh: sourced by the multi-host tests after
# tests/lib.sh.  Skips (exit 77) unless root with iproute2, util-linux and
# working network namespaces; otherwise brings up a 2-host namespace cluster
# (one at a time on this machine: a lock) and takes it down on exit.
# The launcher is configure's MPIEXEC (Hydra or Open MPI), with its own
# flags (tools/bb-launcher.sh); every test checks the world size its
# records give, so that ranks started as singletons cannot pass.
NC="$S/tools/bbench-netns-cluster"
get="$B/tests/record-get"
BBNC_MPIEXEC=$MPIEXEC
export BBNC_MPIEXEC
. "$S/tools/bb-launcher.sh"
# Launches this test spells itself (bb_mpirun) under root with Open MPI.
bb_launcher_root_export

mh_skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || mh_skip "multi-host tests need root (network namespaces)"
for t in ip nsenter unshare setpriv flock; do
    command -v $t >/dev/null 2>&1 || mh_skip "multi-host tests need $t (iproute2, util-linux)"
done
# Can this machine make a namespace at all (a container may refuse)?
ip netns add bbnc-probe$$ >/dev/null 2>&1 || mh_skip "ip netns add fails here"
ip netns delete bbnc-probe$$ >/dev/null 2>&1

# One cluster at a time on the machine, whatever runs the tests.
exec 9>/run/bbnc-tests.lock
flock -w 600 9 || mh_skip "another multi-host test holds the lock for 10 minutes"
trap 'sh "$NC" down >/dev/null 2>&1; rm -rf "$BB_TMP"' EXIT
sh "$NC" down >/dev/null 2>&1
sh "$NC" up 2 >"$BB_TMP/up.log" 2>&1 || { cat "$BB_TMP/up.log"; mh_skip "cannot bring up the namespace cluster"; }

# mh_run HOSTS NP CMD...: CMD on NP ranks over HOSTS fake hosts, under a
# timeout (the cluster script adds MPIEXEC_TIMEOUT inside it).
mh_run() {
    timeout -k 5 "$BB_TIMEOUT" sh "$NC" run "$@"
}

# mh_topology REC NP WHAT: the record says 2 hosts on one machine, which
# host each rank ran on (ranks in blocks), each host's cores, and
# oversubscription judged over the machine (all fake hosts share its cores).
mh_topology() {
    mrec=$1 np=$2 mw=$3
    ppn=$(( (np + 1) / 2 ))
    bb_expect_true "$mw: topology.hosts = 2" test "$("$get" "$mrec" topology.hosts)" = 2
    bb_expect_true "$mw: topology.ranks = $np" test "$("$get" "$mrec" topology.ranks)" = "$np"
    bb_expect_true "$mw: one machine under both hosts" \
        test "$("$get" "$mrec" topology.machines)" = 1
    r=0
    while [ "$r" -lt "$np" ]; do
        want=bbnc-h$(( r / ppn + 1 ))
        bb_expect_true "$mw: rank $r ran on $want" \
            test "$("$get" "$mrec" "topology.per_rank.$r.host")" = "$want"
        r=$((r + 1))
    done
    cores=$("$get" "$mrec" topology.per_host.0.cores)
    bb_expect_true "$mw: per-host cores recorded" test "$cores" -ge 1
    bb_expect_true "$mw: both hosts see the machine's cores" \
        test "$("$get" "$mrec" topology.per_host.1.cores)" = "$cores"
    bb_expect_true "$mw: $ppn ranks on each host" \
        test "$("$get" "$mrec" topology.per_host.1.ranks)" = "$ppn"
    if [ "$np" -gt "$cores" ]; then over=true; else over=false; fi
    bb_expect_true "$mw: oversubscribed = $over ($np ranks, $cores cores on the machine)" \
        test "$("$get" "$mrec" topology.oversubscribed)" = "$over"
}
