/* measure.c: the measurement engine (see measure.h for the sequence). */
#include "config.h"
#include "measure.h"
#include "record/bbrecord.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* This process's minor page faults so far (every thread's: MPI's progress
 * threads fault in its temporaries too), or -1 unreadable. */
static double minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_minflt : -1.0;
}

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

const char *bb_measure_scope(const bb_measure_result_t *result)
{
    return result->rank_stat == BB_RANK_STAT_MEAN ? "call/mean-rank" : "call/max-rank";
}

const double *bb_measure_count(const bb_measure_result_t *result, int c)
{
    return result->counts + (size_t)c * (size_t)result->samples;
}

/* The samples of the whole in order, by index: insertion sort, as samples
 * are few. */
static void order_by_whole(const double *whole, int64_t n, int64_t *idx)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i;
        while (j > 0 && whole[idx[j - 1]] > whole[i]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
}

double bb_measure_part_at_median(const bb_measure_result_t *result, int p)
{
    int64_t n = result->samples;
    int64_t stack[64], *idx = n <= 64 ? stack : malloc((size_t)n * sizeof *idx);
    if (n < 1 || idx == NULL)
        return 0.0;
    order_by_whole(result->parts, n, idx);
    const double *part = bb_measure_part(result, p);
    /* The same arithmetic as bb_stats_median: part 0 gives the median. */
    double v = n % 2 ? part[idx[n / 2]] : 0.5 * part[idx[n / 2 - 1]] + 0.5 * part[idx[n / 2]];
    if (idx != stack)
        free(idx);
    return v;
}

int64_t bb_measure_canary_switches(const bb_measure_result_t *result,
                                   unsigned char *drop_out)
{
    int64_t marked = 0;
    for (int64_t k = 0; k < result->samples; k++) {
        double a = result->canary != NULL ? result->canary[k] : (double)NAN;
        double b = result->canary != NULL ? result->canary[k + 1] : (double)NAN;
        int sw = a > 0.0 && b > 0.0 && fmax(a, b) > BB_CANARY_SWITCH * fmin(a, b);
        drop_out[k] = (unsigned char)sw;
        marked += sw;
    }
    return marked;
}

