# bb-launcher.sh: the launcher layer, a POSIX sh fragment sourced by the
# tests and the scripts.  It names the kind of MPI launcher a command is and
# prints, per kind, the flags for what bbench asks of a launcher, so that no
# script spells Hydra's (or Open MPI's) options itself.
#
# Kinds: hydra (MPICH's mpiexec), openmpi (Open MPI 4's orterun/mpirun/
# mpiexec), slurm (srun), unknown (only the standard's `-n NP` is assumed).
#
# Usage:
#   . path/to/bb-launcher.sh
#   kind=$(bb_launcher_kind $MPIEXEC)
#   $MPIEXEC $(bb_launcher_np_flags "$kind" 3) $(bb_launcher_root_flags "$kind") prog
#
# The flag functions print words to be split by the shell (expand them
# unquoted), so the values they are given (paths, NAME=VALUE pairs, host
# lists) must not be empty (an empty VALUE too: it would vanish as a word)
# nor hold blanks or glob characters: such values are refused (exit 2)
# rather than split.  So are rank counts that are not decimals of at most
# 7 digits, and host names that would not be one line of a hostfile.  They exit 1, printing nothing, when the kind
# has no such flag (a hostfile for an unknown launcher, an agent for srun).
#
# Installed scripts find this file next to themselves (the source tree's
# tools/) or in $(pkgdatadir), i.e. `dirname $0`/../share/bbench/; the
# environment variable BB_LAUNCHER_SH, when set, names it instead.

# Values are printed with printf '%s': dash's echo would turn a backslash
# sequence in a path or value into a tab or a line break.

# bb_launcher__die STATUS MESSAGE: say why on stderr, return STATUS.
bb_launcher__die() {
    echo "bb-launcher: $2" >&2
    return "$1"
}

# bb_launcher__plain WHAT VALUE: VALUE survives unquoted expansion intact
# (not empty, no blanks, no glob characters); else exit 2.
bb_launcher__plain() {
    case $2 in
    '') bb_launcher__die 2 "$1: empty" ;;
    *[[:space:]]* | *[*?[]*)
        bb_launcher__die 2 "$1 '$2': blanks and glob characters cannot be passed as flags" ;;
    *) return 0 ;;
    esac
}

# bb_launcher_kind CMD [ARGS...]: print the kind of the launcher CMD is:
# hydra, openmpi, slurm or unknown.  It asks CMD --version (as every one of
# them answers it) rather than trusting the name, since mpiexec, mpirun and
# their .mpich/.openmpi names are whatever the alternatives say.
# BB_LAUNCHER_KIND, when set to a kind, is taken as is (for wrappers whose
# --version says nothing, such as a script that execs the launcher).
bb_launcher_kind() {
    case ${BB_LAUNCHER_KIND:-} in
    hydra | openmpi | slurm | unknown) echo "$BB_LAUNCHER_KIND"; return 0 ;;
    esac
    [ $# -gt 0 ] || { bb_launcher__die 2 "bb_launcher_kind: no command given"; return 2; }
    # A launcher that hangs on --version must not hang its caller.
    _bbl_v=$(timeout 20 "$@" --version 2>&1 </dev/null) || true
    case $_bbl_v in
    *HYDRA*) echo hydra ;;
    *'Open MPI'* | *OpenRTE*) echo openmpi ;;
    *slurm*) echo slurm ;;
    *) case ${1##*/} in srun) echo slurm ;; *) echo unknown ;; esac ;;
    esac
}

# bb_launcher_cores: print how many cores this process may run on (what
# Open MPI counts as slots, and srun as CPUs, on a single node).
# BB_LAUNCHER_CORES, when a positive integer, overrides it.
bb_launcher_cores() {
    case ${BB_LAUNCHER_CORES:-} in
    '' | *[!0-9]* | 0* | ????????*) ;;
    *) echo "$BB_LAUNCHER_CORES"; return 0 ;;
    esac
    # hwloc counts cores (not hardware threads) within our cpuset.
    _bbl_c=$(hwloc-calc -N core all 2>/dev/null) || _bbl_c=
    case $_bbl_c in '' | *[!0-9]* | 0) _bbl_c=$(nproc 2>/dev/null) || _bbl_c=1 ;; esac
    echo "$_bbl_c"
}

