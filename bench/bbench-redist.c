/* bbench-redist: MDI parallel communication between two data layouts.
 * Every method moves the same elements between the same maps.  Each method
 * is a variant of the runner (harness/variants.c): one table line and one
 * record point each; the machine's lower bound (harness/bound.c) is a hidden
 * variant measured in the same interleaved set, its figure a line of its
 * own.  A method at a point (plans, the message kernel checked outside its
 * timing, its own columns and quantities) is harness/redist-candidate.c, the
 * md workload harness/redist-md.c, the protocol lib/redist-*.c; this file
 * holds the options, the variants and the glue. */
#include "config.h"
#include "redist-bench.h"

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

typedef struct redist_state {
    options_t o;
    bb_redist_link_t *link;
    bb_redist_point_t pt;        /* the current point */
    bb_map_t *dmap, *emap;       /* this rank's maps for it (pt borrows them) */
    int from, to;                /* indices into the layout lists */
    bb_map_t *md_dmap1, *md_emap1; /* <ENERGY: element 0 on each code's rank 0 */
    /* row m < nmethods is o.methods[m]; row nmethods the bound */
    bb_redist_candidate_t cands[BB_REDIST_METHODS];
    bb_redist_probe_t *probe;    /* the bound's, while the point is measured */
    bb_redist_traffic_t direct;  /* what changes owner: the direct plan's */
    bb_redist_bound_t bound;
    char **ratios;               /* one summary line per point (rank 0) */
    size_t nratios;
} redist_state_t;

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

/* ---- the variants: the methods and the bound ------------------------------- */

static bb_status_t method_call(bb_run_t *run, void *state, bb_row_t *row, double *parts,
                               double *counts)
{
    (void)run, (void)state, (void)counts;
    bb_redist_candidate_message(row->data, &row->local, parts);
    return BB_OK;
}

/* One burst of the bound's probe (parts BB_PROBE_*). */
static bb_status_t bound_call(bb_run_t *run, void *state, bb_row_t *row, double *parts,
                              double *counts)
{
    (void)run, (void)row;
    return bb_redist_probe_call(((redist_state_t *)state)->probe, parts, counts);
}

/* In bb_redist_method_t's order (checked at setup), then the bound. */
enum { V_BOUND = BB_REDIST_METHODS, V_N };
#define METHOD(name, differs) { name, differs, method_call, \
    (1u << BB_MESSAGE_ADMISSION) | (1u << BB_MESSAGE_PAYLOAD), NULL, BB_COLUMNS_TIMES, 1, \
    { { NULL, 0, NULL } } }
static const bb_variant_t redist_variants[V_N] = {
    METHOD("root", "MDI today: each sender's N-element array reduced to its root, one "
           "root-to-root message, broadcast, picked by each receiver (O(N) per rank)"),
    METHOD("root-gatherv", "root with MPI_Gatherv and MPI_Scatterv of each rank's own "
           "elements instead of the N-element reduce and broadcast"),
    METHOD("two-step", "direct through the receiving code's standardized distribution: a "
           "second MPI_Alltoallw inside the receiving code"),
    METHOD("direct", "one MPI_Alltoallw with both maps known (slot datatypes)"),
    METHOD("pack", "direct with a hand memcpy loop over contiguous runs and MPI_Alltoallv "
           "instead of the slot datatypes"),
    METHOD("sparse", "direct with MPI_Isend/MPI_Irecv to nonzero peers only, the local part "
           "copied without MPI"),
    METHOD("pack-mpi", "pack with MPI_Pack/MPI_Unpack through the slot datatypes instead of "
           "the hand loop"),
    METHOD("overlap", "pack with MPI_Irecv/MPI_Isend per peer instead of MPI_Alltoallv (receives posted first, each peer packed and sent at once, the local part copied while messages fly, each message unpacked as it completes); sparse with hand-packed runs instead of the slot datatypes"),
    METHOD("auto", "pack or direct, chosen per plan from its fragmentation against the "
           "link's calibrated threshold"),
    { "bound", "the machine's lower bound: agree + latency + max(latency, p2p, memory, "
      "host), each its best sample", bound_call, 1u, NULL, BB_COLUMNS_TIMES, 0,
      { { NULL, 0, NULL } } },
};
static const char *const redist_part_names[BB_MESSAGE_PARTS] = {
    "elapsed", "phase.admission", "phase.payload"
};

static const bb_redist_candidate_t *root_of(const redist_state_t *st)
{
    for (int m = 0; m < st->o.nmethods; m++)
        if (st->o.methods[m] == BB_REDIST_ROOT)
            return &st->cands[m];
    return NULL;
}

