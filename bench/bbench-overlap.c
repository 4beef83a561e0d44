/* bbench-overlap: is the compute done between posting and finishing a
 * transfer really hidden, and why?  For the transfer phase (ticket API) and,
 * as labelled references, raw MPI_Isend/MPI_Irecv and raw MPI_Iallreduce, on
 * the same buffers with the same compute kernel, in one run, it times
 * communication alone, compute alone, post-wait-compute, post-compute with a
 * poll after each batch, and post-compute-finish without polls, and derives
 * the overlap figures (harness/overlap.c).  Parse, run, report. */
#include "config.h"
#include "harness.h"

#include <getopt.h>
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

/* The five ways of running one call. */
enum { V_COMM, V_COMPUTE, V_IMMEDIATE, V_POLLED, V_UNPOLLED, V_N };

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

typedef struct options {
    bb_size_list_t bytes;
    bb_size_list_t batches;
    double compute_s;        /* per batch; < 0: auto */
    int kinds[KIND_N];       /* selected */
    bb_bench_common_t common;  /* samples, reps, budget, warmup, output */
} options_t;

static const char usage_text[] =
    "Usage: " PROG " [OPTION]...\n"
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
    "  slowdown  = " BB_OVERLAP_SLOWDOWN_FORMULA "\n"
    "\n"
    "  -b, --bytes LIST         payload bytes: 64K,4M or 1K:4M[:x4] (default 64K,4M)\n"
    "      --batches LIST       compute batches per call (default 1,4,16)\n"
    "      --compute SEC|auto   compute seconds per batch, >= 0, or auto: the total\n"
    "                           compute equals the median t_comm of the point, as\n"
    "                           OSU calibrates it (default auto)\n"
    "  -k, --kinds LIST         transfer,isend,iallreduce (default all three)\n"
    "  -s, --samples N          samples per timing, >= 3 (default 3)\n"
    "  -r, --reps N             calls per sample (default: from --budget)\n"
    "      --budget SECONDS     time per sample of t_polled (default 0.02)\n"
    "  -w, --warmup N           calls of each kind after the first (default 2)\n"
    "  -o, --output FILE        write the JSON record to FILE\n"
    "  -h, --help               this text\n"
    "  -V, --version            the version\n"
    "\n"
    "Needs at least 2 ranks: with one rank there is no peer, the transfer is a\n"
    "local copy made at begin and MPI self messages are copied inside the\n"
    "posting or waiting call, so nothing could overlap and every figure would\n"
    "be an artefact; -n 1 exits with status 2.  The transfer goes from rank 0\n"
    "to the last rank; other ranks still take part in every agreement.\n"
    "\n"
    "Progress: MPICH makes asynchronous progress only with\n"
    "MPIR_CVAR_ASYNC_PROGRESS=1, which needs MPI_THREAD_MULTIPLE (requested\n"
    "then); the record keeps the variable, the thread level provided and ranks\n"
    "per core.  A sample is the mean per call over a block on each rank, then\n"
    "the maximum over ranks (after the block, outside the timing); every call\n"
    "starts after an untimed MPI_Barrier.  Times in the table are microseconds,\n"
    "figures are ratios (1 = 100%), medians of the per-sample figures.\n"
    "Exit: 0 ok, 1 measured failure (refusal, payload check), 2 usage, 3 fatal.\n";

static void parse_kinds(bb_bench_t *bench, const char *text, int *kinds)
{
    for (int k = 0; k < KIND_N; k++)
        kinds[k] = 0;
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int k = 0; k < KIND_N; k++)
            if (strlen(kind_names[k]) == len && strncmp(p, kind_names[k], len) == 0)
                found = k;
        if (found < 0)
            bb_bench_usage(bench, "--kinds: unknown kind '%.*s' (transfer, isend, "
                           "iallreduce)", (int)len, p);
        kinds[found] = 1;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
}