# bb_launcher_np_flags KIND NP: the flags that start NP ranks, allowing more
# ranks than cores (Hydra always does; Open MPI needs --oversubscribe and
# srun --overcommit once NP exceeds the cores).
bb_launcher_np_flags() {
    case $2 in
    '' | *[!0-9]* | 0*) bb_launcher__die 2 "bb_launcher_np_flags: '$2' is not a positive integer"; return 2 ;;
    # Checked as text: test(1) fails on 20 digits with its own message.
    ????????*) bb_launcher__die 2 "bb_launcher_np_flags: '$2' ranks: give at most 9999999"; return 2 ;;
    esac
    _bbl_over=
    [ "$2" -gt "$(bb_launcher_cores)" ] && _bbl_over=yes
    case $1 in
    openmpi) echo "-n $2${_bbl_over:+ --oversubscribe}" ;;
    slurm) echo "-n $2${_bbl_over:+ --overcommit}" ;;
    *) echo "-n $2" ;;
    esac
}

# bb_launcher_root_flags KIND: the flags a launch as root needs (Open MPI
# refuses root without --allow-run-as-root; the others do not ask).
bb_launcher_root_flags() {
    [ "$(id -u)" -eq 0 ] || return 0
    case $1 in openmpi) echo "--allow-run-as-root" ;; esac
}

# bb_launcher_default_mpiexec LAYER: the launcher a script runs when MPIEXEC
# is unset: the one bbench was configured with (bb-config.sh, installed
# beside this layer, whose path LAYER is), else plain mpiexec.
bb_launcher_default_mpiexec() {
    BB_CONFIGURED_MPIEXEC=
    # shellcheck disable=SC1091
    [ -r "$(dirname "$1")/bb-config.sh" ] && . "$(dirname "$1")/bb-config.sh"
    echo "${BB_CONFIGURED_MPIEXEC:-mpiexec}"
}

# bb_launcher_root_export: as root, export the variables with which Open
# MPI accepts root without the flag, for launches this caller does not
# spell itself (a script that runs $MPIEXEC).  Harmless for other kinds.
bb_launcher_root_export() {
    [ "$(id -u)" -eq 0 ] || return 0
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
}

# bb_launcher_env_flags KIND NAME=VALUE...: the flags that set each NAME to
# VALUE in every rank (Hydra -genv, Open MPI -x, srun --export=ALL,...; one
# --export for all pairs, as srun keeps only its last).
bb_launcher_env_flags() {
    _bbl_kind=$1; shift
    _bbl_out= _bbl_sep=
    for _bbl_pair; do
        bb_launcher__plain "environment pair" "$_bbl_pair" || return 2
        _bbl_name=${_bbl_pair%%=*}
        case $_bbl_pair in
        *=*) ;;
        *) bb_launcher__die 2 "'$_bbl_pair' is not NAME=VALUE"; return 2 ;;
        esac
        case $_bbl_name in
        '' | [0-9]* | *[!A-Za-z0-9_]*) bb_launcher__die 2 "'$_bbl_name' is not a variable name"; return 2 ;;
        esac
        # Hydra's -genv takes VALUE as a word of its own, which an empty
        # value cannot be once split (the next flag would become it):
        # refused for every kind alike.
        case $_bbl_pair in
        *=) bb_launcher__die 2 "'$_bbl_pair': an empty value cannot be passed as a flag; set $_bbl_name in the launcher's own environment, or pass a non-empty value"; return 2 ;;
        esac
        case $_bbl_kind in
        hydra) _bbl_out="$_bbl_out$_bbl_sep-genv $_bbl_name ${_bbl_pair#*=}" ;;
        openmpi) _bbl_out="$_bbl_out$_bbl_sep-x $_bbl_pair" ;;
        slurm)
            case $_bbl_pair in *,*) bb_launcher__die 2 "'$_bbl_pair': srun --export cannot pass a comma"; return 2 ;; esac
            _bbl_out="${_bbl_out:---export=ALL},$_bbl_pair" ;;
        *) bb_launcher__die 1 "no known flag passes the environment to a launcher of kind '$_bbl_kind'"; return 1 ;;
        esac
        _bbl_sep=' '
    done
    [ -z "$_bbl_out" ] || printf '%s\n' "$_bbl_out"
}

