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
# ours PID NAME: PID is the NAME that `start DIR` started: its command name
# is NAME and its command line (or, should it retitle itself, its
# environment) names this DIR's file.  A pid file outlives its daemon, and
# its number is then anyone's.
ours() {
    [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] || return 1
    case $2 in
    munged) want="--pid-file=$dir/munged.pid" ;;
    *) want="$dir/slurm.conf" ;;
    esac
    tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -q -x -F -e "$want" && return 0
    [ "$2" != munged ] &&
        tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -q -x -F -e "SLURM_CONF=$want"
}
case $mode in
stop)
    [ -d "$dir" ] || { echo "$prog: no directory $dir: nothing to stop" >&2; exit 0; }
    dir=$(cd "$dir" && pwd)
    for d in slurmd slurmctld munged; do
        f=$dir/$d.pid
        [ -f "$f" ] || continue
        pid=$(head -n 1 "$f")
        case $pid in
        '' | *[!0-9]* | 0* | ???????????*)
            echo "$prog: $f does not hold a process id ('$pid'); removed, nothing killed" >&2 ;;
        *)
            if ours "$pid" "$d"; then
                kill "$pid" 2>/dev/null
                # Gone before its pid file is: a restart must not find it.
                i=0
                while [ $i -lt 20 ] && kill -0 "$pid" 2>/dev/null; do
                    sleep 0.5
                    i=$((i + 1))
                done
                kill -0 "$pid" 2>/dev/null && echo "$prog: $d ($pid) still running after 10 s; kill it by hand" >&2
            elif kill -0 "$pid" 2>/dev/null; then
                echo "$prog: $f is stale: process $pid is not the $d started for $dir; not killed, pid file removed" >&2
            else
                echo "$prog: $f is stale: no process $pid; pid file removed" >&2
            fi ;;
        esac
        rm -f "$f"
    done
    exit 0 ;;
start) ;;
*) echo "usage: sh scripts/$prog start|stop DIR" >&2; exit 2 ;;
esac
# DIR is pasted into slurm.conf, a setting a line: a line break would add
# settings of its own, a blank would cut the path (checked as given, and
# as made absolute).
plain_dir() {
    case $1 in
    *[[:space:][:cntrl:]]*) die "DIR '$1' holds a blank or control character; choose a path without" ;;
    esac
}
plain_dir "$dir"
[ "$(id -u)" -eq 0 ] || die "run as root (slurmd starts jobs as their users)"
for p in munged slurmctld slurmd sinfo; do
    command -v $p >/dev/null 2>&1 || die "$p not installed (Debian: slurmd slurmctld slurm-client munge)"
done
mkdir -p "$dir/state" "$dir/spool" "$dir/log" || die "cannot make $dir"
dir=$(cd "$dir" && pwd)
plain_dir "$dir"
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
