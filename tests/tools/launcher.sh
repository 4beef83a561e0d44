#!/bin/sh
# The launcher layer (tools/bb-launcher.sh) with the configured launcher:
# its kind is the one configure found; -n 3 on fewer cores, as root where
# we are root, starts 3 ranks; a variable passed by the environment flags
# reaches every rank; a hostfile written in the launcher's format is taken;
# bad values are refused rather than split (an empty value, a line break
# in a host, a 20-digit count too); backslashes are text.  Then the flags
# of every kind.
. "$(dirname "$0")/../lib.sh"
kind=$BB_LAUNCHER_KIND
out="$BB_TMP/out"

# Asked again (env.sh's BB_LAUNCHER_KIND would answer for it), as configure did.
bb_expect_true "bb_launcher_kind $MPIEXEC: $kind" \
    test "$(unset BB_LAUNCHER_KIND; bb_launcher_kind $MPIEXEC)" = "$kind"
bb_expect_true "bb_launcher_kind mpiexec.$kind (hydra: mpich) if installed" \
    sh -c 'm=mpiexec.$1; [ "$1" = hydra ] && m=mpiexec.mpich
           command -v $m >/dev/null || exit 0; unset BB_LAUNCHER_KIND
           . "$2/tools/bb-launcher.sh"; test "$(bb_launcher_kind $m)" = "$1"' sh "$kind" "$S"

# Three ranks on (at most) two cores: each says its rank's environment.
# shellcheck disable=SC2016
rank_line='echo "rank ${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-?}}} BB_X=${BB_X:-unset}"'
# every tier (launcher): the flags that let 3 ranks onto 2 cores
BB_LAUNCHER_CORES=2 bb_mpirun 3 sh -c "$rank_line" > "$out" 2>&1
bb_expect_rc 0 $? "-n 3 with two cores ($(BB_LAUNCHER_CORES=2 bb_launcher_np_flags "$kind" 3))"
bb_expect_true "three ranks, 0 to 2" test "$(grep -c '^rank [012] ' "$out")" -eq 3

if env_flags=$(bb_launcher_env_flags "$kind" BB_X=a/b=c 2>"$BB_TMP/err"); then
    # shellcheck disable=SC2086
    env -u BB_X timeout -k 5 "$BB_TIMEOUT" $MPIEXEC $(bb_launcher_np_flags "$kind" 2) \
        $(bb_launcher_root_flags "$kind") $env_flags sh -c "$rank_line" > "$out" 2>&1
    bb_expect_rc 0 $? "-n 2 with $env_flags"
    bb_expect_true "both ranks got BB_X=a/b=c" test "$(grep -c 'BB_X=a/b=c$' "$out")" -eq 2
else
    echo "environment flags: none for a launcher of kind $kind: $(cat "$BB_TMP/err")"
fi

hf="$BB_TMP/hosts"
if bb_launcher_hostfile_write "$kind" "$hf" localhost:2 2>"$BB_TMP/err" && [ "$kind" != slurm ]; then
    # shellcheck disable=SC2086
    timeout -k 5 "$BB_TIMEOUT" $MPIEXEC $(bb_launcher_hostfile_flags "$kind" "$hf") \
        $(bb_launcher_np_flags "$kind" 2) $(bb_launcher_root_flags "$kind") \
        sh -c "$rank_line" > "$out" 2>&1
    bb_expect_rc 0 $? "-n 2 from a hostfile ($(cat "$hf"))"
    bb_expect_true "two ranks from the hostfile" test "$(grep -c '^rank [01] ' "$out")" -eq 2
else
    echo "hostfile: not run for a launcher of kind $kind"
fi

# Refused, not split: blanks, globs, not NAME=VALUE, a bad count.
for bad in "hydra A=b_c d" "openmpi A=*" "hydra 1A=2" "openmpi NOEQ" "slurm A=x,y"; do
    # shellcheck disable=SC2086
    set -- $bad
    k=$1; shift
    bb_launcher_env_flags "$k" "$@" > "$out" 2>"$BB_TMP/err"
    bb_expect_rc 2 $? "env flags $bad refused"
    bb_expect_true "... printing nothing" test ! -s "$out"
done
bb_launcher_np_flags openmpi 0 > "$out" 2>&1
bb_expect_rc 2 $? "-n 0 refused"

# What the header says is refused is refused (issue 39 item 9).  An empty
# value would vanish as a word (Hydra then takes the next flag for it).
for k in hydra openmpi slurm; do
    bb_launcher_env_flags "$k" EMPTY= B=1 > "$out" 2>"$BB_TMP/err"
    bb_expect_rc 2 $? "$k: env flags EMPTY= B=1 refused"
    bb_expect_true "... printing nothing" test ! -s "$out"
    bb_expect_grep "'EMPTY=': an empty value cannot be passed as a flag; set EMPTY in the launcher's own environment" \
        "$BB_TMP/err" "... saying what to do instead"