/* Rank 0: method m failed when any rank saw wrong data or a refusal. */
static int failed(bb_run_t *run, int m)
{
    const bb_tally_t *t = &bb_run_row(run, m)->agreed;
    return t->wrong > 0 || t->refused_calls > 0;
}

/* Rank 0: the fastest method that did not fail, or -1. */
static int fastest(bb_run_t *run, const redist_state_t *st)
{
    int best = -1;
    for (int m = 0; m < st->o.nmethods; m++)
        if (!failed(run, m) && st->cands[m].median > 0
            && (best < 0 || st->cands[m].median < st->cands[best].median))
            best = m;
    return best;
}

/* ---- one point: layouts, an N and a direction -------------------------------- */

/* This rank's map of one code, NULL outside it. */
static bb_map_t *code_map(bb_run_t *run, bb_redist_link_t *l, int engine,
                          const bb_layout_t *lay, int64_t n)
{
    if (!(engine ? bb_redist_link_is_engine(l) : bb_redist_link_is_driver(l)))
        return NULL;
    bb_map_t *m = NULL;
    if (bb_layout_map(lay, n, bb_redist_link_code_rank(l, engine),
                      bb_redist_link_code_size(l, engine), 1, &m) != BB_OK)
        bb_run_fatal(run, "cannot generate the layout for N = %lld", (long long)n);
    return m;
}

/* The point's maps (one N and layout pair serve each of its directions). */
static void point_maps(bb_run_t *run, redist_state_t *st, size_t i)
{
    const options_t *o = &st->o;
    bb_redist_point_t *pt = &st->pt;
    size_t nd = (size_t)o->ndirections, nn = o->elements.n;
    if (i % nd == 0) {
        size_t pair = i / (nd * nn);
        bb_map_free(st->dmap);
        bb_map_free(st->emap);
        pt->n = o->elements.values[(i / nd) % nn];
        st->from = (int)(pair / (size_t)o->nto);
        st->to = (int)(pair % (size_t)o->nto);
        st->dmap = code_map(run, st->link, 0, &o->from_layout[st->from], pt->n);
        st->emap = code_map(run, st->link, 1, &o->to_layout[st->to], pt->n);
        pt->dmap = st->dmap;
        pt->emap = st->emap;
    }
    pt->command = o->directions[i % nd];
}

/* Every method's plans, then the bound's probe for what changes owner (the
 * direct plan's traffic). */
static int64_t redist_point_begin(bb_run_t *run, void *state, size_t i)
{
    redist_state_t *st = state;
    const options_t *o = &st->o;
    int have_direct = 0;
    point_maps(run, st, i);
    for (int m = 0; m < o->nmethods; m++) {
        bb_redist_candidate_prepare(&st->cands[m], &st->pt, o->methods[m],
                                    bb_run_settings(run)->samples);
        if (o->methods[m] == BB_REDIST_DIRECT) {
            st->direct = st->cands[m].traffic;
            have_direct = 1;
        }
    }
    if (!have_direct) {
        bb_redist_setup_t su;
        bb_redist_plan_t *direct = bb_redist_point_plan(&st->pt, BB_REDIST_DIRECT, &su);
        if (bb_redist_plan_traffic(direct, &st->direct) != BB_OK)
            bb_run_fatal(run, "traffic: MPI error");
        bb_redist_plan_destroy(direct);
    }
    bb_status_t s = bb_redist_probe_for_traffic(st->link, &st->direct, o->element_bytes,
                                                &st->probe);
    if (s != BB_OK)
        bb_run_fatal(run, "bound: %s", bb_status_string(s));
    return 0;  /* the record's payload is the plan's traffic (redist_quantities) */
}

/* The medians, the bound from its probe's samples, the plans freed. */
static void redist_point_end(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    for (int m = 0; m < st->o.nmethods; m++)
        bb_redist_candidate_release(&st->cands[m], &bb_run_row(run, m)->m);
    const bb_measure_result_t *probe = &bb_run_row(run, st->o.nmethods)->m;
    const double *parts[BB_PROBE_PARTS];
    for (int p = 0; p < BB_PROBE_PARTS; p++)
        parts[p] = bb_measure_part(probe, p);
    bb_redist_probe_bound(st->probe, parts, (size_t)probe->samples, &st->bound);
    bb_redist_probe_free(st->probe);
    st->probe = NULL;
}

/* ---- a method's line and record point: what the runner does not write --------- */

