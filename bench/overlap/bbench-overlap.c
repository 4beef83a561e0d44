/* bbench-overlap: is the compute done between posting and finishing a
 * transfer really hidden, and why?  For the transfer phase (ticket API) and,
 * as labelled references, raw MPI_Isend/MPI_Irecv and raw MPI_Iallreduce, on
 * the same buffers with the same compute kernel, in one run, it times
 * communication alone, compute alone, post-wait-compute, post-compute with a
 * poll after each batch, and post-compute-finish without polls, and derives
 * the overlap figures (bench/overlap/figures.c).  The five ways are the variants
 * of a point, merged into one table row and one record point by the runner
 * (runner/variants.c), which measures and reports them; this file holds the
 * operations, what the figures add and the options. */
#include "config.h"
#include "op.h"
#include "figures.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "bbench-overlap"

/* The compute matches what was asked within this factor either way. */
#define BB_COMPUTE_MATCH_MAX 1.25

static const char *const kind_names[BB_OVERLAP_KINDS] = { "transfer", "isend", "iallreduce" };
static const char *const kind_labels[BB_OVERLAP_KINDS] = { "protocol", "reference", "reference" };
static const char *const kind_what[BB_OVERLAP_KINDS] = {
    "the bounded transfer phase, ticket API: begin, progress after each batch, finish",
    "reference: raw MPI_Isend (rank 0) / MPI_Irecv (last rank), MPI_Test, MPI_Wait",
    "reference: raw MPI_Iallreduce(SUM) of bytes/8 doubles on every rank, MPI_Test, "
    "MPI_Wait: what a future overlapping sum phase could gain (the sum phase itself "
    "has no overlap by design)"
};

/* The five ways of running one call: the rows of every point, in the
 * table's order.  t_comm is measured first, alone (auto compute needs its
 * median); the other four as one interleaved set led by t_polled. */
enum { V_COMM, V_COMPUTE, V_IMMEDIATE, V_POLLED, V_UNPOLLED, V_N };

/* Timed parts inside a call; the whole call is recorded under the way's
 * name. */
enum { P_WHOLE, P_POLLED_COMPUTE, P_POLLED_PROGRESS, P_UNPOLLED_COMPUTE, P_N };
static const char *const part_names[P_N] = {
    "elapsed", "overlap.t_polled.compute", "overlap.t_polled.progress",
    "overlap.t_unpolled.compute"
};
static const char *const part_what[P_N] = {
    NULL, "compute batch time inside t_polled (sum over batches)",
    "progress poll time inside t_polled (sum over polls)",
    "compute batch time inside t_unpolled"
};

typedef struct overlap_state {
    /* options */
    bb_size_list_t bytes_list, batches_list;
    double compute_s;                /* per batch; < 0: auto */
    unsigned kinds;                  /* bit k: kind k selected */
    int kind_list[BB_OVERLAP_KINDS], nkinds;   /* the selected kinds, in order */
    /* the run */
    bb_overlap_op_t op;              /* the operation of the point's kind */
    bb_xfer_fixture_t fx;            /* its payload (sampled: written once) */
    int size;
    bb_run_kernel_t kernel;
    volatile double sink;            /* the kernel's results land here, so the
                                        compiler must do the work */
    /* the point */
    int auto_compute, compute_none;
    int64_t batches, iters_per_batch;
    double compute_per_batch_s;      /* requested or calibrated */
    double compute_ran;              /* median t_compute / what was asked; NAN
                                        without compute */
    int refused;                     /* a call of this point was refused */
    /* The polled way: per call of a block, whether this rank saw its payload
     * complete during the batches; per sample, the calls all ranks saw. */
    int *done;
    int64_t ndone, done_cap, blocks;  /* blocks: sample blocks of t_polled */
    int64_t *sample_done;
    bb_overlap_set_t figures;
} overlap_state_t;

/* One call of a way: its whole time, and the compute and poll times inside
 * it; the polled way also notes whether a poll saw the payload complete. */
