/* stats.c: summaries of timing samples (median and range), without MPI. */
#include "config.h"
#include "private/bbtext.h"
#include "bbrecord.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bb_stats_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A sorted copy of n samples (caller frees), NULL out of memory. */
static double *sorted_copy(const double *samples, size_t n)
{
    double *sorted = malloc(n * sizeof *sorted);
    if (sorted != NULL) {
        memcpy(sorted, samples, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, bb_stats_cmp_double);
    }
    return sorted;
}

bb_status_t bb_stats_summarize(const double *samples, size_t n,
                               bb_summary_t *summary_out)
{
    if (samples == NULL || n == 0 || summary_out == NULL)
        return BB_ERR_ARG;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(samples[i]))
            return BB_ERR_ARG;

    /* Sort a copy: the caller's samples keep their order (they are the raw
     * series the record stores). */
    double *sorted = sorted_copy(samples, n);
    if (sorted == NULL)
        return BB_ERR_NOMEM;

    summary_out->n = n;
    summary_out->min = sorted[0];
    summary_out->max = sorted[n - 1];
    if (n % 2 == 1)
        summary_out->median = sorted[n / 2];
    else /* halve each term first so two huge values cannot overflow */
        summary_out->median = 0.5 * sorted[n / 2 - 1] + 0.5 * sorted[n / 2];
    free(sorted);
    return BB_OK;
}

double bb_stats_median(const double *samples, size_t n)
{
    bb_summary_t s;
    return bb_stats_summarize(samples, n, &s) == BB_OK ? s.median : (double)NAN;
}

void bb_stats_format_range(const bb_summary_t *summary, double scale, int decimals,
                           char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return;
    if (summary == NULL) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, len, "[%.*f, %.*f]", decimals, summary->min * scale, decimals,
             summary->max * scale);
}

double bb_stats_range_confidence(size_t n)
{
    /* P(median outside [min, max]) = P(all above) + P(all below) = 2 * 0.5^n
     * for a continuous distribution; distribution-free. */
    if (n == 0)
        return 0.0;
    return 1.0 - 2.0 * pow(0.5, (double)n);
}

/* P(Binomial(n, 1/2) <= j - 1) for j = 1, 2, ... is summed term by term in
 * logarithms, so that n up to --samples' 100000 neither overflows nor
 * underflows. */
static double half_binomial_term(size_t n, size_t i)
{
    return exp(lgamma((double)n + 1.0) - lgamma((double)i + 1.0)
               - lgamma((double)(n - i) + 1.0) - (double)n * log(2.0));
}

size_t bb_stats_ci_order(size_t n, double level, double *coverage_out)
{
    if (coverage_out != NULL)
        *coverage_out = n > 0 ? bb_stats_range_confidence(n) : 0.0;
    if (n == 0 || !(level > 0.0 && level < 1.0))
        return 0;
    size_t best = 0;
    double cdf = 0.0;  /* P(B <= j - 1) */
    for (size_t j = 1; 2 * j <= n + 1; j++) {
        cdf += half_binomial_term(n, j - 1);
        double coverage = 1.0 - 2.0 * cdf;
        if (coverage < level)
            break;
        best = j;
        if (coverage_out != NULL)
            *coverage_out = coverage;
    }
    return best;
}

bb_status_t bb_stats_ci(const double *samples, size_t n, double level,
                        bb_interval_t *ci_out)
{
    if (samples == NULL || n == 0 || ci_out == NULL || !(level > 0.0 && level < 1.0))
        return BB_ERR_ARG;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(samples[i]))
            return BB_ERR_ARG;
    ci_out->level = level;
    ci_out->low = ci_out->high = (double)NAN;
    ci_out->j = bb_stats_ci_order(n, level, &ci_out->coverage);
    if (ci_out->j == 0)
        return BB_OK;
    double *sorted = sorted_copy(samples, n);
    if (sorted == NULL)
        return BB_ERR_NOMEM;
    ci_out->low = sorted[ci_out->j - 1];
    ci_out->high = sorted[n - ci_out->j];
    free(sorted);
    return BB_OK;
}

static int positive(double x)
{
    return isfinite(x) && x > 0.0;
}

int bb_stats_ratio_interval(const bb_interval_t *a, const bb_interval_t *b,
                            double *low_out, double *high_out)
{
    int ok = a != NULL && b != NULL && positive(a->low) && positive(a->high)
             && positive(b->low) && positive(b->high);
    if (low_out != NULL)
        *low_out = ok ? a->low / b->high : (double)NAN;
    if (high_out != NULL)
        *high_out = ok ? a->high / b->low : (double)NAN;
    return ok;
}

