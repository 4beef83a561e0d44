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
    double *sorted = malloc(n * sizeof *sorted);
    if (sorted == NULL)
        return BB_ERR_NOMEM;
    memcpy(sorted, samples, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, bb_stats_cmp_double);

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
