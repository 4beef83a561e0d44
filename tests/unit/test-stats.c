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

int main(void)
{
    test_odd();
    test_even();
    test_single_and_duplicates();
    test_rejects();
    test_confidence();
    test_median_and_range();
    printf("%d passed, %d failed\n", passed, failed);
    return check_verdict();
}
