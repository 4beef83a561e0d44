"""bench.py's statistics: the order statistic of the interval of the median
against exact binomial sums (the rule of record/stats.c, whose validator
checks the records), and the paired ratio.  Pure Python: every rank runs the
same cases (no MPI call beyond importing bbench.bench)."""
import math

import pytest

from bbench.bench import ci_order, ci_reason, interval, paired_ratio, quantity


def exact_coverage(n, j):
    """P(x(j) <= median <= x(n+1-j)) = P(j <= B <= n - j), B ~ Binomial(n, 1/2),
    summed directly (not as 1 - 2 P(B <= j - 1))."""
    return sum(math.comb(n, i) for i in range(j, n - j + 1)) / 2 ** n


@pytest.mark.parametrize("level", [0.90, 0.95, 0.99])
@pytest.mark.parametrize("n", range(3, 51))
def test_ci_order_exact(n, level):
    want = 0
    for j in range(1, (n + 1) // 2 + 1):
        if exact_coverage(n, j) >= level:
            want = j
    j, cov = ci_order(n, level)
    assert j == want
    if want:
        assert cov == pytest.approx(exact_coverage(n, want), rel=0, abs=1e-15)
        assert cov >= level
        # j is the largest: j + 1 falls short (or is past the middle).
        assert 2 * (j + 1) > n + 1 or exact_coverage(n, j + 1) < level
    else:
        assert cov == 1 - 2 * 0.5 ** n  # [min, max]'s coverage, as the C rule says


def test_ci_order_figures():
    # The figures: n < 6 has no interval at 0.95; n = 10 is
    # [x(2), x(9)] with coverage 1 - 2 * 11 / 1024.
    assert ci_order(5, 0.95) == (0, 0.9375)
    assert ci_order(6, 0.95)[0] == 1
    assert ci_order(10, 0.95) == (2, 1 - 22 / 1024)
    assert ci_order(10, 0.0)[0] == 0 and ci_order(10, 1.0)[0] == 0
    ci, why = interval([10, 1, 9, 2, 8, 3, 7, 4, 6, 5], 0.95)
    assert why is None
    assert ci == {"level": 0.95, "low": 2, "high": 9, "coverage": 1 - 22 / 1024, "order": 2}
    ci, why = interval([3, 1, 2, 5, 4], 0.95)
    assert ci is None
    assert why == ("5 samples: an interval of the median at level 0.95 needs 6 or more "
                   "(even [min, max] covers 0.9375)")
    assert ci_reason(3, 0.99).startswith("3 samples: an interval of the median at level "
                                         "0.99 needs 8 or more")


def test_quantity_carries_ci():
    q = quantity([5e-6, 1e-6, 4e-6, 2e-6, 3e-6, 6e-6], 0.95)
    assert q["ci"] == {"level": 0.95, "low": 1e-6, "high": 6e-6, "coverage": 0.96875,
                       "order": 1}
    assert "ci_reason" not in q
    q = quantity([1.0, 2.0, 3.0], 0.95)
    assert q["ci"] is None and q["ci_reason"].startswith("3 samples")


def test_paired_ratio():
    # a is 1.1 x b in every round while both move 4x between rounds: the
    # per-round ratios cancel the drift (record/stats.c's case).
    b = [(4.0 if k % 2 else 1.0) * (1 + 0.01 * k) for k in range(10)]
    a = [1.1 * b[k] * (1 + 0.001 * (k % 3)) for k in range(10)]
    p = paired_ratio(a, b, 0.95)
    assert p["rounds"] == 10 and p["ci"]["order"] == 2 and p["resolved"]
    assert 1.1 <= p["ci"]["low"] <= p["median"] <= p["ci"]["high"] < 1.103
    # A round that straddles a switch moves the ratio of the medians, not
    # the paired ratio.
    fb = [1.0 if k < 4 else 4.0 for k in range(10)]
    fa = [1.1 * (1.0 if k < 5 else 4.0) for k in range(10)]
    assert paired_ratio(fa, fb, 0.95)["median"] == pytest.approx(1.1)
    # Around 1.0: not resolved; too few rounds: no interval, not resolved.
    p = paired_ratio([1, 2, 3, 4, 5, 6, 7], [2, 1, 3, 5, 4, 7, 6], 0.95)
    assert p["ci"] is not None and not p["resolved"]
    p = paired_ratio(a[:5], b[:5], 0.95)
    assert p["rounds"] == 5 and p["ci"] is None and not p["resolved"]
    assert p["ci_reason"].startswith("5 samples")
    # Rounds with a denominator not positive (or a figure not finite) are
    # left out; none left: no median.
    p = paired_ratio([1.0, 2.0, float("nan"), 3.0], [1.0, 0.0, 1.0, 1.0], 0.95)
    assert p["rounds"] == 2 and p["ratios"] == [1.0, 3.0]
    p = paired_ratio([1.0], [0.0], 0.95)
    assert p["rounds"] == 0 and p["median"] is None and p["ci"] is None and not p["resolved"]
