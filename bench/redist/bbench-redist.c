/* bbench-redist: MDI parallel communication between two data layouts.
 * Every method moves the same elements between the same maps.  Each method
 * is a variant of the runner (runner/variants.c): one table line and one
 * record point each; the machine's lower bound (bench/redist/bound.c) is a hidden
 * variant measured in the same interleaved set, its figure a line of its
 * own.  A method at a point (plans, the message kernel checked outside its
 * timing, its own columns and quantities) is bench/redist/candidate.c, the
 * md workload bench/redist/md.c, the protocol lib/redist-*.c; this file
 * holds the options, the variants and the glue. */
#include "config.h"
#include "redist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct redist_state {
    bb_md_run_t md;              /* first: the md workload's state (bb_md_use) */
    bb_rd_options_t o;
    bb_redist_link_t *link;
    bb_rd_point_t pt;        /* the current point */
    bb_map_t *dmap, *emap;       /* this rank's maps for it (pt borrows them) */
    int from, to;                /* indices into the layout lists */
    const bb_layout_t *from_lay, *to_lay; /* the point's layouts (a list's or a case's) */
    char from_name[96], to_name[96], dir[2]; /* their names, the direction */
    bb_map_t *md_dmap1, *md_emap1; /* <ENERGY: element 0 on each code's rank 0 */
    /* row m < nmethods is o.methods[m]; row nmethods the bound */
    bb_rd_candidate_t cands[BB_REDIST_METHODS];
    bb_rd_reference_t ref;   /* ScaLAPACK's, while the point is measured */
    bb_rd_probe_t *probe;    /* the bound's, while the point is measured */
    bb_redist_traffic_t direct;  /* what changes owner: the direct plan's */
    bb_rd_bound_t bound;
    char **ratios;               /* one summary line per point (rank 0) */
    size_t nratios;
} redist_state_t;

/* ---- the variants: the methods and the bound ------------------------------- */

static bb_status_t method_call(bb_run_t *run, void *state, bb_row_t *row, double *parts,
                               double *counts)
{
    (void)run, (void)state, (void)counts;
    bb_rd_candidate_message(row->data, &row->local, parts);
    return BB_OK;
}

/* One burst of the bound's probe (parts BB_PROBE_*). */
static bb_status_t bound_call(bb_run_t *run, void *state, bb_row_t *row, double *parts,
                              double *counts)
{
    (void)run, (void)row;
    return bb_rd_probe_call(((redist_state_t *)state)->probe, parts, counts);
}

/* ScaLAPACK's Cpdgemr2d: a reference, not one of the library's methods. */
static bb_status_t scalapack_call(bb_run_t *run, void *state, bb_row_t *row, double *parts,
                                  double *counts)
{
    (void)run, (void)counts;
    bb_rd_reference_message(&((redist_state_t *)state)->ref, &row->local, parts);
    return BB_OK;
}

/* In bb_redist_method_t's order (checked at setup), the reference, the
 * bound. */
enum { V_SCALAPACK = BB_REDIST_METHODS, V_BOUND, V_N };
#define METHOD(name_, differs_) { .name = name_, .differs = differs_, .call = method_call, \
    .parts = (1u << BB_MESSAGE_ADMISSION) | (1u << BB_MESSAGE_PAYLOAD), \
    .columns = BB_COLUMNS_TIMES, .payload = 1 }
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
    METHOD("overlap", "pack with MPI_Irecv/MPI_Isend per peer instead of MPI_Alltoallv "
           "(receives posted first, each peer packed and sent at once, the local part "
           "copied while messages fly, each message unpacked as it completes); sparse with "
           "hand-packed runs instead of the slot datatypes"),
    METHOD("auto", "the fastest of direct, pack, sparse and overlap on the plan's own first "
           "12 messages (3 each, the MAX over ranks), those within 25% of the least median "
           "4 more each, least median (run in the setup, setup.trial): its steady state is "
           "measured"),
    [V_SCALAPACK] = {
        .name = "scalapack",
        .differs = "ScaLAPACK's Cpdgemr2d (a reference outside the library): the layouts as "
                   "block-cyclic matrices (bc2d by its grid, 1D on 1 x P), where they are; a "
                   "bc2d submatrix's whole matrix, Cpdtrmr2d for a trapezoid",
        .call = scalapack_call,
        .parts = 1u,
        .absent = "ScaLAPACK's Cpdgemr2d: no admission or payload phase of the library's",
        .columns = BB_COLUMNS_TIMES,
    },
    [V_BOUND] = {
        .name = "bound",
        .differs = "the machine's lower bound: max(latency, p2p, memory, host), each its best "
                   "sample",
        .call = bound_call,
        .parts = 1u,
        .columns = BB_COLUMNS_TIMES,
    },
};
static const char *const redist_part_names[BB_MESSAGE_PARTS] = {
    "elapsed", "phase.admission", "phase.payload"
};

