#!/bin/sh
# fresh-root.sh: the README's commands on Debian 12 machines that have never
# seen bbench, each a minimal root made by mmdebstrap from Debian's archive
# and entered with chroot in mount and PID namespaces of its own:
#
#   newcomer  as root (a): `quickstart.sh run`; configure's messages for
#             the wrapper and the launcher Debian's alternatives now name
#             (Open MPI's, without libopenmpi-dev); then `quickstart.sh
#             quick` over the same tree, as a second visit would (c).
#   openmpi   Open MPI is the default MPI with its development package (b),
#             as a user with sudo (d): `run`, then `quick`.
#
# In both, the machine's default MPI must be what it was before (bbench names
# MPICH's wrapper and launcher; it never sets the alternatives).
#
#   sh scripts/fresh-root.sh [OUTDIR]     (root; default OUTDIR build/fresh-root)
#
# OUTDIR gets one log per root and summary.txt, whose line is
# "fresh root: N passed, N failed".  Needs root, mmdebstrap, unshare and the
# Debian archive; exits 77 when it cannot run at all, 1 when a check failed.
# BB_FRESH_TARBALL names a bare root tarball (mmdebstrap --variant=minbase
# bookworm) to start from instead of making one.  Everything it mounts lives
# in a namespace that dies with the run; its roots are removed on any exit.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/fresh-root}
mkdir -p "$out"
out=$(cd "$out" && pwd)
sources=/etc/apt/sources.list.d/debian.sources

