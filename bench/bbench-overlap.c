/* bbench-overlap: is the compute done between posting and finishing a
 * transfer really hidden, and why?  For the transfer phase (ticket API) and,
 * as labelled references, raw MPI_Isend/MPI_Irecv and raw MPI_Iallreduce, on
 * the same buffers with the same compute kernel, in one run, it times
 * communication alone, compute alone, post-wait-compute, post-compute with a
 * poll after each batch, and post-compute-finish without polls, and derives
 * the overlap figures (harness/overlap.c).  The runner (harness/runner.c) owns
 * options, every measurement (bb_run_measure, bb_run_measure_set: counted in
 * the run summary), the provider count, the kernel's record and the run
 * section; this file holds the operations, the figures and the descriptor. */
#include "config.h"
#include "runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "bbench-overlap"

enum { KIND_TRANSFER, KIND_ISEND, KIND_IALLREDUCE, KIND_N };
static const char *const kind_names[KIND_N] = { "transfer", "isend", "iallreduce" };
static const char *const kind_labels[KIND_N] = { "protocol", "reference", "reference" };
static const char *const kind_what[KIND_N] = {
    "the bounded transfer phase, ticket API: begin, progress after each batch, finish",
    "reference: raw MPI_Isend (rank 0) / MPI_Irecv (last rank), MPI_Test, MPI_Wait",
    "reference: raw MPI_Iallreduce(SUM) of bytes/8 doubles on every rank, MPI_Test, "
    "MPI_Wait: what a future overlapping sum phase could gain (the sum phase itself "
    "has no overlap by design)"
};

/* The five ways of running one call, in the order they are measured:
 * t_comm alone, then the other four as one interleaved set, polled first. */
enum { V_COMM, V_POLLED, V_COMPUTE, V_IMMEDIATE, V_UNPOLLED, V_N };

/* Per-call local times accumulated over a block, in this order. */
enum {
    L_COMM, L_COMPUTE, L_IMMEDIATE, L_POLLED, L_POLLED_COMPUTE,
    L_POLLED_PROGRESS, L_UNPOLLED, L_UNPOLLED_COMPUTE, L_N
};
static const char *const l_names[L_N] = {
    "overlap.t_comm", "overlap.t_compute", "overlap.t_immediate",
    "overlap.t_polled", "overlap.t_polled.compute", "overlap.t_polled.progress",
    "overlap.t_unpolled", "overlap.t_unpolled.compute"
};
static const char *const l_what[L_N] = {
    "post then finish at once, no compute (communication alone)",
    "the compute batches alone, no communication",
    "post, finish (wait), then all compute batches: the same work, no overlap",
    "post, compute batches with one poll after each, finish",
    "compute batch time inside t_polled (sum over batches)",
    "progress poll time inside t_polled (sum over polls)",
    "post, all compute batches without polls, finish",
    "compute batch time inside t_unpolled"
};


/* Each way is one variant of the engine; its local times are the columns
 * v_first[v] .. v_first[v] + v_nparts[v] - 1, the first the whole call. */
static const int v_first[V_N] = { L_COMM, L_POLLED, L_COMPUTE, L_IMMEDIATE, L_UNPOLLED };
static const int v_nparts[V_N] = { 1, 3, 1, 1, 2 };

typedef struct options {
    bb_size_list_t bytes;
    bb_size_list_t batches;
    double compute_s;        /* per batch; < 0: auto */
    unsigned kinds;          /* bit k: kind k selected */
} options_t;

/* ---- the operations ---------------------------------------------------- */

typedef struct provider_state {
    const unsigned char *data;
    int64_t len;
    bb_run_t *run;                   /* counts what it lends */
} provider_state_t;

static int provider_prepare(void *arg, const void **data_out, int64_t *len_out)
{
    provider_state_t *p = arg;
    *data_out = p->data;
    *len_out = p->len;
    bb_run_lent(p->run);
    return 0;
}

static void provider_release(void *arg, const void *data)
{
    provider_state_t *p = arg;
    (void)data;
    bb_run_returned(p->run);
}

/* A cheap payload check (first, middle, last byte): a wrong transfer is a
 * failure, not a number; the full check belongs to bbench-transfer. */
typedef struct consumer_state {
    int64_t consumed, wrong;
} consumer_state_t;

static int consumer_consume(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    consumer_state_t *c = arg;
    const unsigned char *d = data;
    *value_out = NULL;
    c->consumed++;
    if (nbytes > 0) {
        int64_t at[3] = { 0, nbytes / 2, nbytes - 1 };
        for (int i = 0; i < 3; i++)
            if (d[at[i]] != bb_payload_byte(0, at[i])) {
                c->wrong++;
                return 1;
            }
    }
    return 0;
}

typedef struct run_ctx {
    bb_run_t *run;
    options_t opt;
    const options_t *o;              /* &opt */
    MPI_Comm comm;
    int rank, size, source, destination;
    int kinds[KIND_N], nkinds;       /* the selected kinds, in order */
    unsigned char *send, *recv;      /* the same buffers for every kind */
    bb_transfer_phase_t *phase;
    provider_state_t provider_state;
    bb_transfer_provider_t provider;
    consumer_state_t consumer_state;
    bb_transfer_consumer_t consumer;
    bb_run_kernel_t kernel;
    volatile double sink;            /* the kernel's results land here, so the
                                        compiler must do the work */
    bb_progress_t progress;          /* the library and its threads (harness) */
    /* The current point. */
    int kind;
    int64_t bytes, batches, iters_per_batch;
    int64_t phase_id;
    bb_transfer_ticket_t ticket;
    MPI_Request req;
    int refused;                     /* a call of this point was refused */
    bb_refusal_t refusal;            /* when a call was refused */
} run_ctx_t;

static bb_status_t op_post(run_ctx_t *c, int64_t declared)
{
    int rc = MPI_SUCCESS;
    c->req = MPI_REQUEST_NULL;
    switch (c->kind) {
    case KIND_TRANSFER: {
        bb_transfer_contract_t contract = {
            .phase_id = c->phase_id, .epoch = 1, .source = c->source,
            .destination = c->destination, .nbytes = c->bytes,
            .max_bytes = c->bytes, .batches = declared
        };
        bb_transfer_metrics_t m;
        c->provider_state.len = c->bytes;
        bb_status_t st = bb_transfer_phase_begin(c->phase, &c->provider, &contract,
                                                 &c->ticket, &m);
        if (st == BB_REFUSED)
            c->refusal = m.refusal;
        else if (st != BB_OK)
            bb_run_fatal(c->run, "transfer begin: %s", bb_status_string(st));
        return st;
    }
    case KIND_ISEND:
        if (c->rank == c->source)
            rc = MPI_Isend(c->send, (int)c->bytes, MPI_BYTE, c->destination, 7,
                           c->comm, &c->req);
        else if (c->rank == c->destination)
            rc = MPI_Irecv(c->recv, (int)c->bytes, MPI_BYTE, c->source, 7, c->comm,
                           &c->req);
        break;
    case KIND_IALLREDUCE:
        rc = MPI_Iallreduce(c->send, c->recv, (int)(c->bytes / 8), MPI_DOUBLE, MPI_SUM,
                            c->comm, &c->req);
        break;
    }
    if (rc != MPI_SUCCESS)
        bb_run_fatal(c->run, "posting %s failed", kind_names[c->kind]);
    return BB_OK;
}

