#!/bin/sh
# scripts/slurm-local.sh stop DIR kills only the daemons start DIR started:
# a pid file naming another process (a sleep, or a slurmctld of another
# configuration) is stale; it is said so, the process lives on, and the pid
# files are removed either way.  No Slurm needed: stand-ins play the
# daemons (a script's command name is its file name).
. "$(dirname "$0")/../lib.sh"
SL="$S/scripts/slurm-local.sh"
[ -r /proc/self/comm ] || { echo "SKIP: no /proc/PID/comm (the script tells its daemons by it)"; exit 77; }
err="$BB_TMP/err"
d="$BB_TMP/sl"
mkdir "$d" "$BB_TMP/bin" "$BB_TMP/other"
d=$(cd "$d" && pwd)
for n in slurmd slurmctld; do
    cat >"$BB_TMP/bin/$n" <<'SH'
#!/bin/sh
trap 'kill $! 2>/dev/null; exit 0' TERM
sleep 60 &
wait
SH
    chmod +x "$BB_TMP/bin/$n"
done
sleep 60 &
stale=$!
"$BB_TMP/bin/slurmctld" -f "$BB_TMP/other/slurm.conf" &
other=$!
# Let the stand-in start (its command name is set at exec).
i=0
while [ $i -lt 50 ] && [ "$(cat /proc/$other/comm 2>/dev/null)" != slurmctld ]; do
    sleep 0.1; i=$((i + 1))
done
echo "$stale" >"$d/slurmd.pid"
echo "$other" >"$d/slurmctld.pid"
echo "12x" >"$d/munged.pid"
sh "$SL" stop "$d" 2>"$err"
bb_expect_rc 0 $? "stop with stale pid files"
bb_expect_true "the sleep named by slurmd.pid is alive" kill -0 "$stale"
bb_expect_true "the slurmctld of another DIR is alive" kill -0 "$other"
bb_expect_grep "slurmd.pid is stale: process $stale is not the slurmd started for" "$err" "slurmd.pid said stale"
bb_expect_grep "slurmctld.pid is stale: process $other is not the slurmctld" "$err" "slurmctld.pid said stale"
bb_expect_grep "munged.pid does not hold a process id" "$err" "munged.pid said not a pid"
bb_expect_true "the pid files are removed" test -z "$(ls -A "$d")"

# The daemon it started (its command line names DIR's slurm.conf) is
# stopped, and its pid file removed.
"$BB_TMP/bin/slurmd" -f "$d/slurm.conf" &
ours=$!
i=0
while [ $i -lt 50 ] && [ "$(cat /proc/$ours/comm 2>/dev/null)" != slurmd ]; do
    sleep 0.1; i=$((i + 1))
done
echo "$ours" >"$d/slurmd.pid"
sh "$SL" stop "$d" 2>"$err"
bb_expect_rc 0 $? "stop with the daemon's own pid file"
wait "$ours" 2>/dev/null
bb_expect_true "that slurmd is stopped" test ! -d "/proc/$ours"
bb_expect_true "its pid file is removed" test ! -e "$d/slurmd.pid"

# start pastes DIR into slurm.conf a setting a line: a line break (which
# would add settings) or a blank is refused before anything is made.  With
# no PATH, so that where Slurm is installed a refusal that regressed could
# not start daemons.
nl="$BB_TMP/a
SlurmUser=nobody"
mkdir "$BB_TMP/nopath"
PATH="$BB_TMP/nopath" /bin/sh "$SL" start "$nl" 2>"$err"
bb_expect_rc 3 $? "start with a line break in DIR"
bb_expect_grep "holds a blank or control character" "$err" "... refused, said why"
bb_expect_true "... nothing made" test ! -e "$nl"

kill "$stale" "$other" 2>/dev/null
wait 2>/dev/null
bb_finish
