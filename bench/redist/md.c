/* md.c: bbench-redist's md workload: one MD step as three commands
 * on one map pair (>COORDS, <FORCES, <ENERGY), the engine's remap by map
 * update or rebuild, and the replicated baseline of LAMMPS' fix mdi/qm; the
 * kernels the measurement engine calls, each message checked outside its
 * timing; its workload descriptor (bb_md_use), whose rows the runner
 * measures and reports. */
#include "config.h"
#include "redist.h"
#include "private/redist-tags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const bb_md_names[BB_MD_PARTS] = {
    "elapsed", "phase.coords", "phase.forces", "phase.energy", "phase.remap"
};

const char *bb_md_part_name(int part)
{
    return part >= 0 && part < BB_MD_PARTS ? bb_md_names[part] : "unknown";
}

void bb_rd_buffers_get(bb_run_t *run, bb_redist_plan_t *plan, int64_t element_bytes,
                       bb_rd_buffers_t *b)
{
    b->sm = bb_redist_plan_send_map(plan);
    b->rm = bb_redist_plan_recv_map(plan);
    int64_t sc = b->sm ? bb_map_count(b->sm) : 0, rc = b->rm ? bb_map_count(b->rm) : 0;
    b->send = malloc((size_t)(sc > 0 ? sc : 1) * (size_t)element_bytes);
    b->recv = malloc((size_t)(rc > 0 ? rc : 1) * (size_t)element_bytes);
    if (b->send == NULL || b->recv == NULL)
        bb_run_fatal(run, "cannot allocate message buffers");
}

void bb_rd_buffers_free(bb_rd_buffers_t *b)
{
    free(b->send);
    free(b->recv);
    b->send = b->recv = NULL;
}

static const int bb_md_commands[3] = {BB_REDIST_SEND, BB_REDIST_RECEIVE, BB_REDIST_RECEIVE};

/* >COORDS and <FORCES move 3 doubles per atom, <ENERGY one double. */
static int64_t bb_md_element_bytes(int c)
{
    return c == 2 ? 8 : 24;
}

static bb_redist_plan_t *bb_md_plan(const bb_md_point_t *pt, bb_md_variant_t *v, int c,
                                    double *setup_s)
{
    bb_redist_plan_t *plan = NULL;
    bb_redist_setup_t su;
    int energy = c == 2;
    bb_status_t st = bb_redist_plan_create(pt->link, v->method, bb_md_commands[c],
                                           bb_md_element_bytes(c),
                                           energy ? pt->dmap1 : pt->dmap,
                                           energy ? pt->emap1 : v->emap, &plan, &su);
    if (st != BB_OK)
        bb_run_fatal(pt->run, "md plan for %s: %s", bb_redist_method_name(v->method),
                     bb_status_string(st));
    *setup_s += su.total_s;
    return plan;
}

/* One message of a step, checked outside its timing; returns its seconds. */
static double bb_md_message(const bb_md_point_t *pt, bb_md_variant_t *v, int c)
{
    int64_t eb = bb_md_element_bytes(c), n = c == 2 ? 1 : pt->n, k = v->step;
    bb_rd_buffers_t *b = &v->b[c];
    if (b->sm)
        bb_rd_fill(b->sm, eb, k, b->send);
    if (b->rm)
        bb_rd_fill_sentinel(bb_map_count(b->rm), eb, b->recv);
    bb_redist_contract_t con = {bb_md_commands[c], n, eb, n};
    if (MPI_Barrier(pt->comm) != MPI_SUCCESS)
        bb_run_fatal(pt->run, "MPI_Barrier failed");
    double t0 = bb_time_now();
    bb_status_t st = bb_redist_plan_execute(v->plan[c], &con, b->send, b->recv, NULL);
    double t = bb_time_now() - t0;
    if (st == BB_REFUSED) {
        v->refused++;
        return t;
    }
    if (st != BB_OK)
        bb_run_fatal(pt->run, "md %s: %s", bb_redist_method_name(v->method),
                     bb_status_string(st));
    bb_rd_check_t ck;
    st = bb_rd_check(pt->comm, b->rm, n, eb, k, b->recv, &ck);
    if (st == BB_ERR_VALIDATION) {
        if (v->wrong++ == 0)
            bb_run_note(pt->run, "error: md %s%s command %d step %lld: %lld wrong "
                        "slots", bb_redist_method_name(v->method),
                        v->rebuild ? "+rebuild" : "", c, (long long)k,
                        (long long)ck.bad_slots);
    } else if (st != BB_OK) {
        bb_run_fatal(pt->run, "check: %s", bb_status_string(st));
    }
    return t;
}

