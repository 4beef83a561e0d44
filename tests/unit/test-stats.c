/* test-stats: medians, ranges, rejection of bad input, and the range
 * confidence.  Serial: no MPI_Init. */
#include "config.h"
#include "record/bbrecord.h"
#include "../check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Exact comparison is right here: medians of small integers and halves are
 * exact in binary floating point. */
#define CHECK_EQ(got, want)                                                 \
    do {                                                                    \
        double g_ = (got), w_ = (want);                                     \
        if (g_ == w_) {                                                     \
            passed++;                                                       \
        } else {                                                            \
            failed++;                                                       \
            printf("FAIL %s:%d: %s = %.17g, expected %.17g\n", __FILE__,    \
                   __LINE__, #got, g_, w_);                                 \
        }                                                                   \
    } while (0)

static void test_odd(void)
{
    const double s[] = {5.0, 1.0, 4.0, 2.0, 3.0};
    const double copy[] = {5.0, 1.0, 4.0, 2.0, 3.0};
    bb_summary_t sum;
    memset(&sum, 0, sizeof sum);
    CHECK(bb_stats_summarize(s, 5, &sum) == BB_OK);
    CHECK(sum.n == 5);
    CHECK_EQ(sum.median, 3.0);
    CHECK_EQ(sum.min, 1.0);
    CHECK_EQ(sum.max, 5.0);
    CHECK(memcmp(s, copy, sizeof s) == 0); /* input order kept */
}

static void test_even(void)
{
    const double s[] = {10.0, 2.0, 7.0, 3.0};
    const double copy[] = {10.0, 2.0, 7.0, 3.0};
    bb_summary_t sum;
    CHECK(bb_stats_summarize(s, 4, &sum) == BB_OK);
    CHECK(sum.n == 4);
    CHECK_EQ(sum.median, 5.0); /* mean of 3 and 7 */
    CHECK_EQ(sum.min, 2.0);
    CHECK_EQ(sum.max, 10.0);
    CHECK(memcmp(s, copy, sizeof s) == 0);

    const double t[] = {1.0, 2.0};
    CHECK(bb_stats_summarize(t, 2, &sum) == BB_OK);
    CHECK_EQ(sum.median, 1.5);

    /* Two values near DBL_MAX: the median must not overflow to inf. */
    const double big[] = {1.5e308, 1.7e308};
    CHECK(bb_stats_summarize(big, 2, &sum) == BB_OK);
    CHECK(isfinite(sum.median));
    CHECK(sum.median > 1.5e308 && sum.median < 1.7e308);
}

static void test_single_and_duplicates(void)
{
    const double one[] = {2.5e-6};
    bb_summary_t sum;
    CHECK(bb_stats_summarize(one, 1, &sum) == BB_OK);
    CHECK_EQ(sum.median, 2.5e-6);
    CHECK_EQ(sum.min, 2.5e-6);
    CHECK_EQ(sum.max, 2.5e-6);

    const double dup[] = {4.0, 4.0, 1.0, 4.0, -2.0, 4.0};
    CHECK(bb_stats_summarize(dup, 6, &sum) == BB_OK);
    CHECK_EQ(sum.median, 4.0);
    CHECK_EQ(sum.min, -2.0);
    CHECK_EQ(sum.max, 4.0);
}

static void test_rejects(void)
{
    bb_summary_t sum;
    sum.n = 99;
    sum.median = 42.0;
    const double s[] = {1.0, 2.0, 3.0};
    CHECK(bb_stats_summarize(s, 0, &sum) == BB_ERR_ARG);
    CHECK(sum.n == 99 && sum.median == 42.0); /* untouched on failure */
    CHECK(bb_stats_summarize(NULL, 3, &sum) == BB_ERR_ARG);
    CHECK(bb_stats_summarize(s, 3, NULL) == BB_ERR_ARG);

    const double withnan[] = {1.0, NAN, 3.0};
    CHECK(bb_stats_summarize(withnan, 3, &sum) == BB_ERR_ARG);
    CHECK(sum.n == 99);
    const double withinf[] = {1.0, 2.0, INFINITY};
    CHECK(bb_stats_summarize(withinf, 3, &sum) == BB_ERR_ARG);
    const double withneginf[] = {-INFINITY};
    CHECK(bb_stats_summarize(withneginf, 1, &sum) == BB_ERR_ARG);
}

static void test_confidence(void)
{
    CHECK_EQ(bb_stats_range_confidence(3), 0.75);
    CHECK_EQ(bb_stats_range_confidence(1), 0.0);
    CHECK_EQ(bb_stats_range_confidence(2), 0.5);
    CHECK_EQ(bb_stats_range_confidence(5), 1.0 - 2.0 / 32.0);
    CHECK_EQ(bb_stats_range_confidence(0), 0.0);
    /* Monotone in n and below 1 for moderate n. */
    CHECK(bb_stats_range_confidence(10) > bb_stats_range_confidence(9));
    CHECK(bb_stats_range_confidence(20) < 1.0);
}

/* The helpers the benchmark tables use: the median alone, NaN for what
 * cannot be summarized, and the range cell. */
static void test_median_and_range(void)
{
    const double s[] = {3e-6, 1e-6, 2.5e-6, 8e-6};
    CHECK_EQ(bb_stats_median(s, 3), 2.5e-6);
    CHECK_EQ(bb_stats_median(s, 1), 3e-6);
    const double bad[] = {1.0, NAN, 2.0};
    CHECK(isnan(bb_stats_median(bad, 3)));
    CHECK(isnan(bb_stats_median(s, 0)));
    CHECK(isnan(bb_stats_median(NULL, 3)));

    bb_summary_t sum;
    char buf[64];
    CHECK(bb_stats_summarize(s, 4, &sum) == BB_OK);
    bb_stats_format_range(&sum, 1e6, 2, buf, sizeof buf);
    CHECK(strcmp(buf, "[1.00, 8.00]") == 0);
    bb_stats_format_range(&sum, 1e6, 1, buf, sizeof buf);
    CHECK(strcmp(buf, "[1.0, 8.0]") == 0);
    bb_stats_format_range(&sum, 1.0, 0, buf, 4);  /* truncated, terminated */
    CHECK(strcmp(buf, "[0,") == 0);
}

/* The exact coverage of [x(j), x(n+1-j)]: 1 - 2 * sum_{i<j} C(n, i) / 2^n,
 * in integers (C(50, 25) < 2^53, so every term is exact). */
static double exact_coverage(size_t n, size_t j)
{
    double c = 1.0, sum = 0.0;  /* C(n, i) */
    for (size_t i = 0; i < j; i++) {
        sum += c;
        c = c * (double)(n - i) / (double)(i + 1);
    }
    return 1.0 - 2.0 * sum / ldexp(1.0, (int)n);
}

/* n = 3..50 at three levels against the exact binomial sums: the order
 * statistic is the largest j whose coverage reaches the level. */
static void test_ci_order(void)
{
    const double levels[] = {0.90, 0.95, 0.99};
    for (size_t li = 0; li < 3; li++)
        for (size_t n = 3; n <= 50; n++) {
            size_t want = 0;
            for (size_t j = 1; 2 * j <= n + 1; j++)
                if (exact_coverage(n, j) >= levels[li])
                    want = j;
            double cov = -1.0;
            size_t got = bb_stats_ci_order(n, levels[li], &cov);
            CHECK_MSG(got == want, "n=%zu level=%.2f: j %zu, expected %zu", n, levels[li],
                      got, want);
            if (want > 0)
                CHECK_MSG(fabs(cov - exact_coverage(n, want)) < 1e-12,
                          "n=%zu level=%.2f: coverage %.15g, expected %.15g", n,
                          levels[li], cov, exact_coverage(n, want));
        }
    /* The figures: n < 6 has no interval at 0.95; n = 10 is
     * [x(2), x(9)] with coverage 1 - 2 * 11 / 1024. */
    CHECK(bb_stats_ci_order(5, 0.95, NULL) == 0);
    CHECK(bb_stats_ci_order(6, 0.95, NULL) == 1);
    double cov = 0.0;
    CHECK(bb_stats_ci_order(10, 0.95, &cov) == 2);
    CHECK_EQ(cov, 1.0 - 22.0 / 1024.0);
    CHECK(bb_stats_ci_order(10, 0.0, NULL) == 0);
    CHECK(bb_stats_ci_order(10, 1.0, NULL) == 0);
    /* Large n stays finite: about n/2 - 0.98 sqrt(n) at 0.95. */
    size_t j = bb_stats_ci_order(100000, 0.95, &cov);
    CHECK_MSG(j > 49600 && j < 49700 && cov >= 0.95 && cov < 0.96,
              "n=100000: j %zu coverage %g", j, cov);

    const double s[] = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
    bb_interval_t ci;
    CHECK(bb_stats_ci(s, 10, 0.95, &ci) == BB_OK);
    CHECK_EQ(ci.low, 2.0);
    CHECK_EQ(ci.high, 9.0);
    CHECK(ci.j == 2);
    CHECK(bb_stats_ci(s, 3, 0.95, &ci) == BB_OK && ci.j == 0 && isnan(ci.low)
          && isnan(ci.high) && ci.coverage == 0.75);
    CHECK(bb_stats_ci(s, 10, 1.5, &ci) == BB_ERR_ARG);
    const double bad[] = {1, NAN, 3, 4, 5, 6};
    CHECK(bb_stats_ci(bad, 6, 0.95, &ci) == BB_ERR_ARG);
}

static void test_ratio_interval(void)
{
    bb_interval_t a = {0.95, 2.0, 4.0, 0.96, 1}, b = {0.95, 1.0, 2.0, 0.96, 1};
    double lo, hi;
    CHECK(bb_stats_ratio_interval(&a, &b, &lo, &hi));
    CHECK_EQ(lo, 1.0);
    CHECK_EQ(hi, 4.0);
    b.low = (double)NAN;
    CHECK(!bb_stats_ratio_interval(&a, &b, &lo, &hi) && isnan(lo) && isnan(hi));
    b.low = 0.0;
    CHECK(!bb_stats_ratio_interval(&a, &b, &lo, &hi));
}

/* Per-round ratios cancel a drift common to both rows: a is 1.1 x b in
 * every round while both move 4x between rounds. */
static void test_paired(void)
{
    double a[10], b[10];
    unsigned char drop[10] = {0};
    for (int k = 0; k < 10; k++) {
        b[k] = (k % 2 ? 4.0 : 1.0) * (1.0 + 0.01 * k);
        a[k] = 1.1 * b[k] * (1.0 + 0.001 * (k % 3));
    }
    bb_paired_t p;
    CHECK(bb_stats_paired(a, b, NULL, 10, 0.95, &p) == BB_OK);
    CHECK(p.rounds == 10 && p.ci.j == 2 && p.resolved);
    CHECK_MSG(p.median > 1.1 && p.median < 1.103 && p.ci.low >= 1.1 && p.ci.high < 1.103,
              "paired %g [%g, %g]", p.median, p.ci.low, p.ci.high);
    /* A round that straddles a switch (a fast, b slow) moves the ratio of
     * the medians (2.75 / 4) but one round of the paired ratio. */
    double fa[10], fb[10];
    for (int k = 0; k < 10; k++) {
        fb[k] = k < 4 ? 1.0 : 4.0;
        fa[k] = 1.1 * (k < 5 ? 1.0 : 4.0);
    }
    CHECK(bb_stats_paired(fa, fb, NULL, 10, 0.95, &p) == BB_OK);
    CHECK_EQ(p.median, 1.1);
    CHECK(bb_stats_median(fa, 10) / bb_stats_median(fb, 10) < 0.7);
    drop[0] = drop[1] = drop[2] = drop[3] = drop[4] = 1;
    CHECK(bb_stats_paired(a, b, drop, 10, 0.95, &p) == BB_OK);
    CHECK(p.rounds == 5 && p.ci.j == 0 && !p.resolved && isnan(p.ci.low));
    b[5] = 0.0;
    CHECK(bb_stats_paired(a, b, drop, 10, 0.95, &p) == BB_OK && p.rounds == 4);
    /* Around 1.0: not resolved. */
    const double x[] = {1, 2, 3, 4, 5, 6, 7}, y[] = {2, 1, 3, 5, 4, 7, 6};
    CHECK(bb_stats_paired(x, y, NULL, 7, 0.95, &p) == BB_OK && !p.resolved);
    CHECK(bb_stats_paired(NULL, y, NULL, 7, 0.95, &p) == BB_ERR_ARG);
}

/* Samples at the scheduler's slices (TRMR2D at -n 4 on 2 cores: 7.942 to
 * 8.134 ms or 15.597 to 16.011 ms) against a spread that is not. */
static void test_quantum(void)
{
    const double sliced[] = {7.942e-3, 8.134e-3, 8.0e-3, 15.597e-3, 16.011e-3, 7.99e-3,
                             15.8e-3, 8.05e-3, 2e-6, 3e-5};
    bb_quantum_t q;
    CHECK(bb_stats_quantum(sliced, 10, 1e-3, &q) == BB_OK);
    CHECK_MSG(q.step > 7.9e-3 && q.step < 8.1e-3 && q.considered == 8 && q.fitting == 8
              && q.multiples == 2, "step %g fitting %zu of %zu", q.step, q.fitting,
              q.considered);
    const double spread[] = {1.3e-3, 2.9e-3, 4.1e-3, 1.7e-3, 5.5e-3, 3.6e-3, 2.2e-3, 6.3e-3};
    CHECK(bb_stats_quantum(spread, 8, 1e-3, &q) == BB_OK);
    CHECK_MSG(q.step == 0.0, "a spread read as step %g", q.step);
    /* One cluster says nothing of a step. */
    const double one[] = {8e-3, 8.1e-3, 7.9e-3, 8.05e-3};
    CHECK(bb_stats_quantum(one, 4, 1e-3, &q) == BB_OK && q.step == 0.0);
    /* Below the smallest step: not considered. */
    CHECK(bb_stats_quantum(spread, 8, 1.0, &q) == BB_OK && q.considered == 0
          && q.step == 0.0);
    CHECK(bb_stats_quantum(NULL, 0, 1e-3, &q) == BB_OK && q.step == 0.0);
    CHECK(bb_stats_quantum(spread, 8, 1e-3, NULL) == BB_ERR_ARG);
}

int main(void)
{
    test_odd();
    test_even();
    test_single_and_duplicates();
    test_rejects();
    test_confidence();
    test_median_and_range();
    test_ci_order();
    test_ratio_interval();
    test_paired();
    test_quantum();
    printf("%d passed, %d failed\n", passed, failed);
    return check_verdict();
}
