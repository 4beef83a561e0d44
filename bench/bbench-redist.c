/* bbench-redist: MDI parallel communication between two data layouts.
 * Every method moves the same elements between the same maps; each message
 * is checked slot by slot outside the timing; the machine's lower bound
 * (ping-pong and memcpy of the largest per-rank volume) is measured in the
 * same run.  The protocol is lib/redist-*.c (layouts, fixture and bound: harness/); the runner (harness/runner.c)
 * owns options, measurement loop and record; this file holds the message
 * kernel, the plans around it and the descriptor. */
#include "config.h"
#include "runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
    bb_size_list_t elements;
    int64_t element_bytes;
    int driver_ranks;          /* -1: P/2 */
    const char *from, *to;
    bb_layout_t from_layout, to_layout;
    int directions[2], ndirections;
    bb_redist_method_t methods[BB_REDIST_METHODS];
    int nmethods;
    int64_t messages;          /* messages per plan; 0: one plan for the point */
    bb_redist_mode_t mode;     /* --link */
} options_t;

static void parse_layout(bb_run_t *run, const char *opt, const char *text, bb_layout_t *out)
{
    char err[256];
    if (bb_layout_parse(text, out, err, sizeof err) != BB_OK)
        bb_run_usage(run, "%s: %s", opt, err);
}

/* The layout must be generable for the code it lays out (spatial dims). */
static void check_layout_fits(bb_run_t *run, const char *opt, const char *text,
                              const bb_layout_t *lay, int ranks)
{
    int64_t *idx = NULL, cnt;
    if (bb_layout_indices(lay, 0, 0, ranks, &idx, &cnt) != BB_OK)
        bb_run_usage(run, "%s: '%s' does not fit a code of %d ranks "
                     "(PX*PY*PZ must equal the ranks)", opt, text, ranks);
    bb_free(idx);
}

/* Per-message timings of one block, in this order.  (The engine sizes
 * blocks by the whole call, untimed fill, barrier and check included, so a
 * sample lasts about --budget.) */
enum { T_ELAPSED, T_ADMISSION, T_PAYLOAD, T_N };
static const char *const t_names[T_N] = {
    "elapsed", "phase.admission", "phase.payload"
};
/* Setup timings of one plan. */
enum { S_TOTAL, S_VALIDATE, S_MAP, S_BUILD, S_N };
static const char *const s_names[S_N] = {
    "setup.total", "setup.validate", "setup.map_transfer", "setup.plan_build"
};

/* Buffers of one plan. */
typedef struct buffers {
    const bb_map_t *sm, *rm;
    double *send, *recv;
} buffers_t;

typedef struct method_result {
    bb_redist_method_t method;
    bb_measure_result_t m;       /* the messages: first, samples, calls */
    double *setup[S_N];          /* [nsetup] */
    size_t nsetup, setup_cap;
    double first_setup[S_N];
    int64_t messages, wrong_messages, refused;
    bb_redist_traffic_t traffic;
    double median;
} method_result_t;

typedef struct run_ctx {
    bb_run_t *run;
    bb_bench_t *bench;
    const options_t *o;
    bb_redist_link_t *link;
    MPI_Comm comm;               /* the link's: every rank of both codes */
    bb_map_t *dmap, *emap;       /* this rank's maps for the current N */
    int64_t n;
    int command;
    /* the method being measured: its plan, buffers and message number */
    method_result_t *mr;
    bb_redist_plan_t *plan;
    buffers_t b;
    int64_t k, on_plan;
} run_ctx_t;

