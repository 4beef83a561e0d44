/* bbench-redist: MDI parallel communication between two data layouts.
 * Every method moves the same elements between the same maps; each message
 * is checked slot by slot outside the timing; the machine's lower bound
 * (ping-pong and memcpy of the largest per-rank volume) is measured in the
 * same run.  Parse, run, report: the protocol is in lib/redist.c. */
#include "config.h"
#include "bbench.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "bbench-redist"

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
    bb_bench_common_t common;  /* samples, reps, budget, warmup, output */
    bb_redist_mode_t mode;
} options_t;

static const char usage_text[] =
    "Usage: " PROG " [OPTION]...\n"
    "Measure MDI parallel communication between a driver code and an engine\n"
    "code whose data are laid out differently: today's rank-0 path against\n"
    "redistribution with maps (DESIGN 2.3).  Launch with mpiexec -n P.\n"
    "\n"
    "  -n, --elements LIST      N, global elements: 1e4,1e5 or 1K:1M[:x4|:+N]\n"
    "                           (default 1e4,1e5,1e6)\n"
    "  -e, --element-bytes B    8 (CHARGES), 16 or 24 (COORDS, FORCES; default)\n"
    "      --driver-ranks PD    driver ranks [0, PD), engine [PD, P)\n"
    "                           (mdi mode; default P/2, 1 <= PD <= P-1)\n"
    "      --from LAYOUT        the driver's layout (default spatial)\n"
    "      --to LAYOUT          the engine's layout (default std)\n"
    "                           layouts: std, std-ceil, block-irregular[:SEED],\n"
    "                           block-reverse, cyclic, block-cyclic:B,\n"
    "                           spatial[:PX,PY,PZ], random[:SEED]\n"
    "  -d, --direction DIR      '>' (driver to engine), '<' or both (default both)\n"
    "  -m, --methods LIST       root, root-gatherv, two-step, direct, pack, sparse\n"
    "                           (comma list; default all)\n"
    "  -k, --messages K         messages per plan: the plan is rebuilt after K\n"
    "                           (default 0: one plan for every message of a point)\n"
    "      --mode MODE          mdi (two codes) or intra (one code, two of its own\n"
    "                           layouts; works on one rank) (default mdi)\n"
    "  -s, --samples N          samples per point, >= 3 (default 3)\n"
    "  -r, --reps N             messages per sample (default: from --budget,\n"
    "                           at most 50)\n"
    "      --budget SECONDS     time per sample when --reps is not given\n"
    "                           (default 0.05)\n"
    "  -w, --warmup N           messages after the first, before sampling\n"
    "                           (default 1)\n"
    "  -o, --output FILE        write the JSON record to FILE\n"
    "  -h, --help               this text\n"
    "  -V, --version            the version\n"
    "\n"
    "A sample is the mean time per message over a block of messages on each\n"
    "rank, then the maximum over ranks; a barrier (untimed) precedes each\n"
    "message.  Setup (validation, map transfer, plan build) is timed apart,\n"
    "once per plan.  Every message is checked outside the timing: value\n"
    "((g*3 + c)*4 + (k & 3)) in every slot of sentinel-filled buffers and a\n"
    "global checksum.  bound = max(one-way ping-pong of the largest per-rank\n"
    "volume, memcpy of the largest local part); efficiency = bound / elapsed.\n"
    "Times in the table are microseconds.  Exit: 0 ok, 1 measured failure\n"
    "(wrong data, unexpected refusal), 2 usage, 3 fatal (MPI error, no memory).\n";

static void parse_layout(bb_bench_t *bench, const char *opt, const char *text,
                         bb_layout_t *out)
{
    char err[256];
    if (bb_layout_parse(text, out, err, sizeof err) != BB_OK)
        bb_bench_usage(bench, "%s: %s", opt, err);
}