static void options_parse(bb_bench_t *bench, int argc, char **argv, options_t *o)
{
    enum { OPT_BATCHES = 256, OPT_COMPUTE };
    static const struct option longopts[] = {
        {"bytes", required_argument, NULL, 'b'},
        {"batches", required_argument, NULL, OPT_BATCHES},
        {"compute", required_argument, NULL, OPT_COMPUTE},
        {"kinds", required_argument, NULL, 'k'},
        BB_BENCH_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0}
    };
    const char *bytes = "64K,4M", *batches = "1,4,16";
    char err[256];
    int c;

    memset(o, 0, sizeof *o);
    o->compute_s = -1.0;
    for (int k = 0; k < KIND_N; k++)
        o->kinds[k] = 1;
    bb_bench_common_defaults(&o->common);
    o->common.budget_s = 0.02;
    o->common.reps_max = 1000000;

    opterr = 0;  /* our own messages, on rank 0 only */
    while ((c = getopt_long(argc, argv, ":b:k:" BB_BENCH_COMMON_SHORTOPTS, longopts,
                            NULL)) != -1) {
        if (bb_bench_parse_common(bench, c, optarg, argv, usage_text, &o->common))
            continue;
        switch (c) {
        case 'b': bytes = optarg; break;
        case OPT_BATCHES: batches = optarg; break;
        case OPT_COMPUTE:
            if (strcmp(optarg, "auto") == 0)
                o->compute_s = -1.0;
            else if (bb_cli_parse_double(optarg, 0.0, 10.0, &o->compute_s, err,
                                         sizeof err) != BB_OK)
                bb_bench_usage(bench, "--compute: %s (seconds per batch in [0, 10], "
                               "or auto)", err);
            break;
        case 'k': parse_kinds(bench, optarg, o->kinds); break;
        }
    }
    bb_bench_parse_end(bench, argc, argv);
    /* The transfer cap is a signed-32 MPI count. */
    if (bb_cli_parse_size_list(bytes, 0, INT32_MAX, &o->bytes, err, sizeof err) != BB_OK)
        bb_bench_usage(bench, "--bytes: %s", err);
    if (bb_cli_parse_size_list(batches, 0, 1000000, &o->batches, err, sizeof err) != BB_OK)
        bb_bench_usage(bench, "--batches: %s", err);
}

/* ---- the operations ---------------------------------------------------- */

typedef struct provider_state {
    const unsigned char *data;
    int64_t len;
    int64_t prepared, released;
} provider_state_t;

static int provider_prepare(void *arg, const void **data_out, int64_t *len_out)
{
    provider_state_t *p = arg;
    *data_out = p->data;
    *len_out = p->len;
    p->prepared++;
    return 0;
}

static void provider_release(void *arg, const void *data)
{
    provider_state_t *p = arg;
    (void)data;
    p->released++;
}

static unsigned char pattern_byte(int64_t i) { return (unsigned char)((i * 131 + 7) & 0xff); }

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
            if (d[at[i]] != pattern_byte(at[i])) {
                c->wrong++;
                return 1;
            }
    }
    return 0;
}

typedef struct run_ctx {
    bb_bench_t *bench;
    const options_t *o;
    MPI_Comm comm;
    int rank, size, source, destination;
    unsigned char *send, *recv;      /* the same buffers for every kind */
    bb_transfer_phase_t *phase;
    provider_state_t provider_state;
    bb_transfer_provider_t provider;
    consumer_state_t consumer_state;
    bb_transfer_consumer_t consumer;
    bb_compute_t kernel;
    volatile double sink;            /* the kernel's results land here, so the
                                        compiler must do the work */
    /* The current point. */
    int kind;
    int64_t bytes, batches, iters_per_batch;
    int64_t phase_id;
    bb_transfer_ticket_t ticket;
    MPI_Request req;
    bb_refusal_t refusal;            /* when a call was refused */
} run_ctx_t;

