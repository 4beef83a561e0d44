/* measure.c: the measurement engine (see measure.h for the sequence). */
#include "config.h"
#include "measure.h"

#include <stdlib.h>
#include <string.h>

const double *bb_measure_part(const bb_measure_result_t *result, int p)
{
    return result->parts + (size_t)p * (size_t)result->samples;
}

const double *bb_measure_count(const bb_measure_result_t *result, int c)
{
    return result->counts + (size_t)c * (size_t)result->samples;
}

void bb_measure_result_clear(bb_measure_result_t *result)
{
    if (result == NULL)
        return;
    free(result->first);
    free(result->parts);
    free(result->counts);
    memset(result, 0, sizeof *result);
}

/* Calls of call_s seconds that fit budget_s, in [1, cap]; a call too short
 * for the clock to see gets the cap. */
static int64_t reps_fit(double call_s, double budget_s, int64_t cap)
{
    int64_t reps = cap;
    if (call_s > 0.0 && budget_s / call_s < (double)cap)
        reps = (int64_t)(budget_s / call_s);
    return reps < 1 ? 1 : reps;
}

bb_status_t bb_measure_reps_for_budget(MPI_Comm comm, double call_s, double budget_s,
                                       int64_t cap, int64_t *reps_out)
{
    double slowest = call_s;
    if (MPI_Allreduce(&call_s, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    *reps_out = reps_fit(slowest, budget_s, cap);
    return BB_OK;
}

/* One block of calls: per-call means of parts then counts, MAX over ranks,
 * into max_out[nparts + ncounts].  scratch holds as many doubles. */
static bb_status_t measure_block(MPI_Comm comm, const bb_measure_variant_t *v,
                                 int64_t calls, double *scratch, double *max_out)
{
    int n = v->nparts + v->ncounts;
    memset(scratch, 0, (size_t)n * sizeof *scratch);
    for (int64_t r = 0; r < calls; r++) {
        bb_status_t st = v->call(v->arg, scratch, scratch + v->nparts);
        if (st != BB_OK && st != BB_REFUSED)
            return st;
    }
    if (v->block_end != NULL) {
        bb_status_t st = v->block_end(v->arg, calls);
        if (st != BB_OK)
            return st;
    }
    for (int i = 0; i < n; i++)
        scratch[i] /= (double)calls;
    if (MPI_Allreduce(scratch, max_out, n, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    return BB_OK;
}

bb_status_t bb_measure_run(MPI_Comm comm, const bb_measure_settings_t *settings,
                           const bb_measure_variant_t *variant,
                           bb_measure_result_t *result_out)
{
    const bb_measure_settings_t *s = settings;
    const bb_measure_variant_t *v = variant;
    if (s == NULL || v == NULL || result_out == NULL || v->call == NULL
        || v->nparts < 1 || v->ncounts < 0 || s->samples < 1 || s->reps < 0
        || s->warmup < 0 || (s->reps == 0 && !(s->budget_s > 0.0)))
        return BB_ERR_ARG;

    bb_measure_result_t r = { .nparts = v->nparts, .ncounts = v->ncounts,
                              .samples = s->samples };
    int n = v->nparts + v->ncounts;
    double *scratch = malloc(2 * (size_t)n * sizeof *scratch);
    r.first = calloc((size_t)n, sizeof *r.first);
    r.parts = calloc((size_t)v->nparts * (size_t)s->samples, sizeof *r.parts);
    r.counts = calloc((size_t)(v->ncounts ? v->ncounts : 1) * (size_t)s->samples,
                      sizeof *r.counts);
    bb_status_t st = BB_ERR_NOMEM;
    if (scratch == NULL || r.first == NULL || r.parts == NULL || r.counts == NULL)
        goto free_result;
    double *block = scratch + n;

    if ((st = measure_block(comm, v, 1, scratch, r.first)) != BB_OK)
        goto free_result;
    r.calls = 1;
    for (int64_t w = 0; w < s->warmup; w++, r.calls++)
        if ((st = measure_block(comm, v, 1, scratch, block)) != BB_OK)
            goto free_result;
    r.reps = s->reps;
    r.reps_from = BB_REPS_GIVEN;
    if (r.reps == 0) {
        /* The probe is a call like the others: its block is already MAX-reduced,
         * so every rank chooses the same reps. */
        if ((st = measure_block(comm, v, 1, scratch, block)) != BB_OK)
            goto free_result;
        r.calls++;
        r.reps = reps_fit(block[0], s->budget_s, BB_MEASURE_REPS_CAP);
        r.reps_from = BB_REPS_BUDGET;
    }
    for (int64_t k = 0; k < s->samples; k++) {
        if ((st = measure_block(comm, v, r.reps, scratch, block)) != BB_OK)
            goto free_result;
        r.calls += r.reps;
        for (int p = 0; p < v->nparts; p++)
            r.parts[(size_t)p * (size_t)s->samples + (size_t)k] = block[p];
        for (int c = 0; c < v->ncounts; c++)
            r.counts[(size_t)c * (size_t)s->samples + (size_t)k] = block[v->nparts + c];
    }
    free(scratch);
    *result_out = r;
    return BB_OK;

free_result:
    free(scratch);
    bb_measure_result_clear(&r);
    return st;
}
