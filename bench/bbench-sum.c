/* bbench-sum: the bounded sum phase (admission + MPI_Iallreduce) against a
 * plain MPI_Allreduce on the same buffers, in the same run.
 * Parse, run, report: the protocol is in lib/sum.c, the rest in lib/. */
#include "config.h"
#include "harness.h"
#include "bbench-hooks.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "bbench-sum"

enum { MODE_PROTOCOL = 1, MODE_RAW = 2, MODE_BOTH = 3 };
enum { MISMATCH_NONE, MISMATCH_PHASE_ID, MISMATCH_EPOCH, MISMATCH_COUNT,
       MISMATCH_CAP, MISMATCH_SEQUENCE };

typedef struct options {
    bb_size_list_t counts;
    int64_t max_elements;     /* -1: equal to each count */
    bb_bench_common_t common;  /* samples, reps, budget, warmup, output */
    int mode;
    int refuse_rank;          /* -1: none */
    int mismatch_rank;
    int mismatch_field;
    int delay_prepare_rank;
    double delay_prepare_s;
    int delay_post_rank;
    double delay_post_s;
} options_t;

/* The provider: integer-valued data, so that the sum is exact. */
typedef struct provider_state {
    double *data;
    int64_t len;
    int fail;                 /* provider failure on this rank */
    double delay_s;           /* sleep inside prepare */
    int64_t prepared, released;
} provider_state_t;

static int provider_prepare(void *arg, const double **data_out, int64_t *len_out)
{
    provider_state_t *p = arg;
    bb_time_sleep(p->delay_s);
    if (p->fail)
        return 1;
    *data_out = p->data;
    *len_out = p->len;
    p->prepared++;
    return 0;
}

static void provider_release(void *arg, const double *data)
{
    provider_state_t *p = arg;
    (void)data;
    p->released++;
}

static double value_of(int64_t i, int rank) { return (double)(i % 1024 + rank); }

/* Number of values where result differs from the exact sum over ranks. */
static int64_t sum_errors(const double *result, int64_t count, int ranks)
{
    double rank_sum = (double)ranks * (ranks - 1) / 2.0;
    int64_t bad = 0;
    for (int64_t i = 0; i < count; i++)
        if (result[i] != (double)ranks * (double)(i % 1024) + rank_sum)
            bad++;
    return bad;
}

static const char usage_text[] =
    "Usage: " PROG " [OPTION]...\n"
    "Measure the bounded sum phase (six-field MIN/MAX admission, then one\n"
    "MPI_Iallreduce with one MPI_Test and MPI_Wait) against a plain\n"
    "MPI_Allreduce on the same buffers.  Launch with mpiexec -n P.\n"
    "\n"
    "  -c, --count LIST         elements per rank: 1,8,64 or 1:1M[:x4|:+N]\n"
    "                           (suffixes K=2^10, M=2^20; default 1:1M:x4)\n"
    "      --max-elements N     the cap presented (default: each count)\n"
    "  -s, --samples N          samples per point, >= 3 (default 3)\n"
    "  -r, --reps N             calls per sample (default: from --budget)\n"
    "      --budget SECONDS     time per sample when --reps is not given\n"
    "                           (default 0.05)\n"
    "  -w, --warmup N           calls after the first call, before sampling\n"
    "                           (default 2)\n"
    "  -m, --mode MODE          protocol, raw or both (default both)\n"
    "  -o, --output FILE        write the JSON record to FILE\n"
    "      --refuse-rank R      provider failure on rank R (a refusal demo)\n"
    "      --mismatch-rank R:FIELD  rank R presents another phase_id, epoch,\n"
    "                           count, cap or sequence\n"
    "      --delay-prepare R:SECONDS  rank R sleeps in prepare\n"
    "      --delay-post R:SECONDS     rank R sleeps before posting the payload\n"
    "  -h, --help               this text\n"
    "  -V, --version            the version\n"
    "\n"
    "A sample is the mean time per call over a block of calls on each rank,\n"
    "then the maximum over ranks.  With 3 samples the [min, max] range is a\n"
    "75% distribution-free interval for the median.  Times in the table are\n"
    "microseconds.  Exit: 0 ok, 1 measured failure (unrequested refusal, wrong\n"
    "sum), 2 usage, 3 fatal (MPI error: the job is aborted, no record).\n";