static void parse_methods(bb_bench_t *bench, const char *text, options_t *o)
{
    char *copy = strdup(text), *save = NULL;
    if (copy == NULL)
        bb_bench_fatal(bench, "out of memory");
    size_t len = strlen(text);  /* strtok_r would skip empty items */
    if (len > 0 && (text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,") != NULL))
        bb_bench_usage(bench, "--methods: empty item in '%s'", text);
    o->nmethods = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        bb_redist_method_t m;
        if (bb_redist_method_parse(tok, &m) != BB_OK)
            bb_bench_usage(bench, "--methods: '%s' is not root, root-gatherv, two-step, "
                           "direct, pack or sparse", tok);
        for (int i = 0; i < o->nmethods; i++)
            if (o->methods[i] == m)
                bb_bench_usage(bench, "--methods: '%s' given twice", tok);
        o->methods[o->nmethods++] = m;
    }
    free(copy);
    if (o->nmethods == 0)
        bb_bench_usage(bench, "--methods: no method given");
}

/* The layout must be generable for the code it lays out (spatial dims). */
static void check_layout_fits(bb_bench_t *bench, const char *opt, const char *text,
                              const bb_layout_t *lay, int ranks)
{
    int64_t *idx = NULL, cnt;
    if (bb_layout_indices(lay, 0, 0, ranks, &idx, &cnt) != BB_OK)
        bb_bench_usage(bench, "%s: '%s' does not fit a code of %d ranks "
                       "(PX*PY*PZ must equal the ranks)", opt, text, ranks);
    bb_free(idx);
}

static void options_parse(bb_bench_t *bench, int argc, char **argv, options_t *o)
{
    enum { OPT_DRIVER = 256, OPT_FROM, OPT_TO, OPT_MODE };
    static const struct option longopts[] = {
        {"elements", required_argument, NULL, 'n'},
        {"element-bytes", required_argument, NULL, 'e'},
        {"driver-ranks", required_argument, NULL, OPT_DRIVER},
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"direction", required_argument, NULL, 'd'},
        {"methods", required_argument, NULL, 'm'},
        {"messages", required_argument, NULL, 'k'},
        {"mode", required_argument, NULL, OPT_MODE},
        BB_BENCH_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0}
    };
    const char *elements = "1e4,1e5,1e6";
    const char *methods = "root,root-gatherv,two-step,direct,pack,sparse";
    char err[256];
    int64_t v;
    int c, ranks = bb_bench_size(bench);

    memset(o, 0, sizeof *o);
    o->element_bytes = 24;
    o->driver_ranks = -1;
    o->from = "spatial";
    o->to = "std";
    o->directions[0] = BB_REDIST_SEND;
    o->directions[1] = BB_REDIST_RECEIVE;
    o->ndirections = 2;
    bb_bench_common_defaults(&o->common);
    o->common.warmup = 1;
    o->mode = BB_REDIST_MODE_MDI;

    opterr = 0;  /* our own messages, on rank 0 only */
    while ((c = getopt_long(argc, argv, ":n:e:d:m:k:" BB_BENCH_COMMON_SHORTOPTS, longopts,
                            NULL)) != -1) {
        if (bb_bench_parse_common(bench, c, optarg, argv, usage_text, &o->common))
            continue;
        switch (c) {
        case 'n': elements = optarg; break;
        case 'e':
            if (bb_cli_parse_size(optarg, 8, 24, &o->element_bytes, err, sizeof err) != BB_OK
                || o->element_bytes % 8 != 0)
                bb_bench_usage(bench, "--element-bytes: '%s' is not 8, 16 or 24", optarg);
            break;
        case OPT_DRIVER:
            if (bb_cli_parse_size(optarg, 0, INT32_MAX, &v, err, sizeof err) != BB_OK)
                bb_bench_usage(bench, "--driver-ranks: %s", err);
            o->driver_ranks = (int)v;
            break;
        case OPT_FROM: o->from = optarg; break;
        case OPT_TO: o->to = optarg; break;
        case 'd':
            if (strcmp(optarg, ">") == 0) {
                o->directions[0] = BB_REDIST_SEND;
                o->ndirections = 1;
            } else if (strcmp(optarg, "<") == 0) {
                o->directions[0] = BB_REDIST_RECEIVE;
                o->ndirections = 1;
            } else if (strcmp(optarg, "both") == 0) {
                o->ndirections = 2;
            } else {
                bb_bench_usage(bench, "--direction: '%s' is not '>', '<' or both", optarg);
            }
            break;
        case 'm': methods = optarg; break;
        case 'k':
            if (bb_cli_parse_size(optarg, 0, INT32_MAX, &o->messages, err, sizeof err) != BB_OK)
                bb_bench_usage(bench, "--messages: %s", err);
            break;
        case OPT_MODE:
            if (strcmp(optarg, "mdi") == 0) o->mode = BB_REDIST_MODE_MDI;
            else if (strcmp(optarg, "intra") == 0) o->mode = BB_REDIST_MODE_INTRA;
            else bb_bench_usage(bench, "--mode: '%s' is not mdi or intra", optarg);
            break;
        }
    }
    bb_bench_parse_end(bench, argc, argv);
    if (bb_cli_parse_size_list(elements, 0, INT32_MAX, &o->elements, err, sizeof err) != BB_OK)
        bb_bench_usage(bench, "--elements: %s", err);
    parse_methods(bench, methods, o);
    parse_layout(bench, "--from", o->from, &o->from_layout);
    parse_layout(bench, "--to", o->to, &o->to_layout);

    if (o->mode == BB_REDIST_MODE_MDI) {
        if (ranks < 2)
            bb_bench_usage(bench, "--mode mdi needs a driver and an engine: run on at "
                           "least 2 ranks (mpiexec -n 2), or use --mode intra");
        if (o->driver_ranks < 0)
            o->driver_ranks = ranks / 2;
        if (o->driver_ranks < 1 || o->driver_ranks > ranks - 1)
            bb_bench_usage(bench, "--driver-ranks: %d leaves %s without ranks: give 1 to "
                           "%d on %d ranks", o->driver_ranks,
                           o->driver_ranks < 1 ? "the driver" : "the engine", ranks - 1,
                           ranks);
        check_layout_fits(bench, "--from", o->from, &o->from_layout, o->driver_ranks);
        check_layout_fits(bench, "--to", o->to, &o->to_layout, ranks - o->driver_ranks);
    } else {
        if (o->driver_ranks >= 0)
            bb_bench_usage(bench, "--driver-ranks applies to --mode mdi only");
        check_layout_fits(bench, "--from", o->from, &o->from_layout, ranks);
        check_layout_fits(bench, "--to", o->to, &o->to_layout, ranks);
    }
    /* root methods move N * components doubles in one MPI call */
    for (int i = 0; i < o->nmethods; i++)
        if (o->methods[i] == BB_REDIST_ROOT || o->methods[i] == BB_REDIST_ROOT_GATHERV)
            for (size_t j = 0; j < o->elements.n; j++)
                if (o->elements.values[j] * (o->element_bytes / 8) > INT32_MAX)
                    bb_bench_usage(bench, "--elements: %lld is too many for the root "
                                   "methods (one MPI call of N * %lld doubles)",
                                   (long long)o->elements.values[j],
                                   (long long)(o->element_bytes / 8));
}