static bb_status_t way_call(bb_run_t *run, void *state, bb_row_t *row, double *parts,
                            double *counts)
{
    overlap_state_t *c = state;
    int v = row->variant, saw = 0;
    int timed = v == V_POLLED || v == V_UNPOLLED;  /* batches timed one by one */
    int64_t wrong = c->fx.bad_bytes;
    double tc = 0.0, tp = 0.0;
    bb_status_t st = BB_OK;
    (void)counts;
    /* A refusal is collective: every rank skips the rest of the point alike. */
    if (c->refused)
        return BB_OK;
    /* Every call starts together; the barrier is outside the timing. */
    if (MPI_Barrier(c->op.comm) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Barrier failed");
    double t0 = bb_time_now();
    if (v != V_COMPUTE && (st = bb_overlap_op_post(&c->op, timed ? c->batches : 0)) == BB_OK
        && !timed)
        st = bb_overlap_op_finish(&c->op);
    for (int64_t b = 0; st == BB_OK && v != V_COMM && b < c->batches; b++) {
        double tb = timed ? bb_time_now() : 0.0;
        c->sink += bb_compute_run(c->iters_per_batch);
        if (!timed)
            continue;
        double te = bb_time_now();
        tc += te - tb;
        if (v == V_POLLED) {
            saw |= bb_overlap_op_poll(&c->op);
            tp += bb_time_now() - te;
        }
    }
    if (st == BB_OK && timed)
        st = bb_overlap_op_finish(&c->op);
    parts[P_WHOLE] += bb_time_now() - t0;
    parts[v == V_POLLED ? P_POLLED_COMPUTE : P_UNPOLLED_COMPUTE] += tc;
    parts[P_POLLED_PROGRESS] += tp;
    row->local.wrong += c->fx.bad_bytes - wrong;
    if (st == BB_REFUSED) {
        c->refused = 1;
        if (row->local.refused_calls++ == 0)
            row->local.refusal = c->op.refusal;
        return BB_OK;
    }
    if (v == V_POLLED) {
        /* A rank with no payload request never holds the figure back. */
        if (c->op.kind != BB_OVERLAP_IALLREDUCE && c->op.rank != c->op.source
            && c->op.rank != c->op.destination)
            saw = 1;
        if (c->ndone < c->done_cap)  /* a block is at most done_cap calls */
            c->done[c->ndone++] = saw;
    }
    return st;
}

/* After each block of the polled way, outside the timing: the number of
 * calls in which every rank saw its payload complete during the batches
 * (MIN over ranks per call), kept for the engine's samples (k >= 0). */
static bb_status_t overlap_block_end(bb_run_t *run, void *state, bb_row_t *row,
                                     int64_t calls, int64_t k)
{
    overlap_state_t *c = state;
    if (row->variant != V_POLLED)
        return BB_OK;
    int64_t all = 0;
    c->blocks += k >= 0;
    if (!c->refused) {
        if (c->ndone != calls)
            return BB_ERR_ARG;
        if (MPI_Allreduce(MPI_IN_PLACE, c->done, (int)c->ndone, MPI_INT, MPI_MIN, c->op.comm)
            != MPI_SUCCESS)
            return BB_ERR_MPI;
        for (int64_t r = 0; r < c->ndone; r++)
            all += c->done[r];
    }
    if (k >= 0 && k < bb_run_settings(run)->samples)
        c->sample_done[k] = all;
    c->ndone = 0;
    return BB_OK;
}

/* Bit 0 always: the whole call, recorded under the way's name. */
static const bb_variant_t variants[V_N] = {
    { .name = "overlap.t_comm", .call = way_call, .parts = 1u, .payload = 1,
      .differs = "post then finish at once, no compute (communication alone)",
      .columns = BB_COLUMNS_MEDIAN_FULL },
    { .name = "overlap.t_compute", .call = way_call, .parts = 1u,
      .differs = "the compute batches alone, no communication",
      .columns = BB_COLUMNS_MEDIAN_FULL },
    { .name = "overlap.t_immediate", .call = way_call, .parts = 1u, .payload = 1,
      .differs = "post, finish (wait), then all compute batches: the same work, no overlap",
      .columns = BB_COLUMNS_MEDIAN_FULL },
    { .name = "overlap.t_polled", .call = way_call, .payload = 1,
      .parts = 1u | 1u << P_POLLED_COMPUTE | 1u << P_POLLED_PROGRESS,
      .differs = "post, compute batches with one poll after each, finish",
      .columns = BB_COLUMNS_MEDIAN_FULL },
    { .name = "overlap.t_unpolled", .call = way_call, .payload = 1,
      .parts = 1u | 1u << P_UNPOLLED_COMPUTE,
      .differs = "post, all compute batches without polls, finish",
      .columns = BB_COLUMNS_MEDIAN_FULL },
};

/* ---- one point: what the runner does not write ----------------------- */

/* Point i: kinds outermost, then bytes, then batches. */
static void point_of(const overlap_state_t *c, size_t i, int *kind_out, int64_t *bytes_out,
                     int64_t *batches_out)
{
    size_t nb = c->batches_list.n, nx = c->bytes_list.n;
    *kind_out = c->kind_list[i / (nx * nb)];
    *bytes_out = c->bytes_list.values[i / nb % nx];
    *batches_out = c->batches_list.values[i % nb];
}

static int64_t overlap_point_begin(bb_run_t *run, void *state, size_t i)
{
    overlap_state_t *c = state;
    const bb_measure_settings_t *settings = bb_run_settings(run);
    point_of(c, i, &c->op.kind, &c->op.bytes, &c->batches);
    c->iters_per_batch = 0;
    c->refused = 0;
    c->op.phase_id++;
    c->blocks = c->ndone = 0;
    memset(c->sample_done, 0, (size_t)settings->samples * sizeof *c->sample_done);
    return c->op.kind == BB_OVERLAP_IALLREDUCE ? 8 * (c->op.bytes / 8) : c->op.bytes;
}

/* After t_comm: the compute per batch (auto: the batches add up to its
 * median).  Every rank runs the same iteration count (the slowest rank's
 * rate and the agreed median), so that the compute is the same work
 * everywhere. */
static void overlap_point_ready(bb_run_t *run, void *state)
{
    overlap_state_t *c = state;
    c->auto_compute = c->compute_s < 0.0;
    if (c->batches == 0)
        c->compute_per_batch_s = 0.0;
    else if (c->auto_compute)
        c->compute_per_batch_s = bb_row_median(bb_run_row(run, V_COMM), P_WHOLE)
                                 / (double)c->batches;
    else
        c->compute_per_batch_s = c->compute_s;
    c->iters_per_batch = bb_run_kernel_iterations(&c->kernel, c->compute_per_batch_s);
    c->compute_none = c->batches == 0 || c->iters_per_batch == 0;
}

/* The figures, from the engine's rank maxima and every rank's own per-call
 * means, gathered to every rank outside any timing. */
static void overlap_point_end(bb_run_t *run, void *state)
{
    overlap_state_t *c = state;
    int64_t S = bb_run_settings(run)->samples, G = BB_OVERLAP_RANK_N;
    const bb_row_t *row[V_N];
    for (int v = 0; v < V_N; v++)
        row[v] = bb_run_row(run, v);
    if (c->blocks != S)
        bb_run_fatal(run, "t_polled: %lld sample blocks, not %lld", (long long)c->blocks,
                     (long long)S);
    double *local = malloc((size_t)(G * S) * sizeof *local);
    double *all = malloc((size_t)(c->size * G * S) * sizeof *all);
    if (local == NULL || all == NULL)
        bb_run_fatal(run, "out of memory");
    static const int from[BB_OVERLAP_RANK_N][2] = {  /* way, part */
        { V_COMM, P_WHOLE }, { V_UNPOLLED, P_WHOLE }, { V_UNPOLLED, P_UNPOLLED_COMPUTE }
    };
    for (int g = 0; g < G; g++)
        memcpy(&local[g * S], row[from[g][0]]->m.local_parts + from[g][1] * S,
               (size_t)S * sizeof *local);
    if (MPI_Allgather(local, (int)(G * S), MPI_DOUBLE, all, (int)(G * S), MPI_DOUBLE, c->op.comm)
        != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allgather of samples failed");
    bb_overlap_times_t t = {
        .samples = S, .compute_none = c->compute_none,
        .comm = bb_measure_part(&row[V_COMM]->m, P_WHOLE),
        .compute = bb_measure_part(&row[V_COMPUTE]->m, P_WHOLE),
        .immediate = bb_measure_part(&row[V_IMMEDIATE]->m, P_WHOLE),
        .polled = bb_measure_part(&row[V_POLLED]->m, P_WHOLE),
        .polled_compute = bb_measure_part(&row[V_POLLED]->m, P_POLLED_COMPUTE),
        .unpolled = bb_measure_part(&row[V_UNPOLLED]->m, P_WHOLE),
        .ranks = c->size, .per_rank = all,
        .reps = row[V_POLLED]->m.reps, .batches = c->batches, .completed = c->sample_done
    };
    bb_overlap_set_free(&c->figures);
    if (bb_overlap_set_compute(&t, &c->figures) != BB_OK)
        bb_run_fatal(run, "the overlap figures: out of memory or a bad time");
    free(local);
    free(all);
    /* The kernel is calibrated once per run: under load a batch runs
     * longer than asked, and the figures use t_compute as measured, so the
     * table says when the compute is not what was asked. */
    double asked = c->compute_per_batch_s * (double)c->batches;
    c->compute_ran = c->compute_none || !(asked > 0.0)
                         ? (double)NAN : bb_row_median(row[V_COMPUTE], P_WHOLE) / asked;
    if (!isnan(c->compute_ran) && (c->compute_ran > BB_COMPUTE_MATCH_MAX
                                   || c->compute_ran < 1.0 / BB_COMPUTE_MATCH_MAX))
        bb_table_note(bb_run_table(run), "%s %lld B, %lld batches: the compute ran %.2f times "
                      "what was asked (t_compute %.3g s, asked %.3g s; a loaded machine or a "
                      "stale calibration): the figures use t_compute as measured",
                      kind_names[c->op.kind], (long long)c->op.bytes,
                      (long long)c->batches, c->compute_ran,
                      bb_row_median(row[V_COMPUTE], P_WHOLE), asked);
}

static void overlap_parameters(bb_run_t *run, void *state, const bb_row_t *row,
                               cJSON *params)
{
    const overlap_state_t *c = state;
    (void)row;
    cJSON_AddStringToObject(params, "label", kind_labels[c->op.kind]);
    cJSON_AddStringToObject(params, "what", kind_what[c->op.kind]);
    if (c->op.kind == BB_OVERLAP_IALLREDUCE)
        cJSON_AddNumberToObject(params, "elements", (double)(c->op.bytes / 8));
    /* Parameters identify the point across runs; what this run calibrated
     * or chose (auto compute, kernel iterations, reps) is a quantity. */
    cJSON_AddStringToObject(params, "compute", c->auto_compute ? "auto" : "fixed");
    if (!c->auto_compute)
        cJSON_AddNumberToObject(params, "compute_per_batch_s", c->compute_per_batch_s);
    cJSON_AddNumberToObject(params, "source", c->op.source);
    cJSON_AddNumberToObject(params, "destination", c->op.destination);
    cJSON_AddNumberToObject(params, "samples", (double)bb_run_settings(run)->samples);
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    cJSON_AddItemToObject(params, "async_progress",
                          async ? cJSON_CreateString(async) : cJSON_CreateNull());
}

static void add_what(cJSON *q, const char *name, const char *what)
{
    cJSON *t = cJSON_GetObjectItemCaseSensitive(q, name);
    if (t != NULL)
        cJSON_AddStringToObject(t, "what", what);
}

static cJSON *overlap_quantities(bb_run_t *run, void *state, const bb_row_t *row, cJSON *q)
{
    overlap_state_t *c = state;
    int64_t reps = bb_run_row(run, V_POLLED)->m.reps;
    (void)row;
    bb_quantities_add(q, "compute.per_batch",
                      bb_quantity_value(c->compute_per_batch_s, "s", "call/rank"));
    bb_quantities_add(q, "compute.total",
                      bb_quantity_value(c->compute_per_batch_s * (double)c->batches, "s",
                                        "call/rank"));
    cJSON *ran = isnan(c->compute_ran)
                     ? bb_quantity_null("ratio", "call/max-rank", "no compute in this point")
                     : bb_quantity_value(c->compute_ran, "ratio", "call/max-rank");
    if (!isnan(c->compute_ran))
        cJSON_AddBoolToObject(ran, "matched", c->compute_ran <= BB_COMPUTE_MATCH_MAX
                                                  && c->compute_ran >= 1.0 / BB_COMPUTE_MATCH_MAX);
    cJSON_AddStringToObject(ran, "formula", "median t_compute / (compute.per_batch x batches); "
                            "matched within [0.8, 1.25]");
    bb_quantities_add(q, "compute.ran_over_asked", ran);
    cJSON *iters = bb_quantity_value((double)c->iters_per_batch, "count", "call/rank");
    cJSON *r = bb_quantity_value((double)reps, "count", "run/rank");
    /* Calibrated or budget-chosen in this run: not part of the contract. */
    cJSON_AddFalseToObject(iters, "deterministic");
    cJSON_AddFalseToObject(r, "deterministic");
    bb_quantities_add(q, "compute.iterations_per_batch", iters);
    bb_quantities_add(q, "run.reps", r);
    for (int v = 0; v < V_N; v++)
        add_what(q, variants[v].name, variants[v].differs);
    for (int p = 1; p < P_N; p++)
        add_what(q, part_names[p], part_what[p]);
    bb_overlap_set_quantities(&c->figures, c->refused ? "refused: nothing measured" : NULL, q);
    return NULL;
}

/* ---- the table: the point's key, then the runner's times, then the
 * figures ---------------------------------------------------------------- */

static const bb_key_t overlap_keys[] = {
    {"kind", NULL, "transfer: the bounded transfer phase (ticket API), the protocol; isend, "
     "iallreduce: raw MPI references", 10, BB_KEY_TEXT, "kind"},
    {"size", "B", "payload bytes per call (iallreduce: bytes / 8 doubles on every rank)", 8,
     BB_KEY_INTEGER, "bytes"},
    {"batches", NULL, "compute batches per call, a poll after each in t_polled", 7,
     BB_KEY_INTEGER, "batches"},
    {"compute_per_batch", "us", "compute per batch (auto: the batches add up to the median "
     "t_comm)", 9, BB_KEY_NUMBER, NULL},
    {NULL, NULL, NULL, 0, 0, NULL}
};

static void overlap_key_value(bb_run_t *run, void *state, int k, bb_key_value_t *out)
{
    const overlap_state_t *c = state;
    (void)run;
    switch (k) {
    case 0: out->text = kind_names[c->op.kind]; break;
    case 1: out->integer = c->op.bytes; break;
    case 2: out->integer = c->batches; break;
    default: out->number = c->compute_per_batch_s * 1e6; out->missing = c->refused; break;
    }
}

static void overlap_point_columns(bb_run_t *run, void *state)
{
    (void)state;
    bb_overlap_set_columns(bb_run_table(run));
}

static void overlap_point_cells(bb_run_t *run, void *state)
{
    const overlap_state_t *c = state;
    bb_overlap_set_cells(bb_run_table(run), &c->figures, !c->refused);
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
    overlap_state_t *c = state;
    c->compute_s = -1.0;
    c->kinds = (1u << BB_OVERLAP_KINDS) - 1u;
}

static void overlap_parse(bb_run_t *run, void *state, int key, const char *value)
{
    overlap_state_t *o = state;
    char err[256];
    switch (key) {
    /* The transfer cap is a signed-32 MPI count. */
    case 'b': bb_run_parse_size_list(run, "bytes", value, 0, INT32_MAX, &o->bytes_list); break;
    case OPT_BATCHES:
        bb_run_parse_size_list(run, "batches", value, 0, 1000000, &o->batches_list);
        break;
    case OPT_COMPUTE:
        if (strcmp(value, "auto") == 0)
            o->compute_s = -1.0;
        else if (bb_cli_parse_double(value, 0.0, 10.0, &o->compute_s, err, sizeof err)
                 != BB_OK)
            bb_run_usage(run, "--compute: %s (seconds per batch in [0, 10], or auto)", err);
        break;
    case OPT_KINDS:
        o->kinds = bb_run_parse_choices(run, "kinds", value, kind_names, BB_OVERLAP_KINDS);
        break;
    }
}

static size_t overlap_validate(bb_run_t *run, void *state)
{
    overlap_state_t *c = state;
    c->op.run = run;
    if (bb_run_size(run) < 2)
        bb_run_usage(run, "needs at least 2 ranks (mpiexec -n 2): on one rank there is no "
                     "peer to overlap with (see --help)");
    /* Its overlap figures are the slowest rank's, computed from every rank's
     * own times; means over ranks would not be the rows' figures. */
    if (bb_run_settings(run)->rank_stat != BB_RANK_STAT_MAX)
        bb_run_usage(run, "--rank-stat mean: the overlap figures are the slowest rank's "
                     "(doc/overlap.md); only max is measured here");
    /* The quick default lists (seconds at -n 2), or the long ones. */
    int sweep = bb_run_full_sweep(run);
    if (sweep && (c->bytes_list.n > 0 || c->batches_list.n > 0))
        bb_run_usage(run, "--full-sweep chooses the default lists: not with --bytes or "
                     "--batches");
    bb_run_message_sizes(run, "bytes", 1, 64 << 10, sweep ? 4 << 20 : 1 << 20, &c->bytes_list);
    if (c->bytes_list.n == 0)
        bb_run_parse_size_list(run, "bytes", sweep ? "64K,4M" : "64K,1M", 0, INT32_MAX,
                               &c->bytes_list);
    if (c->batches_list.n == 0)
        bb_run_parse_size_list(run, "batches", sweep ? "1,4,16" : "1,16", 0, 1000000,
                               &c->batches_list);
    c->nkinds = 0;
    for (int k = 0; k < BB_OVERLAP_KINDS; k++)
        if (c->kinds & (1u << k))
            c->kind_list[c->nkinds++] = k;
    for (int v = 0; v < V_N; v++)  /* the column heads: t_comm, ... */
        bb_run_add_row(run, v, 0, strchr(variants[v].name, '.') + 1, NULL);
    return (size_t)c->nkinds * c->bytes_list.n * c->batches_list.n;
}

static void overlap_setup(bb_run_t *run, void *state)
{
    overlap_state_t *c = state;
    c->op.comm = bb_run_comm(run);
    c->op.rank = bb_run_rank(run);
    c->size = bb_run_size(run);
    c->op.source = 0;
    c->op.destination = c->size - 1;

    int64_t max_bytes = 8;
    for (size_t i = 0; i < c->bytes_list.n; i++)
        if (c->bytes_list.values[i] > max_bytes)
            max_bytes = c->bytes_list.values[i];
    bb_xfer_fixture_setup(run, &c->fx, max_bytes, 1);
    c->fx.fail_batch = -1;
    c->op.fx = &c->fx;
    c->op.send = c->fx.src;
    c->op.recv = malloc((size_t)max_bytes);
    const bb_measure_settings_t *m = bb_run_settings(run);
    c->sample_done = calloc((size_t)m->samples, sizeof *c->sample_done);
    /* A block: one sample's calls, or the untimed calls before it. */
    c->done_cap = m->reps <= 0 ? BB_MEASURE_REPS_CAP
                  : m->reps > BB_MEASURE_PRIMER_CALLS ? m->reps : BB_MEASURE_PRIMER_CALLS;
    c->done = malloc((size_t)c->done_cap * sizeof *c->done);
    if (c->op.recv == NULL || c->sample_done == NULL || c->done == NULL)
        bb_run_fatal(run, "cannot allocate %lld bytes", (long long)max_bytes);
    memset(c->op.recv, 0, (size_t)max_bytes);
    if ((c->kinds & (1u << BB_OVERLAP_TRANSFER))
        && bb_transfer_phase_create(bb_run_world(run), &c->op.phase) != BB_OK)
        bb_run_fatal(run, "cannot create the transfer phase");

    /* Batch lengths are chosen per point (bb_run_kernel_iterations), so no
     * check batch is asked for here. */
    bb_run_kernel_calibrate(run, 0.0, &c->kernel);
    bb_run_kernel_record(run, &c->kernel);

    /* Threads per process, observed: the evidence that a progress thread
     * runs (or not), whatever the environment says. */
    bb_run_observe_progress(run);
    bb_table_t *t = bb_run_table(run);
    bb_table_note(t, "transfer and isend: rank %d -> rank %d", c->op.source,
                  c->op.destination);
    bb_table_note(t, "figures are ratios (1 = 100%%), - where undefined (the record says "
                  "why); a part is the same rank's as its whole");
}

static void overlap_label(const void *state, size_t i, char *buf, size_t len)
{
    int kind;
    int64_t bytes, batches;
    point_of(state, i, &kind, &bytes, &batches);
    snprintf(buf, len, "%s: %lld bytes, %lld batches", kind_names[kind], (long long)bytes,
             (long long)batches);
}

/* The run-level progress conditions and formulas; the phase closed. */
static int overlap_finish(bb_run_t *run, void *state)
{
    overlap_state_t *c = state;
    if (c->op.rank == 0)
        bb_run_record_set(run, "formulas", bb_overlap_formulas());
    if (c->op.phase != NULL && bb_transfer_phase_close(c->op.phase) != BB_OK)
        bb_run_fatal(run, "cannot close the transfer phase");
    c->op.phase = NULL;
    return BB_EXIT_OK;
}

static void overlap_teardown(void *state)
{
    overlap_state_t *c = state;
    bb_xfer_fixture_free(&c->fx);
    free(c->op.recv);
    free(c->done);
    free(c->sample_done);
    bb_overlap_set_free(&c->figures);
    bb_size_list_clear(&c->bytes_list);
    bb_size_list_clear(&c->batches_list);
}

/* The seed's own defaults of the measurement options. */
static const bb_measure_settings_t default_settings = {
    .samples = 3, .budget_s = 0.02, .warmup = 2
};

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
    .state_size = sizeof(overlap_state_t),
    .defaults = overlap_defaults,
    .parse = overlap_parse,
    .validate = overlap_validate,
    .setup = overlap_setup,
    .label = overlap_label,
    .finish = overlap_finish,
    .teardown = overlap_teardown,
    .variants = variants,
    .nvariants = V_N,
    .part_names = part_names,
    .nparts = P_N,
    .point_begin = overlap_point_begin,
    .point_end = overlap_point_end,
    .keys = overlap_keys,
    .key_value = overlap_key_value,
    .parameters = overlap_parameters,
    .quantities = overlap_quantities,
    .merged = 1,
    .alone = 1u << V_COMM,
    .lead = 1u << V_POLLED,
    /* One figure of several rows: every row over the polled row's calls. */
    .share = BB_SHARE_FIRST,
    .point_ready = overlap_point_ready,
    .block_end = overlap_block_end,
    .point_columns = overlap_point_columns,
    .point_cells = overlap_point_cells,
};

int main(int argc, char **argv) { return bb_run_main(&overlap_bench, argc, argv); }