/* One poll.  Returns 1 once this rank's payload is complete, and 1 for a
 * rank that posts no payload request (it never holds the figure back). */
static int op_poll(run_ctx_t *c)
{
    int done = 0;
    if (c->kind == KIND_TRANSFER) {
        bb_status_t st = bb_transfer_ticket_progress(&c->ticket, &done);
        if (st != BB_OK)
            bb_run_fatal(c->run, "transfer progress: %s", bb_status_string(st));
        if (c->rank != c->source && c->rank != c->destination)
            done = 1;
        return done;
    }
    if (c->req == MPI_REQUEST_NULL)
        return 1;
    if (MPI_Test(&c->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        bb_run_fatal(c->run, "MPI_Test failed");
    return done;
}

static bb_status_t op_finish(run_ctx_t *c)
{
    if (c->kind == KIND_TRANSFER) {
        bb_transfer_metrics_t m;
        void *value = NULL;
        bb_status_t st = bb_transfer_ticket_finish(&c->ticket, &c->consumer,
                                                   BB_TRANSFER_LOCAL_OK, &value, &m);
        if (st == BB_REFUSED)
            c->refusal = m.refusal;
        else if (st != BB_OK)
            bb_run_fatal(c->run, "transfer finish: %s", bb_status_string(st));
        return st;
    }
    if (MPI_Wait(&c->req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        bb_run_fatal(c->run, "MPI_Wait failed");
    return BB_OK;
}

static void compute_batch(run_ctx_t *c)
{
    c->sink += bb_compute_run(c->iters_per_batch);
}

/* One call of variant v; adds its times to acc[] and sets *done (polled:
 * every poll-observed completion; others leave it alone). */
static bb_status_t one_call(run_ctx_t *c, int v, double *acc, int *done)
{
    bb_status_t st = BB_OK;
    double tc = 0.0, tp = 0.0;
    int saw = 0;
    /* Every call starts together; the barrier is outside the timing. */
    if (MPI_Barrier(c->comm) != MPI_SUCCESS)
        bb_run_fatal(c->run, "MPI_Barrier failed");
    double t0 = bb_time_now();
    switch (v) {
    case V_COMM:
        if ((st = op_post(c, 0)) == BB_OK)
            st = op_finish(c);
        acc[L_COMM] += bb_time_now() - t0;
        break;
    case V_COMPUTE:
        for (int64_t b = 0; b < c->batches; b++)
            compute_batch(c);
        acc[L_COMPUTE] += bb_time_now() - t0;
        break;
    case V_IMMEDIATE:
        if ((st = op_post(c, 0)) == BB_OK)
            st = op_finish(c);
        for (int64_t b = 0; b < c->batches; b++)
            compute_batch(c);
        acc[L_IMMEDIATE] += bb_time_now() - t0;
        break;
    case V_POLLED:
        if ((st = op_post(c, c->batches)) != BB_OK)
            break;
        for (int64_t b = 0; b < c->batches; b++) {
            double tb = bb_time_now();
            compute_batch(c);
            double te = bb_time_now();
            saw |= op_poll(c);
            tp += bb_time_now() - te;
            tc += te - tb;
        }
        st = op_finish(c);
        acc[L_POLLED] += bb_time_now() - t0;
        acc[L_POLLED_COMPUTE] += tc;
        acc[L_POLLED_PROGRESS] += tp;
        /* A rank with no payload request never holds the figure back. */
        if (c->kind == KIND_TRANSFER || c->kind == KIND_ISEND)
            if (c->rank != c->source && c->rank != c->destination)
                saw = 1;
        *done = saw;
        break;
    case V_UNPOLLED:
        if ((st = op_post(c, c->batches)) != BB_OK)
            break;
        for (int64_t b = 0; b < c->batches; b++) {
            double tb = bb_time_now();
            compute_batch(c);
            tc += bb_time_now() - tb;
        }
        st = op_finish(c);
        acc[L_UNPOLLED] += bb_time_now() - t0;
        acc[L_UNPOLLED_COMPUTE] += tc;
        break;
    }
    return st;
}
/* ---- one point --------------------------------------------------------- */

typedef struct point {
    int kind;
    int64_t bytes, batches, reps;
    int64_t reps_comm;               /* t_comm's calls per sample (its own block) */
    int auto_compute;
    double compute_per_batch_s;      /* requested or calibrated */
    int64_t iters_per_batch;
    int compute_none;                /* no compute requested: figures null */
    int64_t samples;
    double *all;                     /* [size][samples][L_N] local means */
    double *max;                     /* [samples][L_N] rank maxima */
    double *mean;                    /* [samples][L_N] rank means */
    int *imb_rank;                   /* [samples] rank with the largest t_unpolled */
    int64_t *done;                   /* [samples] polled calls all-complete */
    double first_comm, first_polled; /* the first, cold calls, rank maximum */
    bb_status_t status;
    bb_refusal_t refusal;
} point_t;

static double *at(double *base, int64_t s, int i) { return &base[s * L_N + i]; }

static void point_free(point_t *p)
{
    free(p->all);
    free(p->max);
    free(p->mean);
    free(p->imb_rank);
    free(p->done);
}

/* One variant's own state: the engine's set calls the variants in turn. */
typedef struct variant_arg {
    run_ctx_t *c;
    int v;
    /* The polled variant only. */
    int *done;                       /* per call of the block: payload seen
                                        complete during the batches */
    int64_t ndone, done_cap;
    int64_t blocks, skip;            /* blocks so far; those before the samples */
    int64_t samples;
    int64_t *sample_done;            /* [samples] calls complete on every rank */
} variant_arg_t;

/* The engine's call: one call of the variant, its times as the parts. */
static bb_status_t variant_call(void *arg, double *parts, double *counts)
{
    variant_arg_t *a = arg;
    run_ctx_t *c = a->c;
    double t[L_N] = {0};
    int done = 0;
    (void)counts;
    /* A refusal is collective: every rank skips the rest of the point alike. */
    if (c->refused)
        return BB_OK;
    bb_status_t st = one_call(c, a->v, t, &done);
    if (st == BB_REFUSED)
        c->refused = 1;
    for (int k = 0; k < v_nparts[a->v]; k++)
        parts[k] += t[v_first[a->v] + k];
    if (a->v == V_POLLED) {
        if (a->ndone == a->done_cap) {
            int64_t cap = a->done_cap ? 2 * a->done_cap : 1024;
            int *grown = realloc(a->done, (size_t)cap * sizeof *grown);
            if (grown == NULL)
                bb_run_fatal(c->run, "out of memory");
            a->done = grown;
            a->done_cap = cap;
        }
        a->done[a->ndone++] = done;
    }
    return st;
}

/* After each block of the polled call, outside the timing: the number of
 * calls in which every rank saw its payload complete during the batches
 * (MIN over ranks per call).  The engine's blocks come in its documented
 * order (first call, warm-up, probe, samples), so sample k is block skip + k. */
static bb_status_t polled_block_end(void *arg, int64_t calls)
{
    variant_arg_t *a = arg;
    int64_t k = a->blocks++ - a->skip, all = 0;
    (void)calls;
    if (!a->c->refused) {
        if (MPI_Allreduce(MPI_IN_PLACE, a->done, (int)a->ndone, MPI_INT, MPI_MIN,
                          a->c->comm) != MPI_SUCCESS)
            return BB_ERR_MPI;
        for (int64_t r = 0; r < a->ndone; r++)
            all += a->done[r];
    }
    if (k >= 0 && k < a->samples)
        a->sample_done[k] = all;
    a->ndone = 0;
    return BB_OK;
}

static void measure_point(run_ctx_t *c, int kind, int64_t bytes, int64_t batches,
                          point_t *p)
{
    const options_t *o = c->o;
    const bb_measure_settings_t *settings = bb_run_settings(c->run);
    int64_t S = settings->samples;
    bb_measure_result_t res[V_N];
    variant_arg_t args[V_N];
    bb_measure_variant_t mv[V_N];
    memset(res, 0, sizeof res);
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->bytes = bytes;
    p->batches = batches;
    p->samples = S;
    p->refusal.rank = -1;
    p->status = BB_OK;
    p->all = calloc((size_t)(c->size * S * L_N), sizeof(double));
    p->max = calloc((size_t)(S * L_N), sizeof(double));
    p->mean = calloc((size_t)(S * L_N), sizeof(double));
    p->imb_rank = calloc((size_t)S, sizeof(int));
    p->done = calloc((size_t)S, sizeof(int64_t));
    double *local = calloc((size_t)(S * L_N), sizeof(double));
    if (!p->all || !p->max || !p->mean || !p->imb_rank || !p->done || !local)
        bb_run_fatal(c->run, "out of memory");
    for (int v = 0; v < V_N; v++) {
        args[v] = (variant_arg_t){ .c = c, .v = v };
        mv[v] = (bb_measure_variant_t){ .nparts = v_nparts[v], .call = variant_call,
                                        .arg = &args[v] };
    }
    variant_arg_t *pa = &args[V_POLLED];
    mv[V_POLLED].block_end = polled_block_end;
    pa->skip = 1 + settings->warmup + (settings->reps == 0);
    pa->samples = S;
    pa->sample_done = p->done;

    c->kind = kind;
    c->bytes = bytes;
    c->batches = batches;
    c->iters_per_batch = 0;
    c->refused = 0;
    c->phase_id++;

    /* Communication alone first: auto compute needs its median before any
     * compute runs. */
    bb_run_measure(c->run, "t_comm", &mv[V_COMM], &res[V_COMM]);
    if (c->refused)
        goto refused;
    p->first_comm = res[V_COMM].first[0];

    p->auto_compute = o->compute_s < 0.0;
    if (batches == 0)
        p->compute_per_batch_s = 0.0;
    else if (p->auto_compute)
        p->compute_per_batch_s = bb_stats_median(bb_measure_part(&res[V_COMM], 0), (size_t)S)
                                 / (double)batches;
    else
        p->compute_per_batch_s = o->compute_s;
    /* Every rank runs the same iteration count (the slowest rank's rate and
     * the agreed median), so that the compute is the same work everywhere. */
    int64_t iters = bb_run_kernel_iterations(&c->kernel, p->compute_per_batch_s);
    c->iters_per_batch = p->iters_per_batch = iters;
    p->compute_none = batches == 0 || iters == 0;

    /* The other four as one set, their samples interleaved so that a drift
     * of the machine shows in all of them alike; the polled call's calls per
     * sample (given or fitted to the budget) serve all, so that every column
     * is a mean over as many calls. */
    bb_run_measure_set(c->run, "t_polled, t_compute, t_immediate, t_unpolled",
                       &mv[V_POLLED], V_N - V_POLLED, 1, &res[V_POLLED]);
    if (c->refused)
        goto refused;
    if (pa->blocks != pa->skip + S)
        bb_run_fatal(c->run, "t_polled: %lld blocks, not %lld", (long long)pa->blocks,
                     (long long)(pa->skip + S));
    p->first_polled = res[V_POLLED].first[0];
    p->reps = res[V_POLLED].reps;
    p->reps_comm = res[V_COMM].reps;

    /* The engine's rank maxima for bbench's figures; every rank's own
     * per-call means, to every rank (outside any timing), for the rank means
     * of OSU's and the values of the rank with the largest t_ovrl for IMB's. */
    for (int v = 0; v < V_N; v++)
        for (int k = 0; k < v_nparts[v]; k++)
            for (int64_t s = 0; s < S; s++) {
                *at(p->max, s, v_first[v] + k) = bb_measure_part(&res[v], k)[s];
                *at(local, s, v_first[v] + k) = res[v].local_parts[k * S + s];
            }
    if (MPI_Allgather(local, (int)(S * L_N), MPI_DOUBLE, p->all, (int)(S * L_N),
                      MPI_DOUBLE, c->comm) != MPI_SUCCESS)
        bb_run_fatal(c->run, "MPI_Allgather of samples failed");
    for (int64_t s = 0; s < S; s++) {
        int best = 0;
        for (int i = 0; i < L_N; i++) {
            double sum = 0.0;
            for (int r = 0; r < c->size; r++)
                sum += p->all[((int64_t)r * S + s) * L_N + i];
            *at(p->mean, s, i) = sum / (double)c->size;
        }
        for (int r = 1; r < c->size; r++)
            if (p->all[((int64_t)r * S + s) * L_N + L_UNPOLLED]
                > p->all[((int64_t)best * S + s) * L_N + L_UNPOLLED])
                best = r;
        p->imb_rank[s] = best;
    }
refused:
    if (c->refused) {
        p->status = BB_REFUSED;
        p->refusal = c->refusal;
    }
    for (int v = 0; v < V_N; v++)
        bb_measure_result_clear(&res[v]);
    free(pa->done);
    free(local);
}

/* ---- figures ----------------------------------------------------------- */

enum { F_OVERLAP, F_UNPOLLED, F_OSU, F_IMB, F_IMB_CODE, F_SPEEDUP, F_SLOWDOWN, F_N };
static const char *const f_names[F_N] = {
    "overlap", "overlap.unpolled", "overlap.osu", "overlap.imb", "overlap.imb_code",
    "overlap.speedup", "overlap.compute_slowdown"
};
static const char *const f_formulas[F_N] = {
    BB_OVERLAP_FORMULA, BB_OVERLAP_FORMULA " with t_polled := t_unpolled",
    BB_OVERLAP_OSU_FORMULA, BB_OVERLAP_IMB_FORMULA, BB_OVERLAP_IMB_CODE_FORMULA,
    BB_OVERLAP_SPEEDUP_FORMULA, BB_OVERLAP_SLOWDOWN_FORMULA
};
static const char *const f_scopes[F_N] = {
    "call/max-rank", "call/max-rank", "call/mean-rank", "call/rank-of-max-t_ovrl",
    "call/rank-of-max-t_ovrl", "call/max-rank", "call/max-rank"
};
static const char *const f_notes[F_N] = {
    "bbench's headline: t_comm and t_compute measured alone, t_polled with one "
    "progress poll after each batch, every time a rank maximum per sample",
    "the same formula on the run without polls: the difference to 'overlap' is "
    "what the polls bought",
    "OSU osu_iallreduce style (osu_util_mpi.c, print_stats_nbc): t_total = "
    "t_unpolled (OSU calls no MPI_Test by default), t_compute_in = the compute "
    "inside that run (OSU subtracts its Test time), t_pure = t_comm, each the "
    "mean over ranks, not the maximum; no upper clamp; OSU calibrates the compute "
    "to t_pure, which only --compute auto reproduces",
    "IMB-NBC style, the user guide's formula (denominator min): t_ovrl = "
    "t_unpolled (Ixxx, IMB_cpu_exploit, MPI_Wait), t_cpu = the compute inside "
    "that run, t_pure = t_comm, all taken from the rank with the largest t_ovrl",
    "IMB-NBC style as IMB's source computes it (src_c/IMB_output.c, NBC branch: "
    "denominator max(t_pure, t_cpu), disagreeing with the guide); same inputs as "
    "overlap.imb",
    "the same work done post-wait-then-compute over post-compute-poll-finish: "
    "above 1 the overlap paid off in the full boundary",
    "compute batch time inside t_polled over compute alone: above 1 the "
    "communication slowed the compute down (shared cores, memory, progress)"
};

/* A ratio quantity with samples from per-sample figures, or null with the
 * first reason found. */
static cJSON *figure_quantity(int f, const bb_overlap_figure_t *fig, int64_t n,
                              const char *const *inputs)
{
    double *v = malloc((size_t)n * sizeof *v);
    const char *reason = NULL;
    int64_t clamped = 0;
    for (int64_t s = 0; s < n && v != NULL; s++) {
        if (!fig[s].defined) {
            reason = fig[s].reason;
            break;
        }
        v[s] = fig[s].value;
        clamped += fig[s].clamped;
    }
    cJSON *q;
    if (v == NULL || reason != NULL) {
        q = bb_quantity_null("ratio", f_scopes[f], reason ? reason : "out of memory");
    } else {
        q = bb_quantity_timing(v, (size_t)n, f_scopes[f], NULL);
        if (q != NULL) {
            cJSON_ReplaceItemInObjectCaseSensitive(q, "unit", cJSON_CreateString("ratio"));
            cJSON_AddNumberToObject(q, "clamped_samples", (double)clamped);
        }
    }
    free(v);
    if (q == NULL)
        return NULL;
    cJSON_AddStringToObject(q, "formula", f_formulas[f]);
    cJSON *in = cJSON_CreateArray();
    for (int i = 0; inputs[i] != NULL; i++)
        cJSON_AddItemToArray(in, cJSON_CreateString(inputs[i]));
    cJSON_AddItemToObject(q, "inputs", in);
    cJSON_AddStringToObject(q, "note", f_notes[f]);
    return q;
}

typedef struct figures {
    bb_overlap_figure_t *f[F_N];  /* [samples] each */
    bb_overlap_figure_t done;
    int64_t done_calls, polled_calls;
    /* For overlap and overlap.unpolled: how far the figure could move within
     * the sample ranges of its times, (range(t_comm) + range(t_overlapped))
     * / min(t_comm, t_compute); above 1 the ranges alone allow any value in
     * [0, 1].  NAN when undefined. */
    double uncertainty[2];
} figures_t;

/* Median, min and max over samples of column i of the rank maxima. */
static bb_summary_t column_summary(const point_t *p, int i)
{
    bb_summary_t sum = { 0, (double)NAN, (double)NAN, (double)NAN };
    double *v = malloc((size_t)p->samples * sizeof *v);
    if (v != NULL) {
        for (int64_t s = 0; s < p->samples; s++)
            v[s] = p->max[s * L_N + i];
        if (bb_stats_summarize(v, (size_t)p->samples, &sum) != BB_OK)
            sum.median = sum.min = sum.max = (double)NAN;
    }
    free(v);
    return sum;
}

static void figures_compute(bb_run_t *run, const point_t *p, figures_t *fs)
{
    int64_t S = p->samples;
    memset(fs, 0, sizeof *fs);
    for (int f = 0; f < F_N; f++)
        if ((fs->f[f] = calloc((size_t)S, sizeof(bb_overlap_figure_t))) == NULL)
            bb_run_fatal(run, "out of memory");  /* MPI_Abort: no rank left waiting */
    for (int64_t s = 0; s < S; s++) {
        const double *mx = &p->max[s * L_N], *mn = &p->mean[s * L_N];
        const double *ib = &p->all[((int64_t)p->imb_rank[s] * S + s) * L_N];
        /* No compute asked for: pass an exact zero, so the figures say
         * "undefined" rather than divide by the timer noise of an empty
         * loop. */
        double tk = p->compute_none ? 0.0 : mx[L_COMPUTE];
        double tk_osu = p->compute_none ? 0.0 : mn[L_UNPOLLED_COMPUTE];
        double tk_imb = p->compute_none ? 0.0 : ib[L_UNPOLLED_COMPUTE];
        bb_overlap_ratio(mx[L_COMM], tk, mx[L_POLLED], &fs->f[F_OVERLAP][s]);
        bb_overlap_ratio(mx[L_COMM], tk, mx[L_UNPOLLED], &fs->f[F_UNPOLLED][s]);
        bb_overlap_osu(mn[L_UNPOLLED], tk_osu, mn[L_COMM], &fs->f[F_OSU][s]);
        bb_overlap_imb(ib[L_COMM], tk_imb, ib[L_UNPOLLED], BB_OVERLAP_IMB_DOC,
                       &fs->f[F_IMB][s]);
        bb_overlap_imb(ib[L_COMM], tk_imb, ib[L_UNPOLLED], BB_OVERLAP_IMB_CODE,
                       &fs->f[F_IMB_CODE][s]);
        bb_overlap_speedup(mx[L_IMMEDIATE], mx[L_POLLED], &fs->f[F_SPEEDUP][s]);
        bb_overlap_slowdown(p->compute_none ? 0.0 : mx[L_POLLED_COMPUTE], tk,
                            &fs->f[F_SLOWDOWN][s]);
        fs->done_calls += p->done[s];
    }
    fs->polled_calls = p->reps * S;
    if (p->batches == 0) {
        fs->done.defined = 0;
        fs->done.reason = "no batches: no poll ran";
    } else {
        bb_overlap_fraction(fs->done_calls, fs->polled_calls, &fs->done);
    }
    bb_summary_t comm = column_summary(p, L_COMM), comp = column_summary(p, L_COMPUTE);
    double shorter = comm.median < comp.median ? comm.median : comp.median;
    static const int over[2] = { L_POLLED, L_UNPOLLED };
    for (int k = 0; k < 2; k++) {
        bb_summary_t t = column_summary(p, over[k]);
        fs->uncertainty[k] = p->compute_none || !(shorter > 0.0)
                                 ? (double)NAN
                                 : ((comm.max - comm.min) + (t.max - t.min)) / shorter;
    }
}

static void figures_free(figures_t *fs)
{
    for (int f = 0; f < F_N; f++)
        free(fs->f[f]);
}

static double figure_median(const bb_overlap_figure_t *fig, int64_t n)
{
    double *v = malloc((size_t)n * sizeof *v);
    double m = NAN;
    int ok = v != NULL;
    for (int64_t s = 0; ok && s < n; s++) {
        if (!fig[s].defined)
            ok = 0;
        else
            v[s] = fig[s].value;
    }
    if (ok)
        m = bb_stats_median(v, (size_t)n);
    free(v);
    return m;
}

/* ---- record and table -------------------------------------------------- */

static void record_point(run_ctx_t *c, const point_t *p, const figures_t *fs)
{
    int64_t S = p->samples;
    const char *scope = "call/max-rank";
    cJSON *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "kind", kind_names[p->kind]);
    cJSON_AddStringToObject(params, "label", kind_labels[p->kind]);
    cJSON_AddStringToObject(params, "what", kind_what[p->kind]);
    cJSON_AddNumberToObject(params, "bytes", (double)p->bytes);
    if (p->kind == KIND_IALLREDUCE)
        cJSON_AddNumberToObject(params, "elements", (double)(p->bytes / 8));
    cJSON_AddNumberToObject(params, "batches", (double)p->batches);
    /* Parameters identify the point across runs; what this run calibrated
     * or chose (auto compute, kernel iterations, reps) is a quantity. */
    cJSON_AddStringToObject(params, "compute", p->auto_compute ? "auto" : "fixed");
    if (!p->auto_compute)
        cJSON_AddNumberToObject(params, "compute_per_batch_s", p->compute_per_batch_s);
    cJSON_AddNumberToObject(params, "source", c->source);
    cJSON_AddNumberToObject(params, "destination", c->destination);
    cJSON_AddNumberToObject(params, "samples", (double)S);
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    if (async != NULL)
        cJSON_AddStringToObject(params, "async_progress", async);
    else
        cJSON_AddNullToObject(params, "async_progress");

    cJSON *q = cJSON_CreateObject();
    cJSON *first = cJSON_CreateObject();
    bb_quantities_add(q, "compute.per_batch",
                      bb_quantity_value(p->compute_per_batch_s, "s", "call/rank"));
    bb_quantities_add(q, "compute.total",
                      bb_quantity_value(p->compute_per_batch_s * (double)p->batches, "s",
                                        "call/rank"));
    cJSON *iters = bb_quantity_value((double)p->iters_per_batch, "count", "call/rank");
    cJSON *reps = bb_quantity_value((double)p->reps, "count", "run/rank");
    /* Calibrated or budget-chosen in this run: not part of the contract. */
    cJSON_AddFalseToObject(iters, "deterministic");
    cJSON_AddFalseToObject(reps, "deterministic");
    bb_quantities_add(q, "compute.iterations_per_batch", iters);
    bb_quantities_add(q, "run.reps", reps);
    if (p->status != BB_OK) {
        bb_quantities_add(q, "overlap", bb_quantity_null("ratio", scope,
                                                         "refused: nothing measured"));
        bb_record_add_point(bb_bench_record(bb_run_bench(c->run)), params, "refused", &p->refusal,
                            first, q);
        return;
    }
    bb_quantities_add(first, "overlap.t_comm", bb_quantity_value(p->first_comm, "s", scope));
    bb_quantities_add(first, "overlap.t_polled",
                      bb_quantity_value(p->first_polled, "s", scope));

    double *v = malloc((size_t)S * sizeof *v);
    if (v == NULL)
        bb_run_fatal(c->run, "out of memory");
    static const char *const polled_includes[] = {
        "overlap.t_polled.compute", "overlap.t_polled.progress", NULL
    };
    static const char *const unpolled_includes[] = { "overlap.t_unpolled.compute", NULL };
    for (int i = 0; i < L_N; i++) {
        for (int64_t s = 0; s < S; s++)
            v[s] = *at(p->max, s, i);
        const char *const *inc = i == L_POLLED ? polled_includes
                                 : i == L_UNPOLLED ? unpolled_includes : NULL;
        cJSON *t = bb_quantity_timing(v, (size_t)S, scope, inc);
        if (t != NULL)
            cJSON_AddStringToObject(t, "what", l_what[i]);
        bb_quantities_add(q, l_names[i], t);
    }
    free(v);

    static const char *const in_overlap[] = { "overlap.t_comm", "overlap.t_compute",
                                              "overlap.t_polled", NULL };
    static const char *const in_unpolled[] = { "overlap.t_comm", "overlap.t_compute",
                                               "overlap.t_unpolled", NULL };
    static const char *const in_peer[] = { "overlap.t_comm", "overlap.t_unpolled",
                                           "overlap.t_unpolled.compute", NULL };
    static const char *const in_speedup[] = { "overlap.t_immediate", "overlap.t_polled",
                                              NULL };
    static const char *const in_slowdown[] = { "overlap.t_polled.compute",
                                               "overlap.t_compute", NULL };
    static const char *const *const inputs[F_N] = {
        in_overlap, in_unpolled, in_peer, in_peer, in_peer, in_speedup, in_slowdown
    };
    for (int f = 0; f < F_N; f++) {
        cJSON *fq = figure_quantity(f, fs->f[f], S, inputs[f]);
        if (fq != NULL && (f == F_OVERLAP || f == F_UNPOLLED)
            && !isnan(fs->uncertainty[f == F_UNPOLLED])) {
            double u = fs->uncertainty[f == F_UNPOLLED];
            cJSON_AddNumberToObject(fq, "uncertainty", u);
            cJSON_AddBoolToObject(fq, "noise_dominated", u > 1.0);
            cJSON_AddStringToObject(fq, "uncertainty_formula",
                                    "(range(t_comm) + range(t_overlapped)) / "
                                    "min(median t_comm, median t_compute): above 1 the "
                                    "sample ranges alone allow any value in [0, 1]");
        }
        bb_quantities_add(q, f_names[f], fq);
    }

    cJSON *d;
    if (fs->done.defined) {
        d = bb_quantity_value(fs->done.value, "ratio", "run/all-ranks");
        cJSON_AddNumberToObject(d, "calls", (double)fs->polled_calls);
        cJSON_AddNumberToObject(d, "completed_calls", (double)fs->done_calls);
        cJSON *per = cJSON_CreateArray();
        for (int64_t s = 0; s < S; s++)
            cJSON_AddItemToArray(per, cJSON_CreateNumber((double)p->done[s]
                                                         / (double)p->reps));
        cJSON_AddItemToObject(d, "samples", per);
    } else {
        d = bb_quantity_null("ratio", "run/all-ranks", fs->done.reason);
    }
    cJSON_AddStringToObject(d, "note", "fraction of polled calls in which a progress "
                            "poll saw the payload complete on every data rank before "
                            "finish: local observation only, it does not prove a "
                            "faster call, asynchronous progress or remote consumption");
    bb_quantities_add(q, "completed_during_batches", d);

    bb_quantities_add(q, "communication.payload",
                      bb_quantity_value(p->kind == KIND_IALLREDUCE
                                            ? 8.0 * (double)(p->bytes / 8)
                                            : (double)p->bytes,
                                        "byte", "call/rank"));
    bb_quantities_add_unobservable(q);
    bb_record_add_point(bb_bench_record(bb_run_bench(c->run)), params, "ok", NULL, first, q);
}

/* The table's times, in column order, and their names. */
static const int t_cols[] = { L_COMM, L_COMPUTE, L_IMMEDIATE, L_POLLED, L_UNPOLLED };
static const char *const t_col_names[] = { "t_comm", "t_compute", "t_immediate",
                                           "t_polled", "t_unpolled" };
enum { T_COLS = sizeof t_cols / sizeof t_cols[0] };

/* The figures in column order, their names and legends. */
static const int fig_cols[] = { F_OVERLAP, F_UNPOLLED, F_OSU, F_IMB, F_SPEEDUP };
static const char *const fig_col_names[] = { "overlap", "unpolled", "osu", "imb", "speedup" };
static const char *const fig_col_legends[] = {
    "overlap = " BB_OVERLAP_FORMULA " (t_polled; rank maxima)",
    "the same from t_unpolled (no poll between batches)",
    "OSU's overlap = " BB_OVERLAP_OSU_FORMULA " (rank means)",
    "IMB's overlap = " BB_OVERLAP_IMB_FORMULA " (the rank with the largest t_unpolled)",
    "speedup = " BB_OVERLAP_SPEEDUP_FORMULA
};
enum { FIG_COLS = sizeof fig_cols / sizeof fig_cols[0] };

static void table_header(bb_run_t *run)
{
    bb_table_t *t = bb_run_table(run);
    int full = bb_run_full(run);
    bb_table_note(t, "times: microseconds per call, medians of %lld samples, each the "
                  "rank maximum; parts and wholes are medians taken separately; figures "
                  "are ratios (1 = 100%%), - where undefined (the record says why)",
                  (long long)bb_run_settings(run)->samples);
    bb_table_column(t, "kind", NULL, "transfer: the bounded transfer phase (ticket API), "
                    "the protocol; isend, iallreduce: raw MPI references", 10);
    bb_table_column(t, "size", "B", "payload bytes per call (iallreduce: bytes / 8 "
                    "doubles on every rank)", 8);
    bb_table_column(t, "batches", NULL, "compute batches per call, a poll after each in "
                    "t_polled", 7);
    bb_table_column(t, "compute_per_batch", "us", "compute per batch (auto: the batches "
                    "add up to the median t_comm)", 9);
    for (int k = 0; k < T_COLS; k++) {
        if (full)
            bb_table_time_columns(t, t_col_names[k], l_what[t_cols[k]], 1);
        else
            bb_table_column(t, t_col_names[k], "us", l_what[t_cols[k]], 10);
    }
    for (int k = 0; k < FIG_COLS; k++)
        bb_table_column(t, fig_col_names[k], NULL, fig_col_legends[k], 7);
    bb_table_column(t, "done", NULL, "fraction of polled calls whose payload every rank "
                    "saw complete during the batches (proves nothing alone)", 5);
    bb_table_column(t, "slowdown", NULL, "compute slowdown = " BB_OVERLAP_SLOWDOWN_FORMULA,
                    7);
    bb_table_column(t, "noisy", NULL, "overlap, unpolled, both or no: the figures whose "
                    "sample ranges alone allow any value in [0, 1] (uncertainty above 1)", 5);
    bb_table_column(t, "status", NULL, "ok, or refused:STAGE:seqN:rankR (the stage, the "
                    "sequence and the refusing rank where one is named)", 6);
}

/* The samples of column i of the rank maxima (caller frees). */
static double *column_samples(const point_t *p, int i)
{
    double *v = malloc((size_t)p->samples * sizeof *v);
    for (int64_t s = 0; v != NULL && s < p->samples; s++)
        v[s] = p->max[s * L_N + i];
    return v;
}

static void table_row(bb_run_t *run, const point_t *p, const figures_t *fs)
{
    bb_table_t *t = bb_run_table(run);
    int full = bb_run_full(run);
    int ok = p->status == BB_OK;
    bb_table_text(t, kind_names[p->kind]);
    bb_table_integer(t, p->bytes);
    bb_table_integer(t, p->batches);
    if (ok)
        bb_table_number(t, p->compute_per_batch_s * 1e6, 1);
    else
        bb_table_missing(t);
    for (int k = 0; k < T_COLS; k++) {
        if (full) {
            double *v = ok ? column_samples(p, t_cols[k]) : NULL;
            bb_table_time_cells(t, v, v ? (size_t)p->samples : 0,
                                t_cols[k] == L_COMM ? p->reps_comm : p->reps, 1);
            free(v);
        } else {
            bb_table_number(t, ok ? column_summary(p, t_cols[k]).median * 1e6
                                  : (double)NAN, 1);
        }
    }
    for (int k = 0; k < FIG_COLS; k++)
        bb_table_number(t, ok ? figure_median(fs->f[fig_cols[k]], p->samples)
                              : (double)NAN, 2);
    bb_table_number(t, ok && fs->done.defined ? fs->done.value : (double)NAN, 2);
    bb_table_number(t, ok ? figure_median(fs->f[F_SLOWDOWN], p->samples) : (double)NAN, 2);
    if (ok) {
        int a = fs->uncertainty[0] > 1.0, b = fs->uncertainty[1] > 1.0;
        bb_table_text(t, a && b ? "both" : a ? "overlap" : b ? "unpolled" : "no");
    } else {
        bb_table_missing(t);
    }
    if (ok) {
        bb_table_text(t, "ok");
    } else {
        char status[96];
        bb_run_format_refusal(&p->refusal, status, sizeof status);
        bb_table_text(t, status);
    }
    bb_table_row_end(t);
}

/* The run-level progress conditions, and the kernel calibration. */
static void record_conditions(run_ctx_t *c)
{
    cJSON *doc = bb_record_json(bb_bench_record(bb_run_bench(c->run)));
    cJSON *pc = bb_progress_json(bb_run_bench(c->run), &c->progress);
    cJSON_AddItemToObject(doc, "progress", pc);

    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "overlap", BB_OVERLAP_FORMULA);
    cJSON_AddStringToObject(f, "overlap.osu", BB_OVERLAP_OSU_FORMULA);
    cJSON_AddStringToObject(f, "overlap.imb", BB_OVERLAP_IMB_FORMULA);
    cJSON_AddStringToObject(f, "overlap.imb_code", BB_OVERLAP_IMB_CODE_FORMULA);
    cJSON_AddStringToObject(f, "overlap.speedup", BB_OVERLAP_SPEEDUP_FORMULA);
    cJSON_AddStringToObject(f, "overlap.compute_slowdown", BB_OVERLAP_SLOWDOWN_FORMULA);
    cJSON_AddItemToObject(doc, "formulas", f);
}

/* ---- the descriptor ------------------------------------------------------- */

enum { OPT_BATCHES = BB_OPT_LONG, OPT_COMPUTE, OPT_KINDS };

static const bb_option_t overlap_options[] = {
    {"bytes", 'b', "LIST", "payload bytes: 64K,4M or 1K:4M[:x4] (default 64K,1M;\n"
                           "--full-sweep 64K,4M); or -m"},
    {"batches", OPT_BATCHES, "LIST", "compute batches per call (default 1,16;\n"
                                     "--full-sweep 1,4,16)"},
    {"compute", OPT_COMPUTE, "SEC|auto", "compute seconds per batch, >= 0, or auto: the\n"
                                         "total compute equals the median t_comm of the\n"
                                         "point, as OSU calibrates it (default auto)"},
    {"kinds", OPT_KINDS, "LIST", "transfer,isend,iallreduce or all (default all)"},
    {NULL, 0, NULL, NULL}
};

static void overlap_defaults(void *state)
{
    run_ctx_t *c = state;
    c->o = &c->opt;
    c->opt.compute_s = -1.0;
    c->opt.kinds = (1u << KIND_N) - 1u;
}

static void overlap_parse(bb_run_t *run, void *state, int key, const char *value)
{
    run_ctx_t *c = state;
    options_t *o = &c->opt;
    char err[256];
    switch (key) {
    /* The transfer cap is a signed-32 MPI count. */
    case 'b': bb_run_parse_size_list(run, "bytes", value, 0, INT32_MAX, &o->bytes); break;
    case OPT_BATCHES:
        bb_run_parse_size_list(run, "batches", value, 0, 1000000, &o->batches);
        break;
    case OPT_COMPUTE:
        if (strcmp(value, "auto") == 0)
            o->compute_s = -1.0;
        else if (bb_cli_parse_double(value, 0.0, 10.0, &o->compute_s, err, sizeof err)
                 != BB_OK)
            bb_run_usage(run, "--compute: %s (seconds per batch in [0, 10], or auto)", err);
        break;
    case OPT_KINDS: o->kinds = bb_run_parse_choices(run, "kinds", value, kind_names, KIND_N);
        break;
    }
}

static size_t overlap_validate(bb_run_t *run, void *state)
{
    run_ctx_t *c = state;
    options_t *o = &c->opt;
    c->run = run;
    if (bb_run_size(run) < 2)
        bb_run_usage(run, "needs at least 2 ranks (mpiexec -n 2): on one rank there is no "
                     "peer to overlap with (see --help)");
    /* The quick default lists (seconds at -n 2), or the long ones. */
    int sweep = bb_run_full_sweep(run);
    if (sweep && (o->bytes.n > 0 || o->batches.n > 0))
        bb_run_usage(run, "--full-sweep chooses the default lists: not with --bytes or "
                     "--batches");
    bb_run_message_sizes(run, "bytes", 1, 64 << 10, sweep ? 4 << 20 : 1 << 20, &o->bytes);
    if (o->bytes.n == 0)
        bb_run_parse_size_list(run, "bytes", sweep ? "64K,4M" : "64K,1M", 0, INT32_MAX,
                               &o->bytes);
    if (o->batches.n == 0)
        bb_run_parse_size_list(run, "batches", sweep ? "1,4,16" : "1,16", 0, 1000000,
                               &o->batches);
    c->nkinds = 0;
    for (int k = 0; k < KIND_N; k++)
        if (o->kinds & (1u << k))
            c->kinds[c->nkinds++] = k;
    return (size_t)c->nkinds * o->bytes.n * o->batches.n;
}

/* Point i: kinds outermost, then bytes, then batches. */
static void point_of(const run_ctx_t *c, size_t i, int *kind_out, int64_t *bytes_out,
                     int64_t *batches_out)
{
    size_t nb = c->o->batches.n, nx = c->o->bytes.n;
    *kind_out = c->kinds[i / (nx * nb)];
    *bytes_out = c->o->bytes.values[i / nb % nx];
    *batches_out = c->o->batches.values[i % nb];
}

static void overlap_setup(bb_run_t *run, void *state)
{
    run_ctx_t *c = state;
    const options_t *o = c->o;
    c->comm = bb_run_comm(run);
    c->rank = bb_run_rank(run);
    c->size = bb_run_size(run);
    c->source = 0;
    c->destination = c->size - 1;

    int64_t max_bytes = 8;
    for (size_t i = 0; i < o->bytes.n; i++)
        if (o->bytes.values[i] > max_bytes)
            max_bytes = o->bytes.values[i];
    c->send = malloc((size_t)max_bytes);
    c->recv = malloc((size_t)max_bytes);
    if (c->send == NULL || c->recv == NULL)
        bb_run_fatal(run, "cannot allocate %lld bytes", (long long)max_bytes);
    bb_payload_fill(c->send, max_bytes, 0);
    memset(c->recv, 0, (size_t)max_bytes);
    c->provider_state.data = c->send;
    c->provider_state.run = run;
    c->provider = (bb_transfer_provider_t){ provider_prepare, provider_release,
                                            &c->provider_state };
    c->consumer = (bb_transfer_consumer_t){ consumer_consume, NULL, &c->consumer_state };
    if ((o->kinds & (1u << KIND_TRANSFER))
        && bb_transfer_phase_create(bb_bench_world(bb_run_bench(run)), &c->phase) != BB_OK)
        bb_run_fatal(run, "cannot create the transfer phase");

    /* Batch lengths are chosen per point (bb_run_kernel_iterations), so no
     * check batch is asked for here. */
    bb_run_kernel_calibrate(run, 0.0, &c->kernel);
    bb_run_kernel_record(run, &c->kernel);

    /* Threads per process, observed: the evidence that a progress thread
     * runs (or not), whatever the environment says. */
    if (bb_progress_observe(bb_run_bench(run), &c->progress) != BB_OK)
        bb_run_fatal(run, "MPI_Allreduce failed");
    {
        char note[512];
        bb_table_t *t = bb_run_table(run);
        bb_progress_note(bb_run_bench(run), &c->progress, note, sizeof note);
        bb_table_note(t, "%s", note);
        bb_table_note(t, "transfer and isend: rank %d -> rank %d; compute kernel %.3g "
                      "iterations/s, the slowest rank's (ranks %.3g..%.3g)", c->source,
                      c->destination, c->kernel.slowest_rate, c->kernel.slowest_rate,
                      c->kernel.fastest_rate);
        table_header(run);
    }
}

static void overlap_label(const void *state, size_t i, char *buf, size_t len)
{
    int kind;
    int64_t bytes, batches;
    point_of(state, i, &kind, &bytes, &batches);
    snprintf(buf, len, "%s: %lld bytes, %lld batches", kind_names[kind], (long long)bytes,
             (long long)batches);
}

static int overlap_point(bb_run_t *run, void *state, size_t i)
{
    run_ctx_t *c = state;
    int kind;
    int64_t bytes, batches;
    point_t p;
    figures_t fs;
    int code = BB_EXIT_OK;
    point_of(c, i, &kind, &bytes, &batches);
    measure_point(c, kind, bytes, batches, &p);
    if (p.status == BB_OK)
        figures_compute(run, &p, &fs);
    else
        memset(&fs, 0, sizeof fs);
    if (c->rank == 0) {
        table_row(run, &p, &fs);
        record_point(c, &p, &fs);
    }
    if (p.status != BB_OK) {
        bb_run_note(run, "error: %s %lld bytes refused (%s)", kind_names[kind],
                    (long long)bytes, bb_stage_name(p.refusal.stage));
        code = BB_EXIT_FAILURE;
    }
    figures_free(&fs);
    point_free(&p);
    return code;
}

static int overlap_finish(bb_run_t *run, void *state)
{
    run_ctx_t *c = state;
    int code = BB_EXIT_OK;
    /* The payload checks, agreed over ranks. */
    int64_t wrong = 0;
    if (bb_agree_max(c->comm, &c->consumer_state.wrong, 1, &wrong) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce failed");
    if (wrong != 0) {
        bb_run_note(run, "error: %lld transfers delivered a wrong payload", (long long)wrong);
        code = BB_EXIT_FAILURE;
    }
    if (c->rank == 0)
        record_conditions(c);
    if (c->phase != NULL && bb_transfer_phase_close(c->phase) != BB_OK)
        bb_run_fatal(run, "cannot close the transfer phase");
    c->phase = NULL;
    return code;
}

static void overlap_teardown(void *state)
{
    run_ctx_t *c = state;
    free(c->send);
    free(c->recv);
    bb_size_list_clear(&c->opt.bytes);
    bb_size_list_clear(&c->opt.batches);
}

/* The seed's own defaults of the measurement options. */
static const bb_measure_settings_t default_settings = { .samples = 3, .budget_s = 0.02, .warmup = 2 };

static const bb_bench_desc_t overlap_bench = {
    .program = PROG,
    .benchmark = "overlap",
    .summary =
        "Measure compute/communication overlap honestly: for the bounded transfer\n"
        "phase (ticket API) and, as references, raw MPI_Isend/MPI_Irecv and raw\n"
        "MPI_Iallreduce, on the same buffers and compute kernel, time\n"
        "  t_comm       post, finish                  (communication alone)\n"
        "  t_compute    the compute batches alone     (no communication)\n"
        "  t_immediate  post, finish, then compute    (same work, no overlap)\n"
        "  t_polled     post, batches with a poll after each, finish\n"
        "  t_unpolled   post, all batches, finish     (no poll)\n"
        "and report\n"
        "  overlap   = " BB_OVERLAP_FORMULA "\n"
        "              (t_polled; 'unpolled' uses t_unpolled), rank maxima\n"
        "  osu       = " BB_OVERLAP_OSU_FORMULA "\n"
        "              (OSU osu_iallreduce: rank means, no polls)\n"
        "  imb       = " BB_OVERLAP_IMB_FORMULA "\n"
        "              (IMB-NBC user guide; the record also has IMB's code form,\n"
        "              which divides by max; values of the rank with the largest\n"
        "              t_ovrl = t_unpolled)\n"
        "  speedup   = " BB_OVERLAP_SPEEDUP_FORMULA "\n"
        "  done      = fraction of polled calls in which every rank saw its payload\n"
        "              complete during the batches (proves nothing alone)\n"
        "  slowdown  = " BB_OVERLAP_SLOWDOWN_FORMULA,
    .notes =
        "Needs at least 2 ranks: with one rank there is no peer, the transfer is a\n"
        "local copy made at begin and MPI self messages are copied inside the\n"
        "posting or waiting call, so nothing could overlap and every figure would\n"
        "be an artefact; -n 1 exits with status 2.  The transfer goes from rank 0\n"
        "to the last rank; other ranks still take part in every agreement.\n"
        "\n"
        "Progress: MPICH makes asynchronous progress only with\n"
        "MPIR_CVAR_ASYNC_PROGRESS=1, which needs MPI_THREAD_MULTIPLE (requested\n"
        "then); Open MPI has no progress thread for messages.  The record's\n"
        "progress member explains the library that ran, with the thread level\n"
        "provided, ranks per core and threads per process.  Every call starts\n"
        "after an untimed MPI_Barrier.  --budget sizes\n"
        "the blocks of t_comm and of t_polled; t_compute, t_immediate and t_unpolled\n"
        "use t_polled's calls per sample, their samples interleaved with t_polled's\n"
        "(sample k of each before sample k + 1 of any).  Times in the table are\n"
        "microseconds, figures are ratios (1 = 100%), medians of the per-sample\n"
        "figures.  Exit 1 also for a refusal or a wrong payload.",
    .options = overlap_options,
    .settings = &default_settings,
    .state_size = sizeof(run_ctx_t),
    .defaults = overlap_defaults,
    .parse = overlap_parse,
    .validate = overlap_validate,
    .setup = overlap_setup,
    .label = overlap_label,
    .point = overlap_point,
    .finish = overlap_finish,
    .teardown = overlap_teardown,
};

int main(int argc, char **argv) { return bb_run_main(&overlap_bench, argc, argv); }