/* The engine's next map: a fraction f of its elements (drawn per element
 * and remap from a hash) go to the next engine rank, appended there in
 * ascending order; the rest keep their place.  With one engine rank the
 * moved elements go to the end: the map still changes.  Every engine rank
 * follows the whole ownership (owner[], O(N)), so all agree. */
static bb_map_t *bb_md_remap_map(const bb_md_point_t *pt, bb_md_variant_t *v)
{
    bb_redist_link_t *l = pt->link;
    int me = bb_redist_link_code_rank(l, 1), pe = bb_redist_link_code_size(l, 1);
    int64_t n = pt->n, cnt = bb_map_count(v->emap);
    const int64_t *old = bb_map_indices(v->emap);
    uint64_t cut = (uint64_t)(pt->remap_fraction * 18446744073709551615.0);
    int64_t *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx), k = 0;
    char *moved = malloc((size_t)(n > 0 ? n : 1));
    if (idx == NULL || moved == NULL)
        bb_run_fatal(pt->run, "out of memory (remap)");
    v->remaps++;
    for (int64_t g = 0; g < n; g++) {
        uint64_t s = (uint64_t)g * 0x9E3779B97F4A7C15ull ^ (uint64_t)v->remaps;
        moved[g] = bb_splitmix(&s) < cut || pt->remap_fraction >= 1.0;
    }
    for (int64_t i = 0; i < cnt; i++)
        if (!moved[old[i]])
            idx[k++] = old[i];
    for (int64_t g = 0; g < n; g++)
        if (moved[g]) {
            v->owner[g] = (v->owner[g] + 1) % pe;
            if (v->owner[g] == me)
                idx[k++] = g;
        }
    bb_map_t *m = NULL;
    if (bb_map_create(n, idx, k, bb_map_epoch(v->emap) + 1, &m) != BB_OK)
        bb_run_fatal(pt->run, "cannot create the remapped map");
    free(idx);
    free(moved);
    return m;
}

static void bb_md_remap(const bb_md_point_t *pt, bb_md_variant_t *v)
{
    bb_redist_link_t *l = pt->link;
    int engine = bb_redist_link_is_engine(l);
    bb_map_t *next = engine ? bb_md_remap_map(pt, v) : NULL;
    if (engine) {
        bb_map_free(v->emap);
        v->emap = next;
    }
    for (int c = 0; c < 2; c++) {
        bb_rd_buffers_free(&v->b[c]);
        if (v->rebuild) {
            double s = 0;
            bb_redist_plan_destroy(v->plan[c]);
            v->plan[c] = bb_md_plan(pt, v, c, &s);
        } else {
            /* MDI_Set_Map on the engine, then MDI_Update_Maps */
            bb_status_t st = BB_OK;
            if (engine)
                st = bb_redist_plan_set_engine_map(v->plan[c], v->emap, NULL);
            if (st == BB_OK)
                st = bb_redist_plan_update_maps(v->plan[c], NULL);
            if (st != BB_OK)
                bb_run_fatal(pt->run, "map update (%s): %s",
                             bb_redist_method_name(v->method), bb_status_string(st));
        }
        bb_rd_buffers_get(pt->run, v->plan[c], bb_md_element_bytes(c), &v->b[c]);
    }
}

/* The kernel: one step.  Every K steps (--remap K:f) the engine remaps
 * first, inside the step's time (and in its own part). */