bb_status_t bb_stats_paired(const double *a, const double *b, const unsigned char *drop,
                            size_t n, double level, bb_paired_t *paired_out)
{
    if (a == NULL || b == NULL || paired_out == NULL)
        return BB_ERR_ARG;
    memset(paired_out, 0, sizeof *paired_out);
    paired_out->median = (double)NAN;
    paired_out->ci.level = level;
    paired_out->ci.low = paired_out->ci.high = (double)NAN;
    double *r = malloc((n > 0 ? n : 1) * sizeof *r);
    if (r == NULL)
        return BB_ERR_NOMEM;
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if ((drop == NULL || !drop[k]) && isfinite(a[k]) && positive(b[k]))
            r[m++] = a[k] / b[k];
    bb_status_t st = BB_OK;
    paired_out->rounds = m;
    if (m > 0) {
        paired_out->median = bb_stats_median(r, m);
        st = bb_stats_ci(r, m, level, &paired_out->ci);
        paired_out->resolved = st == BB_OK && paired_out->ci.j > 0
                               && (paired_out->ci.low > 1.0 || paired_out->ci.high < 1.0);
    }
    free(r);
    return st;
}

/* Do at least BB_QUANTUM_SHARE of the samples at or above min_step sit
 * near a multiple (1..16) of step, with two multiples or more seen? */
static int quantum_fits(const double *v, size_t m, double step, bb_quantum_t *q)
{
    size_t fit = 0;
    unsigned seen = 0;  /* bit k - 1: multiple k */
    for (size_t i = 0; i < m; i++) {
        double k = nearbyint(v[i] / step);
        if (k >= 1.0 && k <= 16.0 && fabs(v[i] - k * step) <= BB_QUANTUM_TOLERANCE * step) {
            fit++;
            seen |= 1u << ((unsigned)k - 1u);
        }
    }
    int multiples = __builtin_popcount(seen);
    if (multiples < 2 || (double)fit < BB_QUANTUM_SHARE * (double)m)
        return 0;
    q->step = step;
    q->fitting = fit;
    q->multiples = multiples;
    return 1;
}

bb_status_t bb_stats_quantum(const double *samples, size_t n, double min_step,
                             bb_quantum_t *quantum_out)
{
    if ((samples == NULL && n > 0) || quantum_out == NULL)
        return BB_ERR_ARG;
    memset(quantum_out, 0, sizeof *quantum_out);
    double *v = malloc((n > 0 ? n : 1) * sizeof *v);
    if (v == NULL)
        return BB_ERR_NOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(samples[i]) && samples[i] >= min_step)
            v[m++] = samples[i];
    quantum_out->considered = m;
    if (m >= 2) {
        qsort(v, m, sizeof *v, bb_stats_cmp_double);
        /* Candidates: each of the 8 smallest samples as 1..8 steps (the
         * smallest may be a stray that fits no slice); the largest step that
         * fits wins, refined to the mean of the fitting samples' x / k (a
         * slice measured with jitter either side of it). */
        size_t seeds = m < 8 ? m : 8;
        for (size_t c = 0; c < seeds * 8; c++) {
            double step = v[c / 8] / (double)(c % 8 + 1);
            bb_quantum_t trial = *quantum_out;
            if (step < min_step || step <= quantum_out->step
                || !quantum_fits(v, m, step, &trial))
                continue;
            *quantum_out = trial;
            double sum = 0.0;
            size_t used = 0;
            for (size_t i = 0; i < m; i++) {
                double k = nearbyint(v[i] / step);
                if (k >= 1.0 && k <= 16.0
                    && fabs(v[i] - k * step) <= BB_QUANTUM_TOLERANCE * step) {
                    sum += v[i] / k;
                    used++;
                }
            }
            bb_quantum_t refined = *quantum_out;
            if (used > 0 && quantum_fits(v, m, sum / (double)used, &refined))
                *quantum_out = refined;
        }
    }
    free(v);
    return BB_OK;
}

void bb_ratio_figure(const double *a, size_t na, double a_median, const double *b, size_t nb,
                     double b_median, int unpaired, const unsigned char *drop, double level,
                     bb_ratio_figure_t *ratio_out)
{
    bb_ratio_figure_t *r = ratio_out;
    memset(r, 0, sizeof *r);
    r->level = level;
    r->of_medians = b_median > 0.0 ? a_median / b_median : (double)NAN;
    r->low = r->high = (double)NAN;
    r->paired = !unpaired && a != NULL && b != NULL && na == nb && na > 0
                && bb_stats_paired(a, b, drop, na, level, &r->pair) == BB_OK
                && r->pair.rounds > 0;
    if (r->paired) {
        r->shown = r->pair.median;
        r->low = r->pair.ci.low;
        r->high = r->pair.ci.high;
    } else {
        bb_interval_t ia, ib;
        r->shown = r->of_medians;
        if (a != NULL && b != NULL && na > 0 && nb > 0
            && bb_stats_ci(a, na, level, &ia) == BB_OK && bb_stats_ci(b, nb, level, &ib) == BB_OK)
            bb_stats_ratio_interval(&ia, &ib, &r->low, &r->high);
    }
    int known = !isnan(r->low) && !isnan(r->high);
    r->resolved = known && (r->low > 1.0 || r->high < 1.0);
    r->moved = r->paired && known && (r->of_medians < r->low || r->of_medians > r->high);
}

void bb_ratio_figure_text(const bb_ratio_figure_t *ratio, char *buf, size_t len)
{
    snprintf(buf, len, "%.2f%s%s", ratio->shown, ratio->resolved ? "" : "?",
             ratio->moved ? "!" : "");
}