/* Post the current kind's communication; declared: batches the caller will
 * run before finishing (the transfer contract's batches field). */
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
            bb_bench_fatal(c->bench, "transfer begin: %s", bb_status_string(st));
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
        bb_bench_fatal(c->bench, "posting %s failed", kind_names[c->kind]);
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
            bb_bench_fatal(c->bench, "transfer progress: %s", bb_status_string(st));
        if (c->rank != c->source && c->rank != c->destination)
            done = 1;
        return done;
    }
    if (c->req == MPI_REQUEST_NULL)
        return 1;
    if (MPI_Test(&c->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        bb_bench_fatal(c->bench, "MPI_Test failed");
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
            bb_bench_fatal(c->bench, "transfer finish: %s", bb_status_string(st));
        return st;
    }
    if (MPI_Wait(&c->req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        bb_bench_fatal(c->bench, "MPI_Wait failed");
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
        bb_bench_fatal(c->bench, "MPI_Barrier failed");
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

/* A block of reps calls of variant v: per-call means into mean[] (this
 * rank), and the number of polled calls in which every rank saw its payload
 * complete during the batches (MIN over ranks per call, after the block). */
static bb_status_t run_block(run_ctx_t *c, int v, int64_t reps, double *mean,
                             int64_t *all_done)
{
    double acc[L_N] = {0};
    int *done = calloc((size_t)reps, sizeof *done);
    if (done == NULL)
        bb_bench_fatal(c->bench, "out of memory");
    bb_status_t st = BB_OK;
    int64_t r = 0;
    for (; r < reps && st == BB_OK; r++)
        st = one_call(c, v, acc, &done[r]);
    for (int i = 0; i < L_N; i++)
        mean[i] = acc[i] / (double)r;
    if (all_done != NULL && st == BB_OK) {
        if (MPI_Allreduce(MPI_IN_PLACE, done, (int)reps, MPI_INT, MPI_MIN, c->comm)
            != MPI_SUCCESS)
            bb_bench_fatal(c->bench, "MPI_Allreduce of completion flags failed");
        *all_done = 0;
        for (int64_t i = 0; i < reps; i++)
            *all_done += done[i];
    }
    free(done);
    return st;
}

/* ---- one point --------------------------------------------------------- */

typedef struct point {
    int kind;
    int64_t bytes, batches, reps;
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

static void measure_point(run_ctx_t *c, int kind, int64_t bytes, int64_t batches,
                          point_t *p)
{
    const options_t *o = c->o;
    int64_t S = o->common.samples;
    double block[L_N], maxb[L_N];
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
    double *comm_s = calloc((size_t)S, sizeof(double));
    if (!p->all || !p->max || !p->mean || !p->imb_rank || !p->done || !local || !comm_s)
        bb_bench_fatal(c->bench, "out of memory");

    c->kind = kind;
    c->bytes = bytes;
    c->batches = batches;
    c->iters_per_batch = 0;
    c->phase_id++;

#define TRY(call)                                                           \
    do {                                                                    \
        if ((p->status = (call)) != BB_OK) {                                \
            p->refusal = c->refusal;                                        \
            goto refused;                                                   \
        }                                                                   \
    } while (0)

    /* Communication alone: the first (cold) call, warm-up, then samples;
     * auto compute needs its median before any compute runs. */
    TRY(run_block(c, V_COMM, 1, block, NULL));
    bb_stats_reduce_max(c->comm, block, L_N, maxb);
    p->first_comm = maxb[L_COMM];
    for (int64_t w = 0; w < o->common.warmup; w++)
        TRY(run_block(c, V_COMM, 1, block, NULL));
    int64_t comm_reps = o->common.reps;
    if (comm_reps == 0) {
        TRY(run_block(c, V_COMM, 1, block, NULL));
        comm_reps = bb_bench_reps_for_budget(c->bench, block[L_COMM],
                                             o->common.budget_s, 100000);
    }
    for (int64_t s = 0; s < S; s++) {
        TRY(run_block(c, V_COMM, comm_reps, block, NULL));
        *at(local, s, L_COMM) = block[L_COMM];
        if (bb_stats_reduce_max(c->comm, &block[L_COMM], 1, &comm_s[s]) != MPI_SUCCESS)
            bb_bench_fatal(c->bench, "MPI_Allreduce of samples failed");
    }

    p->auto_compute = o->compute_s < 0.0;
    if (batches == 0)
        p->compute_per_batch_s = 0.0;
    else if (p->auto_compute)
        p->compute_per_batch_s = bb_stats_median(comm_s, (size_t)S) / (double)batches;
    else
        p->compute_per_batch_s = o->compute_s;
    /* Every rank runs the same iteration count (rank 0's calibration), so
     * that the compute is the same work everywhere. */
    int64_t iters = bb_compute_iterations(&c->kernel, p->compute_per_batch_s);
    if (MPI_Bcast(&iters, 1, MPI_INT64_T, 0, c->comm) != MPI_SUCCESS)
        bb_bench_fatal(c->bench, "MPI_Bcast failed");
    c->iters_per_batch = p->iters_per_batch = iters;
    p->compute_none = batches == 0 || iters == 0;

    /* The polled call, cold then warm; its time sets the block size. */
    TRY(run_block(c, V_POLLED, 1, block, NULL));
    bb_stats_reduce_max(c->comm, block, L_N, maxb);
    p->first_polled = maxb[L_POLLED];
    for (int64_t w = 0; w < o->common.warmup; w++)
        for (int v = V_COMPUTE; v < V_N; v++)
            TRY(run_block(c, v, 1, block, NULL));
    p->reps = o->common.reps;
    if (p->reps == 0) {
        TRY(run_block(c, V_POLLED, 1, block, NULL));
        p->reps = bb_bench_reps_for_budget(c->bench, block[L_POLLED],
                                           o->common.budget_s, 100000);
    }
    /* Interleave the variants sample by sample, so that drift hits them
     * alike. */
    for (int64_t s = 0; s < S; s++) {
        for (int v = V_COMPUTE; v < V_N; v++) {
            int64_t done = 0;
            TRY(run_block(c, v, p->reps, block, v == V_POLLED ? &done : NULL));
            for (int i = 0; i < L_N; i++)
                if (i != L_COMM && block[i] != 0.0)
                    *at(local, s, i) = block[i];
            if (v == V_POLLED)
                p->done[s] = done;
        }
    }

    /* Every rank's per-call means, to every rank (outside any timing):
     * rank maxima for bbench's figures, rank means for OSU's, the values of
     * the rank with the largest t_ovrl for IMB's. */
    if (MPI_Allgather(local, (int)(S * L_N), MPI_DOUBLE, p->all, (int)(S * L_N),
                      MPI_DOUBLE, c->comm) != MPI_SUCCESS)
        bb_bench_fatal(c->bench, "MPI_Allgather of samples failed");
    for (int64_t s = 0; s < S; s++) {
        int best = 0;
        for (int i = 0; i < L_N; i++) {
            double mx = -INFINITY, sum = 0.0;
            for (int r = 0; r < c->size; r++) {
                double x = p->all[((int64_t)r * S + s) * L_N + i];
                if (x > mx)
                    mx = x;
                sum += x;
            }
            *at(p->max, s, i) = mx;
            *at(p->mean, s, i) = sum / (double)c->size;
        }
        for (int r = 1; r < c->size; r++)
            if (p->all[((int64_t)r * S + s) * L_N + L_UNPOLLED]
                > p->all[((int64_t)best * S + s) * L_N + L_UNPOLLED])
                best = r;
        p->imb_rank[s] = best;
    }
refused:
#undef TRY
    free(local);
    free(comm_s);
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

static void figures_compute(const point_t *p, figures_t *fs)
{
    int64_t S = p->samples;
    memset(fs, 0, sizeof *fs);
    for (int f = 0; f < F_N; f++) {
        fs->f[f] = calloc((size_t)S, sizeof(bb_overlap_figure_t));
        if (fs->f[f] == NULL) {
            fprintf(stderr, PROG ": out of memory\n");
            exit(BB_EXIT_FATAL);
        }
    }
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
        bb_record_add_point(bb_bench_record(c->bench), params, "refused", &p->refusal,
                            first, q);
        return;
    }
    bb_quantities_add(first, "overlap.t_comm", bb_quantity_value(p->first_comm, "s", scope));
    bb_quantities_add(first, "overlap.t_polled",
                      bb_quantity_value(p->first_polled, "s", scope));

    double *v = malloc((size_t)S * sizeof *v);
    if (v == NULL)
        bb_bench_fatal(c->bench, "out of memory");
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
    bb_record_add_point(bb_bench_record(c->bench), params, "ok", NULL, first, q);
}

static void table_header(const options_t *o)
{
    printf("# times: microseconds, median of %lld samples, rank maximum per sample; "
           "figures: ratios (1 = 100%%), '-' = undefined (see the record), "
           "'?' = noise-dominated\n",
           (long long)o->common.samples);
    printf("%-10s %6s %4s %9s %10s %10s %10s %10s %10s %7s %7s %7s %7s %7s %5s %5s\n",
           "kind", "bytes", "bat", "cmp/b_us", "t_comm", "t_compute", "t_immed",
           "t_polled", "t_unpoll", "overlap", "unpoll", "osu", "imb", "speedup",
           "done", "slow");
}

static void print_fig(double v, int width, int prec)
{
    if (isnan(v))
        printf(" %*s", width, "-");
    else
        printf(" %*.*f", width, prec, v);
}

static void table_row(const point_t *p, const figures_t *fs)
{
    char size[32];
    bb_cli_format_size(p->bytes, size, sizeof size);
    printf("%-10s %6s %4lld", kind_names[p->kind], size, (long long)p->batches);
    if (p->status != BB_OK) {
        printf("  refused (%s, rank %d, sequence %lld)\n", bb_stage_name(p->refusal.stage),
               p->refusal.rank, (long long)p->refusal.sequence);
        return;
    }
    printf(" %9.1f", p->compute_per_batch_s * 1e6);
    static const int cols[] = { L_COMM, L_COMPUTE, L_IMMEDIATE, L_POLLED, L_UNPOLLED };
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
        printf(" %10.1f", column_summary(p, cols[k]).median * 1e6);
    /* '?': the sample ranges alone allow any overlap in [0, 1]. */
    for (int k = 0; k < 2; k++) {
        print_fig(figure_median(fs->f[k == 0 ? F_OVERLAP : F_UNPOLLED], p->samples), 6, 2);
        putchar(fs->uncertainty[k] > 1.0 ? '?' : ' ');
    }
    static const int figs[] = { F_OSU, F_IMB, F_SPEEDUP };
    for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++)
        print_fig(figure_median(fs->f[figs[k]], p->samples), 7, 2);
    print_fig(fs->done.defined ? fs->done.value : (double)NAN, 5, 2);
    print_fig(figure_median(fs->f[F_SLOWDOWN], p->samples), 5, 2);
    printf("\n");
    fflush(stdout);
}

/* Threads of this process now (Linux /proc/self/status), or -1: an MPICH
 * progress thread shows up here as one more thread. */
static int process_threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "Threads:", 8) == 0) {
            char *end = NULL;
            long v = strtol(line + 8, &end, 10);
            if (end != line + 8 && v > 0 && v < 1000000)
                n = (int)v;
        }
    fclose(f);
    return n;
}