/* The row of a variant that is not a library method (the reference, the
 * bound), or NULL. */
static bb_row_t *row_of(bb_run_t *run, int variant)
{
    for (int r = bb_run_rows(run) - 1; r >= 0; r--)
        if (bb_run_row(run, r)->variant == variant)
            return bb_run_row(run, r);
    return NULL;
}

static const bb_rd_candidate_t *root_of(const redist_state_t *st)
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
    const bb_rd_options_t *o = &st->o;
    bb_rd_point_t *pt = &st->pt;
    size_t nd = (size_t)o->ndirections, nn = o->elements.n;
    if (o->ncases > 0) {
        /* --cases: point i is case i, '>' */
        const bb_rd_case_t *c = &o->cases[i];
        bb_map_free(st->dmap);
        bb_map_free(st->emap);
        pt->n = c->n;
        st->from_lay = &c->from;
        st->to_lay = &c->to;
        st->dmap = code_map(run, st->link, 0, st->from_lay, pt->n);
        st->emap = code_map(run, st->link, 1, st->to_lay, pt->n);
        pt->dmap = st->dmap;
        pt->emap = st->emap;
        snprintf(st->from_name, sizeof st->from_name, "%s", c->from_name);
        snprintf(st->to_name, sizeof st->to_name, "%s", c->to_name);
        pt->command = BB_REDIST_SEND;
        st->dir[0] = (char)pt->command;
        return;
    }
    if (i % nd == 0) {
        size_t pair = i / (nd * nn);
        bb_map_free(st->dmap);
        bb_map_free(st->emap);
        pt->n = o->elements.values[(i / nd) % nn];
        st->from = (int)(pair / (size_t)o->nto);
        st->to = (int)(pair % (size_t)o->nto);
        st->from_lay = &o->from_layout[st->from];
        st->to_lay = &o->to_layout[st->to];
        st->dmap = code_map(run, st->link, 0, st->from_lay, pt->n);
        st->emap = code_map(run, st->link, 1, st->to_lay, pt->n);
        pt->dmap = st->dmap;
        pt->emap = st->emap;
        bb_layout_format(&o->from_layout[st->from], st->from_name, sizeof st->from_name);
        bb_layout_format(&o->to_layout[st->to], st->to_name, sizeof st->to_name);
    }
    pt->command = o->directions[i % nd];
    st->dir[0] = (char)pt->command;
}

/* --workload md: the point's maps into the workload's point. */
static void md_point_maps(bb_run_t *run, void *state, size_t i)
{
    redist_state_t *st = state;
    point_maps(run, st, i);
    st->md.pt.n = st->pt.n;
    st->md.pt.dmap = st->dmap;
    st->md.pt.emap = st->emap;
    st->md.pt.to = &st->o.to_layout[st->to];
    st->md.from = st->from_name;
    st->md.to = st->to_name;
}

/* Every method's plans, then the bound's probe for what changes owner (the
 * direct plan's traffic). */
