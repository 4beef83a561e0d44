/* measure.c: the measurement engine (see measure.h for the sequence). */
#include "config.h"
#include "measure.h"

#include <stdlib.h>
#include <string.h>

const char *bb_timing_name(bb_timing_t timing)
{
    switch (timing) {
    case BB_TIMING_BLOCK: return "block";
    case BB_TIMING_BARRIER: return "barrier";
    case BB_TIMING_WINDOW: return "window";
    }
    return "unknown";
}

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

/* How the calls of one block start: the method, and for windows this rank's
 * clock offset to rank 0 and the window (0: barriers instead). */
typedef struct block_sync {
    bb_timing_t timing;
    double offset_s;
    double window_s;
    int64_t missed;           /* this rank's late starts */
} block_sync_t;

enum { CLOCK_PINGPONGS = 10, CLOCK_TAG = 7001 };

/* Each rank's clock offset to rank 0 (local minus root), from the ping-pong
 * with the shortest round trip; rank 0 asks every rank in turn. */
static bb_status_t clock_offsets(MPI_Comm comm, double *offset_out, double *spread_out,
                                 double *error_out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double mine[2] = { 0.0, 0.0 };  /* offset, half the best round trip */
    for (int peer = 1; peer < size; peer++) {
        if (rank != 0 && rank != peer)
            continue;
        double best_rtt = -1.0, best_offset = 0.0;
        for (int k = 0; k < CLOCK_PINGPONGS; k++) {
            double t_remote = 0.0;
            if (rank == 0) {
                double t_send = bb_time_now();
                if (MPI_Send(&t_send, 1, MPI_DOUBLE, peer, CLOCK_TAG, comm) != MPI_SUCCESS
                    || MPI_Recv(&t_remote, 1, MPI_DOUBLE, peer, CLOCK_TAG, comm,
                                MPI_STATUS_IGNORE) != MPI_SUCCESS)
                    return BB_ERR_MPI;
                double t_back = bb_time_now();
                if (best_rtt < 0.0 || t_back - t_send < best_rtt) {
                    best_rtt = t_back - t_send;
                    best_offset = t_remote - 0.5 * (t_send + t_back);
                }
            } else {
                double t_send;
                if (MPI_Recv(&t_send, 1, MPI_DOUBLE, 0, CLOCK_TAG, comm,
                             MPI_STATUS_IGNORE) != MPI_SUCCESS)
                    return BB_ERR_MPI;
                t_remote = bb_time_now();
                if (MPI_Send(&t_remote, 1, MPI_DOUBLE, 0, CLOCK_TAG, comm) != MPI_SUCCESS)
                    return BB_ERR_MPI;
            }
        }
        if (rank == 0) {
            double pair[2] = { best_offset, 0.5 * best_rtt };
            if (MPI_Send(pair, 2, MPI_DOUBLE, peer, CLOCK_TAG, comm) != MPI_SUCCESS)
                return BB_ERR_MPI;
        } else if (MPI_Recv(mine, 2, MPI_DOUBLE, 0, CLOCK_TAG, comm,
                            MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            return BB_ERR_MPI;
        }
    }
    double local[3] = { mine[0], -mine[0], mine[1] }, max[3];
    if (MPI_Allreduce(local, max, 3, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    *offset_out = mine[0];
    *spread_out = max[0] + max[1];
    *error_out = max[2];
    return BB_OK;
}

/* Before call r of a block: a barrier, or the wait for this call's window
 * (start is rank 0's clock). */
static bb_status_t call_start(MPI_Comm comm, block_sync_t *sync, double start, int64_t r)
{
    if (sync->timing == BB_TIMING_BLOCK)
        return BB_OK;
    if (sync->timing == BB_TIMING_BARRIER || sync->window_s == 0.0)
        return MPI_Barrier(comm) == MPI_SUCCESS ? BB_OK : BB_ERR_MPI;
    double target = start + (double)r * sync->window_s + sync->offset_s;
    if (bb_time_now() > target) {
        sync->missed++;
        return BB_OK;
    }
    while (bb_time_now() < target) {
    }
    return BB_OK;
}

/* One block of calls: per-call means of parts then counts, MAX over ranks,
 * into max_out[nparts + ncounts].  scratch holds as many doubles. */
static bb_status_t measure_block(MPI_Comm comm, const bb_measure_variant_t *v,
                                 block_sync_t *sync, int64_t calls, double *scratch,
                                 double *max_out)
{
    int n = v->nparts + v->ncounts;
    double start = 0.0;
    if (sync->timing == BB_TIMING_WINDOW && sync->window_s > 0.0) {
        /* Rank 0 sets the first instant far enough ahead for the broadcast. */
        start = bb_time_now() + 2.0 * sync->window_s + 1e-4;
        if (MPI_Bcast(&start, 1, MPI_DOUBLE, 0, comm) != MPI_SUCCESS)
            return BB_ERR_MPI;
    }
    memset(scratch, 0, (size_t)n * sizeof *scratch);
    for (int64_t r = 0; r < calls; r++) {
        bb_status_t st = call_start(comm, sync, start, r);
        if (st == BB_OK)
            st = v->call(v->arg, scratch, scratch + v->nparts);
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
        || s->warmup < 0 || (s->reps == 0 && !(s->budget_s > 0.0))
        || s->timing < BB_TIMING_BLOCK || s->timing > BB_TIMING_WINDOW
        || !(s->window_s >= 0.0))
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
    block_sync_t sync = { .timing = s->timing };
    if (s->timing == BB_TIMING_WINDOW
        && (st = clock_offsets(comm, &sync.offset_s, &r.offset_spread_s,
                               &r.offset_error_s)) != BB_OK)
        goto free_result;

    if ((st = measure_block(comm, v, &sync, 1, scratch, r.first)) != BB_OK)
        goto free_result;
    r.calls = 1;
    double warm_s = r.first[0];  /* the slowest warm call, for the window */
    for (int64_t w = 0; w < s->warmup; w++, r.calls++) {
        if ((st = measure_block(comm, v, &sync, 1, scratch, block)) != BB_OK)
            goto free_result;
        warm_s = w == 0 || block[0] > warm_s ? block[0] : warm_s;
    }
    r.reps = s->reps;
    r.reps_from = BB_REPS_GIVEN;
    if (r.reps == 0) {
        /* The probe is a call like the others: its block is already MAX-reduced,
         * so every rank chooses the same reps. */
        if ((st = measure_block(comm, v, &sync, 1, scratch, block)) != BB_OK)
            goto free_result;
        r.calls++;
        if (s->warmup == 0 || block[0] > warm_s)
            warm_s = block[0];
        r.reps = reps_fit(block[0], s->budget_s, BB_MEASURE_REPS_CAP);
        r.reps_from = BB_REPS_BUDGET;
    }
    if (s->timing == BB_TIMING_WINDOW) {
        sync.window_s = s->window_s > 0.0 ? s->window_s : 2.0 * warm_s + 1e-5;
        r.window_s = sync.window_s;
    }
    for (int64_t k = 0; k < s->samples; k++) {
        if ((st = measure_block(comm, v, &sync, r.reps, scratch, block)) != BB_OK)
            goto free_result;
        r.calls += r.reps;
        for (int p = 0; p < v->nparts; p++)
            r.parts[(size_t)p * (size_t)s->samples + (size_t)k] = block[p];
        for (int c = 0; c < v->ncounts; c++)
            r.counts[(size_t)c * (size_t)s->samples + (size_t)k] = block[v->nparts + c];
    }
    if (s->timing == BB_TIMING_WINDOW) {
        long long missed = (long long)sync.missed, total = 0;
        if (MPI_Allreduce(&missed, &total, 1, MPI_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS) {
            st = BB_ERR_MPI;
            goto free_result;
        }
        r.windows_missed = (int64_t)total;
    }
    free(scratch);
    *result_out = r;
    return BB_OK;

free_result:
    free(scratch);
    bb_measure_result_clear(&r);
    return st;
}
