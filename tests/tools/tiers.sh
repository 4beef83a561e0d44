#!/bin/sh
# The suite's tiers are declared where a reader sees them (doc/testing.md):
# - a literal launch of more than 2 ranks (bb_mpirun N, bb_np_test N, a
#   literal "for np in" list) in a test of the quick or default tier is an
#   every-tier launch, said by a "# every tier (WHAT)" comment at most six
#   lines above it; rank lists the tier trims go through bb_ranks;
# - the tests of oversubscribed launches alone (BB_FULL_TESTS) set
#   BB_FULL_ONLY=yes, and no other test does;
# - every tier keeps a launch over the cores for each protocol: sum,
#   transfer, redist and policy agreement, in the quick list and in the rest.
# BB_TIERS_SRC checks another tree (the planted violations below).
. "$(dirname "$0")/../lib.sh"

# lint TREE QUICK FULL: the findings for TREE's tests, one a line.
lint() {
    tree=$1 quick=$2 full=$3
    (cd "$tree" && find tests -name '*.sh' ! -name lib.sh ! -name tiers.sh | sort) | while read -r t; do
        case " $full " in *" $t "*) isfull=yes ;; *) isfull=no ;; esac
        if grep -q '^BB_FULL_ONLY=yes' "$tree/$t"; then
            [ $isfull = yes ] || echo "$t: sets BB_FULL_ONLY but is not in BB_FULL_TESTS"
            continue
        fi
        [ $isfull = no ] || echo "$t: in BB_FULL_TESTS but does not set BB_FULL_ONLY=yes"
        awk -v t="$t" '
            { line[NR] = $0 }
            /^[ \t]*#.*every tier \(/ { said = NR }
            {
                big = 0
                if (match($0, /(bb_mpirun|bb_np_test) +[0-9]+/)) {
                    n = substr($0, RSTART, RLENGTH); sub(/.* +/, "", n)
                    if (n + 0 > 2) big = n
                }
                if (match($0, /for np in [0-9 ]+;/)) {
                    l = substr($0, RSTART + 10, RLENGTH - 11)
                    k = split(l, w, " ")
                    for (i = 1; i <= k; i++) if (w[i] + 0 > 2) big = w[i]
                }
                if (big && !(said && NR - said <= 6))
                    printf "%s:%d: -n %s launched with no \"# every tier (WHAT)\" above it (or bb_ranks)\n", t, NR, big
            }' "$tree/$t"
    done
    for what in sum transfer redist "policy agreement"; do
        found_q=no found_d=no
        for t in $(cd "$tree" && grep -rl "# every tier ($what" tests 2>/dev/null); do
            case " $quick " in *" $t "*) found_q=yes ;; esac
            case " $full " in *" $t "*) ;; *) found_d=yes ;; esac
        done
        [ $found_q = yes ] || echo "the quick tier has no every-tier launch of $what"
        [ $found_d = yes ] || echo "the default tier has no every-tier launch of $what"
    done
}

q=${BB_SUITE_QUICK:?run through make check (BB_SUITE_QUICK unset)}
f=${BB_SUITE_FULL:?run through make check (BB_SUITE_FULL unset)}
lint "${BB_TIERS_SRC:-$S}" "$q" "$f" > "$BB_TMP/found"
bb_expect_true "every launch over 2 ranks is declared; each tier keeps one per protocol" \
    test ! -s "$BB_TMP/found"
sed 's/^/    /' "$BB_TMP/found" >&2

# Planted: an undeclared -n 3 launch, a literal -n 4 loop, a full-only test
# left in the default list and a protocol with no every-tier launch.
p="$BB_TMP/planted"
mkdir -p "$p/tests/mpi"
printf '%s\n' '#!/bin/sh' 'bb_mpirun 3 x' 'for np in 1 2 4; do :; done' \
    '# every tier (sum): declared' 'bb_mpirun 3 y' > "$p/tests/mpi/a.sh"
printf '%s\n' '#!/bin/sh' 'BB_FULL_ONLY=yes' > "$p/tests/mpi/b.sh"
lint "$p" "tests/mpi/a.sh" "" > "$BB_TMP/planted.out"
for want in 'a.sh:2: -n 3' 'a.sh:3: -n 4' 'b.sh: sets BB_FULL_ONLY' \
    'quick tier has no every-tier launch of transfer' \
    'default tier has no every-tier launch of policy agreement'; do
    bb_expect_grep "$want" "$BB_TMP/planted.out" "planted: $want found"
done
bb_expect_true "planted: the declared -n 3 launch passes" \
    sh -c "! grep -q 'a.sh:5:' '$BB_TMP/planted.out'"
bb_finish