/* The run-level progress conditions, and the kernel calibration. */
static void record_conditions(run_ctx_t *c, const bb_compute_t *k_min,
                              const bb_compute_t *k_max, const int threads[2])
{
    const bb_topology_info_t *topo = bb_bench_topology(c->bench);
    cJSON *doc = bb_record_json(bb_bench_record(c->bench));
    cJSON *pc = cJSON_CreateObject();
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    int provided = bb_world_thread_level(bb_bench_world(c->bench));
    cJSON *aq = cJSON_CreateObject();
    if (async != NULL) {
        cJSON_AddStringToObject(aq, "value", async);
        cJSON_AddNullToObject(aq, "reason");
    } else {
        cJSON_AddNullToObject(aq, "value");
        cJSON_AddStringToObject(aq, "reason", "MPIR_CVAR_ASYNC_PROGRESS is not set in the "
                                "environment: MPICH's default (no progress thread)");
    }
    cJSON_AddItemToObject(pc, "MPIR_CVAR_ASYNC_PROGRESS", aq);
    cJSON *runtime = cJSON_GetObjectItemCaseSensitive(doc, "runtime");
    cJSON *req = runtime ? cJSON_GetObjectItemCaseSensitive(runtime, "thread_level_requested")
                         : NULL;
    if (req != NULL)
        cJSON_AddItemToObject(pc, "thread_level_requested", cJSON_Duplicate(req, 1));
    cJSON_AddStringToObject(pc, "thread_level_provided", bb_thread_level_name(provided));
    int async_on = async != NULL && strcmp(async, "1") == 0;
    cJSON_AddBoolToObject(pc, "async_progress_possible",
                          async_on && provided == MPI_THREAD_MULTIPLE);
    if (async_on && provided != MPI_THREAD_MULTIPLE)
        cJSON_AddStringToObject(pc, "warning", "MPIR_CVAR_ASYNC_PROGRESS=1 but the thread "
                                "level provided is not MPI_THREAD_MULTIPLE: MPICH starts "
                                "no progress thread");
    if (topo != NULL && topo->cores_per_host > 0)
        cJSON_AddNumberToObject(pc, "ranks_per_core",
                                (double)topo->max_ranks_per_host
                                    / (double)topo->cores_per_host);
    else
        cJSON_AddNullToObject(pc, "ranks_per_core");
    if (topo != NULL) {
        cJSON_AddNumberToObject(pc, "max_ranks_per_host", topo->max_ranks_per_host);
        cJSON_AddNumberToObject(pc, "cores_per_host", topo->cores_per_host);
        cJSON_AddBoolToObject(pc, "oversubscribed", topo->oversubscribed);
    }
    if (threads[0] > 0) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "min_rank", threads[0]);
        cJSON_AddNumberToObject(t, "max_rank", threads[1]);
        cJSON_AddStringToObject(t, "source", "/proc/self/status Threads after MPI "
                                "initialization, idle helper threads included: an MPICH "
                                "progress thread is one more than without it");
        cJSON_AddItemToObject(pc, "process_threads", t);
        if (topo != NULL && topo->cores_per_host > 0)
            /* All threads, idle ones included: an upper bound on the busy
             * threads per core. */
            cJSON_AddNumberToObject(pc, "threads_per_core",
                                    (double)topo->max_ranks_per_host * threads[1]
                                        / (double)topo->cores_per_host);
    } else {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNullToObject(t, "value");
        cJSON_AddStringToObject(t, "reason", "/proc/self/status unreadable on some rank");
        cJSON_AddItemToObject(pc, "process_threads", t);
    }
    cJSON_AddStringToObject(pc, "note", "an asynchronous progress thread needs a core: "
                            "with a rank per core or more it competes with the compute "
                            "(see overlap.compute_slowdown)");
    cJSON_AddItemToObject(doc, "progress", pc);

    cJSON *kc = cJSON_CreateObject();
    cJSON_AddStringToObject(kc, "kernel", "bb_compute_run: eight independent "
                            "multiply-add chains in registers, MPI-free, no memory "
                            "traffic; iterations per batch from rank 0's calibration");
    cJSON_AddNumberToObject(kc, "iterations_per_s_rank0", c->kernel.iters_per_s);
    cJSON_AddNumberToObject(kc, "iterations_per_s_min_rank", k_min->iters_per_s);
    cJSON_AddNumberToObject(kc, "iterations_per_s_max_rank", k_max->iters_per_s);
    cJSON_AddNumberToObject(kc, "slowest_trial_iterations_per_s_rank0",
                            c->kernel.slowest_iters_per_s);
    cJSON_AddNumberToObject(kc, "trials", c->kernel.trials);
    cJSON_AddNumberToObject(kc, "trial_s", c->kernel.trial_s);
    cJSON_AddNumberToObject(kc, "calibration_s", c->kernel.calibration_s);
    cJSON_AddItemToObject(doc, "compute_kernel", kc);

    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "overlap", BB_OVERLAP_FORMULA);
    cJSON_AddStringToObject(f, "overlap.osu", BB_OVERLAP_OSU_FORMULA);
    cJSON_AddStringToObject(f, "overlap.imb", BB_OVERLAP_IMB_FORMULA);
    cJSON_AddStringToObject(f, "overlap.imb_code", BB_OVERLAP_IMB_CODE_FORMULA);
    cJSON_AddStringToObject(f, "overlap.speedup", BB_OVERLAP_SPEEDUP_FORMULA);
    cJSON_AddStringToObject(f, "overlap.compute_slowdown", BB_OVERLAP_SLOWDOWN_FORMULA);
    cJSON_AddStringToObject(f, "range_note", "with n samples the [min, max] range covers "
                            "the median with probability 1 - 2^(1-n): 75% for n = 3");
    cJSON_AddItemToObject(doc, "formulas", f);
}