static void parse_rank_seconds(bb_bench_t *bench, const char *opt,
                               const char *text, int *rank_out, double *s_out)
{
    char err[256];
    if (bb_cli_parse_rank_seconds(text, bb_bench_size(bench), 3600.0, rank_out, s_out,
                                  err, sizeof err) != BB_OK)
        bb_bench_usage(bench, "%s: %s", opt, err);
}

static void options_parse(bb_bench_t *bench, int argc, char **argv, options_t *o)
{
    enum { OPT_MAX = 256, OPT_REFUSE, OPT_MISMATCH, OPT_DPREP, OPT_DPOST };
    static const struct option longopts[] = {
        {"count", required_argument, NULL, 'c'},
        {"max-elements", required_argument, NULL, OPT_MAX},
        {"mode", required_argument, NULL, 'm'},
        {"refuse-rank", required_argument, NULL, OPT_REFUSE},
        {"mismatch-rank", required_argument, NULL, OPT_MISMATCH},
        {"delay-prepare", required_argument, NULL, OPT_DPREP},
        {"delay-post", required_argument, NULL, OPT_DPOST},
        BB_BENCH_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0}
    };
    const char *counts = "1:1M:x4";
    char err[256];
    const char *rest;
    int c;

    memset(o, 0, sizeof *o);
    o->max_elements = -1;
    bb_bench_common_defaults(&o->common);
    o->mode = MODE_BOTH;
    o->refuse_rank = o->mismatch_rank = o->delay_prepare_rank = o->delay_post_rank = -1;

    opterr = 0;  /* our own messages, on rank 0 only */
    while ((c = getopt_long(argc, argv, ":c:m:" BB_BENCH_COMMON_SHORTOPTS, longopts,
                            NULL)) != -1) {
        if (bb_bench_parse_common(bench, c, optarg, argv, usage_text, &o->common))
            continue;
        switch (c) {
        case 'c': counts = optarg; break;
        case OPT_MAX:
            if (bb_cli_parse_size(optarg, 0, INT32_MAX, &o->max_elements, err,
                                  sizeof err) != BB_OK)
                bb_bench_usage(bench, "--max-elements: %s", err);
            break;
        case 'm':
            if (strcmp(optarg, "protocol") == 0) o->mode = MODE_PROTOCOL;
            else if (strcmp(optarg, "raw") == 0) o->mode = MODE_RAW;
            else if (strcmp(optarg, "both") == 0) o->mode = MODE_BOTH;
            else bb_bench_usage(bench, "--mode: '%s' is not protocol, raw or both", optarg);
            break;
        case OPT_REFUSE:
            if (bb_cli_parse_rank_prefix(optarg, bb_bench_size(bench), &o->refuse_rank,
                                         &rest, err, sizeof err) != BB_OK)
                bb_bench_usage(bench, "--refuse-rank: %s", err);
            if (*rest != '\0')
                bb_bench_usage(bench, "--refuse-rank: '%s' is not a rank", optarg);
            break;
        case OPT_MISMATCH:
            if (bb_cli_parse_rank_prefix(optarg, bb_bench_size(bench), &o->mismatch_rank,
                                         &rest, err, sizeof err) != BB_OK)
                bb_bench_usage(bench, "--mismatch-rank: %s", err);
            if (strcmp(rest, "phase_id") == 0) o->mismatch_field = MISMATCH_PHASE_ID;
            else if (strcmp(rest, "epoch") == 0) o->mismatch_field = MISMATCH_EPOCH;
            else if (strcmp(rest, "count") == 0) o->mismatch_field = MISMATCH_COUNT;
            else if (strcmp(rest, "cap") == 0) o->mismatch_field = MISMATCH_CAP;
            else if (strcmp(rest, "sequence") == 0) o->mismatch_field = MISMATCH_SEQUENCE;
            else bb_bench_usage(bench, "--mismatch-rank: field '%s' is not phase_id, "
                                "epoch, count, cap or sequence", rest);
            break;
        case OPT_DPREP:
            parse_rank_seconds(bench, "--delay-prepare", optarg,
                               &o->delay_prepare_rank, &o->delay_prepare_s);
            break;
        case OPT_DPOST:
            parse_rank_seconds(bench, "--delay-post", optarg,
                               &o->delay_post_rank, &o->delay_post_s);
            break;
        }
    }
    bb_bench_parse_end(bench, argc, argv);
    if (bb_cli_parse_size_list(counts, 0, INT32_MAX, &o->counts, err, sizeof err) != BB_OK)
        bb_bench_usage(bench, "--count: %s", err);
    if (o->max_elements >= 0 && o->mismatch_field != MISMATCH_CAP)
        for (size_t i = 0; i < o->counts.n; i++)
            if (o->counts.values[i] > o->max_elements && o->refuse_rank < 0)
                bb_bench_progress(bench, "note: count %lld exceeds --max-elements %lld: "
                                  "that point will be refused",
                                  (long long)o->counts.values[i],
                                  (long long)o->max_elements);
}