done
# A rank count of 20 digits: a usage error in words, not test(1)'s.
bb_launcher_np_flags hydra 99999999999999999999 > "$out" 2>"$BB_TMP/err"
bb_expect_rc 2 $? "-n of 20 digits refused"
bb_expect_true "... printing no flags" test ! -s "$out"
bb_expect_grep "'99999999999999999999' ranks: give at most 9999999" "$BB_TMP/err" "... with a message"
bb_expect_true "... and no shell noise" \
    test "$(grep -c -e 'Illegal' -e 'out of range' -e 'expression' "$BB_TMP/err")" -eq 0
# A line break in a host name would write two host lines: refused, and no
# hostfile written.
for k in hydra openmpi slurm; do
    rm -f "$BB_TMP/hf2"
    bb_launcher_hostfile_write "$k" "$BB_TMP/hf2" ok:1 "$(printf 'a\nb')":1 2>"$BB_TMP/err"
    bb_expect_rc 2 $? "$k: a host with a line break refused"
    bb_expect_true "... no hostfile written" test ! -e "$BB_TMP/hf2"
    bb_expect_grep "which a hostfile line cannot carry" "$BB_TMP/err" "... with a message"
done
bb_launcher_hostfile_write hydra "$BB_TMP/hf2" a:99999999999999999999 2>"$BB_TMP/err"
bb_expect_rc 2 $? "20-digit slots refused"
# A backslash is text: one line, as given.  Under sh, the shell of the
# scripts that source the layer (dash's echo would make it two lines).
in_sh() {
    sh -c '. "$1/tools/bb-launcher.sh"; shift; "$@"' sh "$S" "$@"
}
in_sh bb_launcher_hostfile_write hydra "$BB_TMP/hf2" 'a\nb:2' 2>"$BB_TMP/err"
bb_expect_rc 0 $? "a host name with a backslash"
bb_expect_true "... one line, as given" test "$(cat "$BB_TMP/hf2")" = 'a\nb:2'
bb_expect_true "env value with a backslash printed as given" \
    test "$(in_sh bb_launcher_env_flags openmpi 'A=x\tb')" = '-x A=x\tb'
bb_expect_true "hostfile path with a backslash printed as given" \
    test "$(in_sh bb_launcher_hostfile_flags hydra 'h\c1')" = '-f h\c1'
bb_expect_true "host list with a backslash printed as given" \
    test "$(in_sh bb_launcher_hosts_flags slurm 'a\tb:2,c')" = '--nodelist=a\tb,c'

# Every kind's flags (the configured launcher aside, none is run here).
flags() {
    BB_LAUNCHER_CORES=2
    export BB_LAUNCHER_CORES
    for k in hydra openmpi slurm unknown; do
        echo "$k np2: $(bb_launcher_np_flags $k 2)"
        echo "$k np3: $(bb_launcher_np_flags $k 3)"
        echo "$k env: $(bb_launcher_env_flags $k A=1 B=2 2>/dev/null || echo refused)"
        echo "$k hostfile: $(bb_launcher_hostfile_flags $k h 2>/dev/null || echo refused)"
        echo "$k hosts: $(bb_launcher_hosts_flags $k a:2,b 2>/dev/null || echo refused)"
        echo "$k agent: $(bb_launcher_agent_flags $k /bin/ag 2>/dev/null || echo refused)"
    done
}
flags > "$out"
while IFS='|' read -r want; do
    bb_expect_grep "^$want\$" "$out" "$want"
done <<'EOF_WANT'
hydra np3: -n 3
openmpi np2: -n 2
openmpi np3: -n 3 --oversubscribe
slurm np3: -n 3 --overcommit
unknown np3: -n 3
hydra env: -genv A 1 -genv B 2
openmpi env: -x A=1 -x B=2
slurm env: --export=ALL,A=1,B=2
unknown env: refused
hydra hostfile: -f h
openmpi hostfile: --hostfile h
slurm hostfile: --nodelist=./h
hydra hosts: -hosts a:2,b
openmpi hosts: --host a:2,b
slurm hosts: --nodelist=a,b
hydra agent: -launcher ssh -launcher-exec /bin/ag
openmpi agent: --mca plm_rsh_agent /bin/ag
slurm agent: refused
EOF_WANT
if [ "$(id -u)" -eq 0 ]; then
    bb_expect_true "as root, Open MPI gets --allow-run-as-root" \
        test "$(bb_launcher_root_flags openmpi)" = --allow-run-as-root
    bb_expect_true "as root, Hydra gets nothing" test -z "$(bb_launcher_root_flags hydra)"
fi
bb_finish