/* Per-message timings of one block, in this order. */
enum { T_ELAPSED, T_ADMISSION, T_PAYLOAD, T_N };
static const char *const t_names[T_N] = {"elapsed", "phase.admission", "phase.payload"};
/* Setup timings of one plan. */
enum { S_TOTAL, S_VALIDATE, S_MAP, S_BUILD, S_N };
static const char *const s_names[S_N] = {
    "setup.total", "setup.validate", "setup.map_transfer", "setup.plan_build"
};

typedef struct run_ctx {
    bb_bench_t *bench;
    const options_t *o;
    bb_redist_link_t *link;
    MPI_Comm comm;               /* the link's: every rank of both codes */
    bb_map_t *dmap, *emap;       /* this rank's maps for the current N */
    int64_t n;
    int command;
} run_ctx_t;

typedef struct method_result {
    bb_redist_method_t method;
    double *samples[T_N];        /* [samples] */
    double *setup[S_N];          /* [nsetup] */
    size_t nsetup, setup_cap;
    double first[T_N], first_setup[S_N];
    int64_t reps, messages, wrong_messages, refused;
    bb_redist_traffic_t traffic;
    double median;
} method_result_t;

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

/* Buffers of one plan. */
typedef struct buffers {
    const bb_map_t *sm, *rm;
    double *send, *recv;
} buffers_t;

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

