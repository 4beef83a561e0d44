/* test-overlap: the overlap figures on synthetic times (full overlap, none,
 * partial, clamping, zero compute, zero communication, bad input), the
 * peer-style variants, one point's figure set, and the compute kernel's
 * calibration.  Serial: no MPI_Init. */
#include "config.h"
#include "runner/runner.h"
#include "bench/overlap/figures.h"
#include "../check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The inputs below are small binary fractions (multiples of 1/8), so every
 * figure is exact and compared with ==. */
#define CHECK_FIG(call, want)                                               \
    do {                                                                    \
        bb_overlap_figure_t f_;                                             \
        memset(&f_, 0x5a, sizeof f_);                                       \
        bb_status_t st_ = (call);                                           \
        if (st_ == BB_OK && f_.defined == 1 && f_.value == (want)           \
            && f_.reason == NULL) {                                         \
            passed++;                                                       \
        } else {                                                            \
            failed++;                                                       \
            printf("FAIL %s:%d: %s = %.17g (status %d, defined %d), "       \
                   "expected %.17g\n", __FILE__, __LINE__, #call, f_.value, \
                   (int)st_, f_.defined, (double)(want));                   \
        }                                                                   \
    } while (0)

#define CHECK_UNDEFINED(call)                                               \
    do {                                                                    \
        bb_overlap_figure_t f_;                                             \
        memset(&f_, 0x5a, sizeof f_);                                       \
        bb_status_t st_ = (call);                                           \
        CHECK(st_ == BB_OK);                                                \
        CHECK(f_.defined == 0);                                             \
        CHECK(f_.reason != NULL && f_.reason[0] != '\0');                   \
        CHECK(f_.value == 0.0);                                             \
    } while (0)

static void test_ratio(void)
{
    bb_overlap_figure_t f;

    /* Full: the overlapped run lasts as long as the longer part alone. */
    CHECK_FIG(bb_overlap_ratio(1.0, 2.0, 2.0, &f_), 1.0);
    CHECK_FIG(bb_overlap_ratio(2.0, 1.0, 2.0, &f_), 1.0);
    /* None: as long as both in sequence. */
    CHECK_FIG(bb_overlap_ratio(1.0, 2.0, 3.0, &f_), 0.0);
    /* Partial: 0.5 of the 1 s communication hidden behind 2 s compute. */
    CHECK_FIG(bb_overlap_ratio(1.0, 2.0, 2.5, &f_), 0.5);
    CHECK_FIG(bb_overlap_ratio(0.5, 0.5, 0.625, &f_), 0.75);
    /* Denominator is the shorter part, whichever it is. */
    CHECK_FIG(bb_overlap_ratio(4.0, 1.0, 4.75, &f_), 0.25);

    /* Clamping: slower than sequential gives 0, faster than the longer
     * part alone (noise) gives 1; raw and clamped keep the truth. */
    CHECK(bb_overlap_ratio(1.0, 2.0, 4.0, &f) == BB_OK);
    CHECK(f.defined && f.value == 0.0 && f.clamped && f.raw == -1.0);
    CHECK(bb_overlap_ratio(1.0, 2.0, 1.5, &f) == BB_OK);
    CHECK(f.defined && f.value == 1.0 && f.clamped && f.raw == 1.5);
    CHECK(bb_overlap_ratio(1.0, 2.0, 2.5, &f) == BB_OK);
    CHECK(!f.clamped && f.raw == 0.5);

    /* Zero compute, zero communication: undefined with a reason, never 0. */
    CHECK_UNDEFINED(bb_overlap_ratio(1.0, 0.0, 1.0, &f_));
    CHECK_UNDEFINED(bb_overlap_ratio(0.0, 1.0, 1.0, &f_));
    CHECK_UNDEFINED(bb_overlap_ratio(0.0, 0.0, 0.0, &f_));
    CHECK(bb_overlap_ratio(1.0, 0.0, 1.0, &f) == BB_OK);
    CHECK(strstr(f.reason, "compute") != NULL);
    CHECK(bb_overlap_ratio(0.0, 1.0, 1.0, &f) == BB_OK);
    CHECK(strstr(f.reason, "communication") != NULL);

    /* Bad input is an error and leaves the figure alone. */
    memset(&f, 0, sizeof f);
    f.value = 42.0;
    CHECK(bb_overlap_ratio(-1.0, 1.0, 1.0, &f) == BB_ERR_ARG);
    CHECK(bb_overlap_ratio(1.0, -0.125, 1.0, &f) == BB_ERR_ARG);
    CHECK(bb_overlap_ratio(1.0, 1.0, -1.0, &f) == BB_ERR_ARG);
    CHECK(bb_overlap_ratio(NAN, 1.0, 1.0, &f) == BB_ERR_ARG);
    CHECK(bb_overlap_ratio(1.0, INFINITY, 1.0, &f) == BB_ERR_ARG);
    CHECK(bb_overlap_ratio(1.0, 1.0, 1.0, NULL) == BB_ERR_ARG);
    CHECK(f.value == 42.0);
}

