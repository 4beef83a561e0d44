/* statistics.c: the two-sided Mann-Whitney U test and the median of a list.
 * Part of bbench-compare's comparison (compare.h); MPI-free. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

#include <math.h>
#include <stdlib.h>

typedef struct bb_ranked {
    double v;
    int side;  /* 0 base, 1 candidate */
} bb_ranked_t;

static int bb_cmp_ranked(const void *a, const void *b)
{
    double x = ((const bb_ranked_t *)a)->v, y = ((const bb_ranked_t *)b)->v;
    return (x > y) - (x < y);
}

/* Two-sided p-value of the Mann-Whitney U test of samples x (n1) against
 * y (n2): ranks of the pooled samples (ties share their mean rank), U of x,
 * and the normal approximation with the tie correction of the variance and a
 * continuity correction of 0.5.  *u_out is U of x.  -1 when out of memory. */
double bb_mann_whitney(const cJSON *x, const cJSON *y, double *u_out)
{
    size_t n1 = (size_t)cJSON_GetArraySize(x), n2 = (size_t)cJSON_GetArraySize(y);
    size_t n = n1 + n2;
    bb_ranked_t *v = malloc(n * sizeof *v);
    if (v == NULL)
        return -1.0;
    size_t k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, x) v[k++] = (bb_ranked_t){e->valuedouble, 0};
    cJSON_ArrayForEach(e, y) v[k++] = (bb_ranked_t){e->valuedouble, 1};
    qsort(v, n, sizeof *v, bb_cmp_ranked);
    double r1 = 0.0, ties = 0.0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j].v == v[i].v)
            j++;
        double rank = 0.5 * (double)(i + 1 + j);  /* mean of ranks i+1 .. j */
        double t = (double)(j - i);
        ties += t * t * t - t;
        for (size_t m = i; m < j; m++)
            if (v[m].side == 0)
                r1 += rank;
        i = j;
    }
    free(v);
    double dn1 = (double)n1, dn2 = (double)n2, dn = (double)n;
    double u = r1 - dn1 * (dn1 + 1.0) / 2.0;
    *u_out = u;
    double var = dn1 * dn2 / 12.0 * ((dn + 1.0) - ties / (dn * (dn - 1.0)));
    if (!(var > 0.0))
        return 1.0;  /* every sample equal */
    double z = (fabs(u - dn1 * dn2 / 2.0) - 0.5) / sqrt(var);
    if (z < 0.0)
        z = 0.0;
    double p = erfc(z / sqrt(2.0));
    return p > 1.0 ? 1.0 : p;
}

static int bb_cmp_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the finite positive numbers v[0, n) (reordered), or NaN. */
double bb_median_of(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0)
            v[k++] = v[i];
    if (k == 0)
        return NAN;
    qsort(v, k, sizeof *v, bb_cmp_doubles);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}