static void layout_names(const redist_state_t *st, char *from, char *to, size_t len)
{
    bb_layout_format(&st->o.from_layout[st->from], from, len);
    bb_layout_format(&st->o.to_layout[st->to], to, len);
}

static void redist_key_cells(bb_run_t *run, void *state)
{
    const redist_state_t *st = state;
    bb_table_t *t = bb_run_table(run);
    char from[64], to[64], dir[2] = {(char)st->pt.command, '\0'};
    layout_names(st, from, to, sizeof from);
    bb_table_integer(t, st->pt.n);
    bb_table_text(t, dir);
    bb_table_text(t, from);
    bb_table_text(t, to);
}

static void redist_row_columns(bb_run_t *run, void *state, const bb_row_t *row)
{
    (void)state, (void)row;
    bb_redist_candidate_columns(bb_run_table(run), bb_run_rank_stat_words(run));
}

static void redist_row_cells(bb_run_t *run, void *state, const bb_row_t *row)
{
    redist_state_t *st = state;
    bb_redist_candidate_cells(bb_run_table(run), row->data, root_of(st),
                              bb_row_median(row, BB_MESSAGE_PAYLOAD), failed(run, row->index),
                              &st->bound);
}

static const char *redist_row_status(bb_run_t *run, void *state, const bb_row_t *row)
{
    redist_state_t *st = state;
    return row->agreed.wrong ? "wrong-data" : row->agreed.refused_calls ? "refused"
           : bb_redist_bound_failed(row->data, &st->bound) ? "bound-failure"
           : row->index == fastest(run, st) ? "fastest" : "ok";
}

/* The point's ratios root/method, one line for the summary after the table. */
static void ratio_line(bb_run_t *run, redist_state_t *st)
{
    char line[512], **grown = realloc(st->ratios, (st->nratios + 1) * sizeof *grown);
    int failed_mask = 0;
    for (int m = 0; m < st->o.nmethods; m++)
        failed_mask |= failed(run, m) << m;
    int len = snprintf(line, sizeof line, "P=%d %s->%s %lldB N=%lld '%c':",
                       bb_run_size(run), st->o.from[st->from], st->o.to[st->to],
                       (long long)st->o.element_bytes, (long long)st->pt.n, st->pt.command);
    if (len > 0 && (size_t)len < sizeof line)
        bb_redist_candidates_ratios(st->cands, st->o.nmethods, failed_mask, line + len,
                                    sizeof line - (size_t)len);
    if (grown == NULL)
        return;
    st->ratios = grown;
    st->ratios[st->nratios] = strdup(line);
    if (st->ratios[st->nratios] != NULL)
        st->nratios++;
}

/* After the methods' lines: the bound's line (its formula's value, its parts
 * in the notes), then the point's notes. */
static void redist_point_lines(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    bb_table_t *t = bb_run_table(run);
    redist_key_cells(run, state);
    bb_table_text(t, "bound");
    bb_table_number(t, st->bound.bound_s * 1e6, 1);
    for (int c = 0; c < (bb_run_full(run) ? 4 : 2) + 11; c++)
        bb_table_missing(t);
    bb_table_text(t, "ok");
    bb_table_row_end(t);
    bb_redist_candidates_note(t, st->cands, st->o.nmethods, fastest(run, st), &st->bound,
                              st->o.from[st->from], st->o.to[st->to]);
    ratio_line(run, st);
}

static cJSON *redist_parameters(bb_run_t *run, void *state, const bb_row_t *row)
{
    const redist_state_t *st = state;
    const options_t *o = &st->o;
    char from[64], to[64], dir[2] = {(char)st->pt.command, '\0'};
    int ranks = bb_run_size(run), mdi = o->mode == BB_REDIST_MODE_MDI;
    (void)row;  /* the runner adds "method" */
    layout_names(st, from, to, sizeof from);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "elements", (double)st->pt.n);
    cJSON_AddNumberToObject(p, "element_bytes", (double)o->element_bytes);
    cJSON_AddStringToObject(p, "direction", dir);
    cJSON_AddStringToObject(p, "mode", mdi ? "mdi" : "intra");
    cJSON_AddNumberToObject(p, "driver_ranks", mdi ? o->driver_ranks : ranks);
    cJSON_AddNumberToObject(p, "engine_ranks", mdi ? ranks - o->driver_ranks : ranks);
    cJSON_AddStringToObject(p, "from", from);
    cJSON_AddStringToObject(p, "to", to);
    cJSON_AddNumberToObject(p, "messages_per_plan", (double)o->messages);
    return p;
}