static void test_osu(void)
{
    bb_overlap_figure_t f;
    /* OSU calibrates compute to the pure communication time: t_pure = 1.
     * Full overlap: total equals the compute; none: compute + pure. */
    CHECK_FIG(bb_overlap_osu(1.0, 1.0, 1.0, &f_), 1.0);
    CHECK_FIG(bb_overlap_osu(2.0, 1.0, 1.0, &f_), 0.0);
    CHECK_FIG(bb_overlap_osu(1.25, 1.0, 1.0, &f_), 0.75);
    /* Bounded below only: worse than sequential is 0, clamped. */
    CHECK(bb_overlap_osu(3.0, 1.0, 1.0, &f) == BB_OK);
    CHECK(f.value == 0.0 && f.clamped && f.raw == -1.0);
    /* Not bounded above: OSU reports above 100 % when total < compute. */
    CHECK(bb_overlap_osu(0.5, 1.0, 1.0, &f) == BB_OK);
    CHECK(f.value == 1.5 && !f.clamped);
    /* It differs from bbench's ratio when compute is not calibrated to the
     * communication: 1 s comm, 4 s compute, 4.5 s total. */
    CHECK_FIG(bb_overlap_osu(4.5, 4.0, 1.0, &f_), 0.5);
    CHECK_FIG(bb_overlap_ratio(1.0, 4.0, 4.5, &f_), 0.5);
    /* ... and when compute is shorter than communication. */
    CHECK_FIG(bb_overlap_osu(4.5, 1.0, 4.0, &f_), 0.125);
    CHECK_FIG(bb_overlap_ratio(4.0, 1.0, 4.5, &f_), 0.5);
    /* Zero compute is defined for OSU (it only divides by t_pure): 0 s
     * compute, total == pure means nothing hidden. */
    CHECK_FIG(bb_overlap_osu(1.0, 0.0, 1.0, &f_), 0.0);
    CHECK_UNDEFINED(bb_overlap_osu(1.0, 1.0, 0.0, &f_));
    CHECK(bb_overlap_osu(-1.0, 1.0, 1.0, &f) == BB_ERR_ARG);
    CHECK(bb_overlap_osu(1.0, 1.0, 1.0, NULL) == BB_ERR_ARG);
}

static void test_imb(void)
{
    bb_overlap_figure_t f;
    /* The documented formula equals bbench's ratio on the same inputs. */
    CHECK_FIG(bb_overlap_imb(1.0, 2.0, 2.5, BB_OVERLAP_IMB_DOC, &f_), 0.5);
    CHECK_FIG(bb_overlap_imb(1.0, 2.0, 2.0, BB_OVERLAP_IMB_DOC, &f_), 1.0);
    CHECK_FIG(bb_overlap_imb(1.0, 2.0, 3.0, BB_OVERLAP_IMB_DOC, &f_), 0.0);
    /* The code's denominator is the longer part: 0.5 s hidden of 2 s. */
    CHECK_FIG(bb_overlap_imb(1.0, 2.0, 2.5, BB_OVERLAP_IMB_CODE, &f_), 0.25);
    /* Both agree at full and no overlap only when the parts are equal. */
    CHECK_FIG(bb_overlap_imb(1.0, 1.0, 1.0, BB_OVERLAP_IMB_CODE, &f_), 1.0);
    CHECK_FIG(bb_overlap_imb(1.0, 2.0, 2.0, BB_OVERLAP_IMB_CODE, &f_), 0.5);
    /* Clamped to [0, 1] both ways. */
    CHECK(bb_overlap_imb(1.0, 2.0, 1.0, BB_OVERLAP_IMB_DOC, &f) == BB_OK);
    CHECK(f.value == 1.0 && f.clamped && f.raw == 2.0);
    CHECK(bb_overlap_imb(1.0, 2.0, 5.0, BB_OVERLAP_IMB_CODE, &f) == BB_OK);
    CHECK(f.value == 0.0 && f.clamped);
    /* Zero compute: undefined for the documented form (min is 0), but the
     * code form divides by the communication and says 0 overlap. */
    CHECK_UNDEFINED(bb_overlap_imb(1.0, 0.0, 1.0, BB_OVERLAP_IMB_DOC, &f_));
    CHECK_FIG(bb_overlap_imb(1.0, 0.0, 1.0, BB_OVERLAP_IMB_CODE, &f_), 0.0);
    CHECK_UNDEFINED(bb_overlap_imb(0.0, 0.0, 0.0, BB_OVERLAP_IMB_CODE, &f_));
    CHECK(bb_overlap_imb(1.0, 1.0, 1.0, (bb_overlap_imb_variant_t)7, &f)
          == BB_ERR_ARG);
    CHECK(bb_overlap_imb(1.0, -1.0, 1.0, BB_OVERLAP_IMB_DOC, &f) == BB_ERR_ARG);
}