static int64_t redist_point_begin(bb_run_t *run, void *state, size_t i)
{
    redist_state_t *st = state;
    const bb_rd_options_t *o = &st->o;
    int have_direct = 0;
    point_maps(run, st, i);
    for (int m = 0; m < o->nmethods; m++) {
        bb_rd_candidate_prepare(&st->cands[m], &st->pt, o->methods[m],
                                bb_run_settings(run)->samples);
        if (o->methods[m] == BB_REDIST_DIRECT) {
            st->direct = st->cands[m].traffic;
            have_direct = 1;
        }
    }
    if (!have_direct) {
        bb_redist_setup_t su;
        bb_redist_plan_t *direct = bb_rd_point_plan(&st->pt, BB_REDIST_DIRECT, &su);
        if (bb_redist_plan_traffic(direct, &st->direct) != BB_OK)
            bb_run_fatal(run, "traffic: MPI error");
        bb_redist_plan_destroy(direct);
    }
    bb_row_t *ref = row_of(run, V_SCALAPACK);
    if (ref != NULL && !bb_rd_reference_prepare(&st->ref, &st->pt, st->from_lay,
                                                st->to_lay))
        ref->off = st->ref.why;
    if (o->no_bound)
        return 0;  /* no probe: its setup and calls are most of a small point's time */
    bb_status_t s = bb_rd_probe_for_traffic(st->link, &st->direct, o->element_bytes,
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
        bb_rd_candidate_release(&st->cands[m], &bb_run_row(run, m)->m);
    if (row_of(run, V_SCALAPACK) != NULL)
        bb_rd_reference_release(&st->ref, &row_of(run, V_SCALAPACK)->m);
    if (st->o.no_bound) {
        st->bound = (bb_rd_bound_t){ .off = 1 };
        return;
    }
    const bb_measure_result_t *probe = &row_of(run, V_BOUND)->m;
    const double *parts[BB_PROBE_PARTS];
    for (int p = 0; p < BB_PROBE_PARTS; p++)
        parts[p] = bb_measure_part(probe, p);
    bb_rd_probe_bound(st->probe, parts, (size_t)probe->samples, &st->bound);
    bb_rd_probe_free(st->probe);
    st->probe = NULL;
}

/* ---- a method's line and record point: what the runner does not write --------- */

static const bb_key_t redist_keys[] = {
    {"N", NULL, "global elements", 8, BB_KEY_INTEGER, "elements"},
    {"dir", NULL, "'>' driver to engine, '<' engine to driver", 3, BB_KEY_TEXT, "direction"},
    {"from", NULL, "the driver's layout", 16, BB_KEY_TEXT, "from"},
    {"to", NULL, "the engine's layout", 8, BB_KEY_TEXT, "to"},
    {NULL, NULL, NULL, 0, 0, NULL}
};

static void redist_key_value(bb_run_t *run, void *state, int k, bb_key_value_t *out)
{
    const redist_state_t *st = state;
    (void)run;
    out->integer = st->pt.n;
    out->text = k == 1 ? st->dir : k == 2 ? st->from_name : st->to_name;
}

static void redist_row_columns(bb_run_t *run, void *state, const bb_row_t *row)
{
    (void)state, (void)row;
    bb_rd_candidate_columns(bb_run_table(run), bb_run_rank_stat_words(run));
}

static void redist_row_cells(bb_run_t *run, void *state, const bb_row_t *row)
{
    redist_state_t *st = state;
    if (row->variant == V_SCALAPACK)
        bb_rd_reference_cells(bb_run_table(run), &st->ref, root_of(st),
                              row->agreed.wrong > 0, &st->bound);
    else
        bb_rd_candidate_cells(bb_run_table(run), row->data, root_of(st),
                              bb_row_median(row, BB_MESSAGE_PAYLOAD),
                              bb_row_median(row, BB_MESSAGE_ADMISSION),
                              failed(run, row->index), &st->bound);
}

static const char *redist_row_status(bb_run_t *run, void *state, const bb_row_t *row)
{
    redist_state_t *st = state;
    return row->agreed.wrong ? "wrong-data" : row->agreed.refused_calls ? "refused"
           : row->variant == V_SCALAPACK ? "reference"
           : bb_rd_bound_failed(row->data, &st->bound) ? "bound-failure"
           : row->index == fastest(run, st) ? "fastest" : "ok";
}

/* The point's layouts as the user named them (a case's: canonical). */
static const char *from_text(const redist_state_t *st)
{
    return st->o.ncases > 0 ? st->from_name : st->o.from[st->from];
}

static const char *to_text(const redist_state_t *st)
{
    return st->o.ncases > 0 ? st->to_name : st->o.to[st->to];
}

/* The point's ratios root/method, one line for the summary after the table. */
static void ratio_line(bb_run_t *run, redist_state_t *st)
{
    char line[512], **grown = realloc(st->ratios, (st->nratios + 1) * sizeof *grown);
    int failed_mask = 0;
    for (int m = 0; m < st->o.nmethods; m++)
        failed_mask |= failed(run, m) << m;
    int len = snprintf(line, sizeof line, "P=%d %s->%s %lldB N=%lld '%c':",
                       bb_run_size(run), from_text(st), to_text(st),
                       (long long)st->o.element_bytes, (long long)st->pt.n, st->pt.command);
    if (len > 0 && (size_t)len < sizeof line)
        bb_rd_candidates_ratios(st->cands, st->o.nmethods, failed_mask, line + len,
                                sizeof line - (size_t)len);
    if (grown == NULL)
        return;
    st->ratios = grown;
    st->ratios[st->nratios] = strdup(line);
    if (st->ratios[st->nratios] != NULL)
        st->nratios++;
}

static double redist_bound_figure(bb_run_t *run, void *state, const bb_row_t *row)
{
    (void)run, (void)row;
    return ((redist_state_t *)state)->bound.bound_s;
}

/* After the methods' lines and the bound's: the point's notes. */
static void redist_point_lines(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    int best = fastest(run, st);
    bb_rd_candidates_note(bb_run_table(run), st->cands, st->o.nmethods, best, &st->bound,
                          from_text(st), to_text(st));
    if (row_of(run, V_SCALAPACK) != NULL && st->ref.median > 0 && best >= 0) {
        const bb_rd_candidate_t *b = &st->cands[best];
        bb_ratio_figure_t x;
        char fig[48];
        bb_rd_ratio(st->ref.samples, st->ref.nsamples, st->ref.median, b->samples,
                    b->nsamples, b->median, st->ref.canary, st->pt.confidence, &x);
        bb_ratio_figure_text(&x, fig, sizeof fig);
        bb_table_note(bb_run_table(run), "  scalapack (Cpdgemr2d): %.1f us, %s x the "
                      "fastest method's; setup %.1f us", st->ref.median * 1e6, fig,
                      st->ref.setup_s * 1e6);
    }
    ratio_line(run, st);
}

static void redist_parameters(bb_run_t *run, void *state, const bb_row_t *row, cJSON *p)
{
    const redist_state_t *st = state;
    const bb_rd_options_t *o = &st->o;
    int ranks = bb_run_size(run), mdi = o->mode == BB_REDIST_MODE_MDI;
    (void)row;  /* the runner adds "method" */
    cJSON_AddNumberToObject(p, "element_bytes", (double)o->element_bytes);
    cJSON_AddStringToObject(p, "mode", mdi ? "mdi" : "intra");
    cJSON_AddNumberToObject(p, "driver_ranks", mdi ? o->driver_ranks : ranks);
    cJSON_AddNumberToObject(p, "engine_ranks", mdi ? ranks - o->driver_ranks : ranks);
    cJSON_AddNumberToObject(p, "messages_per_plan", (double)o->messages);
}

static const char *plan_scope(bb_run_t *run)
{
    return bb_run_settings(run)->rank_stat == BB_RANK_STAT_MEAN ? "plan/mean-rank"
                                                                : "plan/max-rank";
}

static void redist_first_call(bb_run_t *run, void *state, const bb_row_t *row, cJSON *first)
{
    (void)state;
    if (row->variant != V_SCALAPACK)
        bb_rd_candidate_first(first, row->data, plan_scope(run));
}

static cJSON *redist_quantities(bb_run_t *run, void *state, const bb_row_t *row, cJSON *q)
{
    redist_state_t *st = state;
    const bb_row_t *bound = row_of(run, V_BOUND);  /* NULL under --no-bound */
    if (row->variant == V_SCALAPACK)
        bb_rd_reference_quantities(q, &st->ref, root_of(st), &st->bound, row);
    else
        bb_rd_candidate_quantities(q, row->data, root_of(st), &st->direct, &st->bound,
                                   bound ? &bound->m : NULL, row, plan_scope(run));
    return NULL;
}

/* The method that ran, beside (not among) the parameters that name the
 * point: auto's choice may differ between machines. */
static void redist_point_added(bb_run_t *run, void *state, const bb_row_t *row, cJSON *point)
{
    const bb_rd_candidate_t *c = row->data;
    (void)run, (void)state;
    if (row->variant == V_SCALAPACK)
        return;
    cJSON *choice = cJSON_AddObjectToObject(point, "choice");
    cJSON_AddStringToObject(choice, "method", bb_redist_method_name(c->traffic.chosen));
    if (c->method == BB_REDIST_AUTO)
        cJSON_AddStringToObject(choice, "reason", c->choice);
    else
        cJSON_AddNullToObject(choice, "reason");
}

/* ---- the descriptor ------------------------------------------------------- */

static const bb_option_t redist_options[] = {
    {"elements", 'n', "LIST", "N, global elements: 1e4,1e5 or 1K:1M[:x4|:+N]\n"
     "(default 1e3,1e4; --full-sweep 1e4,1e5,1e6)"},
    {"element-bytes", 'e', "B", "8 (CHARGES), 16 or 24 (COORDS, FORCES; default)"},
    {"driver-ranks", BB_REDIST_OPT_DRIVER, "PD", "driver ranks [0, PD), engine [PD, P)\n"
     "(--link mdi; default P/2, 1 <= PD <= P-1)"},
    {"role", BB_REDIST_OPT_ROLE, "CODE", "driver or engine: this program's code in an MPMD\n"
     "launch (mpiexec -n PD bbench-redist --role driver\n"
     "... : -n PE bbench-redist --role engine ...; --link\n"
     "mdi), every other argument the same in both.\n"
     "Without --role or --driver-ranks, a launch of two\n"
     "programs is the driver, then the engine (MPI_APPNUM)"},
    {"from", BB_REDIST_OPT_FROM, "LAYOUT", "the driver's layout; repeat for several\n"
     "(default spatial-shuffled; --full-sweep spatial,\nspatial-shuffled, random:1, root)"},
    {"to", BB_REDIST_OPT_TO, "LAYOUT", "the engine's layout; repeat for several (default std)\n"
     "layouts: std, std-ceil, block-irregular[:SEED],\nblock-reverse, cyclic, block-cyclic:B,\n"
     "spatial[:PX,PY,PZ], random[:SEED],\nspatial-shuffled[:SEED], root,\n"
     "bc2d:ROWS,MB,NB[,PR,PC[,RSRC,CSRC]] (a ScaLAPACK\nmatrix: N = ROWS x N/ROWS "
     "column-major in MB x NB\nblocks on a PR x PC grid from process (RSRC, CSRC);\n"
     "a grid of fewer ranks than the code is its first\nPR*PC ranks, the others hold nothing);\n"
     "...@IA,JA,M,N: its ROWS x N/ROWS submatrix at\n(IA, JA) of an M x N matrix so laid out;\n"
     "...@IA,JA,M,N,UPLO,DIAG,COLS: the trapezoid (U/L,\nunit U/N) of its ROWS x COLS submatrix)"},
    {"direction", 'd', "DIR", "'>' (driver to engine), '<' or both (default both)"},
    {"methods", BB_REDIST_OPT_METHODS, "LIST", "root, root-gatherv, two-step, direct, pack, "
     "sparse,\npack-mpi, overlap, auto, scalapack (a reference: ScaLAPACK's\n"
     "Cpdgemr2d, where built) (comma list or all; default all)"},
    {"messages", BB_REDIST_OPT_MESSAGES, "K", "messages per plan: the plan is rebuilt after K\n"
     "(default 0: one plan for every message of a point)"},
    {"link", BB_REDIST_OPT_LINK, "LINK", "mdi (two codes) or intra (one code, two of its own\n"
     "layouts; works on one rank) (default mdi)"},
    {"ratios", BB_REDIST_OPT_RATIOS, NULL, "the method ratios: N 1e6, from spatial and "
     "random:1,\nto std, '>' (unless given); the ratios\nroot/method close the table"},
    {"workload", BB_REDIST_OPT_WORKLOAD, "W", "message (one message per call; default) or md "
     "(one\nstep: >COORDS, <FORCES, <ENERGY on one map pair)"},
    {"cases", BB_REDIST_OPT_CASES, "FILE", "one point per line of FILE (ScaLAPACK's GEMR2D.dat:\n"
     "m n, then per matrix M N RSRC CSRC IA JA P Q MB NB;\n"
     "TRMR2D.dat: the same and UPLO DIAG, 1 or 0), from\n"
     "A's m x n part (bc2d) to B's, '>', --link intra; '#'\n"
     "starts a comment; cases needing more ranks than the\n"
     "launch are skipped and said"},
    {"no-bound", BB_REDIST_OPT_NO_BOUND, NULL, "no bound probe (its calls dominate a small "
     "point):\nthe bound and efficiency are null, said why"},
    {"remap", BB_REDIST_OPT_REMAP, "K:F", "md: every K steps a fraction F in (0, 1] of the\n"
     "engine's elements change owner, by map update and by\nrebuild (default: no remap)"},
    {NULL, 0, NULL, NULL}
};

static void redist_defaults(void *state)
{
    redist_state_t *st = state;
    bb_rd_options_defaults(&st->o);
    st->md.point_maps = md_point_maps;
}

static void redist_parse(bb_run_t *run, void *state, int key, const char *value)
{
    bb_rd_options_parse(run, &((redist_state_t *)state)->o, key, value);
}

static size_t redist_validate(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    const bb_rd_options_t *o = &st->o;
    size_t points = bb_rd_options_validate(run, &st->o);
    /* a line and a record point per method, and the bound (hidden); md
     * is a workload of its own */
    st->md.pt.remap_every = o->remap_every;
    st->md.pt.remap_fraction = o->remap_fraction;
    if (o->md) {
        bb_md_use(run, &st->md, o->methods, o->nmethods, o->mode == BB_REDIST_MODE_MDI);
    } else {
        for (int m = 0; m < o->nmethods; m++)
            bb_run_add_row(run, o->methods[m], 0, NULL, NULL)->data = &st->cands[m];
        if (o->scalapack)
            bb_run_add_row(run, V_SCALAPACK, 0, NULL, NULL);
        if (!o->no_bound)
            bb_run_add_row(run, V_BOUND, 0, NULL, NULL);
    }
    return points;
}

/* Where the codes are and how they were found (the record's run.codes,
 * written by finish). */
static void codes_note(bb_run_t *run, const bb_rd_options_t *o)
{
    static const char *const how[][2] = {
        {"split", "the world split at --driver-ranks (P/2 by default)"},
        {"role", "each program's --role"},
        {"appnum", "the launch's two programs (MPI_APPNUM 0 the driver, 1 the engine)"},
    };
    const char *why = o->codes_found_by;
    for (size_t i = 0; i < sizeof how / sizeof how[0]; i++)
        if (strcmp(how[i][0], o->codes_found_by) == 0)
            why = how[i][1];
    int p = bb_run_size(run), d = o->driver_ranks;
    if (o->drivers_first)
        bb_table_note(bb_run_table(run), "codes: driver ranks [0, %d), engine ranks [%d, %d): "
                      "%s", d, d, p, why);
    else
        bb_table_note(bb_run_table(run), "codes: the driver's %d ranks and the engine's %d "
                      "where the launch placed them (the link orders the driver's first): %s",
                      d, p - d, why);
}

static void redist_setup(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    const bb_rd_options_t *o = &st->o;
    bb_table_t *t = bb_run_table(run);
    for (int m = 0; m < BB_REDIST_METHODS; m++)
        if (strcmp(redist_variants[m].name, bb_redist_method_name((bb_redist_method_t)m)))
            bb_run_fatal(run, "variant %d is '%s', the library's method '%s'", m,
                         redist_variants[m].name, bb_redist_method_name((bb_redist_method_t)m));
    /* the codes as validate found them: the link agrees them again (a
     * difference is this program's error, fatal) */
    int mdi = o->mode == BB_REDIST_MODE_MDI;
    bb_world_t *world = bb_run_world(run);
    bb_status_t s = mdi && strcmp(o->codes_found_by, "split") != 0
        ? bb_redist_link_create_codes(world, o->mode, o->role_given ? o->role
                                                                    : BB_REDIST_ROLE_LAUNCH,
                                      &st->link)
        : bb_redist_link_create(world, o->mode, mdi ? o->driver_ranks : 0, &st->link);
    if (s != BB_OK)
        bb_run_fatal(run, "cannot create the link: %s", bb_status_string(s));
    if (mdi && (bb_redist_link_code_size(st->link, 0) != o->driver_ranks
                || strcmp(bb_redist_link_found_by(st->link), o->codes_found_by) != 0))
        bb_run_fatal(run, "the link's codes (%d driver ranks, found by %s) are not "
                     "the options' (%d, %s)", bb_redist_link_code_size(st->link, 0),
                     bb_redist_link_found_by(st->link), o->driver_ranks, o->codes_found_by);
    if (mdi)
        codes_note(run, o);
    st->pt = (bb_rd_point_t){ .run = run, .link = st->link,
                                  .comm = bb_redist_link_comm(st->link),
                                  .element_bytes = o->element_bytes,
                                  .messages_per_plan = o->messages,
                                  .rank_stat = bb_run_settings(run)->rank_stat,
                                  .confidence = bb_run_settings(run)->confidence };
    if (o->md) {
        if (bb_md_energy_maps(st->link, &st->md_dmap1, &st->md_emap1) != BB_OK)
            bb_run_fatal(run, "cannot create the energy maps");
        st->md.pt.run = st->pt.run;
        st->md.pt.link = st->link;
        st->md.pt.comm = st->pt.comm;
        st->md.pt.dmap1 = st->md_dmap1;
        st->md.pt.emap1 = st->md_emap1;
        bb_md_notes(run, o->remap_every, o->remap_fraction);
        return;
    }
    if (o->cases_file != NULL) {
        bb_table_note(t, "cases: %zu of %s, each its A layout ('from') to its B layout "
                      "('to'), '>'; %zu skipped", o->ncases, o->cases_file, o->nskipped);
        for (size_t k = 0; k < o->nskipped; k++)
            bb_table_note(t, "  %s", o->skipped[k]);
    }
    if (o->no_bound)
        bb_table_note(t, "bound: %s", BB_REDIST_BOUND_OFF);
    char marks[320];
    bb_rd_ratio_marks(bb_run_settings(run)->confidence, marks, sizeof marks);
    bb_table_note(t, "ratios (root_x, the notes' a/b and 'x the fastest'): %s", marks);
    if (o->mode == BB_REDIST_MODE_MDI)
        bb_table_note(t, "mdi: %lld-byte elements, the driver's 'from' layout to the "
                      "engine's 'to' layout", (long long)o->element_bytes);
    else
        bb_table_note(t, "intra: %d ranks, layouts 'from' ('>' from) and 'to' ('<' from), "
                      "%lld-byte elements", bb_run_size(run), (long long)o->element_bytes);
}

static void redist_label(const void *state, size_t i, char *buf, size_t len)
{
    const redist_state_t *st = state;
    const bb_rd_options_t *o = &st->o;
    if (o->ncases > 0) {
        const bb_rd_case_t *c = &o->cases[i];
        snprintf(buf, len, "%s:%d: %s->%s N = %lld, '>'", o->cases_file, c->line, c->from_name,
                 c->to_name, (long long)c->n);
        return;
    }
    size_t nd = (size_t)o->ndirections, nn = o->elements.n, pair = i / (nd * nn);
    snprintf(buf, len, "%s->%s N = %lld, '%c'", o->from[pair / (size_t)o->nto],
             o->to[pair % (size_t)o->nto], (long long)o->elements.values[(i / nd) % nn],
             o->directions[i % nd]);
}

static int redist_finish(bb_run_t *run, void *state)
{
    redist_state_t *st = state;
    bb_table_t *t = bb_run_table(run);
    if (!st->o.md) {
        char marks[320];
        bb_rd_ratio_marks(bb_run_settings(run)->confidence, marks, sizeof marks);
        bb_table_note(t, "ratios root msg_us / method msg_us (> 1: faster than root), %s:",
                      marks);
        for (size_t i = 0; i < st->nratios; i++)
            bb_table_note(t, "  %s", st->ratios[i]);
    }
    cJSON *section = bb_run_section(run);  /* rank 0 */
    if (section != NULL) {
        cJSON_AddStringToObject(section, "bound_note", BB_REDIST_BOUND_NOTE);
        if (st->o.mode == BB_REDIST_MODE_MDI) {
            /* beside the points, not among their parameters: the same
             * codes found another way are the same points */
            cJSON *codes = cJSON_AddObjectToObject(section, "codes");
            cJSON_AddStringToObject(codes, "found_by", bb_redist_link_found_by(st->link));
            cJSON_AddNumberToObject(codes, "driver_ranks", st->o.driver_ranks);
            cJSON_AddNumberToObject(codes, "engine_ranks",
                                    bb_run_size(run) - st->o.driver_ranks);
            cJSON_AddBoolToObject(codes, "driver_first_in_world", st->o.drivers_first);
        }
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
    bb_rd_options_clear(&st->o);
    for (size_t i = 0; i < st->nratios; i++)
        free(st->ratios[i]);
    free(st->ratios);
    st->ratios = NULL;
    st->nratios = 0;
    for (int m = 0; m < BB_REDIST_METHODS; m++)
        bb_rd_candidate_clear(&st->cands[m]);
}

/* The seed's own defaults of the measurement options. */
static const bb_measure_settings_t default_settings = {
    .samples = 3, .budget_s = 0.02, .warmup = 1
};

static const bb_long_table_t redist_table = {
    .label_column = "method",
    .label_legend = "bound: the machine's lower bound (max(latency, p2p, memory, "
                    "host), each its best sample)",
    .label_width = 12,
    .time_column = "msg",
    .time_legend = "one message: the handshake (recv_dist flag and admission) and payload",
    .status_legend = "ok; fastest (this point's fastest method); reference (ScaLAPACK's, "
                     "not a method of the library); not-measured (a layout it cannot "
                     "express, said below the line); bound-failure (bound above msg_us: the "
                     "bound is wrong, not a result); wrong-data; refused",
    .row_status = redist_row_status,
    .hidden_figure = redist_bound_figure,
    .point_lines = redist_point_lines,
};

static const bb_bench_desc_t redist_bench = {
    .program = "bbench-redist",
    .benchmark = "redist",
    .summary = "Measure MDI parallel communication between a driver code and an engine\n"
               "code whose data are laid out differently: today's rank-0 path against\n"
               "redistribution with maps (doc/redist.md).  Launch with mpiexec -n P\n"
               "(the world split at --driver-ranks), or as the two programs MDI users\n"
               "launch: mpiexec -n PD bbench-redist --role driver ... : -n PE\n"
               "bbench-redist --role engine ...",
    .notes = "A call is one message; a barrier (untimed) precedes each message.  The\n"
             "methods and the bound are measured interleaved, sample by sample.  Setup\n"
             "(validation, map transfer, plan build) is timed apart, once per plan.\n"
             "Every message is checked outside the timing: value\n"
             "((g*3 + c)*4 + (k & 3)) in every slot of sentinel-filled buffers and a\n"
             "global checksum.  bound = max(latency, p2p, memory, host), each\n"
             "part its best sample (agree, beside it, is what a method that is not\n"
             "eager pays on top); efficiency = bound / elapsed, never\n"
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
    .finish = redist_finish,
    .teardown = redist_teardown,
    .variants = redist_variants,
    .nvariants = V_N,
    .part_names = redist_part_names,
    .nparts = BB_MESSAGE_PARTS,
    .point_begin = redist_point_begin,
    .point_end = redist_point_end,
    .keys = redist_keys,
    .key_value = redist_key_value,
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
    .code_option = "role",
};

int main(int argc, char **argv) { return bb_run_main(&redist_bench, argc, argv); }