int main(int argc, char **argv)
{
    bb_bench_t *bench = bb_bench_init(&argc, &argv, PROG, "overlap");
    options_t o;
    options_parse(bench, argc, argv, &o);
    if (bb_bench_size(bench) < 2)
        bb_bench_usage(bench, "needs at least 2 ranks (mpiexec -n 2): on one rank "
                       "there is no peer to overlap with (see --help)");
    bb_bench_set_output(bench, o.common.output);
    bb_bench_capture(bench);

    run_ctx_t c;
    memset(&c, 0, sizeof c);
    c.bench = bench;
    c.o = &o;
    c.comm = bb_bench_comm(bench);
    c.rank = bb_bench_rank(bench);
    c.size = bb_bench_size(bench);
    c.source = 0;
    c.destination = c.size - 1;
    c.phase_id = 0;

    int64_t max_bytes = 8;
    for (size_t i = 0; i < o.bytes.n; i++)
        if (o.bytes.values[i] > max_bytes)
            max_bytes = o.bytes.values[i];
    c.send = malloc((size_t)max_bytes);
    c.recv = malloc((size_t)max_bytes);
    if (c.send == NULL || c.recv == NULL)
        bb_bench_fatal(bench, "cannot allocate %lld bytes", (long long)max_bytes);
    for (int64_t i = 0; i < max_bytes; i++)
        c.send[i] = pattern_byte(i);
    memset(c.recv, 0, (size_t)max_bytes);
    c.provider_state.data = c.send;
    c.provider = (bb_transfer_provider_t){ provider_prepare, provider_release,
                                           &c.provider_state };
    c.consumer = (bb_transfer_consumer_t){ consumer_consume, NULL, &c.consumer_state };
    if (o.kinds[KIND_TRANSFER]
        && bb_transfer_phase_create(bb_bench_world(bench), &c.phase) != BB_OK)
        bb_bench_fatal(bench, "cannot create the transfer phase");

    /* Calibrate the kernel on every rank; rank 0's rate sets the iteration
     * counts, the spread over ranks goes to the record. */
    if (bb_compute_calibrate(7, 0.005, &c.kernel) != BB_OK)
        bb_bench_fatal(bench, "compute kernel calibration failed");
    bb_compute_t k_min = c.kernel, k_max = c.kernel;
    double rate = c.kernel.iters_per_s, rmin = 0.0, rmax = 0.0;
    if (MPI_Allreduce(&rate, &rmin, 1, MPI_DOUBLE, MPI_MIN, c.comm) != MPI_SUCCESS
        || MPI_Allreduce(&rate, &rmax, 1, MPI_DOUBLE, MPI_MAX, c.comm) != MPI_SUCCESS
        || MPI_Bcast(&c.kernel, (int)sizeof c.kernel, MPI_BYTE, 0, c.comm) != MPI_SUCCESS)
        bb_bench_fatal(bench, "MPI calibration exchange failed");
    k_min.iters_per_s = rmin;
    k_max.iters_per_s = rmax;

    /* Threads per process, observed: the evidence that a progress thread
     * runs (or not), whatever the environment says. */
    int threads[2] = { process_threads(), 0 };
    int tmin = 0, tmax = 0;
    if (MPI_Allreduce(&threads[0], &tmin, 1, MPI_INT, MPI_MIN, c.comm) != MPI_SUCCESS
        || MPI_Allreduce(&threads[0], &tmax, 1, MPI_INT, MPI_MAX, c.comm) != MPI_SUCCESS)
        bb_bench_fatal(bench, "MPI_Allreduce failed");
    threads[0] = tmin;
    threads[1] = tmax;

    if (c.rank == 0) {
        const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
        const bb_topology_info_t *topo = bb_bench_topology(bench);
        printf("# MPIR_CVAR_ASYNC_PROGRESS=%s, thread level provided %s, "
               "%.2f ranks per core, %d..%d threads per process\n",
               async ? async : "(unset)",
               bb_thread_level_name(bb_world_thread_level(bb_bench_world(bench))),
               topo && topo->cores_per_host > 0
                   ? (double)topo->max_ranks_per_host / topo->cores_per_host
                   : (double)NAN, threads[0], threads[1]);
        printf("# transfer and isend: rank %d -> rank %d; compute kernel %.3g iterations/s "
               "(ranks %.3g..%.3g)\n", c.source, c.destination, c.kernel.iters_per_s,
               rmin, rmax);
        table_header(&o);
    }

    int exit_code = BB_EXIT_OK;
    for (int k = 0; k < KIND_N; k++) {
        if (!o.kinds[k])
            continue;
        for (size_t i = 0; i < o.bytes.n; i++) {
            for (size_t j = 0; j < o.batches.n; j++) {
                point_t p;
                figures_t fs;
                bb_bench_progress(bench, "%s: %lld bytes, %lld batches", kind_names[k],
                                  (long long)o.bytes.values[i],
                                  (long long)o.batches.values[j]);
                measure_point(&c, k, o.bytes.values[i], o.batches.values[j], &p);
                if (p.status == BB_OK)
                    figures_compute(&p, &fs);
                else
                    memset(&fs, 0, sizeof fs);
                if (c.rank == 0) {
                    table_row(&p, &fs);
                    record_point(&c, &p, &fs);
                }
                if (p.status != BB_OK) {
                    bb_bench_progress(bench, "error: %s %lld bytes refused (%s)",
                                      kind_names[k], (long long)p.bytes,
                                      bb_stage_name(p.refusal.stage));
                    exit_code = BB_EXIT_FAILURE;
                }
                figures_free(&fs);
                point_free(&p);
            }
        }
    }

    /* Payload checks and provider bookkeeping, agreed over ranks. */
    int64_t local[2] = { c.consumer_state.wrong,
                         c.provider_state.prepared - c.provider_state.released };
    int64_t worst[2];
    if (bb_agree_max(c.comm, local, 2, worst) != MPI_SUCCESS)
        bb_bench_fatal(bench, "MPI_Allreduce failed");
    if (worst[0] != 0) {
        bb_bench_progress(bench, "error: %lld transfers delivered a wrong payload",
                          (long long)worst[0]);
        exit_code = BB_EXIT_FAILURE;
    }
    if (worst[1] != 0) {
        bb_bench_progress(bench, "error: provider arrays not released exactly once");
        exit_code = BB_EXIT_FAILURE;
    }
    if (c.rank == 0) {
        record_conditions(&c, &k_min, &k_max, threads);
    }
    if (c.phase != NULL && bb_transfer_phase_close(c.phase) != BB_OK)
        bb_bench_fatal(bench, "cannot close the transfer phase");
    free(c.send);
    free(c.recv);
    bb_size_list_clear(&o.bytes);
    bb_size_list_clear(&o.batches);
    return bb_bench_finish(bench, exit_code);
}