static void test_speedup_slowdown_fraction(void)
{
    bb_overlap_figure_t f;
    CHECK_FIG(bb_overlap_speedup(3.0, 2.0, &f_), 1.5);
    CHECK_FIG(bb_overlap_speedup(2.0, 4.0, &f_), 0.5); /* overlap hurt */
    CHECK_UNDEFINED(bb_overlap_speedup(1.0, 0.0, &f_));
    CHECK(bb_overlap_speedup(1.0, -2.0, &f) == BB_ERR_ARG);

    CHECK_FIG(bb_overlap_slowdown(2.5, 2.0, &f_), 1.25);
    CHECK_FIG(bb_overlap_slowdown(0.0, 2.0, &f_), 0.0);
    CHECK_UNDEFINED(bb_overlap_slowdown(1.0, 0.0, &f_));
    CHECK(bb_overlap_slowdown(NAN, 1.0, &f) == BB_ERR_ARG);

    CHECK_FIG(bb_overlap_fraction(3, 4, &f_), 0.75);
    CHECK_FIG(bb_overlap_fraction(0, 5, &f_), 0.0);
    CHECK_FIG(bb_overlap_fraction(5, 5, &f_), 1.0);
    CHECK_UNDEFINED(bb_overlap_fraction(0, 0, &f_));
    CHECK(bb_overlap_fraction(6, 5, &f) == BB_ERR_ARG);
    CHECK(bb_overlap_fraction(-1, 5, &f) == BB_ERR_ARG);
    CHECK(bb_overlap_fraction(1, -5, &f) == BB_ERR_ARG);
}

static void test_compute(void)
{
    bb_compute_t c;
    CHECK(bb_compute_calibrate(0, 0.01, &c) == BB_ERR_ARG);
    CHECK(bb_compute_calibrate(1, 0.0, &c) == BB_ERR_ARG);
    CHECK(bb_compute_calibrate(1, 0.01, NULL) == BB_ERR_ARG);
    CHECK(bb_compute_calibrate(3, 0.005, &c) == BB_OK);
    CHECK(c.iters_per_s > 0.0 && isfinite(c.iters_per_s));
    CHECK(c.slowest_iters_per_s > 0.0 && c.slowest_iters_per_s <= c.iters_per_s);
    CHECK(c.trials == 3);
    CHECK(c.calibration_s >= 3 * 0.005);

    CHECK(bb_compute_iterations(&c, 0.0) == 0);
    CHECK(bb_compute_iterations(&c, -1.0) == 0);
    CHECK(bb_compute_iterations(NULL, 1.0) == 0);
    int64_t n = bb_compute_iterations(&c, 0.01);
    CHECK(n > 0);
    /* Twice the time, twice the iterations (up to rounding). */
    int64_t n2 = bb_compute_iterations(&c, 0.02);
    CHECK(n2 >= 2 * n - 1 && n2 <= 2 * n + 1);

    /* The kernel does work that depends on the count: different counts give
     * different results, equal counts the same (it has no hidden state). */
    double r0 = bb_compute_run(0), r1 = bb_compute_run(1000);
    CHECK(r0 != r1);
    CHECK(bb_compute_run(1000) == r1);
    CHECK(isfinite(bb_compute_run(n)));
}

/* The figures of one point: two samples of two ranks, the rank with the
 * largest t_unpolled swapping between samples (IMB's inputs follow it). */