static const char *plan_scope(bb_run_t *run)
{
    return bb_run_settings(run)->rank_stat == BB_RANK_STAT_MEAN ? "plan/mean-rank"
                                                                : "plan/max-rank";
}

static void redist_first_call(bb_run_t *run, void *state, const bb_row_t *row, cJSON *first)
{
    (void)state;
    bb_redist_candidate_first(first, row->data, plan_scope(run));
}

static cJSON *redist_quantities(bb_run_t *run, void *state, const bb_row_t *row, cJSON *q)
{
    redist_state_t *st = state;
    bb_redist_candidate_quantities(q, row->data, root_of(st), &st->direct, &st->bound,
                                   &bb_run_row(run, st->o.nmethods)->m, row, plan_scope(run));
    return NULL;
}

/* The method that ran, beside (not among) the parameters that name the
 * point: auto's choice may differ between machines. */
static void redist_point_added(bb_run_t *run, void *state, const bb_row_t *row, cJSON *point)
{
    const bb_redist_candidate_t *c = row->data;
    cJSON *choice = cJSON_AddObjectToObject(point, "choice");
    (void)run, (void)state;
    cJSON_AddStringToObject(choice, "method", bb_redist_method_name(c->traffic.chosen));
    if (c->method == BB_REDIST_AUTO)
        cJSON_AddStringToObject(choice, "reason", c->choice);
    else
        cJSON_AddNullToObject(choice, "reason");
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
    static const char *const workloads[] = { "message", "md" };
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
        int d = bb_run_parse_one(run, "direction", value, directions, 3);
        o->directions[0] = d == 1 ? BB_REDIST_RECEIVE : BB_REDIST_SEND;
        o->directions[1] = BB_REDIST_RECEIVE;
        o->ndirections = d == 2 ? 2 : 1;
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
    case OPT_LINK:
        o->mode = bb_run_parse_one(run, "link", value, links, 2) == 0 ? BB_REDIST_MODE_MDI
                                                                      : BB_REDIST_MODE_INTRA;
        break;
    case OPT_WORKLOAD: o->md = bb_run_parse_one(run, "workload", value, workloads, 2) == 1;
        break;
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
    /* a line and a record point per method, and the bound (hidden); md
     * measures its own variants (md_point) */
    for (int m = 0; m < o->nmethods && !o->md; m++)
        bb_run_add_row(run, o->methods[m], 0, NULL, NULL)->data = &st->cands[m];
    if (!o->md)
        bb_run_add_row(run, V_BOUND, 0, NULL, NULL);
    /* (the root methods move their arrays in pieces: no INT_MAX limit here) */
    return o->elements.n * (size_t)o->ndirections * (size_t)o->nfrom * (size_t)o->nto;
}