bb_status_t bb_md_step_call(void *arg, double *t, double *counts)
{
    bb_md_variant_t *v = arg;
    const bb_md_point_t *pt = v->pt;
    (void)counts;
    double step = 0;
    if (pt->remap_every > 0 && v->step > 0 && v->step % pt->remap_every == 0) {
        if (MPI_Barrier(pt->comm) != MPI_SUCCESS)
            return BB_ERR_MPI;
        double r0 = bb_time_now();
        bb_md_remap(pt, v);
        double r = bb_time_now() - r0;
        t[BB_MD_REMAP] += r;
        step += r;
    }
    for (int c = 0; c < 3; c++) {
        double one = bb_md_message(pt, v, c);
        t[BB_MD_COORDS + c] += one;
        step += one;
    }
    /* the step: its three messages and any remap, not the untimed fills,
     * barriers and checks between them */
    t[BB_MD_STEP] += step;
    v->step++;
    return BB_OK;
}

/* The baseline of LAMMPS' fix mdi/qm, where the engine is replicated (every
 * engine rank holds all N): coordinates gathered by an MPI_Allreduce over
 * the driver (each rank adds its elements to an N-array of zeros), one
 * message root to root, MPI_Bcast over the engine; forces reduced over the
 * engine (each rank a share), one message, MPI_Bcast over the driver, each
 * driver rank picking its own; the energy root to root.  Not a bb_map
 * partition, so not a library method: the benchmark's own MPI calls. */