static void test_set(void)
{
    enum { S = 2 };
    const double comm[S] = { 1.0, 1.0 }, compute[S] = { 2.0, 2.0 };
    const double immediate[S] = { 3.0, 3.0 }, polled[S] = { 2.5, 2.5 };
    const double polled_compute[S] = { 2.0, 2.0 }, unpolled[S] = { 3.0, 3.0 };
    /* [rank][comm, unpolled, unpolled.compute][sample] */
    const double per_rank[2 * BB_OVERLAP_RANK_N * S] = {
        1.0, 0.5, 2.75, 2.25, 2.0, 1.5,
        0.5, 1.0, 2.25, 2.75, 1.5, 2.0
    };
    const int64_t completed[S] = { 4, 2 };
    bb_overlap_times_t t = {
        .samples = S, .comm = comm, .compute = compute, .immediate = immediate,
        .polled = polled, .polled_compute = polled_compute, .unpolled = unpolled,
        .ranks = 2, .per_rank = per_rank, .reps = 4, .batches = 1, .completed = completed
    };
    bb_overlap_set_t set;
    CHECK(bb_overlap_set_compute(&t, &set) == BB_OK);
    for (int s = 0; s < S; s++) {
        CHECK(set.f[BB_OVERLAP_F_OVERLAP][s].value == 0.5);
        CHECK(set.f[BB_OVERLAP_F_UNPOLLED][s].value == 0.0);
        /* Rank means: 1 - (2.5 - 1.75) / 0.75. */
        CHECK(set.f[BB_OVERLAP_F_OSU][s].value == 0.0);
        /* The rank with t_unpolled 2.75: (1 + 2 - 2.75) / min, / max. */
        CHECK(set.f[BB_OVERLAP_F_IMB][s].value == 0.25);
        CHECK(set.f[BB_OVERLAP_F_IMB_CODE][s].value == 0.125);
        CHECK(set.f[BB_OVERLAP_F_SPEEDUP][s].value == 3.0 / 2.5);
        CHECK(set.f[BB_OVERLAP_F_SLOWDOWN][s].value == 1.0);
    }
    CHECK(set.done.defined && set.done.value == 0.75 && set.done_calls == 6);
    CHECK(set.done_samples[0] == 1.0 && set.done_samples[1] == 0.5);
    CHECK(set.uncertainty[0] == 0.0);  /* every range empty */
    bb_overlap_set_free(&set);
    /* t_compute's range counts: comm 1 and overlapped 2.5 in both samples,
     * compute 2 and 3.5 (min 1): (0 + 1.5 + 0) / 1, noise-dominated. */
    const double compute_spread[S] = { 2.0, 3.5 };
    t.compute = compute_spread;
    CHECK(bb_overlap_set_compute(&t, &set) == BB_OK);
    CHECK_MSG(set.uncertainty[0] == 1.5, "uncertainty with t_compute's range: %g",
              set.uncertainty[0]);
    bb_overlap_set_free(&set);
    t.compute = compute;
    CHECK(bb_overlap_set_compute(&t, &set) == BB_OK);
    cJSON *q = cJSON_CreateObject();
    bb_overlap_set_quantities(&set, NULL, q);
    cJSON *o = cJSON_GetObjectItemCaseSensitive(q, "overlap");
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "value")) == 0.5);
    CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "inputs")));
    o = cJSON_GetObjectItemCaseSensitive(q, "completed_during_batches");
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "value")) == 0.75);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(q, "overlap.imb")) > 0);
    cJSON_Delete(q);
    q = cJSON_CreateObject();
    bb_overlap_set_quantities(&set, "refused", q);
    o = cJSON_GetObjectItemCaseSensitive(q, "overlap.speedup");
    CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "value")));
    cJSON_Delete(q);
    bb_overlap_set_free(&set);

    /* No compute and no batches: the figures that need them are undefined. */
    t.compute_none = 1;
    t.batches = 0;
    CHECK(bb_overlap_set_compute(&t, &set) == BB_OK);
    CHECK(!set.f[BB_OVERLAP_F_OVERLAP][0].defined && !set.done.defined);
    CHECK(set.f[BB_OVERLAP_F_SPEEDUP][0].defined && isnan(set.uncertainty[0]));
    bb_overlap_set_free(&set);
    t.reps = 0;
    CHECK(bb_overlap_set_compute(&t, &set) == BB_ERR_ARG && set.f[0] == NULL);
}

int main(void)
{
    test_ratio();
    test_osu();
    test_imb();
    test_speedup_slowdown_fraction();
    test_compute();
    test_set();
    printf("test-overlap: %d passed, %d failed\n", passed, failed);
    return check_verdict();
}
