/* bbench-redist: MDI parallel communication between two data layouts.
 * Every method moves the same elements between the same maps; the methods
 * and the machine's lower bound (harness/bound.c) are measured interleaved,
 * sample by sample (bb_run_measure_set), so load drift shows in all alike;
 * each message is checked slot by slot outside the timing.  The protocol is
 * lib/redist-*.c (layouts, fixture, bound and the md workload's kernels:
 * harness/); the runner (harness/runner.c) owns options, measurement and
 * record; this file holds the message kernel, the plans around it, the
 * table and the descriptor. */
#include "config.h"
#include "runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LAYOUTS_MAX = 8 };

typedef struct options {
    bb_size_list_t elements;
    int64_t element_bytes;
    int driver_ranks;          /* -1: P/2 */
    const char *from[LAYOUTS_MAX], *to[LAYOUTS_MAX];
    bb_layout_t from_layout[LAYOUTS_MAX], to_layout[LAYOUTS_MAX];
    int nfrom, nto;
    int directions[2], ndirections;
    int direction_given;
    bb_redist_method_t methods[BB_REDIST_METHODS];
    int nmethods;
    int64_t messages;          /* messages per plan; 0: one plan for the point */
    bb_redist_mode_t mode;     /* --link */
    int full_sweep, ratios;
    int md;                    /* --workload md */
    int64_t remap_every;       /* --remap K:f; 0: no remap */
    double remap_fraction;
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

typedef struct run_ctx run_ctx_t;

typedef struct method_result {
    run_ctx_t *ctx;
    bb_redist_method_t method;
    bb_measure_result_t m;       /* the messages: first, samples, calls */
    double *setup[S_N];          /* [nsetup] */
    size_t nsetup, setup_cap;
    double first_setup[S_N];
    int64_t messages, wrong_messages, refused;
    bb_redist_traffic_t traffic;
    char choice[256];            /* bb_redist_plan_choice_reason */
    double median, setup_median;
    /* while measured: the plan, its buffers, the message number */
    bb_redist_plan_t *plan;
    bb_redist_buffers_t b;
    int64_t k, on_plan;
} method_result_t;

struct run_ctx {
    bb_run_t *run;
    bb_bench_t *bench;
    const options_t *o;
    bb_redist_link_t *link;
    MPI_Comm comm;               /* the link's: every rank of both codes */
    bb_map_t *dmap, *emap;       /* this rank's maps for the current point */
    int64_t n;
    int command;
    int from, to;                /* indices into the layout lists */
    bb_map_t *md_dmap1, *md_emap1; /* <ENERGY: element 0 on each code's rank 0 */
};

static void setup_push(run_ctx_t *ctx, method_result_t *mr, const bb_redist_setup_t *su)
{
    double local[S_N] = {su->total_s, su->validate_s, su->map_transfer_s, su->plan_build_s};
    double max[S_N];  /* the parts of the rank with the slowest total (or their means) */
    if (bb_stats_reduce_rank(ctx->comm, bb_run_settings(ctx->run)->rank_stat, local, S_N, max,
                             NULL) != MPI_SUCCESS)
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

/* One message: prepared and checked outside the timing. */
static void message(run_ctx_t *ctx, method_result_t *mr, double *t)
{
    int64_t eb = ctx->o->element_bytes, k = mr->k++;
    bb_redist_buffers_t *b = &mr->b;
    if (b->sm)
        bb_redist_fill(b->sm, eb, k, b->send);
    if (b->rm)
        bb_redist_fill_sentinel(bb_map_count(b->rm), eb, b->recv);
    bb_redist_contract_t c = {ctx->command, ctx->n, eb, ctx->n};
    bb_redist_metrics_t m;
    if (MPI_Barrier(ctx->comm) != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Barrier failed");
    double t0 = bb_time_now();
    bb_status_t st = bb_redist_plan_execute(mr->plan, &c, b->send, b->recv, &m);
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
    method_result_t *mr = arg;
    run_ctx_t *ctx = mr->ctx;
    (void)counts;
    if (ctx->o->messages > 0 && mr->on_plan >= ctx->o->messages) {
        bb_redist_setup_t su;
        bb_redist_buffers_free(&mr->b);
        bb_redist_plan_destroy(mr->plan);
        mr->plan = plan_build(ctx, mr->method, &su);
        setup_push(ctx, mr, &su);
        bb_redist_buffers_get(ctx->bench, mr->plan, ctx->o->element_bytes, &mr->b);
        mr->on_plan = 0;
    }
    message(ctx, mr, t);
    mr->on_plan++;
    return BB_OK;
}

/* A method's setup: samples plans built and freed, then the one that is
 * measured; its traffic and (auto) its choice. */
static void method_prepare(run_ctx_t *ctx, bb_redist_method_t method, method_result_t *mr)
{
    int64_t samples = bb_run_settings(ctx->run)->samples;
    memset(mr, 0, sizeof *mr);
    mr->ctx = ctx;
    mr->method = method;
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
    const char *why = bb_redist_plan_choice_reason(plan);
    snprintf(mr->choice, sizeof mr->choice, "%s", why ? why : "");
    mr->plan = plan;
    bb_redist_buffers_get(ctx->bench, plan, ctx->o->element_bytes, &mr->b);
    mr->setup_median = bb_stats_median(mr->setup[S_TOTAL], mr->nsetup);
}

/* After the measurement: agreed failures, the median, the plan freed. */
static void method_conclude(run_ctx_t *ctx, method_result_t *mr)
{
    int64_t local[2] = {mr->wrong_messages, mr->refused}, agreed[2];
    if (bb_agree_max(ctx->comm, local, 2, agreed) != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Allreduce failed");
    mr->wrong_messages = agreed[0];
    mr->refused = agreed[1];
    /* every message the engine made was checked, unless it was refused */
    mr->messages = mr->m.calls - mr->refused;
    mr->median = bb_stats_median(bb_measure_part(&mr->m, T_ELAPSED), (size_t)mr->m.samples);
    bb_redist_buffers_free(&mr->b);
    bb_redist_plan_destroy(mr->plan);
    mr->plan = NULL;
}

static void method_result_free(method_result_t *mr)
{
    bb_measure_result_clear(&mr->m);
    for (int i = 0; i < S_N; i++)
        free(mr->setup[i]);
    memset(mr, 0, sizeof *mr);
}

/* Messages after which setup + K messages cost less than root's: 0 when
 * the method is root or never pays (why says which). */
static int64_t break_even(const method_result_t *mr, const method_result_t *root,
                          const char **why)
{
    *why = NULL;
    if (root == NULL) {
        *why = "root was not measured (--methods)";
        return 0;
    }
    if (mr == root) {
        *why = "root is the reference";
        return 0;
    }
    if (!(mr->median < root->median)) {
        *why = "never pays: its message is not faster than root's";
        return 0;
    }
    double k = (mr->setup_median - root->setup_median) / (root->median - mr->median);
    return k < 0 ? 1 : (int64_t)floor(k) + 1;
}

static cJSON *parameters_new(const run_ctx_t *ctx, const method_result_t *mr)
{
    const options_t *o = ctx->o;
    char from[64], to[64], dir[2] = {(char)ctx->command, '\0'};
    int ranks = bb_bench_size(ctx->bench);
    bb_layout_format(&o->from_layout[ctx->from], from, sizeof from);
    bb_layout_format(&o->to_layout[ctx->to], to, sizeof to);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "elements", (double)ctx->n);
    cJSON_AddNumberToObject(p, "element_bytes", (double)o->element_bytes);
    cJSON_AddStringToObject(p, "direction", dir);
    cJSON_AddStringToObject(p, "method", bb_redist_method_name(mr->method));
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

static cJSON *run_elements(double v)
{
    return v >= 0 ? bb_quantity_value(v, "count", "call/all-ranks")
                  : bb_quantity_null("count", "call/all-ranks",
                                     "no slot runs on this side: the root methods move "
                                     "whole arrays and pick elements one by one, or N = 0");
}

/* Efficiency only where the bound held: above 1 the bound is wrong. */
static int bound_failed(const method_result_t *mr, const bb_redist_bound_t *bound)
{
    return mr->median > 0 && bound->bound_s > mr->median;
}

static void record_method(run_ctx_t *ctx, const method_result_t *mr, const method_result_t *root,
                          const bb_redist_traffic_t *direct, const bb_redist_bound_t *bound,
                          const bb_measure_result_t *probe)
{
    const char *scope = bb_measure_scope(&mr->m);
    const char *plan_scope = bb_run_settings(ctx->run)->rank_stat == BB_RANK_STAT_MEAN
                             ? "plan/mean-rank" : "plan/max-rank";
    cJSON *q = cJSON_CreateObject(), *first = cJSON_CreateObject();
    for (int i = 0; i < T_N; i++) {
        bb_quantities_add(q, t_names[i],
                          bb_quantity_timing(bb_measure_part(&mr->m, i), (size_t)mr->m.samples,
                                             scope, i == T_ELAPSED ? elapsed_includes : NULL));
        bb_quantities_add(first, t_names[i],
                          bb_quantity_includes(bb_quantity_value(mr->m.first[i], "s", scope),
                                               i == T_ELAPSED ? elapsed_includes : NULL));
    }
    bb_quantities_add(q, "window.calls_excluded", bb_run_excluded_quantity(ctx->run, &mr->m));
    for (int i = 0; i < S_N; i++) {
        bb_quantities_add(q, s_names[i],
                          bb_quantity_timing(mr->setup[i], mr->nsetup, plan_scope,
                                             i == S_TOTAL ? setup_includes : NULL));
        bb_quantities_add(first, s_names[i],
                          bb_quantity_includes(bb_quantity_value(mr->first_setup[i], "s",
                                                                 plan_scope),
                                               i == S_TOTAL ? setup_includes : NULL));
    }
    if (ctx->o->messages > 0)
        bb_quantities_add(q, "elapsed.amortized",
                          bb_quantity_value(mr->median + mr->setup_median
                                            / (double)ctx->o->messages, "s", scope));
    else
        bb_quantities_add(q, "elapsed.amortized",
                          bb_quantity_null("s", scope, "one plan serves every message "
                                           "(--messages 0): see amortize.break_even_messages"));
    const char *why;
    int64_t k = break_even(mr, root, &why);
    bb_quantities_add(q, "amortize.break_even_messages",
                      why ? bb_quantity_null("count", "plan", why)
                          : bb_quantity_value((double)k, "count", "plan"));
    /* A duration is never negative: a method slower than root saves
     * nothing (ratio.root says by how much it is slower). */
    bb_quantities_add(q, "amortize.saving_per_message",
                      root && root != mr && root->median >= mr->median
                          ? bb_quantity_value(root->median - mr->median, "s", scope)
                          : bb_quantity_null("s", scope,
                                             !root ? "root was not measured"
                                             : root == mr ? "root is the reference"
                                             : "slower than root: no saving (see ratio.root)"));
    bb_quantities_add(q, "ratio.root",
                      root && mr->median > 0
                          ? bb_quantity_value(root->median / mr->median, "ratio", scope)
                          : bb_quantity_null("ratio", scope, root ? "no time measured"
                                                                  : "root was not measured"));
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
    bb_quantities_add(q, "redist.send_mean_run_elements",
                      run_elements(t->send_mean_run_elements));
    bb_quantities_add(q, "redist.recv_mean_run_elements",
                      run_elements(t->recv_mean_run_elements));
    bb_quantities_add(q, "redist.send_runs_max",
                      bb_quantity_value((double)t->send_runs_max, "count", scope));
    bb_quantities_add(q, "redist.recv_runs_max",
                      bb_quantity_value((double)t->recv_runs_max, "count", scope));
    bb_quantities_add(q, "redist.steps", bb_quantity_value((double)t->steps, "count", "call"));
    bb_quantities_add(q, "memory.plan_bytes_max",
                      bb_quantity_value((double)t->plan_bytes_max, "byte", "plan/max-rank"));
    bb_quantities_add(q, "memory.message_bytes_max",
                      bb_quantity_value((double)t->message_bytes_max, "byte", scope));
    /* How many messages were checked follows the reps (and so the budget and
     * the machine's speed): a measurement, never a contract. */
    cJSON *checked = bb_quantity_value((double)mr->messages, "count", "run/rank");
    cJSON_AddFalseToObject(checked, "deterministic");
    bb_quantities_add(q, "redist.messages_checked", checked);
    bb_quantities_add(q, "bound.agree", bb_quantity_value(bound->agree_s, "s", "run/link"));
    bb_quantities_add(q, "bound.latency",
                      bound->p2p_ranks[0] != bound->p2p_ranks[1]
                          ? bb_quantity_value(bound->latency_s, "s", "run/pair")
                          : bb_quantity_null("s", "run/pair", "one rank: no message"));
    bb_quantities_add(q, "bound.p2p",
                      bound->p2p_bytes > 0 && bound->p2p_ranks[0] != bound->p2p_ranks[1]
                          ? bb_quantity_value(bound->p2p_s, "s", "run/pair")
                          : bb_quantity_null("s", "run/pair", "no bytes change rank"));
    bb_quantities_add(q, "bound.p2p_bytes",
                      bb_quantity_value((double)bound->p2p_bytes, "byte", scope));
    bb_quantities_add(q, "bound.memcpy",
                      bound->memcpy_bytes > 0
                          ? bb_quantity_value(bound->memcpy_s, "s", "run/rank")
                          : bb_quantity_null("s", "run/rank", "nothing to copy locally or "
                                             "to pack"));
    bb_quantities_add(q, "bound.memcpy_bytes",
                      bb_quantity_value((double)bound->memcpy_bytes, "byte", scope));
    bb_quantities_add(q, "bound.host",
                      bound->ranks_per_host_max > 1 && bound->host_bytes > 0
                          ? bb_quantity_value(bound->host_s, "s", "run/host")
                          : bb_quantity_null("s", "run/host",
                                             bound->ranks_per_host_max > 1
                                                 ? "no bytes change owner"
                                                 : "one link rank per host: the network "
                                                   "ping-pong is the limit"));
    bb_quantities_add(q, "bound.probe",
                      bb_quantity_timing(bb_measure_part(probe, BB_PROBE_TOTAL),
                                         (size_t)probe->samples, scope, NULL));
    bb_quantities_add(q, "bound", bb_quantity_value(bound->bound_s, "s", scope));
    bb_quantities_add(q, "efficiency",
                      !(mr->median > 0 && bound->bound_s > 0)
                          ? bb_quantity_null("ratio", scope, "nothing to move: the bound "
                                             "is zero")
                      : bound_failed(mr, bound)
                          ? bb_quantity_null("ratio", scope, "bound failure: the bound is "
                                             "above the measured median (a bound that "
                                             "does not hold, not a result)")
                          : bb_quantity_value(bound->bound_s / mr->median, "ratio", scope));
    bb_quantities_add(q, "memory.rss_peak",
                      bb_quantity_value((double)bb_rss_peak_bytes(), "byte", "run/rank"));
    bb_quantities_add_unobservable(q);
    bb_quantities_add(q, "redist.wrong_messages",
                      bb_quantity_value((double)mr->wrong_messages, "count", "run/all-ranks"));
    /* no refusal is asked for: one is a measured failure (exit 1) */
    bb_refusal_t none = {BB_STAGE_NONE, -1, 0};
    /* auto's choice follows a calibrated threshold, a measurement: what its
     * plan holds and moves is then one too.  The break-even count follows
     * times everywhere. */
    cJSON *item;
    cJSON_ArrayForEach(item, q) {
        if (mr->method == BB_REDIST_AUTO ||
            strcmp(item->string, "amortize.break_even_messages") == 0) {
            cJSON_DeleteItemFromObjectCaseSensitive(item, "deterministic");
            cJSON_AddBoolToObject(item, "deterministic", 0);
        }
    }
    bb_record_t *rec = bb_bench_record(ctx->bench);
    bb_record_add_point(rec, parameters_new(ctx, mr),
                        mr->refused > 0 ? "refused" : "ok", mr->refused > 0 ? &none : NULL,
                        first, q);
    /* The method that ran, beside (not among) the parameters that name the
     * point: auto's choice may differ between machines. */
    cJSON *points = cJSON_GetObjectItemCaseSensitive(bb_record_json(rec), "points");
    cJSON *point = cJSON_GetArrayItem(points, cJSON_GetArraySize(points) - 1);
    if (point != NULL && bb_bench_rank(ctx->bench) == 0) {
        cJSON *choice = cJSON_AddObjectToObject(point, "choice");
        cJSON_AddStringToObject(choice, "method", bb_redist_method_name(mr->traffic.chosen));
        if (mr->method == BB_REDIST_AUTO)
            cJSON_AddStringToObject(choice, "reason", mr->choice);
        else
            cJSON_AddNullToObject(choice, "reason");
    }
}

/* ---- the table -------------------------------------------------------------- */

static void table_header(run_ctx_t *ctx)
{
    const options_t *o = ctx->o;
    bb_table_t *t = bb_run_table(ctx->run);
    int ranks = bb_bench_size(ctx->bench), full = bb_run_full(ctx->run);
    if (o->mode == BB_REDIST_MODE_MDI)
        bb_table_note(t, "mdi: driver ranks [0, %d) ('from' layout), engine ranks [%d, %d) "
                      "('to' layout), %lld-byte elements", o->driver_ranks, o->driver_ranks,
                      ranks, (long long)o->element_bytes);
    else
        bb_table_note(t, "intra: %d ranks, layouts 'from' ('>' from) and 'to' ('<' from), "
                      "%lld-byte elements", ranks, (long long)o->element_bytes);
    bb_table_note(t, "methods and the bound are measured interleaved, sample by sample, with "
                  "one reps figure (the fewest any fits to the budget); %lld samples, each "
                  "the per-message mean of a block, %s",
                  (long long)bb_run_settings(ctx->run)->samples,
                  bb_run_rank_stat_words(ctx->run));
    bb_table_column(t, "N", NULL, "global elements", 8);
    bb_table_column(t, "dir", NULL, "'>' driver to engine, '<' engine to driver", 3);
    bb_table_column(t, "from", NULL, "the driver's layout", 16);
    bb_table_column(t, "to", NULL, "the engine's layout", 8);
    bb_table_column(t, "method", NULL, "bound: the machine's lower bound "
                    "(agree + latency + max(latency, p2p, memory, host), each its best sample)",
                    12);
    bb_table_time_columns(t, "msg", "one message: recv_dist flag, admission and payload",
                          full);
    bb_table_column(t, "payload", "us", "median of the payload phase alone (medians of "
                    "parts do not add up to msg_us)", 0);
    char setup_legend[128];
    snprintf(setup_legend, sizeof setup_legend, "median plan setup (validation, map "
             "transfer, build), %s", bb_run_rank_stat_words(ctx->run));
    bb_table_column(t, "setup", "us", setup_legend, 0);
    bb_table_column(t, "root_x", NULL, "root's msg_us / this msg_us (> 1: faster than root)",
                    0);
    bb_table_column(t, "breakeven", NULL, "messages K from which setup + K messages cost less "
                    "than root's ('-': root itself, or its message is not faster: never pays)",
                    0);
    bb_table_column(t, "srun_el", NULL, "send side: mean elements per contiguous run "
                    "(all ranks)", 0);
    bb_table_column(t, "rrun_el", NULL, "receive side: mean elements per contiguous run", 0);
    bb_table_column(t, "sruns", NULL, "send side: contiguous runs on the busiest rank", 0);
    bb_table_column(t, "rruns", NULL, "receive side: contiguous runs on the busiest rank", 0);
    bb_table_column(t, "plan", "B", "bytes the plan holds, max over ranks (library-counted; "
                    "MPI's datatype storage not counted)", 0);
    bb_table_column(t, "msgmem", "B", "temporary bytes one message allocates, max over ranks",
                    0);
    bb_table_column(t, "eff", NULL, "bound / msg_us ('-' where the bound failed)", 0);
    bb_table_column(t, "status", NULL, "ok; fastest (this point's fastest method); "
                    "bound-failure (bound above msg_us: the bound is wrong, not a result); "
                    "wrong-data; refused", 0);
}

static void table_point_cells(run_ctx_t *ctx)
{
    const options_t *o = ctx->o;
    bb_table_t *t = bb_run_table(ctx->run);
    char from[64], to[64], dir[2] = {(char)ctx->command, '\0'};
    bb_layout_format(&o->from_layout[ctx->from], from, sizeof from);
    bb_layout_format(&o->to_layout[ctx->to], to, sizeof to);
    bb_table_integer(t, ctx->n);
    bb_table_text(t, dir);
    bb_table_text(t, from);
    bb_table_text(t, to);
}

static void table_runs(bb_table_t *t, double mean)
{
    if (mean >= 0)
        bb_table_number(t, mean, 1);
    else
        bb_table_missing(t);
}

static void table_point(run_ctx_t *ctx, const method_result_t *mrs, int nm,
                        const method_result_t *root, int best,
                        const bb_redist_bound_t *bound)
{
    bb_table_t *t = bb_run_table(ctx->run);
    int full = bb_run_full(ctx->run);
    for (int i = 0; i < nm; i++) {
        const method_result_t *mr = &mrs[i];
        size_t n = (size_t)mr->m.samples;
        const bb_redist_traffic_t *tr = &mr->traffic;
        int failed = mr->wrong_messages > 0 || mr->refused > 0;
        table_point_cells(ctx);
        bb_table_text(t, bb_redist_method_name(mr->method));
        bb_table_time_cells(t, bb_measure_part(&mr->m, T_ELAPSED), n, mr->m.reps, full);
        bb_table_number(t, bb_stats_median(bb_measure_part(&mr->m, T_PAYLOAD), n) * 1e6, 1);
        bb_table_number(t, mr->setup_median * 1e6, 1);
        if (root && mr->median > 0 && !failed)
            bb_table_number(t, root->median / mr->median, 2);
        else
            bb_table_missing(t);
        const char *why;
        int64_t k = break_even(mr, root, &why);
        if (why || failed)
            bb_table_missing(t);
        else
            bb_table_integer(t, k);
        table_runs(t, tr->send_mean_run_elements);
        table_runs(t, tr->recv_mean_run_elements);
        if (tr->send_mean_run_elements >= 0)
            bb_table_integer(t, tr->send_runs_max);
        else
            bb_table_missing(t);
        if (tr->recv_mean_run_elements >= 0)
            bb_table_integer(t, tr->recv_runs_max);
        else
            bb_table_missing(t);
        bb_table_integer(t, tr->plan_bytes_max);
        bb_table_integer(t, tr->message_bytes_max);
        if (!failed && !bound_failed(mr, bound) && mr->median > 0 && bound->bound_s > 0)
            bb_table_number(t, bound->bound_s / mr->median, 3);
        else
            bb_table_missing(t);
        bb_table_text(t, mr->wrong_messages ? "wrong-data"
                         : mr->refused ? "refused"
                         : bound_failed(mr, bound) ? "bound-failure"
                         : i == best ? "fastest" : "ok");
        bb_table_row_end(t);
    }
    /* the bound's row: its formula's value (its parts are in the note) */
    table_point_cells(ctx);
    bb_table_text(t, "bound");
    bb_table_number(t, bound->bound_s * 1e6, 1);
    for (int c = 0; c < (full ? 4 : 2); c++)
        bb_table_missing(t);
    for (int c = 0; c < 11; c++)
        bb_table_missing(t);
    bb_table_text(t, "ok");
    bb_table_row_end(t);
}

/* The reason of the point's fastest method, from the per-side runs and the
 * datatype against the hand pack (notes, after the rows). */
static void note_point(run_ctx_t *ctx, const method_result_t *mrs, int nm, int best,
                       const method_result_t *root, const bb_redist_bound_t *bound)
{
    bb_table_t *t = bb_run_table(ctx->run);
    int64_t eb = ctx->o->element_bytes;
    const method_result_t *pack = NULL, *direct = NULL, *pmpi = NULL, *aut = NULL;
    for (int i = 0; i < nm; i++) {
        if (mrs[i].method == BB_REDIST_PACK) pack = &mrs[i];
        if (mrs[i].method == BB_REDIST_DIRECT) direct = &mrs[i];
        if (mrs[i].method == BB_REDIST_PACK_MPI) pmpi = &mrs[i];
        if (mrs[i].method == BB_REDIST_AUTO) aut = &mrs[i];
    }
    char dt[160] = "";
    if (pack && pack->median > 0 && (direct || pmpi)) {
        int len = snprintf(dt, sizeof dt, "; datatype vs hand pack:");
        if (direct)
            len += snprintf(dt + len, sizeof dt - (size_t)len, " direct/pack %.2f",
                            direct->median / pack->median);
        if (pmpi)
            snprintf(dt + len, sizeof dt - (size_t)len, " pack-mpi/pack %.2f",
                     pmpi->median / pack->median);
    }
    if (best >= 0) {
        const method_result_t *b = &mrs[best];
        const bb_redist_traffic_t *tr = direct ? &direct->traffic : &b->traffic;
        bb_table_note(t, "N=%lld '%c' %s->%s: fastest %s (%.1f us%s%.2f); fragmentation "
                      "(direct plan): send runs %.1f el = %.0f B mean, %lld on the busiest "
                      "rank; recv runs %.1f el = %.0f B mean, %lld%s",
                      (long long)ctx->n, ctx->command, ctx->o->from[ctx->from],
                      ctx->o->to[ctx->to], bb_redist_method_name(b->method), b->median * 1e6,
                      root ? ", root_x " : "", root ? root->median / b->median : 0.0,
                      tr->send_mean_run_elements, tr->send_mean_run_elements * (double)eb,
                      (long long)tr->send_runs_max, tr->recv_mean_run_elements,
                      tr->recv_mean_run_elements * (double)eb, (long long)tr->recv_runs_max,
                      dt);
    }
    if (aut)
        bb_table_note(t, "  auto ran %s: %s%s", bb_redist_method_name(aut->traffic.chosen),
                      aut->choice, best >= 0 && mrs[best].median > 0
                          ? (aut->median <= 1.1 * mrs[best].median ? " (within 10% of the "
                             "fastest)" : " (more than 10% slower than the fastest)") : "");
    char host[96] = "not measured: one link rank per host", mem[96] =
        "none: no local part and no fragmented side", p2p[96] = "none: nothing changes rank";
    if (bound->ranks_per_host_max > 1 && bound->host_bytes > 0)
        snprintf(host, sizeof host, "%.1f us for %lld B over %d ranks/host", bound->host_s * 1e6,
                 (long long)bound->host_bytes, bound->ranks_per_host_max);
    if (bound->memcpy_bytes > 0)
        snprintf(mem, sizeof mem, "%.1f us for %lld B", bound->memcpy_s * 1e6,
                 (long long)bound->memcpy_bytes);
    if (bound->p2p_bytes > 0 && bound->p2p_ranks[0] != bound->p2p_ranks[1])
        snprintf(p2p, sizeof p2p, "%.1f us for %lld B", bound->p2p_s * 1e6,
                 (long long)bound->p2p_bytes);
    bb_table_note(t, "  bound %.1f us = agree %.1f + flag latency %.1f + max(latency %.1f, "
                  "p2p %s, memory %s, host %s)", bound->bound_s * 1e6, bound->agree_s * 1e6,
                  bound->latency_s * 1e6, bound->latency_s * 1e6, p2p, mem, host);
    for (int i = 0; i < nm; i++)
        if (bound_failed(&mrs[i], bound))
            bb_table_note(t, "  BOUND FAILURE: %s's median %.1f us is below the bound %.1f us: "
                          "the bound does not hold here (efficiency not reported)",
                          bb_redist_method_name(mrs[i].method), mrs[i].median * 1e6,
                          bound->bound_s * 1e6);
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

/* ---- --workload md: one MD step, three commands on one map pair ----------- */

/* A variant of the md point with what the engine measured of it. */
typedef struct md_row {
    bb_md_variant_t v;
    bb_measure_result_t m;
    double median;
} md_row_t;

static const char *md_remap_name(const run_ctx_t *ctx, const bb_md_variant_t *v)
{
    if (v->replicated)
        return "n/a";
    return ctx->o->remap_every == 0 ? "none" : v->rebuild ? "rebuild" : "update";
}

static void md_table_header(run_ctx_t *ctx)
{
    bb_table_t *t = bb_run_table(ctx->run);
    const options_t *o = ctx->o;
    bb_table_note(t, "md: one map pair shared by >COORDS (3 doubles), <FORCES (3 doubles) and "
                  "<ENERGY (1 double, root only); time per step; methods interleaved");
    if (o->remap_every > 0)
        bb_table_note(t, "remap every %lld steps, a fraction %g of the engine's elements "
                      "changing owner: update = set_engine_map + update_maps (MDI_Set_Map, "
                      "MDI_Update_Maps), rebuild = the plans created again",
                      (long long)o->remap_every, o->remap_fraction);
    bb_table_column(t, "N", NULL, "global elements", 8);
    bb_table_column(t, "from", NULL, "the driver's layout", 16);
    bb_table_column(t, "to", NULL, "the engine's layout", 8);
    bb_table_column(t, "method", NULL, NULL, 12);
    bb_table_column(t, "remap", NULL, "none, update (map update) or rebuild (new plans)", 7);
    bb_table_time_columns(t, "step", "one step: >COORDS, <FORCES, <ENERGY and any remap",
                          bb_run_full(ctx->run));
    bb_table_column(t, "coords", "us", "median of >COORDS alone (medians do not add)", 0);
    bb_table_column(t, "forces", "us", "median of <FORCES alone", 0);
    bb_table_column(t, "energy", "us", "median of <ENERGY alone", 0);
    bb_table_column(t, "remap", "us", "median remap time per step (a remap every K steps, "
                    "so about its cost / K)", 0);
    bb_table_column(t, "setup", "us", "the three plans' setup, rank maximum", 0);
    if (o->mode == BB_REDIST_MODE_MDI)
        bb_table_note(t, "replicated: LAMMPS fix mdi/qm's baseline, the engine holding all N "
                      "on every rank (coordinates MPI_Allreduce over the driver, one message, "
                      "MPI_Bcast; forces MPI_Reduce over the engine, one message, MPI_Bcast)");
    bb_table_column(t, "root_x", NULL, "root's (same remap) step_us / this step_us", 0);
    bb_table_column(t, "status", NULL, "ok; fastest; wrong-data; refused", 0);
}

static void md_record(run_ctx_t *ctx, const md_row_t *row, const md_row_t *root)
{
    const bb_md_variant_t *v = &row->v;
    const char *scope = "step/max-rank";
    char from[64], to[64];
    bb_layout_format(&ctx->o->from_layout[ctx->from], from, sizeof from);
    bb_layout_format(&ctx->o->to_layout[ctx->to], to, sizeof to);
    cJSON *p = cJSON_CreateObject(), *q = cJSON_CreateObject(), *first = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "workload", "md");
    cJSON_AddNumberToObject(p, "elements", (double)ctx->n);
    cJSON_AddStringToObject(p, "method", v->replicated ? "replicated"
                                                       : bb_redist_method_name(v->method));
    cJSON_AddStringToObject(p, "remap", md_remap_name(ctx, v));
    cJSON_AddNumberToObject(p, "remap_every", (double)ctx->o->remap_every);
    cJSON_AddNumberToObject(p, "remap_fraction", ctx->o->remap_fraction);
    cJSON_AddStringToObject(p, "from", from);
    cJSON_AddStringToObject(p, "to", to);
    for (int i = 0; i < BB_MD_PARTS; i++) {
        bb_quantities_add(q, bb_md_part_name(i),
                          bb_quantity_timing(bb_measure_part(&row->m, i),
                                             (size_t)row->m.samples, scope, NULL));
        bb_quantities_add(first, bb_md_part_name(i),
                          bb_quantity_value(row->m.first[i], "s", scope));
    }
    bb_quantities_add(q, "setup.total",
                      v->replicated ? bb_quantity_null("s", "plan/max-rank", "replicated: no "
                                                       "plan, every rank holds all N")
                                    : bb_quantity_value(v->setup_s, "s", "plan/max-rank"));
    bb_quantities_add(q, "ratio.root",
                      root && row->median > 0
                          ? bb_quantity_value(root->median / row->median, "ratio", scope)
                          : bb_quantity_null("ratio", scope, "root was not measured"));
    cJSON *steps = bb_quantity_value((double)v->step, "count", "run/rank");
    cJSON_AddFalseToObject(steps, "deterministic");
    bb_quantities_add(q, "redist.steps_checked", steps);
    cJSON *remaps = bb_quantity_value((double)v->remaps, "count", "run/rank");
    cJSON_AddFalseToObject(remaps, "deterministic");
    bb_quantities_add(q, "redist.remaps", remaps);
    bb_quantities_add(q, "redist.wrong_messages",
                      bb_quantity_value((double)v->wrong, "count", "run/all-ranks"));
    bb_quantities_add_unobservable(q);
    bb_refusal_t none = {BB_STAGE_NONE, -1, 0};
    bb_record_add_point(bb_bench_record(ctx->bench), p, v->refused > 0 ? "refused" : "ok",
                        v->refused > 0 ? &none : NULL, first, q);
}

static int md_point(bb_run_t *run, run_ctx_t *ctx)
{
    const options_t *o = ctx->o;
    int nv = 0, modes = o->remap_every > 0 ? 2 : 1, code = BB_EXIT_OK;
    int cap = o->nmethods * modes + 1;
    const bb_md_point_t pt = {
        .bench = ctx->bench, .link = ctx->link, .comm = ctx->comm, .n = ctx->n,
        .dmap = ctx->dmap, .emap = ctx->emap, .dmap1 = ctx->md_dmap1, .emap1 = ctx->md_emap1,
        .to = &o->to_layout[ctx->to], .remap_every = o->remap_every,
        .remap_fraction = o->remap_fraction,
    };
    md_row_t *rows = calloc((size_t)cap, sizeof *rows);
    bb_measure_variant_t *mv = calloc((size_t)cap, sizeof *mv);
    bb_measure_result_t *res = calloc((size_t)cap, sizeof *res);
    if (rows == NULL || mv == NULL || res == NULL)
        bb_run_fatal(run, "out of memory");
    for (int m = 0; m < o->nmethods; m++)
        for (int r = 0; r < modes; r++) {
            bb_md_variant_init(&pt, &rows[nv].v, o->methods[m], r);
            mv[nv] = (bb_measure_variant_t){ .nparts = BB_MD_PARTS, .call = bb_md_step_call,
                                             .arg = &rows[nv].v };
            nv++;
        }
    /* the replicated baseline needs two codes */
    if (o->mode == BB_REDIST_MODE_MDI) {
        bb_md_replicated_init(&pt, &rows[nv].v);
        mv[nv] = (bb_measure_variant_t){ .nparts = BB_MD_PARTS, .call = bb_md_replicated_call,
                                         .arg = &rows[nv].v };
        nv++;
    }
    bb_run_measure_set(run, "measuring the md step", mv, nv, BB_SHARE_MIN, res);
    int best = -1;
    for (int i = 0; i < nv; i++) {
        md_row_t *row = &rows[i];
        bb_md_variant_t *v = &row->v;
        row->m = res[i];
        int64_t local[2] = {v->wrong, v->refused}, agreed[2];
        if (bb_agree_max(ctx->comm, local, 2, agreed) != MPI_SUCCESS)
            bb_run_fatal(run, "MPI_Allreduce failed");
        v->wrong = agreed[0];
        v->refused = agreed[1];
        row->median = bb_stats_median(bb_measure_part(&row->m, BB_MD_STEP),
                                      (size_t)row->m.samples);
        if (v->wrong == 0 && v->refused == 0 && (best < 0 || row->median < rows[best].median))
            best = i;
    }
    if (bb_run_rank(run) == 0) {
        bb_table_t *t = bb_run_table(run);
        for (int i = 0; i < nv; i++) {
            const md_row_t *row = &rows[i], *root = NULL;
            const bb_md_variant_t *v = &row->v;
            for (int j = 0; j < nv; j++)
                if (rows[j].v.method == BB_REDIST_ROOT && !rows[j].v.replicated
                    && rows[j].v.rebuild == v->rebuild)
                    root = &rows[j];
            size_t n = (size_t)row->m.samples;
            char from[64], to[64];
            bb_layout_format(&o->from_layout[ctx->from], from, sizeof from);
            bb_layout_format(&o->to_layout[ctx->to], to, sizeof to);
            bb_table_integer(t, ctx->n);
            bb_table_text(t, from);
            bb_table_text(t, to);
            bb_table_text(t, v->replicated ? "replicated" : bb_redist_method_name(v->method));
            bb_table_text(t, md_remap_name(ctx, v));
            bb_table_time_cells(t, bb_measure_part(&row->m, BB_MD_STEP), n, row->m.reps,
                                bb_run_full(run));
            for (int p = BB_MD_COORDS; p <= BB_MD_ENERGY; p++)
                bb_table_number(t, bb_stats_median(bb_measure_part(&row->m, p), n) * 1e6, 1);
            if (o->remap_every > 0 && !v->replicated)
                bb_table_number(t, bb_stats_median(bb_measure_part(&row->m, BB_MD_REMAP), n)
                                       * 1e6, 1);
            else
                bb_table_missing(t);
            if (v->replicated)
                bb_table_missing(t);  /* no plan: nothing to set up */
            else
                bb_table_number(t, v->setup_s * 1e6, 1);
            if (root && row->median > 0 && !v->wrong && !v->refused)
                bb_table_number(t, root->median / row->median, 2);
            else
                bb_table_missing(t);
            bb_table_text(t, v->wrong ? "wrong-data" : v->refused ? "refused"
                             : i == best ? "fastest" : "ok");
            bb_table_row_end(t);
            md_record(ctx, row, root);
        }
    }
    for (int i = 0; i < nv; i++) {
        bb_md_variant_t *v = &rows[i].v;
        if (v->wrong > 0 || v->refused > 0) {
            bb_run_note(run, "error: md %s (%s) N=%lld: %lld wrong messages, %lld refused",
                        v->replicated ? "replicated" : bb_redist_method_name(v->method),
                        md_remap_name(ctx, v), (long long)ctx->n, (long long)v->wrong,
                        (long long)v->refused);
            code = BB_EXIT_FAILURE;
        }
        bb_md_variant_free(v);
        bb_measure_result_clear(&rows[i].m);
    }
    free(rows);
    free(mv);
    free(res);
    return code;
}

/* ---- one point: layouts, an N and a direction -------------------------------- */

typedef struct redist_state {
    options_t o;
    run_ctx_t ctx;
    method_result_t mrs[BB_REDIST_METHODS];
    char **ratios;               /* one summary line per point (rank 0) */
    size_t nratios;
} redist_state_t;

static void ratio_line(redist_state_t *st, const method_result_t *root, int nm)
{
    run_ctx_t *ctx = &st->ctx;
    char line[512];
    int len = snprintf(line, sizeof line, "P=%d %s->%s %lldB N=%lld '%c':",
                       bb_bench_size(ctx->bench), st->o.from[ctx->from], st->o.to[ctx->to],
                       (long long)st->o.element_bytes, (long long)ctx->n, ctx->command);
    for (int i = 0; i < nm && len < (int)sizeof line; i++) {
        const method_result_t *mr = &st->mrs[i];
        if (mr->method == BB_REDIST_ROOT)
            continue;
        if (root && mr->median > 0 && !mr->wrong_messages && !mr->refused)
            len += snprintf(line + len, sizeof line - (size_t)len, " %s %.2f",
                            bb_redist_method_name(mr->method), root->median / mr->median);
        else
            len += snprintf(line + len, sizeof line - (size_t)len, " %s -",
                            bb_redist_method_name(mr->method));
    }
    char **grown = realloc(st->ratios, (st->nratios + 1) * sizeof *grown);
    if (grown == NULL)
        return;
    st->ratios = grown;
    st->ratios[st->nratios] = strdup(line);
    if (st->ratios[st->nratios] != NULL)
        st->nratios++;
}

static int redist_point(bb_run_t *run, void *state, size_t i)
{
    redist_state_t *st = state;
    const options_t *o = &st->o;
    run_ctx_t *ctx = &st->ctx;
    int code = BB_EXIT_OK, nm = o->nmethods;
    size_t nd = (size_t)o->ndirections, nn = o->elements.n;
    /* the maps of one N and layout pair serve each of its directions */
    if (i % nd == 0) {
        size_t pair = i / (nd * nn);
        bb_map_free(ctx->dmap);
        bb_map_free(ctx->emap);
        ctx->n = o->elements.values[(i / nd) % nn];
        ctx->from = (int)(pair / (size_t)o->nto);
        ctx->to = (int)(pair % (size_t)o->nto);
        ctx->dmap = code_map(ctx, 0, &o->from_layout[ctx->from], ctx->n);
        ctx->emap = code_map(ctx, 1, &o->to_layout[ctx->to], ctx->n);
    }
    ctx->command = o->directions[i % nd];
    if (o->md)
        return md_point(run, ctx);
    for (int m = 0; m < nm; m++)
        method_prepare(ctx, o->methods[m], &st->mrs[m]);
    /* what changes owner, and so the bound, comes from the direct plan */
    bb_redist_traffic_t dt;
    int have_direct = 0;
    for (int m = 0; m < nm; m++)
        if (o->methods[m] == BB_REDIST_DIRECT) {
            dt = st->mrs[m].traffic;
            have_direct = 1;
        }
    if (!have_direct) {
        bb_redist_setup_t su;
        bb_redist_plan_t *direct = plan_build(ctx, BB_REDIST_DIRECT, &su);
        if (bb_redist_plan_traffic(direct, &dt) != BB_OK)
            bb_run_fatal(run, "traffic: MPI error");
        bb_redist_plan_destroy(direct);
    }
    bb_redist_probe_t *probe = NULL;
    bb_status_t s = bb_redist_probe_for_traffic(ctx->link, &dt, o->element_bytes, &probe);
    if (s != BB_OK)
        bb_run_fatal(run, "bound: %s", bb_status_string(s));
    bb_measure_variant_t v[BB_REDIST_METHODS + 1];
    bb_measure_result_t res[BB_REDIST_METHODS + 1];
    for (int m = 0; m < nm; m++)
        v[m] = (bb_measure_variant_t){ .nparts = T_N, .ncounts = 0, .call = message_call,
                                       .arg = &st->mrs[m] };
    v[nm] = (bb_measure_variant_t){ .nparts = BB_PROBE_PARTS, .ncounts = 0,
                                    .call = bb_redist_probe_call, .arg = probe };
    bb_run_measure_set(run, "measuring the methods", v, nm + 1, BB_SHARE_MIN, res);
    const method_result_t *root = NULL;
    for (int m = 0; m < nm; m++) {
        st->mrs[m].m = res[m];
        method_conclude(ctx, &st->mrs[m]);
        if (st->mrs[m].method == BB_REDIST_ROOT)
            root = &st->mrs[m];
    }
    const double *parts[BB_PROBE_PARTS];
    for (int p = 0; p < BB_PROBE_PARTS; p++)
        parts[p] = bb_measure_part(&res[nm], p);
    bb_redist_bound_t bound;
    bb_redist_probe_bound(probe, parts, (size_t)res[nm].samples, &bound);
    bb_redist_probe_free(probe);
    int best = -1;
    for (int m = 0; m < nm; m++) {
        const method_result_t *mr = &st->mrs[m];
        if (mr->wrong_messages == 0 && mr->refused == 0 && mr->median > 0
            && (best < 0 || mr->median < st->mrs[best].median))
            best = m;
    }
    if (bb_run_rank(run) == 0) {
        table_point(ctx, st->mrs, nm, root, best, &bound);
        note_point(ctx, st->mrs, nm, best, root, &bound);
        for (int m = 0; m < nm; m++)
            record_method(ctx, &st->mrs[m], root, &dt, &bound, &res[nm]);
        ratio_line(st, root, nm);
    }
    bb_measure_result_clear(&res[nm]);
    for (int m = 0; m < nm; m++) {
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

enum { OPT_DRIVER = BB_OPT_LONG, OPT_FROM, OPT_TO, OPT_METHODS, OPT_MESSAGES, OPT_LINK,
       OPT_RATIOS, OPT_WORKLOAD, OPT_REMAP };

static const bb_option_t redist_options[] = {
    {"elements", 'n', "LIST", "N, global elements: 1e4,1e5 or 1K:1M[:x4|:+N]\n"
                              "(default 1e3,1e4; --full-sweep 1e4,1e5,1e6)"},
    {"element-bytes", 'e', "B", "8 (CHARGES), 16 or 24 (COORDS, FORCES; default)"},
    {"driver-ranks", OPT_DRIVER, "PD", "driver ranks [0, PD), engine [PD, P)\n"
                                       "(--link mdi; default P/2, 1 <= PD <= P-1)"},
    {"from", OPT_FROM, "LAYOUT", "the driver's layout; repeat for several\n"
                                 "(default spatial-shuffled; --full-sweep spatial,\n"
                                 "spatial-shuffled, random:1, root)"},
    {"to", OPT_TO, "LAYOUT", "the engine's layout; repeat for several (default std)\n"
                             "layouts: std, std-ceil, block-irregular[:SEED],\n"
                             "block-reverse, cyclic, block-cyclic:B,\n"
                             "spatial[:PX,PY,PZ], random[:SEED],\n"
                             "spatial-shuffled[:SEED], root"},
    {"direction", 'd', "DIR", "'>' (driver to engine), '<' or both (default both)"},
    {"methods", OPT_METHODS, "LIST", "root, root-gatherv, two-step, direct, pack, sparse,\n"
                                     "pack-mpi, auto (comma list or all; default all)"},
    {"messages", OPT_MESSAGES, "K", "messages per plan: the plan is rebuilt after K\n"
                                    "(default 0: one plan for every message of a point)"},
    {"link", OPT_LINK, "LINK", "mdi (two codes) or intra (one code, two of its own\n"
                               "layouts; works on one rank) (default mdi)"},
    {"ratios", OPT_RATIOS, NULL, "the method ratios: N 1e6, from spatial and random:1,\n"
                                 "to std, '>' (unless given); the ratios\n"
                                 "root/method close the table"},
    {"workload", OPT_WORKLOAD, "W", "message (one message per call; default) or md (one\n"
                                    "step: >COORDS, <FORCES, <ENERGY on one map pair)"},
    {"remap", OPT_REMAP, "K:F", "md: every K steps a fraction F in (0, 1] of the\n"
                                "engine's elements change owner, by map update and by\n"
                                "rebuild (default: no remap)"},
    {NULL, 0, NULL, NULL}
};

static void redist_defaults(void *state)
{
    redist_state_t *st = state;
    options_t *o = &st->o;
    o->element_bytes = 24;
    o->driver_ranks = -1;
    o->directions[0] = BB_REDIST_SEND;
    o->directions[1] = BB_REDIST_RECEIVE;
    o->ndirections = 2;
    o->mode = BB_REDIST_MODE_MDI;
}

static void add_layout(bb_run_t *run, const char *opt, const char *value, const char **list,
                       int *n)
{
    if (*n >= LAYOUTS_MAX)
        bb_run_usage(run, "%s: at most %d layouts", opt, LAYOUTS_MAX);
    list[(*n)++] = value;
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
    case OPT_FROM: add_layout(run, "--from", value, o->from, &o->nfrom); break;
    case OPT_TO: add_layout(run, "--to", value, o->to, &o->nto); break;
    case 'd': {
        unsigned d = bb_run_parse_choices(run, "direction", value, directions, 3);
        if (d != 1u && d != 2u && d != 4u)
            bb_run_usage(run, "--direction: give one of '>', '<' or both");
        o->directions[0] = d == 2u ? BB_REDIST_RECEIVE : BB_REDIST_SEND;
        o->directions[1] = BB_REDIST_RECEIVE;
        o->ndirections = d == 4u ? 2 : 1;
        o->direction_given = 1;
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
    case OPT_WORKLOAD: {
        static const char *const workloads[] = { "message", "md" };
        unsigned w = bb_run_parse_choices(run, "workload", value, workloads, 2);
        if (w != 1u && w != 2u)
            bb_run_usage(run, "--workload: give one of message or md");
        o->md = w == 2u;
        break;
    }
    case OPT_REMAP: {
        const char *colon = strchr(value, ':');
        char k[32];
        if (colon == NULL || (size_t)(colon - value) >= sizeof k)
            bb_run_usage(run, "--remap: '%s' is not K:F (every K steps a fraction F)", value);
        memcpy(k, value, (size_t)(colon - value));
        k[colon - value] = '\0';
        o->remap_every = bb_run_parse_size(run, "remap", k, 1, INT32_MAX);
        if (bb_cli_parse_double(colon + 1, 0.0, 1.0, &o->remap_fraction, err, sizeof err)
                != BB_OK || !(o->remap_fraction > 0.0))
            bb_run_usage(run, "--remap: the fraction '%s' is not in (0, 1]", colon + 1);
        break;
    }
    case OPT_RATIOS: o->ratios = 1; break;
    }
}

static size_t redist_validate(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    options_t *o = &st->o;
    int ranks = bb_run_size(run);
    o->full_sweep = bb_run_full_sweep(run);  /* the runner's --full-sweep */
    if (o->full_sweep && o->ratios)
        bb_run_usage(run, "--full-sweep and --ratios are two presets: give one");
    /* -m: bytes of the global array, N = bytes / element bytes. */
    bb_run_message_sizes(run, "elements", o->element_bytes,
                         (o->full_sweep ? 10000 : 1000) * o->element_bytes,
                         (o->full_sweep ? 1000000 : 10000) * o->element_bytes, &o->elements);
    if (o->remap_every > 0 && !o->md)
        bb_run_usage(run, "--remap applies to --workload md only");
    if (o->md) {
        if (o->direction_given || o->ratios || o->messages > 0 || o->element_bytes != 24)
            bb_run_usage(run, "--workload md fixes the commands (>COORDS, <FORCES, "
                         "<ENERGY), their sizes and one plan set per point: no --direction, "
                         "--element-bytes, --messages or --ratios");
        o->ndirections = 1;
        o->directions[0] = BB_REDIST_SEND;
        /* the replicated baseline moves 3N doubles in one MPI call */
        for (size_t j = 0; j < o->elements.n; j++)
            if (o->elements.values[j] * 3 > INT32_MAX)
                bb_run_usage(run, "--elements: %lld is too many for --workload md's "
                             "replicated baseline (one MPI call of 3N doubles)",
                             (long long)o->elements.values[j]);
    }
    if (o->elements.n == 0)
        bb_run_parse_size_list(run, "elements",
                               o->ratios ? "1e6" : o->full_sweep ? "1e4,1e5,1e6" : "1e3,1e4",
                               0, INT32_MAX, &o->elements);
    if (o->nfrom == 0) {
        static const char *const sweep[] = {"spatial", "spatial-shuffled", "random:1", "root"};
        static const char *const ratios[] = {"spatial", "random:1"};
        if (o->full_sweep)
            for (int i = 0; i < 4; i++)
                o->from[o->nfrom++] = sweep[i];
        else if (o->ratios)
            for (int i = 0; i < 2; i++)
                o->from[o->nfrom++] = ratios[i];
        else
            /* not spatial: on one driver rank it is the identity of std */
            o->from[o->nfrom++] = "spatial-shuffled";
    }
    if (o->nto == 0)
        o->to[o->nto++] = "std";
    if (o->ratios && !o->direction_given) {
        o->directions[0] = BB_REDIST_SEND;
        o->ndirections = 1;
    }
    if (o->nmethods == 0)
        for (int m = 0; m < BB_REDIST_METHODS; m++)
            o->methods[o->nmethods++] = (bb_redist_method_t)m;
    for (int i = 0; i < o->nfrom; i++)
        parse_layout(run, "--from", o->from[i], &o->from_layout[i]);
    for (int i = 0; i < o->nto; i++)
        parse_layout(run, "--to", o->to[i], &o->to_layout[i]);
    int dr = ranks, er = ranks;
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
        dr = o->driver_ranks;
        er = ranks - o->driver_ranks;
    } else if (o->driver_ranks >= 0) {
        bb_run_usage(run, "--driver-ranks applies to --link mdi only");
    }
    for (int i = 0; i < o->nfrom; i++)
        check_layout_fits(run, "--from", o->from[i], &o->from_layout[i], dr);
    for (int i = 0; i < o->nto; i++)
        check_layout_fits(run, "--to", o->to[i], &o->to_layout[i], er);
    /* (the root methods move their arrays in pieces: no INT_MAX limit here) */
    return o->elements.n * (size_t)o->ndirections * (size_t)o->nfrom * (size_t)o->nto;
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
    if (o->md) {
        /* <ENERGY: one double, on each code's rank 0 */
        int64_t zero = 0;
        bb_redist_link_t *l = ctx->link;
        if ((bb_redist_link_is_driver(l)
             && bb_map_create(1, &zero, bb_redist_link_code_rank(l, 0) == 0, 1,
                              &ctx->md_dmap1) != BB_OK)
            || (bb_redist_link_is_engine(l)
                && bb_map_create(1, &zero, bb_redist_link_code_rank(l, 1) == 0, 1,
                                 &ctx->md_emap1) != BB_OK))
            bb_run_fatal(run, "cannot create the energy maps");
        md_table_header(ctx);
    } else {
        table_header(ctx);
    }
}

static void redist_label(const void *state, size_t i, char *buf, size_t len)
{
    const redist_state_t *st = state;
    const options_t *o = &st->o;
    size_t nd = (size_t)o->ndirections, nn = o->elements.n, pair = i / (nd * nn);
    snprintf(buf, len, "%s->%s N = %lld, '%c'", o->from[pair / (size_t)o->nto],
             o->to[pair % (size_t)o->nto], (long long)o->elements.values[(i / nd) % nn],
             o->directions[i % nd]);
}

static int redist_finish(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    bb_table_t *t = bb_run_table(run);
    double thr = bb_redist_link_auto_threshold(st->ctx.link);
    if (!st->o.md) {
        bb_table_note(t, "auto's threshold (calibrated at link creation, a measurement): %.0f B "
                      "per contiguous run", thr);
        bb_table_note(t, "ratios root msg_us / method msg_us (medians of interleaved samples; "
                      "> 1: faster than root):");
        for (size_t i = 0; i < st->nratios; i++)
            bb_table_note(t, "  %s", st->ratios[i]);
    }
    if (bb_run_rank(run) == 0) {
        cJSON *summary = cJSON_CreateObject();
        cJSON_AddStringToObject(summary, "bound_note",
                                "bound = agree + latency + max(latency, p2p, memory, host), "
                                "each the best sample of a probe measured interleaved with "
                                "the methods: agree = MPI_Allreduce of int64[18] over the "
                                "link; latency = one-way time of 1 byte; p2p = one-way time "
                                "of the largest bytes into or out of any rank; memory = memcpy "
                                "of the largest local part or fragmented side; host = every "
                                "rank copying its share of the bytes changing owner at once "
                                "(only when a host holds 2 or more link ranks); efficiency = "
                                "bound / elapsed, null where the bound is above it (a bound "
                                "failure)");
        cJSON_AddNumberToObject(summary, "auto_threshold_bytes", thr);
        bb_record_set(bb_bench_record(bb_run_bench(run)), "run", summary);
    }
    bb_map_free(st->ctx.dmap);
    bb_map_free(st->ctx.emap);
    bb_map_free(st->ctx.md_dmap1);
    bb_map_free(st->ctx.md_emap1);
    st->ctx.dmap = st->ctx.emap = st->ctx.md_dmap1 = st->ctx.md_emap1 = NULL;
    if (bb_redist_link_destroy(st->ctx.link) != BB_OK)
        bb_run_fatal(run, "cannot free the link");
    st->ctx.link = NULL;
    return BB_EXIT_OK;
}

static void redist_teardown(void *state)
{
    redist_state_t *st = state;
    bb_size_list_clear(&st->o.elements);
    for (size_t i = 0; i < st->nratios; i++)
        free(st->ratios[i]);
    free(st->ratios);
    st->ratios = NULL;
    st->nratios = 0;
}

/* The seed's own defaults of the measurement options. */
static const bb_measure_settings_t default_settings = { .samples = 3, .budget_s = 0.02, .warmup = 1 };

static const bb_bench_desc_t redist_bench = {
    .program = "bbench-redist",
    .benchmark = "redist",
    .summary = "Measure MDI parallel communication between a driver code and an engine\n"
               "code whose data are laid out differently: today's rank-0 path against\n"
               "redistribution with maps (doc/redist.md).  Launch with mpiexec -n P.",
    .notes = "A call is one message; a barrier (untimed) precedes each message.  The\n"
             "methods and the bound are measured interleaved, sample by sample.  Setup\n"
             "(validation, map transfer, plan build) is timed apart, once per plan.\n"
             "Every message is checked outside the timing: value\n"
             "((g*3 + c)*4 + (k & 3)) in every slot of sentinel-filled buffers and a\n"
             "global checksum.  bound = agree + latency + max(latency, p2p, memory,\n"
             "host), each part its best sample; efficiency = bound / elapsed, never\n"
             "printed above 1 (bound-failure).  Times in the table are microseconds.\n"
             "Exit 1 also for wrong data or an unexpected refusal.",
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
