#!/bin/sh
# The README's two commands in fresh Debian 12 roots (scripts/fresh-root.sh:
# a bare root as root, then again; Open MPI the default, as a user with
# sudo).  Minutes of packages from Debian's archive, so only when asked:
# BB_FRESH_ROOT=yes (CI's main build; `make check-fresh`).  Skipped, saying
# why, otherwise, or where it cannot run (not root, no mmdebstrap).
. "$(dirname "$0")/../lib.sh"
if [ "${BB_FRESH_ROOT:-no}" != yes ]; then
    echo "SKIP: the fresh roots run only when asked (BB_FRESH_ROOT=yes, make check-fresh): they install packages from Debian's archive for minutes"
    exit 77
fi
out="$B/fresh-root"
# Under a timeout like every launch: the script's traps remove its roots.
timeout -k 30 "${BB_FRESH_TIMEOUT:-1800}" sh "$S/scripts/fresh-root.sh" "$out"
rc=$?
[ $rc -eq 77 ] && exit 77
bb_expect_rc 0 $rc "scripts/fresh-root.sh"
bb_expect_grep '^fresh root: [1-9][0-9]* passed, 0 failed$' "$out/summary.txt" \
    "both roots: every check passed"
for r in newcomer openmpi; do
    bb_expect_grep '^make check-quick: [1-9][0-9]* passed, 0 failed$' "$out/fresh-root-$r.log" \
        "$r: the quick tests ran and passed"
done
bb_finish