static void redist_setup(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    const options_t *o = &st->o;
    bb_table_t *t = bb_run_table(run);
    for (int m = 0; m < BB_REDIST_METHODS; m++)
        if (strcmp(redist_variants[m].name, bb_redist_method_name((bb_redist_method_t)m)))
            bb_run_fatal(run, "variant %d is '%s', the library's method '%s'", m,
                         redist_variants[m].name, bb_redist_method_name((bb_redist_method_t)m));
    bb_status_t s = bb_redist_link_create(bb_bench_world(bb_run_bench(run)), o->mode,
                                          o->mode == BB_REDIST_MODE_MDI ? o->driver_ranks : 0,
                                          &st->link);
    if (s != BB_OK)
        bb_run_fatal(run, "cannot create the link: %s", bb_status_string(s));
    st->pt = (bb_redist_point_t){ .bench = bb_run_bench(run), .link = st->link,
                                  .comm = bb_redist_link_comm(st->link),
                                  .element_bytes = o->element_bytes,
                                  .messages_per_plan = o->messages,
                                  .rank_stat = bb_run_settings(run)->rank_stat };
    if (o->md) {
        if (bb_md_energy_maps(st->link, &st->md_dmap1, &st->md_emap1) != BB_OK)
            bb_run_fatal(run, "cannot create the energy maps");
        bb_md_columns(run, o->mode == BB_REDIST_MODE_MDI, o->remap_every, o->remap_fraction);
        return;
    }
    if (o->mode == BB_REDIST_MODE_MDI)
        bb_table_note(t, "mdi: driver ranks [0, %d) ('from' layout), engine ranks [%d, %d) "
                      "('to' layout), %lld-byte elements", o->driver_ranks, o->driver_ranks,
                      bb_run_size(run), (long long)o->element_bytes);
    else
        bb_table_note(t, "intra: %d ranks, layouts 'from' ('>' from) and 'to' ('<' from), "
                      "%lld-byte elements", bb_run_size(run), (long long)o->element_bytes);
    bb_table_note(t, "methods and the bound are measured interleaved, sample by sample, with "
                  "one reps figure (the fewest any fits to the budget); %lld samples, each "
                  "the per-message mean of a block, %s",
                  (long long)bb_run_settings(run)->samples, bb_run_rank_stat_words(run));
    bb_table_column(t, "N", NULL, "global elements", 8);
    bb_table_column(t, "dir", NULL, "'>' driver to engine, '<' engine to driver", 3);
    bb_table_column(t, "from", NULL, "the driver's layout", 16);
    bb_table_column(t, "to", NULL, "the engine's layout", 8);
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

/* --workload md: the point's maps, then its own variants. */
static int redist_md_point(bb_run_t *run, void *state, size_t i)
{
    redist_state_t *st = state;
    const options_t *o = &st->o;
    char from[64], to[64];
    point_maps(run, st, i);
    const bb_md_point_t pt = {
        .bench = st->pt.bench, .link = st->link, .comm = st->pt.comm, .n = st->pt.n,
        .dmap = st->dmap, .emap = st->emap, .dmap1 = st->md_dmap1, .emap1 = st->md_emap1,
        .to = &o->to_layout[st->to], .remap_every = o->remap_every,
        .remap_fraction = o->remap_fraction,
    };
    layout_names(st, from, to, sizeof from);
    return bb_md_point_measure(run, &pt, o->methods, o->nmethods,
                               o->mode == BB_REDIST_MODE_MDI, from, to);
}

static int redist_finish(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    bb_table_t *t = bb_run_table(run);
    double thr = bb_redist_link_auto_threshold(st->link);
    if (!st->o.md) {
        bb_table_note(t, "auto's threshold (calibrated at link creation, a measurement): %.0f B "
                      "per contiguous run", thr);
        bb_table_note(t, "ratios root msg_us / method msg_us (medians of interleaved samples; "
                      "> 1: faster than root):");
        for (size_t i = 0; i < st->nratios; i++)
            bb_table_note(t, "  %s", st->ratios[i]);
    }
    cJSON *section = bb_run_section(run);  /* rank 0 */
    if (section != NULL) {
        cJSON_AddStringToObject(section, "bound_note", BB_REDIST_BOUND_NOTE);
        cJSON_AddNumberToObject(section, "auto_threshold_bytes", thr);
    }
    bb_map_free(st->dmap);
    bb_map_free(st->emap);
    bb_map_free(st->md_dmap1);
    bb_map_free(st->md_emap1);
    st->dmap = st->emap = st->md_dmap1 = st->md_emap1 = NULL;
    if (bb_redist_link_destroy(st->link) != BB_OK)
        bb_run_fatal(run, "cannot free the link");
    st->link = NULL;
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
    for (int m = 0; m < BB_REDIST_METHODS; m++)
        bb_redist_candidate_clear(&st->cands[m]);
}

/* The seed's own defaults of the measurement options. */
static const bb_measure_settings_t default_settings = { .samples = 3, .budget_s = 0.02, .warmup = 1 };

static const bb_long_table_t redist_table = {
    .label_column = "method",
    .label_legend = "bound: the machine's lower bound (agree + latency + max(latency, p2p, "
                    "memory, host), each its best sample)",
    .label_width = 12,
    .time_column = "msg",
    .time_legend = "one message: recv_dist flag, admission and payload",
    .status_legend = "ok; fastest (this point's fastest method); bound-failure (bound above "
                     "msg_us: the bound is wrong, not a result); wrong-data; refused",
    .row_status = redist_row_status,
    .point_lines = redist_point_lines,
};

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
    .point = redist_md_point,
    .finish = redist_finish,
    .teardown = redist_teardown,
    .variants = redist_variants,
    .nvariants = V_N,
    .part_names = redist_part_names,
    .nparts = BB_MESSAGE_PARTS,
    .point_begin = redist_point_begin,
    .point_end = redist_point_end,
    .key_cells = redist_key_cells,
    .row_columns = redist_row_columns,
    .row_cells = redist_row_cells,
    .parameters = redist_parameters,
    .quantities = redist_quantities,
    .hidden = 1u << V_BOUND,
    .hidden_nparts = BB_PROBE_PARTS,
    .long_table = &redist_table,
    .share = BB_SHARE_MIN,
    .first_call = redist_first_call,
    .point_added = redist_point_added,
    .mode_key = "method",
    .no_provider = 1,
};

int main(int argc, char **argv) { return bb_run_main(&redist_bench, argc, argv); }