static void setup_push(run_ctx_t *ctx, method_result_t *mr, const bb_redist_setup_t *su)
{
    double local[S_N] = {su->total_s, su->validate_s, su->map_transfer_s, su->plan_build_s};
    double max[S_N];
    if (bb_stats_reduce_max(ctx->comm, local, S_N, max) != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Allreduce of setup times failed");
    if (mr->nsetup == mr->setup_cap) {
        mr->setup_cap = mr->setup_cap ? 2 * mr->setup_cap : 8;
        for (int i = 0; i < S_N; i++) {
            mr->setup[i] = realloc(mr->setup[i], mr->setup_cap * sizeof(double));
            if (mr->setup[i] == NULL)
                bb_bench_fatal(ctx->bench, "out of memory");
        }
    }
    for (int i = 0; i < S_N; i++)
        mr->setup[i][mr->nsetup] = max[i];
    mr->nsetup++;
}

static bb_redist_plan_t *plan_build(run_ctx_t *ctx, bb_redist_method_t method,
                                    bb_redist_setup_t *su)
{
    bb_redist_plan_t *plan = NULL;
    bb_status_t st = bb_redist_plan_create(ctx->link, method, ctx->command,
                                           ctx->o->element_bytes, ctx->dmap, ctx->emap,
                                           &plan, su);
    if (st == BB_REFUSED)
        bb_bench_fatal(ctx->bench, "the generated maps were refused (a generator bug)");
    if (st != BB_OK)
        bb_bench_fatal(ctx->bench, "plan for %s: %s", bb_redist_method_name(method),
                       bb_status_string(st));
    return plan;
}

static void buffers_get(run_ctx_t *ctx, bb_redist_plan_t *plan, buffers_t *b)
{
    int64_t eb = ctx->o->element_bytes;
    b->sm = bb_redist_plan_send_map(plan);
    b->rm = bb_redist_plan_recv_map(plan);
    int64_t sc = b->sm ? bb_map_count(b->sm) : 0, rc = b->rm ? bb_map_count(b->rm) : 0;
    b->send = malloc((size_t)(sc > 0 ? sc : 1) * (size_t)eb);
    b->recv = malloc((size_t)(rc > 0 ? rc : 1) * (size_t)eb);
    if (b->send == NULL || b->recv == NULL)
        bb_bench_fatal(ctx->bench, "cannot allocate message buffers");
}

static void buffers_free(buffers_t *b)
{
    free(b->send);
    free(b->recv);
}

/* One message: prepared and checked outside the timing. */
static void message(run_ctx_t *ctx, bb_redist_plan_t *plan, buffers_t *b, int64_t k,
                    double *t, method_result_t *mr)
{
    int64_t eb = ctx->o->element_bytes;
    if (b->sm)
        bb_redist_fill(b->sm, eb, k, b->send);
    if (b->rm)
        bb_redist_fill_sentinel(bb_map_count(b->rm), eb, b->recv);
    bb_redist_contract_t c = {ctx->command, ctx->n, eb, ctx->n};
    bb_redist_metrics_t m;
    if (MPI_Barrier(ctx->comm) != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Barrier failed");
    double t0 = bb_time_now();
    bb_status_t st = bb_redist_plan_execute(plan, &c, b->send, b->recv, &m);
    double elapsed = bb_time_now() - t0;
    if (st == BB_REFUSED) {
        mr->refused++;
        return;
    }
    if (st != BB_OK)
        bb_bench_fatal(ctx->bench, "%s %c: %s", bb_redist_method_name(mr->method),
                       ctx->command, bb_status_string(st));
    t[T_ELAPSED] += elapsed;
    t[T_ADMISSION] += m.admission_s;
    t[T_PAYLOAD] += m.payload_s;
    mr->messages++;
    bb_redist_check_t ck;
    st = bb_redist_check(ctx->comm, b->rm, ctx->n, eb, k, b->recv, &ck);
    if (st == BB_ERR_VALIDATION) {
        if (mr->wrong_messages++ == 0)
            bb_bench_progress(ctx->bench, "error: %s %c N=%lld message %lld: %lld wrong "
                              "slots (first element %lld), checksum %s",
                              bb_redist_method_name(mr->method), ctx->command,
                              (long long)ctx->n, (long long)k, (long long)ck.bad_slots,
                              (long long)ck.first_bad_index,
                              ck.checksum_ok ? "right" : "wrong");
    } else if (st != BB_OK) {
        bb_bench_fatal(ctx->bench, "check: %s", bb_status_string(st));
    }
}

/* The kernel: one message.  After K messages (--messages) the plan is
 * rebuilt first, its setup timed apart and outside the message's time. */
static bb_status_t message_call(void *arg, double *t, double *counts)
{
    run_ctx_t *ctx = arg;
    (void)counts;
    if (ctx->o->messages > 0 && ctx->on_plan >= ctx->o->messages) {
        bb_redist_setup_t su;
        buffers_free(&ctx->b);
        bb_redist_plan_destroy(ctx->plan);
        ctx->plan = plan_build(ctx, ctx->mr->method, &su);
        setup_push(ctx, ctx->mr, &su);
        buffers_get(ctx, ctx->plan, &ctx->b);
        ctx->on_plan = 0;
    }
    message(ctx, ctx->plan, &ctx->b, ctx->k++, t, ctx->mr);
    ctx->on_plan++;
    return BB_OK;
}

/* One method at the current N and command. */
static void measure_method(run_ctx_t *ctx, bb_redist_method_t method, method_result_t *mr)
{
    int64_t samples = bb_run_settings(ctx->run)->samples;
    memset(mr, 0, sizeof *mr);
    mr->method = method;
    /* setup: samples plans built and freed, then the one that is used */
    bb_redist_setup_t su;
    bb_redist_plan_t *plan = plan_build(ctx, method, &su);
    setup_push(ctx, mr, &su);
    for (int i = 0; i < S_N; i++)
        mr->first_setup[i] = mr->setup[i][0];
    for (int64_t s = 1; s < samples; s++) {
        bb_redist_plan_destroy(plan);
        plan = plan_build(ctx, method, &su);
        setup_push(ctx, mr, &su);
    }
    if (bb_redist_plan_traffic(plan, &mr->traffic) != BB_OK)
        bb_bench_fatal(ctx->bench, "traffic: MPI error");
    ctx->mr = mr;
    ctx->plan = plan;
    buffers_get(ctx, plan, &ctx->b);
    ctx->k = ctx->on_plan = 0;
    bb_measure_variant_t v = { .nparts = T_N, .ncounts = 0, .call = message_call,
                               .arg = ctx };
    bb_run_measure(ctx->run, bb_redist_method_name(method), &v, &mr->m);
    int64_t local[2] = {mr->wrong_messages, mr->refused}, agreed[2];
    if (bb_agree_max(ctx->comm, local, 2, agreed) != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Allreduce failed");
    mr->wrong_messages = agreed[0];
    mr->refused = agreed[1];
    /* every message the engine made was checked, unless it was refused */
    mr->messages = mr->m.calls - mr->refused;
    mr->median = bb_stats_median(bb_measure_part(&mr->m, T_ELAPSED), (size_t)mr->m.samples);
    buffers_free(&ctx->b);
    bb_redist_plan_destroy(ctx->plan);
    ctx->plan = NULL;
    ctx->mr = NULL;
}

static void method_result_free(method_result_t *mr)
{
    bb_measure_result_clear(&mr->m);
    for (int i = 0; i < S_N; i++)
        free(mr->setup[i]);
}


static cJSON *parameters_new(const run_ctx_t *ctx, bb_redist_method_t method)
{
    const options_t *o = ctx->o;
    char from[64], to[64], dir[2] = {(char)ctx->command, '\0'};
    int ranks = bb_bench_size(ctx->bench);
    bb_layout_format(&o->from_layout, from, sizeof from);
    bb_layout_format(&o->to_layout, to, sizeof to);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "elements", (double)ctx->n);
    cJSON_AddNumberToObject(p, "element_bytes", (double)o->element_bytes);
    cJSON_AddStringToObject(p, "direction", dir);
    cJSON_AddStringToObject(p, "method", bb_redist_method_name(method));
    cJSON_AddStringToObject(p, "mode", o->mode == BB_REDIST_MODE_MDI ? "mdi" : "intra");
    cJSON_AddNumberToObject(p, "driver_ranks",
                            o->mode == BB_REDIST_MODE_MDI ? o->driver_ranks : ranks);
    cJSON_AddNumberToObject(p, "engine_ranks",
                            o->mode == BB_REDIST_MODE_MDI ? ranks - o->driver_ranks : ranks);
    cJSON_AddStringToObject(p, "from", from);
    cJSON_AddStringToObject(p, "to", to);
    cJSON_AddNumberToObject(p, "messages_per_plan", (double)o->messages);
    return p;
}

static const char *const elapsed_includes[] = {"phase.admission", "phase.payload", NULL};
static const char *const setup_includes[] = {
    "setup.validate", "setup.map_transfer", "setup.plan_build", NULL
};

static void record_method(run_ctx_t *ctx, const method_result_t *mr,
                          const bb_redist_traffic_t *direct, const bb_redist_bound_t *bound)
{
    const options_t *o = ctx->o;
    const char *scope = "call/max-rank";
    cJSON *q = cJSON_CreateObject(), *first = cJSON_CreateObject();
    for (int i = 0; i < T_N; i++) {
        bb_quantities_add(q, t_names[i],
                          bb_quantity_timing(bb_measure_part(&mr->m, i), (size_t)mr->m.samples,
                                             scope, i == T_ELAPSED ? elapsed_includes : NULL));
        bb_quantities_add(first, t_names[i], bb_quantity_value(mr->m.first[i], "s", scope));
    }
    for (int i = 0; i < S_N; i++) {
        bb_quantities_add(q, s_names[i],
                          bb_quantity_timing(mr->setup[i], mr->nsetup, "plan/max-rank",
                                             i == S_TOTAL ? setup_includes : NULL));
        bb_quantities_add(first, s_names[i],
                          bb_quantity_value(mr->first_setup[i], "s", "plan/max-rank"));
    }
    double setup_med = bb_stats_median(mr->setup[S_TOTAL], mr->nsetup);
    if (o->messages > 0)
        bb_quantities_add(q, "elapsed.amortized",
                          bb_quantity_value(mr->median + setup_med / (double)o->messages,
                                            "s", scope));
    else
        bb_quantities_add(q, "elapsed.amortized",
                          bb_quantity_null("s", scope, "one plan serves every message "
                                           "(--messages 0): setup is not amortized over "
                                           "a count"));
    const bb_redist_traffic_t *t = &mr->traffic;
    bb_quantities_add(q, "communication.payload",
                      bb_quantity_value((double)t->payload_bytes, "byte", "call/all-ranks"));
    bb_quantities_add(q, "redist.bytes_changing_owner",
                      bb_quantity_value((double)direct->moved_bytes, "byte", "call/all-ranks"));
    bb_quantities_add(q, "redist.bytes_moved",
                      bb_quantity_value((double)t->moved_bytes, "byte", "call/all-ranks"));
    bb_quantities_add(q, "redist.max_in_bytes",
                      bb_quantity_value((double)t->max_in_bytes, "byte", scope));
    bb_quantities_add(q, "redist.max_out_bytes",
                      bb_quantity_value((double)t->max_out_bytes, "byte", scope));
    bb_quantities_add(q, "redist.max_local_copy_bytes",
                      bb_quantity_value((double)t->max_self_bytes, "byte", scope));
    bb_quantities_add(q, "redist.peers_mean",
                      bb_quantity_value(t->mean_peers, "count", "call/mean-rank"));
    bb_quantities_add(q, "redist.peers_max",
                      bb_quantity_value((double)t->max_peers, "count", scope));
    if (t->mean_run_elements >= 0)
        bb_quantities_add(q, "redist.mean_run_elements",
                          bb_quantity_value(t->mean_run_elements, "count", "call/all-ranks"));
    else
        bb_quantities_add(q, "redist.mean_run_elements",
                          bb_quantity_null("count", "call/all-ranks",
                                           "no slot datatypes: the root methods move whole "
                                           "arrays and pick elements one by one"));
    bb_quantities_add(q, "redist.steps", bb_quantity_value((double)t->steps, "count", "call"));
    /* How many messages were checked follows the reps (and so the budget and
     * the machine's speed): a measurement, never a contract. */
    cJSON *checked = bb_quantity_value((double)mr->messages, "count", "run/rank");
    cJSON_AddFalseToObject(checked, "deterministic");
    bb_quantities_add(q, "redist.messages_checked", checked);
    bb_quantities_add(q, "bound.p2p",
                      bound->p2p_bytes > 0 && bound->p2p_s > 0
                          ? bb_quantity_value(bound->p2p_s, "s", "run/pair")
                          : bb_quantity_null("s", "run/pair", "no bytes change rank"));
    bb_quantities_add(q, "bound.p2p_bytes",
                      bb_quantity_value((double)bound->p2p_bytes, "byte", scope));
    bb_quantities_add(q, "bound.memcpy",
                      bound->memcpy_bytes > 0
                          ? bb_quantity_value(bound->memcpy_s, "s", "run/rank")
                          : bb_quantity_null("s", "run/rank", "no rank keeps elements"));
    bb_quantities_add(q, "bound.memcpy_bytes",
                      bb_quantity_value((double)bound->memcpy_bytes, "byte", scope));
    bb_quantities_add(q, "bound", bb_quantity_value(bound->bound_s, "s", scope));
    bb_quantities_add(q, "efficiency",
                      mr->median > 0 && bound->bound_s > 0
                          ? bb_quantity_value(bound->bound_s / mr->median, "ratio", scope)
                          : bb_quantity_null("ratio", scope, "nothing to move: the bound "
                                             "is zero"));
    bb_quantities_add(q, "memory.rss_peak",
                      bb_quantity_value((double)bb_rss_peak_bytes(), "byte", "run/rank"));
    bb_quantities_add(q, "network.bytes",
                      bb_quantity_null("byte", "call/rank", "not observable: MPI does "
                                       "not report wire traffic; bytes above are the "
                                       "buffers MPI calls name"));
    bb_quantities_add(q, "redist.wrong_messages",
                      bb_quantity_value((double)mr->wrong_messages, "count", "run/all-ranks"));
    /* no refusal is asked for: one is a measured failure (exit 1) */
    bb_refusal_t none = {BB_STAGE_NONE, -1, 0};
    bb_record_add_point(bb_bench_record(ctx->bench), parameters_new(ctx, mr->method),
                        mr->refused > 0 ? "refused" : "ok", mr->refused > 0 ? &none : NULL,
                        first, q);
}

static void table_header(const run_ctx_t *ctx)
{
    const options_t *o = ctx->o;
    int ranks = bb_bench_size(ctx->bench);
    if (o->mode == BB_REDIST_MODE_MDI)
        printf("# mdi: driver ranks [0, %d) layout %s, engine ranks [%d, %d) layout %s, "
               "%lld-byte elements\n", o->driver_ranks, o->from, o->driver_ranks, ranks,
               o->to, (long long)o->element_bytes);
    else
        printf("# intra: %d ranks, layout %s ('>' from) and %s ('<' from), %lld-byte "
               "elements\n", ranks, o->from, o->to, (long long)o->element_bytes);
    printf("# times in microseconds per message: median [min, max] of %lld samples, rank "
           "maximum; setup median per plan\n", (long long)bb_run_settings(ctx->run)->samples);
    printf("# median = admit (recv_dist flag + MIN/MAX admission) + payload; "
           "speedup = root median / median; eff = bound / median\n");
    printf("%9s %3s %-12s %11s %23s %11s %10s %11s %9s %6s %7s %7s\n", "N", "dir", "method",
           "median_us", "range_us", "setup_us", "admit_us", "payload_us", "MB_moved", "peers",
           "speedup", "eff");
}

static void table_point(const run_ctx_t *ctx, const method_result_t *mrs, int nm,
                        const bb_redist_bound_t *bound)
{
    double root = NAN;
    for (int i = 0; i < nm; i++)
        if (mrs[i].method == BB_REDIST_ROOT)
            root = mrs[i].median;
    char size[32];
    bb_cli_format_size(ctx->n, size, sizeof size);
    for (int i = 0; i < nm; i++) {
        const method_result_t *mr = &mrs[i];
        bb_summary_t s;
        char range[64], speed[16], eff[16];
        size_t n = (size_t)mr->m.samples;
        bb_stats_summarize(bb_measure_part(&mr->m, T_ELAPSED), n, &s);
        bb_stats_format_range(&s, 1e6, 1, range, sizeof range);
        if (isnan(root) || !(mr->median > 0))
            snprintf(speed, sizeof speed, "-");
        else
            snprintf(speed, sizeof speed, "%.2f", root / mr->median);
        if (bound->bound_s > 0 && mr->median > 0)
            snprintf(eff, sizeof eff, "%.3f", bound->bound_s / mr->median);
        else
            snprintf(eff, sizeof eff, "-");
        printf("%9s %3c %-12s %11.1f %23s %11.1f %10.1f %11.1f %9.2f %6.2f %7s %7s%s\n", size,
               ctx->command, bb_redist_method_name(mr->method), mr->median * 1e6, range,
               bb_stats_median(mr->setup[S_TOTAL], mr->nsetup) * 1e6,
               bb_stats_median(bb_measure_part(&mr->m, T_ADMISSION), n) * 1e6,
               bb_stats_median(bb_measure_part(&mr->m, T_PAYLOAD), n) * 1e6,
               (double)mr->traffic.moved_bytes / 1e6, mr->traffic.mean_peers, speed, eff,
               mr->wrong_messages ? "  WRONG DATA" : mr->refused ? "  REFUSED" : "");
    }
    printf("%9s %3c %-12s %11.1f  (p2p %.1f us for %.2f MB: %.2f GB/s; memcpy %.1f us "
           "for %.2f MB: %.2f GB/s)\n", size, ctx->command, "bound", bound->bound_s * 1e6,
           bound->p2p_s * 1e6, (double)bound->p2p_bytes / 1e6, bound->p2p_bandwidth / 1e9,
           bound->memcpy_s * 1e6, (double)bound->memcpy_bytes / 1e6,
           bound->memcpy_bandwidth / 1e9);
    fflush(stdout);
}

static bb_map_t *code_map(run_ctx_t *ctx, int engine, const bb_layout_t *lay, int64_t n)
{
    bb_redist_link_t *l = ctx->link;
    if (!(engine ? bb_redist_link_is_engine(l) : bb_redist_link_is_driver(l)))
        return NULL;
    bb_map_t *m = NULL;
    if (bb_layout_map(lay, n, bb_redist_link_code_rank(l, engine),
                      bb_redist_link_code_size(l, engine), 1, &m) != BB_OK)
        bb_bench_fatal(ctx->bench, "cannot generate the layout for N = %lld", (long long)n);
    return m;
}


/* ---- one point: an N and a direction -------------------------------------- */

typedef struct redist_state {
    options_t o;
    run_ctx_t ctx;
    method_result_t mrs[BB_REDIST_METHODS];
} redist_state_t;

static int redist_point(bb_run_t *run, void *state, size_t i)
{
    redist_state_t *st = state;
    const options_t *o = &st->o;
    run_ctx_t *ctx = &st->ctx;
    int code = BB_EXIT_OK;
    /* the maps of one N serve each of its directions */
    if (i % (size_t)o->ndirections == 0) {
        bb_map_free(ctx->dmap);
        bb_map_free(ctx->emap);
        ctx->n = o->elements.values[i / (size_t)o->ndirections];
        ctx->dmap = code_map(ctx, 0, &o->from_layout, ctx->n);
        ctx->emap = code_map(ctx, 1, &o->to_layout, ctx->n);
    }
    ctx->command = o->directions[i % (size_t)o->ndirections];
    /* what changes owner and the bound come from the direct plan */
    bb_redist_setup_t su;
    bb_redist_plan_t *direct = plan_build(ctx, BB_REDIST_DIRECT, &su);
    bb_redist_traffic_t dt;
    bb_redist_bound_t bound;
    if (bb_redist_plan_traffic(direct, &dt) != BB_OK)
        bb_run_fatal(run, "traffic: MPI error");
    bb_redist_plan_destroy(direct);
    int64_t vol = dt.max_in_bytes > dt.max_out_bytes ? dt.max_in_bytes : dt.max_out_bytes;
    bb_status_t s = bb_redist_link_bound(ctx->link, vol, dt.max_self_bytes, 20, &bound);
    if (s != BB_OK)
        bb_run_fatal(run, "bound: %s", bb_status_string(s));
    for (int m = 0; m < o->nmethods; m++)
        measure_method(ctx, o->methods[m], &st->mrs[m]);
    if (bb_run_rank(run) == 0) {
        table_point(ctx, st->mrs, o->nmethods, &bound);
        for (int m = 0; m < o->nmethods; m++)
            record_method(ctx, &st->mrs[m], &dt, &bound);
    }
    for (int m = 0; m < o->nmethods; m++) {
        const method_result_t *mr = &st->mrs[m];
        if (mr->wrong_messages > 0 || mr->refused > 0) {
            bb_run_note(run, "error: %s %c N=%lld: %lld messages with wrong data, "
                        "%lld refused", bb_redist_method_name(mr->method), ctx->command,
                        (long long)ctx->n, (long long)mr->wrong_messages,
                        (long long)mr->refused);
            code = BB_EXIT_FAILURE;
        }
        method_result_free(&st->mrs[m]);
    }
    return code;
}

/* ---- the descriptor ------------------------------------------------------- */

enum { OPT_DRIVER = BB_OPT_LONG, OPT_FROM, OPT_TO, OPT_METHODS, OPT_MESSAGES, OPT_LINK };

static const bb_option_t redist_options[] = {
    {"elements", 'n', "LIST", "N, global elements: 1e4,1e5 or 1K:1M[:x4|:+N]\n"
                              "(default 1e4,1e5,1e6)"},
    {"element-bytes", 'e', "B", "8 (CHARGES), 16 or 24 (COORDS, FORCES; default)"},
    {"driver-ranks", OPT_DRIVER, "PD", "driver ranks [0, PD), engine [PD, P)\n"
                                       "(--link mdi; default P/2, 1 <= PD <= P-1)"},
    {"from", OPT_FROM, "LAYOUT", "the driver's layout (default spatial)"},
    {"to", OPT_TO, "LAYOUT", "the engine's layout (default std)\n"
                             "layouts: std, std-ceil, block-irregular[:SEED],\n"
                             "block-reverse, cyclic, block-cyclic:B,\n"
                             "spatial[:PX,PY,PZ], random[:SEED]"},
    {"direction", 'd', "DIR", "'>' (driver to engine), '<' or both (default both)"},
    {"methods", OPT_METHODS, "LIST", "root, root-gatherv, two-step, direct, pack, sparse\n"
                                     "(comma list or all; default all)"},
    {"messages", OPT_MESSAGES, "K", "messages per plan: the plan is rebuilt after K\n"
                                    "(default 0: one plan for every message of a point)"},
    {"link", OPT_LINK, "LINK", "mdi (two codes) or intra (one code, two of its own\n"
                               "layouts; works on one rank) (default mdi)"},
    {NULL, 0, NULL, NULL}
};

static void redist_defaults(void *state)
{
    redist_state_t *st = state;
    options_t *o = &st->o;
    o->element_bytes = 24;
    o->driver_ranks = -1;
    o->from = "spatial";
    o->to = "std";
    o->directions[0] = BB_REDIST_SEND;
    o->directions[1] = BB_REDIST_RECEIVE;
    o->ndirections = 2;
    o->mode = BB_REDIST_MODE_MDI;
}

static void redist_parse(bb_run_t *run, void *state, int key, const char *value)
{
    static const char *const directions[] = { ">", "<", "both" };
    static const char *const links[] = { "mdi", "intra" };
    redist_state_t *st = state;
    options_t *o = &st->o;
    char err[256];
    switch (key) {
    case 'n': bb_run_parse_size_list(run, "elements", value, 0, INT32_MAX, &o->elements);
        break;
    case 'e':
        if (bb_cli_parse_size(value, 8, 24, &o->element_bytes, err, sizeof err) != BB_OK
            || o->element_bytes % 8 != 0)
            bb_run_usage(run, "--element-bytes: '%s' is not 8, 16 or 24", value);
        break;
    case OPT_DRIVER:
        o->driver_ranks = (int)bb_run_parse_size(run, "driver-ranks", value, 0, INT32_MAX);
        break;
    case OPT_FROM: o->from = value; break;
    case OPT_TO: o->to = value; break;
    case 'd': {
        unsigned d = bb_run_parse_choices(run, "direction", value, directions, 3);
        if (d != 1u && d != 2u && d != 4u)
            bb_run_usage(run, "--direction: give one of '>', '<' or both");
        o->directions[0] = d == 2u ? BB_REDIST_RECEIVE : BB_REDIST_SEND;
        o->directions[1] = BB_REDIST_RECEIVE;
        o->ndirections = d == 4u ? 2 : 1;
        break;
    }
    case OPT_METHODS: {
        const char *names[BB_REDIST_METHODS];
        for (int m = 0; m < BB_REDIST_METHODS; m++)
            names[m] = bb_redist_method_name((bb_redist_method_t)m);
        unsigned set = bb_run_parse_choices(run, "methods", value, names, BB_REDIST_METHODS);
        o->nmethods = 0;
        for (int m = 0; m < BB_REDIST_METHODS; m++)
            if (set & (1u << m))
                o->methods[o->nmethods++] = (bb_redist_method_t)m;
        break;
    }
    case OPT_MESSAGES: o->messages = bb_run_parse_size(run, "messages", value, 0, INT32_MAX);
        break;
    case OPT_LINK: {
        unsigned l = bb_run_parse_choices(run, "link", value, links, 2);
        if (l != 1u && l != 2u)
            bb_run_usage(run, "--link: give one of mdi or intra");
        o->mode = l == 1u ? BB_REDIST_MODE_MDI : BB_REDIST_MODE_INTRA;
        break;
    }
    }
}

static size_t redist_validate(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    options_t *o = &st->o;
    int ranks = bb_run_size(run);
    /* -m: bytes of the global array, N = bytes / element bytes. */
    bb_run_message_sizes(run, "elements", o->element_bytes, 10000 * o->element_bytes,
                         1000000 * o->element_bytes, &o->elements);
    if (o->elements.n == 0)
        bb_run_parse_size_list(run, "elements", "1e4,1e5,1e6", 0, INT32_MAX, &o->elements);
    if (o->nmethods == 0)
        for (int m = 0; m < BB_REDIST_METHODS; m++)
            o->methods[o->nmethods++] = (bb_redist_method_t)m;
    parse_layout(run, "--from", o->from, &o->from_layout);
    parse_layout(run, "--to", o->to, &o->to_layout);
    if (o->mode == BB_REDIST_MODE_MDI) {
        if (ranks < 2)
            bb_run_usage(run, "--link mdi needs a driver and an engine: run on at "
                         "least 2 ranks (mpiexec -n 2), or use --link intra");
        if (o->driver_ranks < 0)
            o->driver_ranks = ranks / 2;
        if (o->driver_ranks < 1 || o->driver_ranks > ranks - 1)
            bb_run_usage(run, "--driver-ranks: %d leaves %s without ranks: give 1 to "
                         "%d on %d ranks", o->driver_ranks,
                         o->driver_ranks < 1 ? "the driver" : "the engine", ranks - 1,
                         ranks);
        check_layout_fits(run, "--from", o->from, &o->from_layout, o->driver_ranks);
        check_layout_fits(run, "--to", o->to, &o->to_layout, ranks - o->driver_ranks);
    } else {
        if (o->driver_ranks >= 0)
            bb_run_usage(run, "--driver-ranks applies to --link mdi only");
        check_layout_fits(run, "--from", o->from, &o->from_layout, ranks);
        check_layout_fits(run, "--to", o->to, &o->to_layout, ranks);
    }
    /* root methods move N * components doubles in one MPI call */
    for (int i = 0; i < o->nmethods; i++)
        if (o->methods[i] == BB_REDIST_ROOT || o->methods[i] == BB_REDIST_ROOT_GATHERV)
            for (size_t j = 0; j < o->elements.n; j++)
                if (o->elements.values[j] * (o->element_bytes / 8) > INT32_MAX)
                    bb_run_usage(run, "--elements: %lld is too many for the root "
                                 "methods (one MPI call of N * %lld doubles)",
                                 (long long)o->elements.values[j],
                                 (long long)(o->element_bytes / 8));
    return o->elements.n * (size_t)o->ndirections;
}

static void redist_setup(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    run_ctx_t *ctx = &st->ctx;
    const options_t *o = &st->o;
    ctx->run = run;
    ctx->bench = bb_run_bench(run);
    ctx->o = o;
    bb_status_t s = bb_redist_link_create(bb_bench_world(ctx->bench), o->mode,
                                          o->mode == BB_REDIST_MODE_MDI ? o->driver_ranks : 0,
                                          &ctx->link);
    if (s != BB_OK)
        bb_run_fatal(run, "cannot create the link: %s", bb_status_string(s));
    ctx->comm = bb_redist_link_comm(ctx->link);
    if (bb_run_rank(run) == 0)
        table_header(ctx);
}

static void redist_label(const void *state, size_t i, char *buf, size_t len)
{
    const redist_state_t *st = state;
    const options_t *o = &st->o;
    snprintf(buf, len, "N = %lld, '%c'",
             (long long)o->elements.values[i / (size_t)o->ndirections],
             o->directions[i % (size_t)o->ndirections]);
}

static int redist_finish(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    if (bb_run_rank(run) == 0) {
        cJSON *summary = cJSON_CreateObject();
        cJSON_AddStringToObject(summary, "bound_note",
                                "bound = max(one-way ping-pong time of the largest bytes "
                                "into or out of any rank, memcpy time of the largest local "
                                "part), measured in this run; efficiency = bound / elapsed");
        bb_record_set(bb_bench_record(bb_run_bench(run)), "run", summary);
    }
    bb_map_free(st->ctx.dmap);
    bb_map_free(st->ctx.emap);
    st->ctx.dmap = st->ctx.emap = NULL;
    if (bb_redist_link_destroy(st->ctx.link) != BB_OK)
        bb_run_fatal(run, "cannot free the link");
    st->ctx.link = NULL;
    return BB_EXIT_OK;
}

static void redist_teardown(void *state)
{
    redist_state_t *st = state;
    bb_size_list_clear(&st->o.elements);
}

/* The seed's own defaults of the measurement options. */
static const bb_measure_settings_t default_settings = { .samples = 3, .budget_s = 0.05, .warmup = 1 };

static const bb_bench_desc_t redist_bench = {
    .program = "bbench-redist",
    .benchmark = "redist",
    .summary = "Measure MDI parallel communication between a driver code and an engine\n"
               "code whose data are laid out differently: today's rank-0 path against\n"
               "redistribution with maps (DESIGN 2.3).  Launch with mpiexec -n P.",
    .notes = "A call is one message; a barrier (untimed) precedes each message.  Setup\n"
             "(validation, map transfer, plan build) is timed apart, once per plan.\n"
             "Every message is checked outside the timing: value\n"
             "((g*3 + c)*4 + (k & 3)) in every slot of sentinel-filled buffers and a\n"
             "global checksum.  bound = max(one-way ping-pong of the largest per-rank\n"
             "volume, memcpy of the largest local part); efficiency = bound / elapsed.\n"
             "Times in the table are microseconds.  Exit 1 also for wrong data or an\n"
             "unexpected refusal.",
    .options = redist_options,
    .settings = &default_settings,
    .state_size = sizeof(redist_state_t),
    .defaults = redist_defaults,
    .parse = redist_parse,
    .validate = redist_validate,
    .setup = redist_setup,
    .label = redist_label,
    .point = redist_point,
    .finish = redist_finish,
    .teardown = redist_teardown,
};

int main(int argc, char **argv) { return bb_run_main(&redist_bench, argc, argv); }