static int cmp_level(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int bb_measure_canary_modes(const bb_measure_result_t *result, const unsigned char *drop,
                            int *mode_out, double *level_out)
{
    int64_t n = result->samples, known = 0;
    double *level = malloc((size_t)(n > 0 ? n : 1) * sizeof *level);
    double *sorted = malloc((size_t)(n > 0 ? n : 1) * sizeof *sorted);
    if (level == NULL || sorted == NULL) {
        free(level);
        free(sorted);
        return -1;
    }
    for (int64_t k = 0; k < n; k++) {
        double a = result->canary != NULL ? result->canary[k] : (double)NAN;
        double b = result->canary != NULL ? result->canary[k + 1] : (double)NAN;
        level[k] = drop[k] || !(a > 0.0 && b > 0.0) ? (double)NAN : 0.5 * (a + b);
        if (!isnan(level[k]))
            sorted[known++] = level[k];
    }
    qsort(sorted, (size_t)known, sizeof *sorted, cmp_level);
    /* The upper bound of each mode's levels, fastest first. */
    double top[BB_CANARY_MODES_MAX];
    int modes = 0;
    for (int64_t i = 0; i < known; i++) {
        if (i == 0 || (sorted[i] > BB_CANARY_SWITCH * sorted[i - 1]
                       && modes < BB_CANARY_MODES_MAX))
            modes++;
        top[modes - 1] = sorted[i];
    }
    for (int m = 0; level_out != NULL && m < modes; m++) {
        int64_t from = 0, to = 0;
        while (from < known && m > 0 && sorted[from] <= top[m - 1])
            from++;
        to = from;
        while (to < known && sorted[to] <= top[m])
            to++;
        level_out[m] = bb_stats_median(sorted + from, (size_t)(to - from));
    }
    for (int64_t k = 0; k < n; k++) {
        int m = drop[k] ? -1 : 0;
        while (m >= 0 && !isnan(level[k]) && m < modes - 1 && level[k] > top[m])
            m++;
        mode_out[k] = m;
    }
    free(level);
    free(sorted);
    return modes > 0 ? modes : 1;
}

int bb_measure_round_mask(const double *canary, int64_t rounds, unsigned char *drop_out)
{
    bb_measure_result_t r = { .samples = rounds, .canary = (double *)canary };
    int *mode = malloc((size_t)(rounds > 0 ? rounds : 1) * sizeof *mode);
    if (mode == NULL)
        return -1;
    bb_measure_canary_switches(&r, drop_out);
    int modes = bb_measure_canary_modes(&r, drop_out, mode, NULL);
    int64_t count[BB_CANARY_MODES_MAX] = {0};
    int most = 0;
    for (int64_t k = 0; k < rounds; k++)
        if (mode[k] >= 0)
            count[mode[k]]++;
    for (int m = 1; m < modes; m++)
        if (count[m] > count[most])
            most = m;
    for (int64_t k = 0; modes > 0 && k < rounds; k++)
        drop_out[k] = (unsigned char)(mode[k] != most);
    free(mode);
    return modes;
}

void bb_measure_result_clear(bb_measure_result_t *result)
{
    if (result == NULL)
        return;
    free(result->first);
    free(result->parts);
    free(result->local_parts);
    free(result->counts);
    free(result->critical);
    free(result->excluded);
    free(result->faults);
    free(result->canary);
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
    bb_rank_stat_t rank_stat;
    double offset_s;
    double window_s;
    int64_t missed;           /* this rank's late starts */
    int64_t overrun;          /* this rank's calls that overran their window */
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

/* Is the block timed in windows (not its preparation, which uses barriers)? */
static int in_windows(const block_sync_t *sync)
{
    return sync->timing == BB_TIMING_WINDOW && sync->window_s > 0.0;
}

/* Before call r of a block: a barrier, or the wait for this call's window
 * (start is rank 0's clock); *late_out 1 when the window had begun. */
static bb_status_t call_start(MPI_Comm comm, block_sync_t *sync, double start, int64_t r,
                              int *late_out)
{
    *late_out = 0;
    if (sync->timing == BB_TIMING_BLOCK)
        return BB_OK;
    if (!in_windows(sync))
        return MPI_Barrier(comm) == MPI_SUCCESS ? BB_OK : BB_ERR_MPI;
    double target = start + (double)r * sync->window_s + sync->offset_s;
    if (bb_time_now() > target) {
        sync->missed++;
        *late_out = 1;
        return BB_OK;
    }
    while (bb_time_now() < target) {
    }
    return BB_OK;
}

/* Window timing: this block's calls flagged on any rank (a late start or an
 * overrun of the call's window) are left out of every rank's means, which
 * are then taken over the calls kept.  flag[calls] is this rank's (1: late,
 * 2: overrun), percall[calls x n] its calls' parts and counts.  Returns the
 * calls left out, the same on every rank, or -1 when the reduction fails. */
static int64_t window_exclude(MPI_Comm comm, block_sync_t *sync, int64_t calls, int n,
                              int *flag, const double *percall, double *scratch)
{
    for (int64_t r = 0; r < calls; r++)  /* late starts: sync->missed counts them */
        sync->overrun += (flag[r] & 2) != 0;
    if (MPI_Allreduce(MPI_IN_PLACE, flag, (int)calls, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return -1;
    int64_t kept = 0;
    memset(scratch, 0, (size_t)n * sizeof *scratch);
    for (int64_t r = 0; r < calls; r++)
        if (flag[r] == 0) {
            kept++;
            for (int j = 0; j < n; j++)
                scratch[j] += percall[r * n + j];
        }
    if (kept == 0)  /* every call flagged: the sample keeps them all, and says so */
        for (int64_t r = 0; r < calls; r++)
            for (int j = 0; j < n; j++)
                scratch[j] += percall[r * n + j];
    for (int j = 0; j < n; j++)
        scratch[j] /= (double)(kept > 0 ? kept : calls);
    return calls - kept;
}

/* One block of calls: per-call means of parts then counts, then the wall
 * time of a whole call (with the untimed work inside it: what a budget and a
 * window must allow for), then the minor page faults per call (the process's,
 * -1 unreadable), into max_out[nparts + ncounts + 2].  The parts are
 * those of the rank with the slowest whole (the block's critical path, the
 * lowest such rank on a tie, *critical_out): parts taken from one rank and
 * the same calls as their whole never add up to more than it, where a
 * maximum per part would mix ranks; or, with rank_stat mean, every part's
 * mean over ranks.  Counts and the wall time are maxima over ranks.  scratch
 * holds as many doubles, and keeps this rank's means.
 * Window timing leaves flagged calls out (window_exclude): *excluded_out
 * (may be NULL) receives their number, and when they are more than
 * BB_WINDOW_DROP_MAX of the block and retry is set, *retry_out is 1: the
 * block is then no sample, and its block_end is told -1. */
static bb_status_t measure_block(MPI_Comm comm, const bb_measure_variant_t *v,
                                 block_sync_t *sync, int64_t calls, int64_t sample,
                                 double *scratch, double *max_out, int *critical_out,
                                 int retry, int64_t *excluded_out, int *retry_out)
{
    int n = v->nparts + v->ncounts, windows = in_windows(sync);
    double start = 0.0, wall = 0.0;
    int *flag = NULL;
    double *percall = NULL, *one = scratch;
    bb_status_t st = BB_OK;
    if (windows) {
        /* Rank 0 sets the first instant far enough ahead for the broadcast. */
        start = bb_time_now() + 2.0 * sync->window_s + 1e-4;
        flag = calloc((size_t)calls, sizeof *flag);
        percall = calloc((size_t)calls * (size_t)n + 1, sizeof *percall);
        one = malloc(((size_t)n + 1) * sizeof *one);
        if (flag == NULL || percall == NULL || one == NULL) {
            st = BB_ERR_NOMEM;  /* every rank's calloc of the same sizes; a rank
                                   short of memory aborts the job (fatal) */
            goto free_window;
        }
        if (MPI_Bcast(&start, 1, MPI_DOUBLE, 0, comm) != MPI_SUCCESS) {
            st = BB_ERR_MPI;
            goto free_window;
        }
    }
    memset(scratch, 0, (size_t)n * sizeof *scratch);
    double faults0 = minor_faults();
    for (int64_t r = 0; r < calls; r++) {
        int late = 0;
        st = call_start(comm, sync, start, r, &late);
        if (windows)
            memset(one, 0, (size_t)n * sizeof *one);
        double t0 = bb_time_now();
        if (st == BB_OK)
            st = v->call(v->arg, one, one + v->nparts);
        double t1 = bb_time_now();
        wall += t1 - t0;
        if (st != BB_OK && st != BB_REFUSED)
            goto free_window;
        st = BB_OK;
        if (windows) {
            /* Overrun: the call ended after its window, into the next one's. */
            int over = t1 > start + (double)(r + 1) * sync->window_s + sync->offset_s;
            flag[r] = late | (over << 1);
            memcpy(percall + r * n, one, (size_t)n * sizeof *one);
        }
    }
    int64_t excluded = 0;
    if (windows && (excluded = window_exclude(comm, sync, calls, n, flag, percall,
                                              scratch)) < 0) {
        st = BB_ERR_MPI;
        goto free_window;
    }
    int again = windows && retry && (double)excluded > BB_WINDOW_DROP_MAX * (double)calls;
    if (excluded_out != NULL)
        *excluded_out = excluded;
    if (retry_out != NULL)
        *retry_out = again;
    if (v->block_end != NULL && (st = v->block_end(v->arg, calls, again ? -1 : sample))
                                    != BB_OK)
        goto free_window;
    double faults1 = minor_faults();
    scratch[n] = wall / (double)calls;
    scratch[n + 1] = faults0 < 0.0 || faults1 < 0.0 ? -1.0 : (faults1 - faults0) / (double)calls;
    if (!windows)
        for (int i = 0; i < n; i++)
            scratch[i] /= (double)calls;
    if (MPI_Allreduce(scratch, max_out, n + 2, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS
        || bb_stats_reduce_rank(comm, sync->rank_stat, scratch, v->nparts, max_out,
                                critical_out) != MPI_SUCCESS)
        st = BB_ERR_MPI;

free_window:
    if (windows) {
        free(flag);
        free(percall);
        free(one);
    }
    return st;
}

static int settings_ok(const bb_measure_settings_t *s)
{
    return s != NULL && s->samples >= 1 && s->reps >= 0 && s->warmup >= 0
           && s->steady_max >= 0
           && (s->reps > 0 || s->budget_s > 0.0) && s->timing >= BB_TIMING_BLOCK
           && s->timing <= BB_TIMING_WINDOW && s->window_s >= 0.0
           && (s->rank_stat == BB_RANK_STAT_MAX || s->rank_stat == BB_RANK_STAT_MEAN)
           && s->until_rel >= 0.0 && s->canary_calls >= 0
           && (s->until_rel == 0.0 || (s->max_samples >= s->samples
                                       && s->confidence > 0.0 && s->confidence < 1.0));
}

static int variant_ok(const bb_measure_variant_t *v)
{
    return v->call != NULL && v->nparts >= 1 && v->ncounts >= 0;
}

/* What the engine keeps per variant while it measures a set. */
typedef struct variant_run {
    block_sync_t sync;
    double warm_s;            /* the slowest warm call (wall), for the window */
    double warm_whole_s;      /* the last warm-up block's whole (until steady) */
    double *scratch;          /* [2 x (nparts + ncounts + 2)]: local, then maxima */
} variant_run_t;

static bb_status_t result_alloc(const bb_measure_variant_t *v, int64_t samples,
                                bb_rank_stat_t rank_stat, bb_measure_result_t *r)
{
    *r = (bb_measure_result_t){ .nparts = v->nparts, .ncounts = v->ncounts,
                                .rank_stat = rank_stat, .samples = samples,
                                .until_met = -1, .until_widest = (double)NAN };
    size_t per_part = (size_t)samples;
    r->first = calloc((size_t)(v->nparts + v->ncounts + 2), sizeof *r->first);
    r->parts = calloc((size_t)v->nparts * per_part, sizeof *r->parts);
    r->local_parts = calloc((size_t)v->nparts * per_part, sizeof *r->local_parts);
    r->counts = calloc((size_t)(v->ncounts ? v->ncounts : 1) * per_part, sizeof *r->counts);
    r->critical = calloc(per_part, sizeof *r->critical);
    r->excluded = calloc(per_part, sizeof *r->excluded);
    r->faults = calloc(per_part, sizeof *r->faults);
    r->canary = malloc((per_part + 1) * sizeof *r->canary);
    for (size_t k = 0; r->canary != NULL && k <= per_part; k++)
        r->canary[k] = (double)NAN;
    return r->first && r->parts && r->local_parts && r->counts && r->critical && r->excluded
                   && r->faults && r->canary
               ? BB_OK : BB_ERR_NOMEM;
}

/* The cold first call, the warm-up and, when reps must be chosen here, the
 * probe of one variant. */
static bb_status_t variant_prepare(MPI_Comm comm, const bb_measure_settings_t *s,
                                   const bb_measure_variant_t *v, int probe,
                                   variant_run_t *vr, bb_measure_result_t *r)
{
    int n = v->nparts + v->ncounts;  /* block[n]: a whole call's wall time */
    double *block = vr->scratch + n + 2;
    bb_status_t st = measure_block(comm, v, &vr->sync, 1, -1, vr->scratch, r->first, NULL, 0,
                                   NULL, NULL);
    if (st != BB_OK)
        return st;
    r->calls = 1;
    vr->warm_s = r->first[n];
    double fastest = 0.0;  /* of the warm-up calls and the probe */
    for (int64_t w = 0; w < s->warmup; w++, r->calls++) {
        if ((st = measure_block(comm, v, &vr->sync, 1, -1, vr->scratch, block, NULL, 0,
                                    NULL, NULL)) != BB_OK)
            return st;
        vr->warm_s = w == 0 || block[n] > vr->warm_s ? block[n] : vr->warm_s;
        fastest = w == 0 || block[n] < fastest ? block[n] : fastest;
    }
    r->reps = s->reps;
    r->reps_from = s->reps > 0 ? BB_REPS_GIVEN : BB_REPS_BUDGET;
    if (probe) {
        /* The probe is a call like the others: its block is already
         * MAX-reduced, so every rank chooses the same reps. */
        if ((st = measure_block(comm, v, &vr->sync, 1, -1, vr->scratch, block, NULL, 0,
                                    NULL, NULL)) != BB_OK)
            return st;
        r->calls++;
        if (s->warmup == 0 || block[n] > vr->warm_s)
            vr->warm_s = block[n];
        /* The fastest of the warm-up calls and the probe chooses: one
         * stalled call (a page-in, a scheduler tick) cannot set a point to
         * one call per sample.  Every figure is a rank maximum already, so
         * every rank chooses alike. */
        if (s->warmup == 0 || block[n] < fastest)
            fastest = block[n];
        r->reps = reps_fit(fastest, s->budget_s, BB_MEASURE_REPS_CAP);
        r->probe_wall_s = fastest;
    }
    return BB_OK;
}

/* Untimed calls of a variant right before its sample block
 * (BB_MEASURE_PRIMER_CALLS, then one block_end told -1, which may make a
 * collective of its own): the allocator's heap, MPI's temporaries and
 * caches come back to this variant's steady state outside the timing, and
 * the skew that the last block's closing reductions left between the
 * ranks is absorbed by them, not by the first timed call (nothing
 * collective of the engine's comes between them).  Without them a
 * retained row's first call after a fresh row faults MPI's reduction
 * temporary in again from the heap the fresh row trimmed (1025 minor faults
 * at 8 MiB a rank with MPICH: most of a 1-call sample). */
static bb_status_t variant_prime(const bb_measure_variant_t *v, variant_run_t *vr,
                                 bb_measure_result_t *r)
{
    double *discard = vr->scratch + v->nparts + v->ncounts + 2;
    for (int c = 0; c < BB_MEASURE_PRIMER_CALLS; c++) {
        memset(discard, 0, (size_t)(v->nparts + v->ncounts) * sizeof *discard);
        bb_status_t st = v->call(v->arg, discard, discard + v->nparts);
        if (st != BB_OK && st != BB_REFUSED)
            return st;
        r->calls++;
        r->primers++;
    }
    if (v->block_end != NULL) {
        bb_status_t st = v->block_end(v->arg, BB_MEASURE_PRIMER_CALLS, -1);
        if (st != BB_OK)
            return st;
    }
    return BB_OK;
}

/* Sample k of one variant: the block's figures (measure_block) and this
 * rank's means. */
static bb_status_t variant_sample(MPI_Comm comm, const bb_measure_variant_t *v,
                                  variant_run_t *vr, int64_t k, bb_measure_result_t *r)
{
    int n = v->nparts + v->ncounts;
    double *block = vr->scratch + n + 2;
    int critical = 0, again = 1;
    int64_t excluded = 0;
    /* Window timing: a block that left out more than BB_WINDOW_DROP_MAX of
     * its calls is taken again in windows twice as long, at most
     * BB_WINDOW_RETRIES times (every rank decides alike from the reduced
     * flags). */
    for (int attempt = 0; again; attempt++) {
        bb_status_t st = measure_block(comm, v, &vr->sync, r->reps, k, vr->scratch, block,
                                       &critical, attempt < BB_WINDOW_RETRIES, &excluded,
                                       &again);
        if (st != BB_OK)
            return st;
        r->calls += r->reps;
        if (again) {
            r->window_retries++;
            vr->sync.window_s *= 2.0;
            r->window_s = vr->sync.window_s;
        }
    }
    r->excluded[k] = excluded;
    r->faults[k] = block[n + 1];
    r->critical[k] = critical;
    size_t S = (size_t)r->samples;
    for (int p = 0; p < v->nparts; p++) {
        r->parts[(size_t)p * S + (size_t)k] = block[p];
        r->local_parts[(size_t)p * S + (size_t)k] = vr->scratch[p];
    }
    for (int c = 0; c < v->ncounts; c++)
        r->counts[(size_t)c * S + (size_t)k] = block[v->nparts + c];
    return BB_OK;
}

/* Warm-up blocks, interleaved like the samples, until each variant is
 * steady (BB_MEASURE_STEADY_TOLERANCE) or has made steady_max blocks.  The
 * blocks' figures are reduced, so every rank decides alike. */
static bb_status_t warm_until_steady(MPI_Comm comm, const bb_measure_settings_t *s,
                                     const bb_measure_variant_t *variants, int nvariants,
                                     variant_run_t *vr, bb_measure_result_t *res)
{
    for (int64_t b = 0; b < s->steady_max; b++) {
        int unsteady = 0;
        for (int i = 0; i < nvariants; i++) {
            const bb_measure_variant_t *v = &variants[i];
            bb_measure_result_t *r = &res[i];
            if (r->steady)
                continue;
            int n = v->nparts + v->ncounts;
            double *block = vr[i].scratch + n + 2;
            int64_t calls = (r->reps + 1) / 2;
            bb_status_t st = measure_block(comm, v, &vr[i].sync, calls, -1, vr[i].scratch,
                                           block, NULL, 0, NULL, NULL);
            if (st != BB_OK)
                return st;
            r->calls += calls;
            if (r->warm_blocks++ > 0
                && fabs(block[0] - vr[i].warm_whole_s)
                       <= BB_MEASURE_STEADY_TOLERANCE * vr[i].warm_whole_s)
                r->steady = 1;
            vr[i].warm_whole_s = block[0];
            unsteady |= !r->steady;
        }
        if (!unsteady)
            break;
    }
    return BB_OK;
}

/* BB_TRACE_BLOCKS=FILE: rank 0 appends the order of every measurement's
 * sample blocks to FILE ("set NVARIANTS", then "sample K variant I reps R"
 * per block), so that a test can check from outside that a benchmark's rows
 * are interleaved (tests/mpi/interleave.sh).  NULL when unset or not rank 0;
 * a file that cannot be opened is no trace (the measurement goes on). */
static FILE *trace_open(MPI_Comm comm, int nvariants)
{
    const char *path = getenv("BB_TRACE_BLOCKS");
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (path == NULL || path[0] == '\0' || rank != 0)
        return NULL;
    FILE *f = fopen(path, "a");
    if (f != NULL)
        fprintf(f, "set %d\n", nvariants);
    return f;
}

/* One canary: 8-byte round trips between ranks 0 and 1 in blocks of
 * BB_CANARY_BLOCK; rank 0 keeps the fastest block's half round trip (a
 * preempted block does not count), and its wall time.  Other ranks, and a
 * world of one, take no part (NaN). */
static bb_status_t canary_take(MPI_Comm comm, int64_t calls, double *value, double *cost)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    *value = (double)NAN;
    if (calls <= 0 || size < 2 || rank > 1)
        return BB_OK;
    double word = 0.0, best = (double)INFINITY, start = bb_time_now();
    int peer = 1 - rank;
    for (int64_t done = 0; done < calls; done += BB_CANARY_BLOCK) {
        double t0 = bb_time_now();
        for (int i = 0; i < BB_CANARY_BLOCK; i++) {
            int rc = MPI_SUCCESS;
            if (rank == 1)
                rc = MPI_Recv(&word, 1, MPI_DOUBLE, peer, BB_CANARY_TAG, comm,
                              MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = MPI_Send(&word, 1, MPI_DOUBLE, peer, BB_CANARY_TAG, comm);
            if (rc == MPI_SUCCESS && rank == 0)
                rc = MPI_Recv(&word, 1, MPI_DOUBLE, peer, BB_CANARY_TAG, comm,
                              MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return BB_ERR_MPI;
        }
        double half = (bb_time_now() - t0) / (2.0 * BB_CANARY_BLOCK);
        best = half < best ? half : best;
    }
    if (rank == 0) {
        *value = best;
        *cost += bb_time_now() - start;
    }
    return BB_OK;
}

/* The stopping rule after round `taken`: does any variant's interval of
 * the median still exceed until_rel of its median?  Each rank judges its
 * copy of the reduced samples; the verdict is the MAX over ranks, so that a
 * rank whose floating point judged otherwise cannot leave the others
 * waiting in a round it does not make. */
static bb_status_t until_more(MPI_Comm comm, const bb_measure_settings_t *s,
                              bb_measure_result_t *res, int nvariants, int64_t taken,
                              int *more_out)
{
    int more = 0;
    double widest = 0.0;
    for (int i = 0; i < nvariants; i++) {
        bb_interval_t ci;
        const double *whole = res[i].parts;  /* part 0, stride rounds_max */
        double median = bb_stats_median(whole, (size_t)taken);
        double rel = (double)NAN;
        if (bb_stats_ci(whole, (size_t)taken, s->confidence, &ci) == BB_OK && ci.j > 0
            && median > 0.0)
            rel = 0.5 * (ci.high - ci.low) / median;
        if (!(rel <= s->until_rel))
            more = 1;
        if (isnan(rel))
            widest = rel;
        else if (rel > widest)  /* false once widest is NaN */
            widest = rel;
    }
    int any = 0;
    if (MPI_Allreduce(&more, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    for (int i = 0; i < nvariants; i++) {
        res[i].until_met = !any;
        res[i].until_widest = widest;
    }
    *more_out = any;
    return BB_OK;
}

/* The arrays of a result allocated for more rounds than were taken, packed
 * to `taken` (part p of sample k at p * taken + k). */
static void result_shrink(bb_measure_result_t *r, int64_t taken)
{
    size_t S = (size_t)r->samples, T = (size_t)taken;
    if (T >= S)
        return;
    for (int p = 1; p < r->nparts; p++) {
        memmove(r->parts + (size_t)p * T, r->parts + (size_t)p * S, T * sizeof *r->parts);
        memmove(r->local_parts + (size_t)p * T, r->local_parts + (size_t)p * S,
                T * sizeof *r->local_parts);
    }
    for (int c = 1; c < r->ncounts; c++)
        memmove(r->counts + (size_t)c * T, r->counts + (size_t)c * S, T * sizeof *r->counts);
    r->samples = taken;
}

bb_status_t bb_measure_run_set(MPI_Comm comm, const bb_measure_settings_t *settings,
                               const bb_measure_variant_t *variants, int nvariants,
                               bb_share_t share, bb_measure_result_t *results_out)
{
    const bb_measure_settings_t *s = settings;
    if (!settings_ok(s) || variants == NULL || results_out == NULL || nvariants < 1
        || share < BB_SHARE_NONE || share > BB_SHARE_FIT)
        return BB_ERR_ARG;
    for (int i = 0; i < nvariants; i++)
        if (!variant_ok(&variants[i]))
            return BB_ERR_ARG;

    bb_status_t st = BB_ERR_NOMEM;
    int64_t rounds_max = s->until_rel > 0.0 ? s->max_samples : s->samples;
    int owned = nvariants;  /* results to clear on the way out */
    bb_measure_result_t *res = calloc((size_t)nvariants, sizeof *res);
    variant_run_t *vr = calloc((size_t)nvariants, sizeof *vr);
    if (res == NULL || vr == NULL)
        goto free_runs;
    for (int i = 0; i < nvariants; i++) {
        const bb_measure_variant_t *v = &variants[i];
        vr[i].sync.timing = s->timing;
        vr[i].sync.rank_stat = s->rank_stat;
        vr[i].scratch = malloc(2 * (size_t)(v->nparts + v->ncounts + 2) * sizeof(double));
        if (vr[i].scratch == NULL
            || (st = result_alloc(v, rounds_max, s->rank_stat, &res[i])) != BB_OK)
            goto free_runs;
    }
    if (s->timing == BB_TIMING_WINDOW) {
        double offset, spread, error;
        if ((st = clock_offsets(comm, &offset, &spread, &error)) != BB_OK)
            goto free_runs;
        for (int i = 0; i < nvariants; i++) {
            vr[i].sync.offset_s = offset;
            res[i].offset_spread_s = spread;
            res[i].offset_error_s = error;
        }
    }
    int64_t fewest = 0, most = 0;
    for (int i = 0; i < nvariants; i++) {
        int probe = s->reps == 0 && (share != BB_SHARE_FIRST || i == 0);
        if ((st = variant_prepare(comm, s, &variants[i], probe, &vr[i], &res[i])) != BB_OK)
            goto free_runs;
        if (s->timing == BB_TIMING_WINDOW) {
            vr[i].sync.window_s = s->window_s > 0.0 ? s->window_s
                                                    : 2.0 * vr[i].warm_s + 1e-5;
            res[i].window_s = vr[i].sync.window_s;
            /* A windowed call lasts its window: the budget holds windows. */
            if (probe)
                res[i].reps = reps_fit(vr[i].sync.window_s, s->budget_s, BB_MEASURE_REPS_CAP);
        }
        if (share == BB_SHARE_FIRST && i > 0)
            res[i].reps = res[0].reps;
        if (i == 0 || res[i].reps < fewest)
            fewest = res[i].reps;
        if (res[i].reps > most)
            most = res[i].reps;
        res[i].warm_wall_s = vr[i].warm_s;
    }
    /* Every rank probed alike (each figure a rank maximum): the same
     * choice on all. */
    int one = share == BB_SHARE_MIN
              || (share == BB_SHARE_FIT && most <= BB_SHARE_FIT_SPREAD * fewest);
    for (int i = 0; one && i < nvariants; i++)
        res[i].reps = fewest;
    if ((st = warm_until_steady(comm, s, variants, nvariants, vr, res)) != BB_OK)
        goto free_runs;
    /* Sample k of every variant before sample k + 1 of any: a drift in the
     * machine's speed shows in all of them alike.  Each sample block of a
     * set starts after untimed calls of its own variant (variant_prime). */
    FILE *trace = trace_open(comm, nvariants);
    int64_t rounds = 0;
    double canary = (double)NAN, canary_cost = 0.0;
    st = canary_take(comm, s->canary_calls, &canary, &canary_cost);
    for (int i = 0; i < nvariants; i++)
        res[i].canary[0] = canary;
    for (int more = 1; rounds < rounds_max && more && st == BB_OK; rounds++) {
        for (int i = 0; i < nvariants && st == BB_OK; i++)
            if ((nvariants == 1
                 || (st = variant_prime(&variants[i], &vr[i], &res[i])) == BB_OK)
                && (st = variant_sample(comm, &variants[i], &vr[i], rounds, &res[i])) == BB_OK
                && trace != NULL)
                fprintf(trace, "sample %lld variant %d reps %lld\n", (long long)rounds, i,
                        (long long)res[i].reps);
        if (st == BB_OK && (st = canary_take(comm, s->canary_calls, &canary,
                                              &canary_cost)) == BB_OK)
            for (int i = 0; i < nvariants; i++)
                res[i].canary[rounds + 1] = canary;
        if (st == BB_OK && s->until_rel > 0.0 && rounds + 1 >= s->samples)
            st = until_more(comm, s, res, nvariants, rounds + 1, &more);
    }
    for (int i = 0; i < nvariants; i++)
        res[i].canary_cost_s = canary_cost;
    if (trace != NULL)
        fclose(trace);
    if (st != BB_OK)
        goto free_runs;
    for (int i = 0; i < nvariants; i++)
        result_shrink(&res[i], rounds);
    if (s->timing == BB_TIMING_WINDOW)
        for (int i = 0; i < nvariants; i++) {
            long long mine[2] = { (long long)vr[i].sync.missed,
                                  (long long)vr[i].sync.overrun }, total[2];
            if (MPI_Allreduce(mine, total, 2, MPI_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS) {
                st = BB_ERR_MPI;
                goto free_runs;
            }
            res[i].windows_missed = (int64_t)total[0];
            res[i].calls_overrun = (int64_t)total[1];
        }
    for (int i = 0; i < nvariants; i++)
        results_out[i] = res[i];
    owned = 0;  /* the results are the caller's now */
    st = BB_OK;

free_runs:
    for (int i = 0; res != NULL && i < owned; i++)
        bb_measure_result_clear(&res[i]);
    for (int i = 0; vr != NULL && i < nvariants; i++)
        free(vr[i].scratch);
    free(res);
    free(vr);
    return st;
}

bb_status_t bb_measure_run(MPI_Comm comm, const bb_measure_settings_t *settings,
                           const bb_measure_variant_t *variant,
                           bb_measure_result_t *result_out)
{
    if (variant == NULL)
        return BB_ERR_ARG;
    return bb_measure_run_set(comm, settings, variant, 1, BB_SHARE_NONE, result_out);
}