/* Per-call timings accumulated over one block, in this order. */
enum { T_ELAPSED, T_PREPARE, T_ADMISSION, T_POST, T_TEST, T_WAIT, T_N };
static const char *const t_names[T_N] = {
    "elapsed", "phase.prepare", "phase.admission", "phase.post", "phase.test",
    "communication.wait"
};

/* What one point measured, on every rank (samples are rank maxima). */
typedef struct point_result {
    double *samples[T_N];     /* [samples] each */
    double first[T_N];        /* the first, cold call, rank maximum */
    int64_t refused_calls, ok_calls, test_completed, wrong_values;
    bb_sum_metrics_t last;    /* the last call's metrics (deterministic parts) */
    bb_refusal_t refusal;     /* first refusal seen */
    int64_t tracked_peak, tracked_between, max_inflight;
    int64_t rss_peak;         /* rank maximum after the point */
} point_result_t;

typedef struct run_ctx {
    bb_bench_t *bench;
    const options_t *o;
    bb_sum_phase_t *phase;
    provider_state_t provider_state;
    bb_sum_provider_t provider;
    double *raw_send, *raw_recv;
    int64_t phase_id;         /* a new common phase id per point */
} run_ctx_t;

/* One protocol call: timed, then checked outside the timing. */
static void protocol_call(run_ctx_t *ctx, int64_t count, double *t, point_result_t *pr)
{
    const options_t *o = ctx->o;
    int rank = bb_bench_rank(ctx->bench);
    bb_sum_contract_t contract = {
        .phase_id = ctx->phase_id, .epoch = 1, .count = count,
        .max_elements = o->max_elements >= 0 ? o->max_elements : count
    };
    ctx->provider_state.len = count;
    if (rank == o->mismatch_rank) {
        switch (o->mismatch_field) {
        case MISMATCH_PHASE_ID: contract.phase_id++; break;
        case MISMATCH_EPOCH: contract.epoch++; break;
        case MISMATCH_COUNT:
            contract.count++;
            contract.max_elements++;
            ctx->provider_state.len = count + 1;
            break;
        case MISMATCH_CAP: contract.max_elements++; break;
        case MISMATCH_SEQUENCE:
            bb_sum_phase_set_sequence(ctx->phase, bb_sum_phase_sequence(ctx->phase) + 1);
            break;
        }
    }
    double *result = NULL;
    bb_sum_metrics_t m;
    double t0 = bb_time_now();
    bb_status_t st = bb_sum_phase_run(ctx->phase, &ctx->provider, &contract, &result, &m);
    double elapsed = bb_time_now() - t0;
    if (st != BB_OK && st != BB_REFUSED)
        bb_bench_fatal(ctx->bench, "sum phase: %s (stage %s)", bb_status_string(st),
                       bb_stage_name(m.refusal.stage));
    t[T_ELAPSED] += elapsed;
    t[T_PREPARE] += m.prepare_s;
    t[T_ADMISSION] += m.admission_s;
    t[T_POST] += m.post_s;
    t[T_TEST] += m.test_s;
    t[T_WAIT] += m.wait_s;
    pr->last = m;
    if (m.tracked_bytes > pr->tracked_peak)
        pr->tracked_peak = m.tracked_bytes;
    if (m.max_inflight > pr->max_inflight)
        pr->max_inflight = m.max_inflight;
    if (st == BB_REFUSED) {
        if (pr->refused_calls++ == 0)
            pr->refusal = m.refusal;
        return;
    }
    pr->ok_calls++;
    pr->test_completed += m.test_completed;
    pr->wrong_values += sum_errors(result, count, bb_bench_size(ctx->bench));
    bb_free(result);
}