skip() {
    echo "fresh root: skipped: $*"
    echo "fresh root: skipped: $*" > "$out/summary.txt"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (chroot, mounts)"
for t in mmdebstrap unshare chroot git; do
    command -v $t >/dev/null 2>&1 || skip "$t not found (apt-get install mmdebstrap)"
done
[ -f "$sources" ] || skip "no $sources to make the roots from"

# BB_FRESH_APT_CACHE: the download cache the roots share with the host
# (default the host's own; empty: each root downloads its packages).
apt_cache=${BB_FRESH_APT_CACHE-/var/cache/apt/archives}

work=$(mktemp -d /var/tmp/bbench-fresh.XXXXXX)
job=
cleanup() {
    # unshare ignores SIGTERM while it waits; killed, it takes the
    # namespace's first process with it (--kill-child), that one every
    # other, and the mounts go with the namespace: only then is the root
    # plain files that can be removed.
    if [ -n "$job" ]; then
        kill -KILL "$job" 2>/dev/null || true
        wait "$job" 2>/dev/null || true
    fi
    rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

passed=0
failed=0
check() {
    if [ "$1" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok: $2"
    else
        failed=$((failed + 1))
        echo "FAIL: $2"
    fi
}

# in_root ROOT USER CMD: run the sh command CMD in ROOT as USER (root or a
# user name), with /proc, /dev, /dev/shm and /sys of its own and the host's
# package cache ($apt_cache) as its /var/cache/apt/archives; in the
# background so that a signal reaches the trap at once.
in_root() {
    unshare --mount --pid --fork --kill-child --propagation private \
        sh -c 'r=$1 u=$2 c=$3
            mount -t proc proc "$r/proc" &&
            mount --rbind /dev "$r/dev" &&
            mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm" &&
            mount -t sysfs sysfs "$r/sys" || exit 125
            # One package download cache with the host: the packages still
            # install in the root, but none is fetched twice.
            if [ -n "$4" ] && [ -d "$4" ] && [ -d "$r/var/cache/apt/archives" ]; then
                mount --bind "$4" "$r/var/cache/apt/archives" || exit 125
            fi
            env="PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8"
            if [ "$u" = root ]; then
                exec chroot "$r" /usr/bin/env -i $env HOME=/root sh -c "cd /root && $c"
            fi
            exec chroot "$r" /usr/bin/env -i $env HOME="/home/$u" \
                runuser -u "$u" -- sh -c "cd && $c"' \
        sh "$1" "$2" "$3" "$apt_cache" &
    job=$!
    rc=0
    wait "$job" || rc=$?
    job=
    return $rc
}

# The source as a checkout has it (tracked files, working-tree contents).
(cd "$src" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf "$work/src.tar")

tarball=${BB_FRESH_TARBALL:-}
if [ -z "$tarball" ]; then
    echo "=== a bare Debian 12 root (mmdebstrap --variant=minbase bookworm)"
    tarball=$work/bookworm-minbase.tar
    t0=$(date +%s)
    mmdebstrap --quiet --variant=minbase bookworm "$tarball" "$sources"
    echo "made in $(( $(date +%s) - t0 )) s"
fi

# new_root NAME: a root from the bare tarball, able to reach the archive,
# and with the host names an installed machine has (mmdebstrap writes no
# /etc/hosts: Hydra would wait on DNS for this host's own name).
new_root() {
    root=$work/$1
    mkdir "$root"
    tar -C "$root" -xf "$tarball"
    for f in resolv.conf hosts hostname; do
        cp "/etc/$f" "$root/etc/$f" 2>/dev/null || true
    done
}

# timed NAME USER CMD: one check, its wall time printed.
timed() {
    t0=$(date +%s)
    rc=0
    in_root "$root" "$2" "$3" || rc=$?
    echo "($1: exit $rc after $(( $(date +%s) - t0 )) s)"
    check $rc "$1"
}

# default_mpi: the alternatives' choice for mpicc and mpiexec, as a line.
default_mpi='for a in mpi mpiexec; do printf "%s=%s " $a "$(readlink /etc/alternatives/$a || echo none)"; done'

newcomer() {
    new_root newcomer
    mkdir "$root/root/bbench"
    tar -C "$root/root/bbench" -xf "$work/src.tar"
    timed "(a) fresh root as root: quickstart.sh run" root \
        'cd bbench && sh scripts/quickstart.sh run && test -s build/quickstart/sum.json'
    # The machine a newcomer now has: Debian's alternatives point mpicc and
    # mpiexec to Open MPI (ScaLAPACK's package pulls its launcher in), whose
    # development package is not installed.  configure must say so.
    in_root "$root" root "$default_mpi" > "$work/alt" 2>&1 || true
    echo "default MPI after run: $(cat "$work/alt")"
    grep -q 'mpi=/usr/bin/mpicc.openmpi' "$work/alt"
    check $? "(a) Debian's default mpicc is Open MPI's after the set-up (the case configure must explain)"
    in_root "$root" root 'mkdir -p d1 && cd d1 && ../bbench/configure' > "$work/cfg1" 2>&1 && rc=0 || rc=$?
    tail -n 1 "$work/cfg1"
    [ $rc -ne 0 ] && grep -q "mpicc is Open MPI's wrapper and libopenmpi-dev is missing: install it (apt-get install libopenmpi-dev), or configure MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich" "$work/cfg1"
    check $? "(a) configure with the default mpicc names the missing libopenmpi-dev and MPICH's wrapper"
    in_root "$root" root 'mkdir -p d2 && cd d2 && ../bbench/configure MPICC=mpicc.mpich MPIEXEC=mpiexec' > "$work/cfg2" 2>&1 && rc=0 || rc=$?
    tail -n 1 "$work/cfg2"
    [ $rc -ne 0 ] && grep -q "MPIEXEC=mpiexec is a launcher of kind openmpi but mpicc.mpich builds with mpich: every rank would run as a singleton; give the launcher of the same MPI (configure MPIEXEC=mpiexec.mpich)" "$work/cfg2"
    check $? "(a) configure with MPICH's wrapper and Open MPI's mpiexec names mpiexec.mpich"
    in_root "$root" root 'mkdir -p d3 && cd d3 && ../bbench/configure MPICC=mpicc.mpich' > "$work/cfg3" 2>&1 && rc=0 || rc=$?
    grep 'checking for mpiexec' "$work/cfg3" || true
    [ $rc -eq 0 ] && grep -q '^MPIEXEC="mpiexec.mpich"' "$root/root/d3/tests/env.sh"
    check $? "(a) configure with MPICH's wrapper alone picks mpiexec.mpich"
    timed "(c) the same root again: quickstart.sh quick" root \
        'cd bbench && sh scripts/quickstart.sh quick'
}

openmpi() {
    new_root openmpi
    timed "(b) Open MPI made the default MPI, with libopenmpi-dev and sudo" root \
        'apt-get -qq update && DEBIAN_FRONTEND=noninteractive apt-get -qq install -y --no-install-recommends openmpi-bin libopenmpi-dev sudo >/dev/null && useradd -m newcomer && echo "newcomer ALL=(ALL) NOPASSWD:ALL" > /etc/sudoers.d/newcomer'
    in_root "$root" root "$default_mpi" > "$work/alt0" 2>&1 || true
    echo "default MPI before: $(cat "$work/alt0")"
    mkdir "$root/home/newcomer/bbench"
    tar -C "$root/home/newcomer/bbench" -xf "$work/src.tar"
    chroot "$root" chown -R newcomer: /home/newcomer/bbench
    timed "(b, d) as a user with sudo: quickstart.sh run" newcomer \
        'cd bbench && sh scripts/quickstart.sh run && test -s build/quickstart/sum.json'
    timed "(b, d) as a user with sudo: quickstart.sh quick" newcomer \
        'cd bbench && sh scripts/quickstart.sh quick'
    in_root "$root" root "$default_mpi" > "$work/alt1" 2>&1 || true
    echo "default MPI after: $(cat "$work/alt1")"
    cmp -s "$work/alt0" "$work/alt1"
    check $? "(b) the machine's default MPI is unchanged"
}

for r in newcomer openmpi; do
    echo "=== fresh root: $r (log: $out/fresh-root-$r.log)"
    t_root=$(date +%s)
    # In this shell (a signal must reach its trap at once), the checks
    # counting failures instead of stopping at them.
    set +e
    $r > "$out/fresh-root-$r.log" 2>&1
    set -e
    grep -E '^(ok|FAIL): |^\(.*: exit [0-9]+ after [0-9]+ s\)$|^(default MPI|made in)|^make check-quick:' \
        "$out/fresh-root-$r.log" || true
    p=$(grep -c '^ok: ' "$out/fresh-root-$r.log" || true)
    f=$(grep -c '^FAIL: ' "$out/fresh-root-$r.log" || true)
    # A root whose steps stopped before their checks counts as a failure.
    [ $((p + f)) -gt 0 ] || f=1
    # The quick subsets' own counts, one check each of their tests.
    q=$(sed -n 's/^make check-quick: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' \
        "$out/fresh-root-$r.log" | awk '{p += $1; f += $2} END {print p + 0, f + 0}')
    passed=$((passed + p + ${q% *}))
    failed=$((failed + f + ${q#* }))
    echo "($r: $(( $(date +%s) - t_root )) s in all)"
    rm -rf --one-file-system "${work:?}/$r"
done
echo "fresh root: $passed passed, $failed failed" | tee "$out/summary.txt"
[ "$failed" -eq 0 ]