bb_status_t bb_md_replicated_call(void *arg, double *t, double *counts)
{
    bb_md_variant_t *v = arg;
    const bb_md_point_t *pt = v->pt;
    bb_redist_link_t *l = pt->link;
    MPI_Comm code = bb_redist_link_code_comm(l), link = pt->comm;
    int drv = bb_redist_link_is_driver(l), croot = bb_redist_link_code_rank(l, !drv) == 0;
    int pd = bb_redist_link_code_size(l, 0), rc = MPI_SUCCESS;
    int64_t n = pt->n, k = v->step, wrong = 0;
    int n3 = (int)(3 * n);
    (void)counts;
    /* >COORDS: untimed fill; the driver's own elements into zeros */
    if (drv) {
        const int64_t *idx = bb_map_indices(pt->dmap);
        memset(v->full, 0, (size_t)(n3 > 0 ? n3 : 1) * sizeof(double));
        bb_rd_fill(pt->dmap, 24, k, v->mine);
        for (int64_t i = 0; i < bb_map_count(pt->dmap); i++)
            memcpy(v->full + 3 * idx[i], v->mine + 3 * i, 3 * sizeof(double));
    } else {
        bb_rd_fill_sentinel(n, 24, v->full);
    }
    if (MPI_Barrier(link) != MPI_SUCCESS)
        return BB_ERR_MPI;
    double t0 = bb_time_now();
    if (drv) {
        rc = MPI_Allreduce(MPI_IN_PLACE, v->full, n3, MPI_DOUBLE, MPI_SUM, code);
        if (rc == MPI_SUCCESS && croot)
            rc = MPI_Send(v->full, n3, MPI_DOUBLE, pd, BB_TAG_MD_REPLICATED, link);
    } else {
        if (croot)
            rc = MPI_Recv(v->full, n3, MPI_DOUBLE, 0, BB_TAG_MD_REPLICATED, link,
                          MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Bcast(v->full, n3, MPI_DOUBLE, 0, code);
    }
    double tc = bb_time_now() - t0;
    if (rc != MPI_SUCCESS)
        return BB_ERR_MPI;
    if (!drv) {
        bb_rd_fill(v->all, 24, k, v->expect);
        wrong += n3 > 0 && memcmp(v->full, v->expect, (size_t)n3 * sizeof(double)) != 0;
    }
    /* <FORCES: each engine rank a share of the sum (its std block) */
    if (!drv) {
        int64_t first, cnt;
        bb_std_block(n, bb_redist_link_code_rank(l, 1), bb_redist_link_code_size(l, 1),
                     &first, &cnt);
        memset(v->part, 0, (size_t)(n3 > 0 ? n3 : 1) * sizeof(double));
        memcpy(v->part + 3 * first, v->expect + 3 * first, (size_t)(3 * cnt) * sizeof(double));
    } else {
        bb_rd_fill_sentinel(n, 24, v->full);
        bb_rd_fill_sentinel(bb_map_count(pt->dmap), 24, v->mine);
    }
    if (MPI_Barrier(link) != MPI_SUCCESS)
        return BB_ERR_MPI;
    t0 = bb_time_now();
    if (!drv) {
        rc = MPI_Reduce(v->part, v->full, n3, MPI_DOUBLE, MPI_SUM, 0, code);
        if (rc == MPI_SUCCESS && croot)
            rc = MPI_Send(v->full, n3, MPI_DOUBLE, 0, BB_TAG_MD_REPLICATED, link);
    } else {
        if (croot)
            rc = MPI_Recv(v->full, n3, MPI_DOUBLE, pd, BB_TAG_MD_REPLICATED, link,
                          MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Bcast(v->full, n3, MPI_DOUBLE, 0, code);
        const int64_t *idx = bb_map_indices(pt->dmap);
        for (int64_t i = 0; rc == MPI_SUCCESS && i < bb_map_count(pt->dmap); i++)
            memcpy(v->mine + 3 * i, v->full + 3 * idx[i], 3 * sizeof(double));
    }
    double tf = bb_time_now() - t0;
    if (rc != MPI_SUCCESS)
        return BB_ERR_MPI;
    bb_rd_check_t ck;
    bb_status_t st = bb_rd_check(link, drv ? pt->dmap : NULL, n, 24, k, v->mine, &ck);
    if (st != BB_OK && st != BB_ERR_VALIDATION)
        return st;
    wrong += st == BB_ERR_VALIDATION;
    /* <ENERGY: one double, root to root */
    double e = BB_REDIST_SENTINEL;
    if (!drv && croot)
        bb_rd_fill(pt->emap1, 8, k, &e);
    if (MPI_Barrier(link) != MPI_SUCCESS)
        return BB_ERR_MPI;
    t0 = bb_time_now();
    if (croot)
        rc = drv ? MPI_Recv(&e, 1, MPI_DOUBLE, pd, BB_TAG_MD_REPLICATED, link, MPI_STATUS_IGNORE)
                 : MPI_Send(&e, 1, MPI_DOUBLE, 0, BB_TAG_MD_REPLICATED, link);
    double te = bb_time_now() - t0;
    if (rc != MPI_SUCCESS)
        return BB_ERR_MPI;
    st = bb_rd_check(link, drv ? pt->dmap1 : NULL, 1, 8, k, &e, &ck);
    if (st != BB_OK && st != BB_ERR_VALIDATION)
        return st;
    wrong += st == BB_ERR_VALIDATION;
    int64_t any = 0;
    if (bb_agree_max(link, &wrong, 1, &any) != MPI_SUCCESS)
        return BB_ERR_MPI;
    if (any > 0 && v->wrong++ == 0)
        bb_run_note(pt->run, "error: md replicated step %lld: wrong data", (long long)k);
    t[BB_MD_COORDS] += tc;
    t[BB_MD_FORCES] += tf;
    t[BB_MD_ENERGY] += te;
    t[BB_MD_STEP] += tc + tf + te;
    v->step++;
    return BB_OK;
}

void bb_md_replicated_init(const bb_md_point_t *pt, bb_md_variant_t *v)
{
    memset(v, 0, sizeof *v);
    v->pt = pt;
    v->replicated = 1;
    v->method = BB_REDIST_ROOT;
    size_t bytes = (size_t)(pt->n > 0 ? pt->n : 1) * 24;
    v->full = malloc(bytes);
    v->part = malloc(bytes);
    v->expect = malloc(bytes);
    v->mine = malloc(bytes);
    int64_t *idx = malloc((size_t)(pt->n > 0 ? pt->n : 1) * sizeof *idx);
    if (v->full == NULL || v->part == NULL || v->expect == NULL || v->mine == NULL
        || idx == NULL)
        bb_run_fatal(pt->run, "out of memory (replicated)");
    for (int64_t g = 0; g < pt->n; g++)
        idx[g] = g;
    if (bb_map_create(pt->n, idx, pt->n, 1, &v->all) != BB_OK)
        bb_run_fatal(pt->run, "cannot create the replicated map");
    free(idx);
}

void bb_md_variant_init(const bb_md_point_t *pt, bb_md_variant_t *v, bb_redist_method_t method,
                            int rebuild)
{
    bb_redist_link_t *l = pt->link;
    memset(v, 0, sizeof *v);
    v->pt = pt;
    v->method = method;
    v->rebuild = rebuild;
    if (bb_redist_link_is_engine(l)) {
        int pe = bb_redist_link_code_size(l, 1);
        if (bb_map_create(pt->n, bb_map_indices(pt->emap), bb_map_count(pt->emap),
                          bb_map_epoch(pt->emap), &v->emap) != BB_OK)
            bb_run_fatal(pt->run, "cannot copy the engine map");
        v->owner = malloc((size_t)(pt->n > 0 ? pt->n : 1) * sizeof *v->owner);
        if (v->owner == NULL)
            bb_run_fatal(pt->run, "out of memory (owners)");
        for (int r = 0; r < pe; r++) {
            int64_t *idx = NULL, cnt = 0;
            if (bb_layout_indices(pt->to, pt->n, r, pe, &idx, &cnt)
                    != BB_OK)
                bb_run_fatal(pt->run, "cannot generate the engine layout");
            for (int64_t i = 0; i < cnt; i++)
                v->owner[idx[i]] = r;
            bb_free(idx);
        }
    }
    double s = 0, smax = 0;
    for (int c = 0; c < 3; c++) {
        v->plan[c] = bb_md_plan(pt, v, c, &s);
        bb_rd_buffers_get(pt->run, v->plan[c], bb_md_element_bytes(c), &v->b[c]);
    }
    if (bb_stats_reduce_max(pt->comm, &s, 1, &smax) != MPI_SUCCESS)
        bb_run_fatal(pt->run, "MPI_Allreduce of setup times failed");
    v->setup_s = smax;
}

void bb_md_variant_free(bb_md_variant_t *v)
{
    for (int c = 0; c < 3; c++) {
        bb_rd_buffers_free(&v->b[c]);
        if (v->plan[c] != NULL)
            bb_redist_plan_destroy(v->plan[c]);
    }
    bb_map_free(v->emap);
    free(v->owner);
    bb_map_free(v->all);
    free(v->full);
    free(v->part);
    free(v->expect);
    free(v->mine);
    memset(v, 0, sizeof *v);
}

/* ---- the md workload: the runner's rows ------------------------------------ */

enum { V_REPLICATED = BB_REDIST_METHODS, V_N };

static const char *md_remap_name(const bb_md_variant_t *v)
{
    if (v->replicated)
        return "n/a";
    return v->pt->remap_every == 0 ? "none" : v->rebuild ? "rebuild" : "update";
}

static bb_status_t md_call(bb_run_t *run, void *state, bb_row_t *row, double *parts,
                           double *counts)
{
    bb_md_variant_t *v = row->data;
    (void)run, (void)state;
    bb_status_t st = v->replicated ? bb_md_replicated_call(v, parts, counts)
                                   : bb_md_step_call(v, parts, counts);
    row->local.wrong = v->wrong;
    row->local.refused_calls = v->refused;
    return st;
}

#define MD_ALL ((1u << BB_MD_PARTS) - 1u)
#define METHOD(name_) { .name = name_, \
    .differs = "this library method's three plans, one per command", .call = md_call, \
    .parts = MD_ALL, .columns = BB_COLUMNS_TIMES }
static const bb_variant_t md_variants[V_N] = {
    METHOD("root"), METHOD("root-gatherv"), METHOD("two-step"), METHOD("direct"),
    METHOD("pack"), METHOD("sparse"), METHOD("pack-mpi"), METHOD("overlap"),
    METHOD("auto"),
    [V_REPLICATED] = {
        .name = "replicated",
        .differs = "LAMMPS fix mdi/qm's baseline: the engine holds all N on every rank "
                   "(coordinates MPI_Allreduce over the driver, one message, MPI_Bcast; "
                   "forces MPI_Reduce over the engine, one message, MPI_Bcast)",
        .call = md_call,
        .parts = MD_ALL,
        .columns = BB_COLUMNS_TIMES,
    },
};

static const bb_key_t md_keys[] = {
    {"N", NULL, "global elements", 8, BB_KEY_INTEGER, "elements"},
    {"from", NULL, "the driver's layout", 16, BB_KEY_TEXT, "from"},
    {"to", NULL, "the engine's layout", 8, BB_KEY_TEXT, "to"},
    {NULL, NULL, NULL, 0, 0, NULL}
};

static void md_key_value(bb_run_t *run, void *state, int k, bb_key_value_t *out)
{
    const bb_md_run_t *md = state;
    (void)run;
    out->integer = md->pt.n;
    out->text = k == 1 ? md->from : md->to;
}

/* Every row's variant: its plans, or the replicated arrays. */
static int64_t md_point_begin(bb_run_t *run, void *state, size_t i)
{
    bb_md_run_t *md = state;
    md->point_maps(run, state, i);
    for (int r = 0; r < bb_run_rows(run); r++) {
        bb_row_t *row = bb_run_row(run, r);
        if (row->variant == V_REPLICATED)
            bb_md_replicated_init(&md->pt, &md->v[r]);
        else
            bb_md_variant_init(&md->pt, &md->v[r], (bb_redist_method_t)row->variant,
                               row->policy);
        row->data = &md->v[r];
    }
    return 0;  /* three commands of different sizes: no one payload */
}

static int md_failed(const bb_row_t *row)
{
    return row->agreed.wrong > 0 || row->agreed.refused_calls > 0;
}

/* Rank 0: the root row under the same way to remap, or NULL. */
static const bb_row_t *md_root(bb_run_t *run, const bb_row_t *row)
{
    for (int r = 0; r < bb_run_rows(run); r++) {
        const bb_row_t *q = bb_run_row(run, r);
        if (q->variant == BB_REDIST_ROOT && q->policy == row->policy)
            return q;
    }
    return NULL;
}

/* Root's (same remap) step over this row's, paired over the point's rounds
 * (the rows are interleaved); 0 with none (no root, a failed row or no
 * time), 1 for root itself (*x untouched). */
static int md_root_x(bb_run_t *run, const bb_row_t *row, bb_ratio_figure_t *x)
{
    const bb_row_t *root = md_root(run, row);
    double mine = bb_row_median(row, BB_MD_STEP);
    if (root == NULL || !(mine > 0) || md_failed(row))
        return 0;
    if (root == row)
        return 1;
    bb_rd_ratio(bb_measure_part(&root->m, BB_MD_STEP), (size_t)root->m.samples,
                bb_row_median(root, BB_MD_STEP), bb_measure_part(&row->m, BB_MD_STEP),
                (size_t)row->m.samples, mine, root->m.canary, bb_run_settings(run)->confidence,
                x);
    return x->of_medians > 0 ? 2 : 0;
}

/* A row's ratio.root record quantity (bb_rd_ratio_quantity). */
static cJSON *md_ratio_quantity(bb_run_t *run, const bb_row_t *row, const bb_ratio_figure_t *x,
                                const char *scope)
{
    const bb_row_t *root = md_root(run, row);
    if (root == NULL)
        return bb_quantity_null("ratio", scope, "root was not measured");
    return bb_rd_ratio_quantity(x, bb_measure_part(&root->m, BB_MD_STEP),
                                bb_measure_part(&row->m, BB_MD_STEP),
                                (size_t)root->m.samples, root->m.canary, scope);
}

static const char *md_row_tag(bb_run_t *run, void *state, const bb_row_t *row)
{
    (void)run, (void)state;
    return md_remap_name(row->data);
}

static const char *md_row_status(bb_run_t *run, void *state, const bb_row_t *row)
{
    int best = -1;
    (void)state;
    for (int r = 0; r < bb_run_rows(run); r++) {
        const bb_row_t *q = bb_run_row(run, r);
        if (!md_failed(q) && (best < 0 || bb_row_median(q, BB_MD_STEP)
                                              < bb_row_median(bb_run_row(run, best),
                                                              BB_MD_STEP)))
            best = r;
    }
    return row->agreed.wrong ? "wrong-data" : row->agreed.refused_calls ? "refused"
           : row->index == best ? "fastest" : "ok";
}

static void md_row_columns(bb_run_t *run, void *state, const bb_row_t *row)
{
    bb_table_t *t = bb_run_table(run);
    (void)state, (void)row;
    bb_table_column(t, "coords", "us", "median of >COORDS alone (medians do not add)", 0);
    bb_table_column(t, "forces", "us", "median of <FORCES alone", 0);
    bb_table_column(t, "energy", "us", "median of <ENERGY alone", 0);
    bb_table_column(t, "remap", "us", "median remap time per step (a remap every K steps, "
                    "so about its cost / K)", 0);
    bb_table_column(t, "setup", "us", "the three plans' setup, rank maximum", 0);
    bb_table_column(t, "root_x", NULL, "root's (same remap) step_us / this step_us, "
                    BB_REDIST_RATIO_MARKS, 0);
}

static void md_row_cells(bb_run_t *run, void *state, const bb_row_t *row)
{
    const bb_md_variant_t *v = row->data;
    bb_table_t *t = bb_run_table(run);
    size_t n = (size_t)row->m.samples;
    bb_ratio_figure_t x;
    int has = md_root_x(run, row, &x);
    (void)state;
    for (int p = BB_MD_COORDS; p <= BB_MD_REMAP; p++) {
        if (row->parts & (1u << p))
            bb_table_number(t, bb_stats_median(bb_measure_part(&row->m, p), n) * 1e6, 1);
        else
            bb_table_missing(t);
    }
    if (v->replicated)
        bb_table_missing(t);  /* no plan: nothing to set up */
    else
        bb_table_number(t, v->setup_s * 1e6, 1);
    if (has == 2) {
        char cell[48];
        bb_ratio_figure_text(&x, cell, sizeof cell);
        bb_table_text(t, cell);
    } else if (has == 1) {
        bb_table_number(t, 1.0, 2);  /* root itself: exactly 1 */
    } else {
        bb_table_missing(t);
    }
}

static void md_parameters(bb_run_t *run, void *state, const bb_row_t *row, cJSON *p)
{
    const bb_md_run_t *md = state;
    (void)run;
    cJSON_AddStringToObject(p, "workload", "md");
    cJSON_AddStringToObject(p, "remap", md_remap_name(row->data));
    cJSON_AddNumberToObject(p, "remap_every", (double)md->pt.remap_every);
    cJSON_AddNumberToObject(p, "remap_fraction", md->pt.remap_fraction);
}

static cJSON *md_quantities(bb_run_t *run, void *state, const bb_row_t *row, cJSON *q)
{
    const bb_md_variant_t *v = row->data;
    const char *scope = bb_measure_scope(&row->m);
    bb_ratio_figure_t x;
    int has = md_root_x(run, row, &x);
    (void)state;
    bb_quantities_add(q, "setup.total",
                      v->replicated ? bb_quantity_null("s", "plan/max-rank", "replicated: no "
                                                       "plan, every rank holds all N")
                                    : bb_quantity_value(v->setup_s, "s", "plan/max-rank"));
    bb_quantities_add(q, "ratio.root",
                      has == 2 ? md_ratio_quantity(run, row, &x, scope)
                      : has == 1 ? bb_quantity_value(1.0, "ratio", scope)
                                 : bb_quantity_null("ratio", scope, md_root(run, row) == NULL
                                                    ? "root was not measured"
                                                    : "this row or root failed"));
    cJSON *steps = bb_quantity_value((double)v->step, "count", "run/rank");
    cJSON_AddFalseToObject(steps, "deterministic");
    bb_quantities_add(q, "redist.steps_checked", steps);
    cJSON *remaps = bb_quantity_value((double)v->remaps, "count", "run/rank");
    cJSON_AddFalseToObject(remaps, "deterministic");
    bb_quantities_add(q, "redist.remaps", remaps);
    bb_quantities_add(q, "redist.wrong_messages",
                      bb_quantity_value((double)row->agreed.wrong, "count", "run/max-rank"));
    return NULL;
}

/* After the records: the variants freed. */
static int md_point_check(bb_run_t *run, void *state)
{
    bb_md_run_t *md = state;
    for (int r = 0; r < bb_run_rows(run); r++)
        bb_md_variant_free(&md->v[r]);
    return BB_EXIT_OK;
}

static const bb_long_table_t md_table = {
    .label_column = "method",
    .label_width = 12,
    .tag_column = "remap",
    .tag_legend = "none, update (map update) or rebuild (new plans)",
    .tag_width = 7,
    .row_tag = md_row_tag,
    .time_column = "step",
    .time_legend = "one step: >COORDS, <FORCES, <ENERGY and any remap",
    .status_legend = "ok; fastest; wrong-data; refused",
    .row_status = md_row_status,
};

static const bb_bench_desc_t md_workload = {
    .variants = md_variants,
    .nvariants = V_N,
    .part_names = bb_md_names,
    .nparts = BB_MD_PARTS,
    .point_begin = md_point_begin,
    .keys = md_keys,
    .key_value = md_key_value,
    .row_columns = md_row_columns,
    .row_cells = md_row_cells,
    .parameters = md_parameters,
    .quantities = md_quantities,
    .point_check = md_point_check,
    .long_table = &md_table,
    .share = BB_SHARE_MIN,
    .mode_key = "method",
    .no_provider = 1,
};

void bb_md_use(bb_run_t *run, bb_md_run_t *md, const bb_redist_method_t *methods,
               int nmethods, int mdi)
{
    int modes = md->pt.remap_every > 0 ? 2 : 1;
    unsigned no_remap = ~(1u << BB_MD_REMAP);
    for (int m = 0; m < BB_REDIST_METHODS; m++)  /* the table follows the library's */
        if (md_variants[m].name == NULL
            || strcmp(md_variants[m].name, bb_redist_method_name((bb_redist_method_t)m)))
            bb_run_fatal(run, "md variant %d is not the library's method '%s'", m,
                         bb_redist_method_name((bb_redist_method_t)m));
    bb_run_use(run, &md_workload);
    for (int m = 0; m < nmethods; m++)
        for (int r = 0; r < modes; r++) {
            bb_row_t *row = bb_run_add_row(run, (int)methods[m], r, NULL, NULL);
            if (modes == 1) {
                row->parts &= no_remap;
                row->absent = "no remap (--remap not given); a step's three commands "
                              "have no one payload";
            } else {
                row->absent = "a step's three commands have no one payload";
            }
        }
    /* the replicated baseline needs two codes */
    if (mdi) {
        bb_row_t *row = bb_run_add_row(run, V_REPLICATED, 0, NULL, NULL);
        row->parts &= no_remap;
        row->absent = "replicated: every engine rank holds all N, nothing to remap; a "
                      "step's three commands have no one payload";
    }
}

void bb_md_notes(bb_run_t *run, int64_t remap_every, double remap_fraction)
{
    bb_table_t *t = bb_run_table(run);
    bb_table_note(t, "md: one map pair shared by >COORDS (3 doubles), <FORCES (3 doubles) and "
                  "<ENERGY (1 double, root only); time per step; methods interleaved");
    char marks[320];
    bb_rd_ratio_marks(bb_run_settings(run)->confidence, marks, sizeof marks);
    bb_table_note(t, "root_x: %s", marks);
    if (remap_every > 0)
        bb_table_note(t, "remap every %lld steps, a fraction %g of the engine's elements "
                      "changing owner: update = set_engine_map + update_maps (MDI_Set_Map, "
                      "MDI_Update_Maps), rebuild = the plans created again",
                      (long long)remap_every, remap_fraction);
}

bb_status_t bb_md_energy_maps(bb_redist_link_t *l, bb_map_t **driver_out,
                              bb_map_t **engine_out)
{
    int64_t zero = 0;
    bb_status_t st = BB_OK;
    if (bb_redist_link_is_driver(l))
        st = bb_map_create(1, &zero, bb_redist_link_code_rank(l, 0) == 0, 1, driver_out);
    if (st == BB_OK && bb_redist_link_is_engine(l))
        st = bb_map_create(1, &zero, bb_redist_link_code_rank(l, 1) == 0, 1, engine_out);
    return st;
}