static void raw_call(run_ctx_t *ctx, int64_t count, double *t, point_result_t *pr)
{
    double t0 = bb_time_now();
    int rc = MPI_Allreduce(ctx->raw_send, ctx->raw_recv, (int)count, MPI_DOUBLE,
                           MPI_SUM, bb_bench_comm(ctx->bench));
    t[T_ELAPSED] += bb_time_now() - t0;
    if (rc != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Allreduce failed");
    pr->ok_calls++;
    pr->wrong_values += sum_errors(ctx->raw_recv, count, bb_bench_size(ctx->bench));
}

typedef void (*call_fn)(run_ctx_t *, int64_t, double *, point_result_t *);

/* A block of reps calls; the per-call means are MAX-reduced after it. */
static void run_block(run_ctx_t *ctx, call_fn fn, int64_t count, int64_t reps,
                      double *max_out, point_result_t *pr)
{
    double t[T_N] = {0};
    for (int64_t r = 0; r < reps; r++)
        fn(ctx, count, t, pr);
    for (int i = 0; i < T_N; i++)
        t[i] /= (double)reps;
    if (bb_stats_reduce_max(bb_bench_comm(ctx->bench), t, T_N, max_out) != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Allreduce of samples failed");
}

static void measure_point(run_ctx_t *ctx, call_fn fn, int64_t count, point_result_t *pr)
{
    const options_t *o = ctx->o;
    double block[T_N];
    memset(pr, 0, sizeof *pr);
    pr->refusal.rank = -1;
    for (int i = 0; i < T_N; i++) {
        pr->samples[i] = calloc((size_t)o->common.samples, sizeof(double));
        if (pr->samples[i] == NULL)
            bb_bench_fatal(ctx->bench, "out of memory");
    }
    run_block(ctx, fn, count, 1, pr->first, pr);
    for (int64_t w = 0; w < o->common.warmup; w++)
        run_block(ctx, fn, count, 1, block, pr);
    int64_t reps = o->common.reps;
    if (reps == 0) {
        run_block(ctx, fn, count, 1, block, pr);
        reps = bb_bench_reps_for_budget(ctx->bench, block[T_ELAPSED],
                                        o->common.budget_s, 100000);
    }
    for (int64_t s = 0; s < o->common.samples; s++) {
        run_block(ctx, fn, count, reps, block, pr);
        for (int i = 0; i < T_N; i++)
            pr->samples[i][s] = block[i];
    }
    /* Counters and deterministic figures, agreed across ranks. */
    int64_t local[5] = { pr->wrong_values, pr->refused_calls, pr->tracked_peak,
                         pr->max_inflight, bb_rss_peak_bytes() };
    int64_t max[5];
    if (bb_agree_max(bb_bench_comm(ctx->bench), local, 5, max) != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Allreduce of counters failed");
    pr->wrong_values = max[0];
    pr->refused_calls = max[1];
    pr->tracked_peak = max[2];
    pr->max_inflight = max[3];
    pr->rss_peak = max[4];
    pr->tracked_between = ctx->phase ? bb_sum_phase_tracked_live(ctx->phase) : 0;
}

static void point_result_free(point_result_t *pr)
{
    for (int i = 0; i < T_N; i++)
        free(pr->samples[i]);
}

static cJSON *parameters_new(const options_t *o, int64_t count, const char *mode)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "count", (double)count);
    cJSON_AddNumberToObject(p, "max_elements",
                            (double)(o->max_elements >= 0 ? o->max_elements : count));
    cJSON_AddStringToObject(p, "mode", mode);
    cJSON_AddNumberToObject(p, "element_bytes", 8);
    return p;
}

static const char *const elapsed_includes[] = {
    "phase.prepare", "phase.admission", "phase.post", "phase.test",
    "communication.wait", NULL
};

static void record_point(bb_bench_t *bench, const options_t *o, int64_t count,
                         int protocol, const point_result_t *pr)
{
    const char *scope = "call/max-rank";
    const char *not_protocol = "raw mode: a plain MPI_Allreduce has no protocol phases";
    int refused = pr->refused_calls > 0;
    cJSON *q = cJSON_CreateObject();
    cJSON *first = cJSON_CreateObject();
    int ntimings = protocol ? T_N : 1;
    for (int i = 0; i < ntimings; i++) {
        bb_quantities_add(q, t_names[i],
                          bb_quantity_timing(pr->samples[i], (size_t)o->common.samples, scope,
                                             i == T_ELAPSED && protocol ? elapsed_includes
                                                                        : NULL));
        bb_quantities_add(first, t_names[i], bb_quantity_value(pr->first[i], "s", scope));
    }
    if (!protocol)
        for (int i = 1; i < T_N; i++)
            bb_quantities_add(q, t_names[i], bb_quantity_null("s", scope, not_protocol));
    if (refused)
        bb_quantities_add(q, "communication.payload",
                          bb_quantity_null("byte", "call/rank",
                                           "refused: no payload was posted"));
    else
        bb_quantities_add(q, "communication.payload",
                          bb_quantity_value(8.0 * (double)count, "byte", "call/rank"));
    if (protocol) {
        bb_quantities_add(q, "communication.max_inflight",
                          bb_quantity_value((double)pr->max_inflight, "count", scope));
        bb_quantities_add(q, "memory.tracked_live",
                          bb_quantity_value((double)pr->tracked_peak, "byte", scope));
        bb_quantities_add(q, "memory.tracked_between_calls",
                          bb_quantity_value((double)pr->tracked_between, "byte", "call/rank"));
        bb_quantities_add(q, "phase.test_completed",
                          refused ? bb_quantity_null("ratio", "run/rank",
                                                     "refused: no payload request")
                                  : bb_quantity_value((double)pr->test_completed
                                                          / (double)pr->ok_calls,
                                                      "ratio", "run/rank"));
    } else {
        bb_quantities_add(q, "communication.max_inflight",
                          bb_quantity_null("count", scope, "raw mode: blocking call, "
                                           "requests are internal to MPI"));
        bb_quantities_add(q, "memory.tracked_live",
                          bb_quantity_null("byte", scope, "raw mode: buffers are the "
                                           "benchmark's, not counted by a phase"));
    }
    bb_quantities_add(q, "memory.rss_peak",
                      bb_quantity_value((double)pr->rss_peak, "byte", "run/max-rank"));
    bb_quantities_add_unobservable(q);
    bb_record_add_point(bb_bench_record(bench),
                        parameters_new(o, count, protocol ? "protocol" : "raw"),
                        refused ? "refused" : "ok", refused ? &pr->refusal : NULL,
                        first, q);
}

static void table_header(const options_t *o)
{
    printf("# times in microseconds: median [min, max] of %lld samples, rank maximum\n",
           (long long)o->common.samples);
    printf("%10s", "count");
    if (o->mode & MODE_PROTOCOL)
        printf(" %12s %25s %12s", "protocol_us", "range_us", "admission_us");
    if (o->mode & MODE_RAW)
        printf(" %12s %25s", "raw_us", "range_us");
    if (o->mode == MODE_BOTH)
        printf(" %8s", "ratio");
    printf("  status\n");
}

static void table_row(const options_t *o, int64_t count, const point_result_t *proto,
                      const point_result_t *raw)
{
    size_t n = (size_t)o->common.samples;
    char size[32], range[64];
    bb_summary_t s;
    bb_cli_format_size(count, size, sizeof size);
    printf("%10s", size);
    if (proto) {
        bb_stats_summarize(proto->samples[T_ELAPSED], n, &s);
        bb_stats_format_range(&s, 1e6, 2, range, sizeof range);
        printf(" %12.2f %25s %12.2f", s.median * 1e6, range,
               bb_stats_median(proto->samples[T_ADMISSION], n) * 1e6);
    }
    if (raw) {
        bb_stats_summarize(raw->samples[T_ELAPSED], n, &s);
        bb_stats_format_range(&s, 1e6, 2, range, sizeof range);
        printf(" %12.2f %25s", s.median * 1e6, range);
    }
    if (proto && raw)
        printf(" %8.2f", bb_stats_median(proto->samples[T_ELAPSED], n)
                             / bb_stats_median(raw->samples[T_ELAPSED], n));
    if (proto && proto->refused_calls > 0)
        printf("  refused (%s, sequence %lld)\n", bb_stage_name(proto->refusal.stage),
               (long long)proto->refusal.sequence);
    else
        printf("  ok\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    bb_bench_t *bench = bb_bench_init(&argc, &argv, PROG, "sum");
    options_t o;
    options_parse(bench, argc, argv, &o);
    bb_bench_set_output(bench, o.common.output);
    bb_bench_capture(bench);

    int rank = bb_bench_rank(bench);
    int64_t max_count = 0;
    for (size_t i = 0; i < o.counts.n; i++)
        if (o.counts.values[i] > max_count)
            max_count = o.counts.values[i];

    run_ctx_t ctx = { .bench = bench, .o = &o };
    ctx.provider_state.data = malloc((size_t)(max_count + 1) * sizeof(double));
    ctx.raw_send = malloc((size_t)(max_count + 1) * sizeof(double));
    ctx.raw_recv = malloc((size_t)(max_count + 1) * sizeof(double));
    if (!ctx.provider_state.data || !ctx.raw_send || !ctx.raw_recv)
        bb_bench_fatal(bench, "cannot allocate %lld elements", (long long)max_count);
    for (int64_t i = 0; i <= max_count; i++)
        ctx.provider_state.data[i] = ctx.raw_send[i] = value_of(i, rank);
    ctx.provider_state.fail = rank == o.refuse_rank;
    ctx.provider_state.delay_s = rank == o.delay_prepare_rank ? o.delay_prepare_s : 0.0;
    ctx.provider = (bb_sum_provider_t){ provider_prepare, provider_release,
                                        &ctx.provider_state };
    if (bb_sum_phase_create(bb_bench_world(bench), &ctx.phase) != BB_OK)
        bb_bench_fatal(bench, "cannot create the sum phase");
    if (rank == o.delay_post_rank)
        bb_sum_phase_set_post_delay(ctx.phase, o.delay_post_s);

    int asked_refusal = o.refuse_rank >= 0 || o.mismatch_rank >= 0;
    int exit_code = BB_EXIT_OK;
    if (rank == 0)
        table_header(&o);
    for (size_t i = 0; i < o.counts.n; i++) {
        int64_t count = o.counts.values[i];
        point_result_t proto, raw;
        bb_bench_progress(bench, "point %zu/%zu: count %lld", i + 1, o.counts.n,
                          (long long)count);
        ctx.phase_id = (int64_t)i;
        if (o.mode & MODE_PROTOCOL)
            measure_point(&ctx, protocol_call, count, &proto);
        if (o.mode & MODE_RAW)
            measure_point(&ctx, raw_call, count, &raw);
        if (rank == 0) {
            table_row(&o, count, (o.mode & MODE_PROTOCOL) ? &proto : NULL,
                      (o.mode & MODE_RAW) ? &raw : NULL);
            if (o.mode & MODE_PROTOCOL)
                record_point(bench, &o, count, 1, &proto);
            if (o.mode & MODE_RAW)
                record_point(bench, &o, count, 0, &raw);
        }
        int64_t wrong = 0;
        if (o.mode & MODE_PROTOCOL) {
            wrong += proto.wrong_values;
            if (proto.refused_calls > 0 && !asked_refusal) {
                bb_bench_progress(bench, "error: count %lld refused (%s) without a "
                                  "refusal being asked for", (long long)count,
                                  bb_stage_name(proto.refusal.stage));
                exit_code = BB_EXIT_FAILURE;
            }
            point_result_free(&proto);
        }
        if (o.mode & MODE_RAW) {
            wrong += raw.wrong_values;
            point_result_free(&raw);
        }
        if (wrong > 0) {
            bb_bench_progress(bench, "error: count %lld: %lld wrong sum values",
                              (long long)count, (long long)wrong);
            exit_code = BB_EXIT_FAILURE;
        }
    }
    /* Every provider array must have been released exactly once. */
    int64_t unreleased = ctx.provider_state.prepared - ctx.provider_state.released;
    int64_t worst = 0;
    if (bb_agree_max(bb_bench_comm(bench), &unreleased, 1, &worst) != MPI_SUCCESS)
        bb_bench_fatal(bench, "MPI_Allreduce failed");
    if (worst != 0) {
        bb_bench_progress(bench, "error: %lld provider arrays not released exactly once",
                          (long long)worst);
        exit_code = BB_EXIT_FAILURE;
    }
    if (rank == 0) {
        cJSON *summary = cJSON_CreateObject();
        cJSON_AddNumberToObject(summary, "provider_arrays_prepared",
                                (double)ctx.provider_state.prepared);
        cJSON_AddNumberToObject(summary, "provider_arrays_released",
                                (double)ctx.provider_state.released);
        cJSON_AddStringToObject(summary, "range_note",
                                "with n samples the [min, max] range covers the median "
                                "with probability 1 - 2^(1-n): 75% for n = 3");
        bb_record_set(bb_bench_record(bench), "run", summary);
    }
    bb_sum_phase_destroy(ctx.phase);
    free(ctx.provider_state.data);
    free(ctx.raw_send);
    free(ctx.raw_recv);
    bb_size_list_clear(&o.counts);
    return bb_bench_finish(bench, exit_code);
}