/* One method at the current N and command. */
static void measure_method(run_ctx_t *ctx, bb_redist_method_t method, method_result_t *mr)
{
    const options_t *o = ctx->o;
    memset(mr, 0, sizeof *mr);
    mr->method = method;
    for (int i = 0; i < T_N; i++) {
        mr->samples[i] = calloc((size_t)o->common.samples, sizeof(double));
        if (mr->samples[i] == NULL)
            bb_bench_fatal(ctx->bench, "out of memory");
    }
    /* setup: samples plans built and freed, then the one that is used */
    bb_redist_setup_t su;
    bb_redist_plan_t *plan = plan_build(ctx, method, &su);
    setup_push(ctx, mr, &su);
    for (int i = 0; i < S_N; i++)
        mr->first_setup[i] = mr->setup[i][0];
    for (int64_t s = 1; s < o->common.samples; s++) {
        bb_redist_plan_destroy(plan);
        plan = plan_build(ctx, method, &su);
        setup_push(ctx, mr, &su);
    }
    if (bb_redist_plan_traffic(plan, &mr->traffic) != BB_OK)
        bb_bench_fatal(ctx->bench, "traffic: MPI error");
    buffers_t b;
    buffers_get(ctx, plan, &b);
    int64_t k = 0, on_plan = 0;
    double t[T_N], max[T_N];

    /* the first (cold) message, warm-up, and the block size */
    memset(t, 0, sizeof t);
    message(ctx, plan, &b, k++, t, mr);
    on_plan++;
    if (bb_stats_reduce_max(ctx->comm, t, T_N, mr->first) != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Allreduce failed");
    for (int64_t w = 0; w < o->common.warmup; w++) {
        memset(t, 0, sizeof t);
        message(ctx, plan, &b, k++, t, mr);
        on_plan++;
    }
    mr->reps = o->common.reps;
    if (mr->reps == 0) {
        memset(t, 0, sizeof t);
        message(ctx, plan, &b, k++, t, mr);
        on_plan++;
        /* each message also costs an untimed fill, barrier and check: keep
         * blocks short unless --reps asks otherwise */
        mr->reps = bb_bench_reps_for_budget(ctx->bench, t[T_ELAPSED], o->common.budget_s, 50);
    }
    for (int64_t s = 0; s < o->common.samples; s++) {
        memset(t, 0, sizeof t);
        for (int64_t r = 0; r < mr->reps; r++) {
            if (o->messages > 0 && on_plan >= o->messages) {
                /* a new plan after K messages: setup, outside the timing */
                buffers_free(&b);
                bb_redist_plan_destroy(plan);
                plan = plan_build(ctx, method, &su);
                setup_push(ctx, mr, &su);
                buffers_get(ctx, plan, &b);
                on_plan = 0;
            }
            message(ctx, plan, &b, k++, t, mr);
            on_plan++;
        }
        for (int i = 0; i < T_N; i++)
            t[i] /= (double)mr->reps;
        if (bb_stats_reduce_max(ctx->comm, t, T_N, max) != MPI_SUCCESS)
            bb_bench_fatal(ctx->bench, "MPI_Allreduce of samples failed");
        for (int i = 0; i < T_N; i++)
            mr->samples[i][s] = max[i];
    }
    int64_t local[2] = {mr->wrong_messages, mr->refused}, agreed[2];
    if (bb_agree_max(ctx->comm, local, 2, agreed) != MPI_SUCCESS)
        bb_bench_fatal(ctx->bench, "MPI_Allreduce failed");
    mr->wrong_messages = agreed[0];
    mr->refused = agreed[1];
    mr->median = bb_stats_median(mr->samples[T_ELAPSED], (size_t)o->common.samples);
    buffers_free(&b);
    bb_redist_plan_destroy(plan);
}

static void method_result_free(method_result_t *mr)
{
    for (int i = 0; i < T_N; i++)
        free(mr->samples[i]);
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
                          bb_quantity_timing(mr->samples[i], (size_t)o->common.samples, scope,
                                             i == T_ELAPSED ? elapsed_includes : NULL));
        bb_quantities_add(first, t_names[i], bb_quantity_value(mr->first[i], "s", scope));
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
    bb_quantities_add(q, "redist.messages_checked",
                      bb_quantity_value((double)mr->messages, "count", "run/rank"));
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
           "maximum; setup median per plan\n", (long long)o->common.samples);
    printf("# median = admit (recv_dist flag + MIN/MAX admission) + payload; "
           "speedup = root median / median; eff = bound / median\n");
    printf("%9s %3s %-12s %11s %23s %11s %10s %11s %9s %6s %7s %7s\n", "N", "dir", "method",
           "median_us", "range_us", "setup_us", "admit_us", "payload_us", "MB_moved", "peers",
           "speedup", "eff");
}