# bb_launcher_hostfile_flags KIND FILE: the flags that take the hosts from
# FILE, written in that launcher's format (bb_launcher_hostfile_write):
# Hydra -f, Open MPI --hostfile, srun --nodelist (a name with a '/').
bb_launcher_hostfile_flags() {
    bb_launcher__plain "hostfile" "$2" || return 2
    case $1 in
    hydra) printf '%s\n' "-f $2" ;;
    openmpi) printf '%s\n' "--hostfile $2" ;;
    slurm) case $2 in */*) printf '%s\n' "--nodelist=$2" ;; *) printf '%s\n' "--nodelist=./$2" ;; esac ;;
    *) bb_launcher__die 1 "no known hostfile flag for a launcher of kind '$1'"; return 1 ;;
    esac
}

# bb_launcher_hostfile_option KIND: the hostfile option alone, for a caller
# that passes the path as a word of its own, quoted, so that a path with
# blanks or glob characters reaches the launcher as the caller checked it
# (Hydra -f, Open MPI --hostfile, srun --nodelist: a file when the name
# holds a '/').
bb_launcher_hostfile_option() {
    case $1 in
    hydra) echo "-f" ;;
    openmpi) echo "--hostfile" ;;
    slurm) echo "--nodelist" ;;
    *) bb_launcher__die 1 "no known hostfile flag for a launcher of kind '$1'"; return 1 ;;
    esac
}

# bb_launcher_hostfile_write KIND FILE HOST:SLOTS...: write FILE in the
# format of KIND's hostfile: Hydra "host:slots", Open MPI "host slots=N",
# Slurm one node name a line (the slots are srun's -n business).
bb_launcher_hostfile_write() {
    _bbl_kind=$1 _bbl_file=$2; shift 2
    case $_bbl_kind in
    hydra | openmpi | slurm) ;;
    *) bb_launcher__die 1 "no known hostfile format for a launcher of kind '$_bbl_kind'"; return 1 ;;
    esac
    # Every host checked before the file is written: a refusal leaves no
    # hostfile of the hosts before it.
    for _bbl_h; do
        _bbl_name=${_bbl_h%%:*} _bbl_slots=${_bbl_h#*:}
        [ "$_bbl_slots" = "$_bbl_h" ] && _bbl_slots=1
        case $_bbl_slots in
        '' | *[!0-9]* | 0* | ????????*) bb_launcher__die 2 "'$_bbl_h' is not HOST:SLOTS (SLOTS 1 to 9999999)"; return 2 ;;
        esac
        # One host a line: a line break would make two, a blank or '#'
        # would cut the name.
        case $_bbl_name in
        '' | *[[:space:][:cntrl:]#]*)
            bb_launcher__die 2 "host '$_bbl_name': empty, or holds a blank, line break, control character or '#', which a hostfile line cannot carry; give the host's plain name"; return 2 ;;
        esac
    done
    : > "$_bbl_file" || return 2
    for _bbl_h; do
        _bbl_name=${_bbl_h%%:*} _bbl_slots=${_bbl_h#*:}
        [ "$_bbl_slots" = "$_bbl_h" ] && _bbl_slots=1
        # printf, not echo: dash's echo would turn a '\n' in a name into a line.
        case $_bbl_kind in
        hydra) printf '%s:%s\n' "$_bbl_name" "$_bbl_slots" ;;
        openmpi) printf '%s slots=%s\n' "$_bbl_name" "$_bbl_slots" ;;
        slurm) printf '%s\n' "$_bbl_name" ;;
        esac >> "$_bbl_file" || return 2
    done
}

# bb_launcher_hosts_flags KIND HOST[:SLOTS][,HOST[:SLOTS]]...: the flags
# that name the hosts on the command line (Hydra -hosts, Open MPI --host,
# srun --nodelist without the slot counts).
bb_launcher_hosts_flags() {
    bb_launcher__plain "host list" "$2" || return 2
    case $1 in
    hydra) printf '%s\n' "-hosts $2" ;;
    openmpi) printf '%s\n' "--host $2" ;;
    slurm) printf '%s\n' "--nodelist=$(printf '%s\n' "$2" | sed 's/:[0-9]*//g')" ;;
    *) bb_launcher__die 1 "no known host list flag for a launcher of kind '$1'"; return 1 ;;
    esac
}

# bb_launcher_agent_flags KIND CMD: the flags that start the remote ranks'
# daemons through CMD instead of ssh (called as ssh is: CMD HOST COMMAND...):
# Hydra -launcher ssh -launcher-exec CMD, Open MPI --mca plm_rsh_agent CMD.
# srun has no agent: slurmd starts the ranks.
bb_launcher_agent_flags() {
    bb_launcher__plain "remote shell agent" "$2" || return 2
    case $1 in
    hydra) printf '%s\n' "-launcher ssh -launcher-exec $2" ;;
    openmpi) printf '%s\n' "--mca plm_rsh_agent $2" ;;
    *) bb_launcher__die 1 "no known remote shell agent flag for a launcher of kind '$1'"; return 1 ;;
    esac
}
