#!/bin/sh
# slurm-local.sh start|stop DIR: a one-node Slurm on this machine (as root),
# for the Slurm tier of make check (tests/slurm/) and CI: munged, slurmctld
# and slurmd on this host only, with their configuration, state and logs in
# DIR (nothing under /etc changed).  Afterwards:
#   export SLURM_CONF=DIR/slurm.conf
# Needs Debian's slurmd slurmctld slurm-client munge (and /etc/munge/munge.key,
# which the munge package makes).  Exit 0 once sinfo shows the node idle.
set -u
prog=slurm-local.sh
[ $# -eq 2 ] || { echo "usage: sh scripts/$prog start|stop DIR" >&2; exit 2; }
mode=$1 dir=$2
die() { echo "$prog: $*" >&2; exit 3; }
case $mode in
stop)
    for d in slurmd slurmctld; do
        [ -f "$dir/$d.pid" ] && kill "$(cat "$dir/$d.pid")" 2>/dev/null
    done
    [ -f "$dir/munged.pid" ] && kill "$(cat "$dir/munged.pid")" 2>/dev/null
    exit 0 ;;
start) ;;
*) echo "usage: sh scripts/$prog start|stop DIR" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || die "run as root (slurmd starts jobs as their users)"
for p in munged slurmctld slurmd sinfo; do
    command -v $p >/dev/null 2>&1 || die "$p not installed (Debian: slurmd slurmctld slurm-client munge)"
done
mkdir -p "$dir/state" "$dir/spool" "$dir/log" || die "cannot make $dir"
dir=$(cd "$dir" && pwd)
host=$(hostname -s)
cpus=$(nproc)
cat > "$dir/slurm.conf" <<EOF_CONF
ClusterName=bbench
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF_CONF
export SLURM_CONF="$dir/slurm.conf"
# munged: the system's, if one answers; else one of our own.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
    munged --force --pid-file="$dir/munged.pid" 2>>"$dir/log/munged.err" \
        || die "munged did not start: $(cat "$dir/log/munged.err")"
    munge -n | unmunge >/dev/null 2>&1 || die "munge does not answer"
fi
slurmctld -f "$dir/slurm.conf" || die "slurmctld did not start: see $dir/log/slurmctld.log"
slurmd -f "$dir/slurm.conf" || die "slurmd did not start: see $dir/log/slurmd.log"
i=0
while [ $i -lt 30 ]; do
    sinfo -h -o '%t' 2>/dev/null | grep -q '^idle' && { echo "$prog: node $host up: export SLURM_CONF=$dir/slurm.conf"; exit 0; }
    sleep 1
    i=$((i + 1))
done
die "the node did not come up in 30 s: $(sinfo 2>&1 | tail -n 2); see $dir/log/"