static void table_point(const run_ctx_t *ctx, const method_result_t *mrs, int nm,
                        const bb_redist_bound_t *bound)
{
    const options_t *o = ctx->o;
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
        bb_stats_summarize(mr->samples[T_ELAPSED], (size_t)o->common.samples, &s);
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
               bb_stats_median(mr->samples[T_ADMISSION], (size_t)o->common.samples)
                   * 1e6,
               bb_stats_median(mr->samples[T_PAYLOAD], (size_t)o->common.samples) * 1e6,
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

int main(int argc, char **argv)
{
    bb_bench_t *bench = bb_bench_init(&argc, &argv, PROG, "redist");
    options_t o;
    options_parse(bench, argc, argv, &o);
    bb_bench_set_output(bench, o.common.output);
    bb_bench_capture(bench);

    int rank = bb_bench_rank(bench);
    run_ctx_t ctx = {.bench = bench, .o = &o};
    bb_status_t st = bb_redist_link_create(bb_bench_world(bench), o.mode,
                                           o.mode == BB_REDIST_MODE_MDI ? o.driver_ranks : 0,
                                           &ctx.link);
    if (st != BB_OK)
        bb_bench_fatal(bench, "cannot create the link: %s", bb_status_string(st));
    ctx.comm = bb_redist_link_comm(ctx.link);

    int exit_code = BB_EXIT_OK;
    method_result_t mrs[BB_REDIST_METHODS];
    if (rank == 0)
        table_header(&ctx);
    for (size_t i = 0; i < o.elements.n; i++) {
        ctx.n = o.elements.values[i];
        ctx.dmap = code_map(&ctx, 0, &o.from_layout, ctx.n);
        ctx.emap = code_map(&ctx, 1, &o.to_layout, ctx.n);
        for (int d = 0; d < o.ndirections; d++) {
            ctx.command = o.directions[d];
            bb_bench_progress(bench, "N = %lld, '%c'", (long long)ctx.n, ctx.command);
            /* what changes owner and the bound come from the direct plan */
            bb_redist_setup_t su;
            bb_redist_plan_t *direct = plan_build(&ctx, BB_REDIST_DIRECT, &su);
            bb_redist_traffic_t dt;
            bb_redist_bound_t bound;
            if (bb_redist_plan_traffic(direct, &dt) != BB_OK)
                bb_bench_fatal(bench, "traffic: MPI error");
            bb_redist_plan_destroy(direct);
            int64_t vol = dt.max_in_bytes > dt.max_out_bytes ? dt.max_in_bytes : dt.max_out_bytes;
            st = bb_redist_link_bound(ctx.link, vol, dt.max_self_bytes, 20, &bound);
            if (st != BB_OK)
                bb_bench_fatal(bench, "bound: %s", bb_status_string(st));
            for (int m = 0; m < o.nmethods; m++)
                measure_method(&ctx, o.methods[m], &mrs[m]);
            if (rank == 0) {
                table_point(&ctx, mrs, o.nmethods, &bound);
                for (int m = 0; m < o.nmethods; m++)
                    record_method(&ctx, &mrs[m], &dt, &bound);
            }
            for (int m = 0; m < o.nmethods; m++) {
                if (mrs[m].wrong_messages > 0 || mrs[m].refused > 0) {
                    bb_bench_progress(bench, "error: %s %c N=%lld: %lld messages with wrong "
                                      "data, %lld refused",
                                      bb_redist_method_name(mrs[m].method), ctx.command,
                                      (long long)ctx.n, (long long)mrs[m].wrong_messages,
                                      (long long)mrs[m].refused);
                    exit_code = BB_EXIT_FAILURE;
                }
                method_result_free(&mrs[m]);
            }
        }
        bb_map_free(ctx.dmap);
        bb_map_free(ctx.emap);
    }
    if (rank == 0) {
        cJSON *summary = cJSON_CreateObject();
        cJSON_AddStringToObject(summary, "range_note",
                                "with n samples the [min, max] range covers the median "
                                "with probability 1 - 2^(1-n): 75% for n = 3");
        cJSON_AddStringToObject(summary, "bound_note",
                                "bound = max(one-way ping-pong time of the largest bytes "
                                "into or out of any rank, memcpy time of the largest local "
                                "part), measured in this run; efficiency = bound / elapsed");
        bb_record_set(bb_bench_record(bench), "run", summary);
    }
    if (bb_redist_link_destroy(ctx.link) != BB_OK)
        bb_bench_fatal(bench, "cannot free the link");
    bb_size_list_clear(&o.elements);
    return bb_bench_finish(bench, exit_code);
}
