/* redist-plan.c: redistribution plans between two data layouts (the MDI
 * model: a driver and an engine code): the methods' names, plan creation
 * (validation, the map transfer, the parts inside each code), auto's
 * trial, the engine's map updates and destruction. */
#include "config.h"
#include "redist-private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const bb_method_names[BB_REDIST_METHODS] = {
    "root", "root-gatherv", "two-step", "direct", "pack", "sparse", "pack-mpi", "overlap",
    "auto"
};

const char *bb_redist_method_name(bb_redist_method_t method)
{
    return (method >= 0 && method < BB_REDIST_METHODS) ? bb_method_names[method] : "unknown";
}

bb_status_t bb_redist_method_parse(const char *text, bb_redist_method_t *method_out)
{
    for (int m = 0; m < BB_REDIST_METHODS; m++)
        if (text != NULL && strcmp(text, bb_method_names[m]) == 0) {
            *method_out = (bb_redist_method_t)m;
            return BB_OK;
        }
    return BB_ERR_PARSE;
}

const bb_map_t *bb_plan_send_map(const bb_redist_plan_t *pl)
{
    return pl->command == BB_REDIST_SEND ? pl->dmap : pl->emap;
}
const bb_map_t *bb_plan_recv_map(const bb_redist_plan_t *pl)
{
    return pl->command == BB_REDIST_SEND ? pl->emap : pl->dmap;
}

int bb_plan_cross_uses_engine(const bb_redist_plan_t *pl)
{
    switch (pl->method) {
    case BB_REDIST_DIRECT:
    case BB_REDIST_PACK:
    case BB_REDIST_SPARSE:
    case BB_REDIST_PACK_MPI:
    case BB_REDIST_OVERLAP:
    case BB_REDIST_AUTO:
        return 1;
    case BB_REDIST_TWO_STEP:
        return pl->command == BB_REDIST_RECEIVE; /* the engine sends to std */
    default:
        return 0;
    }
}

static void bb_gather_free(bb_gather_t *g)
{
    free(g->counts); free(g->displs); free(g->idx);
    memset(g, 0, sizeof *g);
}

/* Collective over comm: gather the maps to code rank 0. */
static int bb_gather_maps(MPI_Comm comm, const bb_map_t *map, bb_gather_t *g)
{
    int p, me, rc;
    bb_gather_free(g);
    if ((rc = MPI_Comm_size(comm, &p)) != MPI_SUCCESS || (rc = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS)
        return rc;
    int cnt = (int)map->count;
    if (me == 0) {
        g->counts = calloc((size_t)p, sizeof(int));
        g->displs = calloc((size_t)p, sizeof(int));
    }
    if ((rc = MPI_Gather(&cnt, 1, MPI_INT, g->counts, 1, MPI_INT, 0, comm)) != MPI_SUCCESS)
        return rc;
    if (me == 0) {
        for (int d = 0; d < p; d++) {
            g->displs[d] = (int)g->total;
            g->total += g->counts[d];
        }
        g->idx = malloc((size_t)(g->total > 0 ? g->total : 1) * sizeof(int64_t));
    }
    return MPI_Gatherv(map->idx, cnt, MPI_INT64_T, g->idx, g->counts, g->displs,
                       MPI_INT64_T, 0, comm);
}

bb_status_t bb_plan_usable(const bb_redist_plan_t *pl)
{
    if (pl == NULL)
        return BB_ERR_ARG;
    if (bb_world_check_owner(pl->link->world) != BB_OK)
        return BB_ERR_THREAD;
    if (pl->poisoned)
        return BB_ERR_POISONED;
    return BB_OK;
}

void bb_plan_poison(bb_redist_plan_t *pl)
{
    if (!pl->poisoned) {
        pl->poisoned = 1;
        bb_poison_retain(&pl->poison, BB_POISON_REDIST, pl);
    }
}

/* auto's candidates, in enum order (a tie goes to the first): the methods
 * that run from one x1 holding runs, peer runs and datatypes together, one
 * exchange each.  pack-mpi is not one (MPI's own packing of the same
 * datatypes direct gives MPI, and its MPI_PACKED staging on top), nor
 * two-step (two exchanges and a second plan) nor the root methods (O(N)
 * per rank, never faster where the others run). */
static const bb_redist_method_t bb_trial_candidates[BB_TRIAL_CANDIDATES] = {
    BB_REDIST_DIRECT, BB_REDIST_PACK, BB_REDIST_SPARSE, BB_REDIST_OVERLAP
};

/* The reason while the trial runs: which execution runs which candidate. */
static void bb_plan_trial_next(bb_redist_plan_t *pl)
{
    pl->chosen = bb_trial_candidates[pl->trial_cand[pl->trial_done]];
    if (pl->trial_len == BB_TRIAL_RUNS)
        snprintf(pl->reason, sizeof pl->reason,
                 "auto: trial %d of %d runs %s (direct, pack, sparse, overlap in turn, %d "
                 "each; those within %d%% of the least median of their MAX over ranks run "
                 "%d more)", pl->trial_done + 1, BB_TRIAL_RUNS,
                 bb_redist_method_name(pl->chosen), BB_TRIAL_REPS, BB_TRIAL_CLOSE_PCT,
                 BB_TRIAL_MORE);
    else
        snprintf(pl->reason, sizeof pl->reason,
                 "auto: trial %d of %d runs %s (round 2: the candidates within %d%% of the "
                 "least median, %d more each in turn)", pl->trial_done + 1, pl->trial_len,
                 bb_redist_method_name(pl->chosen), BB_TRIAL_CLOSE_PCT, BB_TRIAL_MORE);
}

void bb_plan_trial_start(bb_redist_plan_t *pl)
{
    pl->trial_done = pl->trial_agreed = 0;
    pl->trial_len = BB_TRIAL_RUNS;
    for (int k = 0; k < BB_TRIAL_RUNS; k++)
        pl->trial_cand[k] = (unsigned char)(k % BB_TRIAL_CANDIDATES);
    bb_plan_trial_next(pl);
}

void bb_redist_plan_set_trial_times(bb_redist_plan_t *pl, const double *seconds, int count)
{
    pl->trial_nfake = seconds == NULL || count < 0 ? 0
                      : count < BB_TRIAL_MAX ? count : BB_TRIAL_MAX;
    for (int i = 0; i < pl->trial_nfake; i++)
        pl->trial_fake[i] = seconds[i];
}

int bb_redist_plan_trial_left(const bb_redist_plan_t *pl)
{
    return pl->method == BB_REDIST_AUTO ? pl->trial_len - pl->trial_done : 0;
}

/* The median of the agreed times of candidate c's executions so far (the
 * mean of the middle two for an even count); *runs: how many. */
static double bb_trial_median(const bb_redist_plan_t *pl, int c, int *runs)
{
    double v[BB_TRIAL_MAX];
    int n = 0;
    for (int k = 0; k < pl->trial_agreed; k++) {
        if (pl->trial_cand[k] != c)
            continue;
        int i = n++; /* insertion sort: a few values */
        for (; i > 0 && v[i - 1] > pl->trial_mx[k]; i--)
            v[i] = v[i - 1];
        v[i] = pl->trial_mx[k];
    }
    *runs = n;
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Local, from the agreed times (alike on every rank, so every rank takes
 * the same branch): after round 1, round 2's executions when more than one
 * candidate is close to the least median; else the winner, the reason,
 * and x1 trimmed to what the winner executes from. */
static void bb_plan_trial_decide(bb_redist_plan_t *pl)
{
    double med[BB_TRIAL_CANDIDATES];
    int runs[BB_TRIAL_CANDIDATES], win = 0;
    for (int c = 0; c < BB_TRIAL_CANDIDATES; c++) {
        med[c] = bb_trial_median(pl, c, &runs[c]);
        if (med[c] < med[win])
            win = c;
    }
    if (pl->trial_len == BB_TRIAL_RUNS) {
        int close[BB_TRIAL_CANDIDATES], nclose = 0;
        for (int c = 0; c < BB_TRIAL_CANDIDATES; c++)
            if (med[c] * 100.0 <= med[win] * (100.0 + BB_TRIAL_CLOSE_PCT))
                close[nclose++] = c;
        if (nclose > 1) {
            for (int r = 0; r < BB_TRIAL_MORE; r++)
                for (int i = 0; i < nclose; i++)
                    pl->trial_cand[pl->trial_len++] = (unsigned char)close[i];
            bb_plan_trial_next(pl);
            return;
        }
    }
    pl->chosen = bb_trial_candidates[win];
    snprintf(pl->reason, sizeof pl->reason,
             "auto: %s: least trial median (MAX over ranks; runs): direct %.1f us (%d), pack "
             "%.1f us (%d), sparse %.1f us (%d), overlap %.1f us (%d)",
             bb_redist_method_name(pl->chosen), med[0] * 1e6, runs[0], med[1] * 1e6, runs[1],
             med[2] * 1e6, runs[2], med[3] * 1e6, runs[3]);
    bb_xplan_t *x = &pl->x1;
    switch (pl->chosen) {
    case BB_REDIST_PACK:
        bb_xplan_drop_types(x, pl->elem);
        bb_xplan_drop_peer_runs(x);
        break;
    case BB_REDIST_OVERLAP:
        bb_xplan_drop_types(x, pl->elem);
        break;
    default: /* direct, sparse */
        bb_xplan_drop_runs(x);
    }
}

int bb_plan_trial_step(bb_redist_plan_t *pl, double payload_s)
{
    int k = pl->trial_done;
    pl->trial_s[k] = k < pl->trial_nfake ? pl->trial_fake[k] : payload_s;
    pl->trial_done = ++k;
    if (k < pl->trial_len) {
        bb_plan_trial_next(pl);
        return MPI_SUCCESS;
    }
    /* the slowest rank paces each execution: one MAX per round, so every
     * rank holds the same times and decides alike */
    int a = pl->trial_agreed;
    int rc = MPI_Allreduce(pl->trial_s + a, pl->trial_mx + a, k - a, MPI_DOUBLE, MPI_MAX,
                           pl->link->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    pl->trial_agreed = k;
    bb_plan_trial_decide(pl);
    return MPI_SUCCESS;
}

/* One side's claim for bb_plan_agree_shapes: 0 when this rank holds none
 * of the side's maps, else whether its map is regular with its own code
 * rank, the code's size and the plan's N (1) or not (-1). */
static int bb_plan_claim(const bb_redist_plan_t *pl, const bb_map_t *m, int holds, int first,
                         int size, bb_regular_t *sh, int *rank)
{
    if (!holds)
        return 0;
    return bb_map_shape_get(m, sh, rank) && *rank == pl->link->rank - first
                   && sh->size == size && sh->n == pl->n ? 1 : -1;
}

/* A descriptor's fields as one agreement carries them. */
enum { BB_SHAPE_FIELDS = 10 };
static void bb_shape_fields(const bb_regular_t *sh, int64_t *f)
{
    const bb_map_grid_t *g = &sh->grid;
    int64_t v[BB_SHAPE_FIELDS] = {sh->kind, sh->block, g->rows, g->cols, g->mb, g->nb,
                                  g->pr, g->pc, g->rsrc, g->csrc};
    memcpy(f, v, sizeof v);
}

/* Collective over the link: do both maps carry one descriptor on every rank
 * that holds them?  A map's descriptor is its holder's claim, so nothing is
 * taken from a peer: every rank checks its own claim against its own place
 * in its code, and one agreement finds whether every claim holds and names
 * one descriptor per side (each field as x and -x: one MAX finds MIN too;
 * ranks that hold no map of a side enter a value below any).  *agreed,
 * alike on every rank: 1 when the send side's claims hold, 2 the receive
 * side's, 3 both; *ss and *rs are the agreed shapes of those sides. */
static int bb_plan_agree_shapes(bb_redist_plan_t *pl, bb_regular_t *ss, bb_regular_t *rs,
                                int *agreed)
{
    enum { W = 1 + 2 * BB_SHAPE_FIELDS };  /* per side: a failed claim, then the pairs */
    const int64_t none = INT64_MIN / 4;
    const bb_map_t *maps[2] = {bb_plan_send_map(pl), bb_plan_recv_map(pl)};
    int holds[2] = {pl->sender, pl->receiver}, first[2] = {pl->s_first, pl->r_first},
        size[2] = {pl->s_n, pl->r_n};
    bb_regular_t sh[2];
    int64_t loc[2 * W], agg[2 * W];
    memset(sh, 0, sizeof sh);
    for (int i = 0; i < 2; i++) {
        int r = -1, c = bb_plan_claim(pl, maps[i], holds[i], first[i], size[i], &sh[i], &r);
        int64_t f[BB_SHAPE_FIELDS];
        bb_shape_fields(&sh[i], f);
        loc[W * i] = c < 0;
        for (int k = 0; k < BB_SHAPE_FIELDS; k++) {
            loc[W * i + 1 + 2 * k] = c ? f[k] : none;
            loc[W * i + 2 + 2 * k] = c ? -f[k] : none;
        }
    }
    int rc = bb_agree_max(pl->link->comm, loc, 2 * W, agg);
    *agreed = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    int ok[2];
    for (int i = 0; i < 2; i++) {
        const int64_t *a = agg + W * i;
        ok[i] = a[0] == 0 && a[1] != none;
        for (int k = 0; k < BB_SHAPE_FIELDS; k++)
            ok[i] &= a[1 + 2 * k] == -a[2 + 2 * k];
        bb_map_grid_t g = {a[5], a[7], a[9], a[11], (int)a[13], (int)a[15], (int)a[17],
                           (int)a[19]};
        sh[i] = (bb_regular_t){(bb_map_shape_t)a[1], pl->n, a[3], size[i], g};
    }
    *ss = sh[0];
    *rs = sh[1];
    *agreed = ok[0] | ok[1] << 1;
    return MPI_SUCCESS;
}

/* Collective over the link: x1 from sidx to ridx (per element) or, when
 * regular, from the agreed shapes ss and rs. */
static int bb_plan_build_x1(bb_redist_plan_t *pl, int regular, const bb_regular_t *ss,
                            const bb_regular_t *rs, const int64_t *sidx, int64_t sn,
                            const int64_t *ridx, int64_t rn, int how)
{
    bb_redist_link_t *l = pl->link;
    if (regular)
        return bb_xplan_build_shapes(&pl->x1, l->comm, ss, pl->s_first,
                                     pl->sender ? l->rank - pl->s_first : -1, rs, pl->r_first,
                                     pl->receiver ? l->rank - pl->r_first : -1, how, pl->elem,
                                     pl->ncomp);
    return bb_xplan_build(&pl->x1, l->comm, pl->n, sidx, sn, ridx, rn, pl->r_first, pl->r_n,
                          how, pl->elem, pl->ncomp);
}

/* Collective over the link: the cross-code part (the map transfer), with
 * the maps held now; learn_epochs: also learns both epochs.  Between two
 * regular maps it is closed-form (bb_plan_agree_shapes). */
int bb_plan_build_cross(bb_redist_plan_t *pl, int learn_epochs)
{
    bb_redist_link_t *l = pl->link;
    int rc = MPI_SUCCESS;
    if (learn_epochs) { /* plan creation learned them in its agreement */
        int64_t local[2] = {l->is_driver && pl->dmap ? pl->dmap->epoch : -1,
                            l->is_engine && pl->emap ? pl->emap->epoch : -1}, mx[2];
        if ((rc = bb_agree_max(l->comm, local, 2, mx)) != MPI_SUCCESS)
            return rc;
        pl->driver_epoch = mx[0];
        pl->engine_known = mx[1];
    }
    if (l->is_engine) {
        bb_map_free(pl->eknown);
        pl->eknown = bb_map_copy(pl->emap);
        if (pl->eknown == NULL)
            return MPI_ERR_NO_MEM;
    }
    bb_xplan_free(&pl->x1);
    bb_xplan_free(&pl->xfix);
    const bb_map_t *sm = bb_plan_send_map(pl), *rm = bb_plan_recv_map(pl);
    const int64_t *sidx = pl->sender ? sm->idx : NULL, *ridx = pl->receiver ? rm->idx : NULL;
    int64_t sn = pl->sender ? sm->count : 0, rn = pl->receiver ? rm->count : 0;
    if (pl->method == BB_REDIST_ROOT || pl->method == BB_REDIST_ROOT_GATHERV)
        return MPI_SUCCESS; /* agreed: no rank takes the agreement below */
    bb_regular_t ss, rs;
    int agreed = 0;
    if ((rc = bb_plan_agree_shapes(pl, &ss, &rs, &agreed)) != MPI_SUCCESS)
        return rc;
    int regular = agreed == 3;
    switch (pl->method) {
    case BB_REDIST_DIRECT:
    case BB_REDIST_SPARSE:
        return bb_plan_build_x1(pl, regular, &ss, &rs, sidx, sn, ridx, rn, BB_XPLAN_TYPES);
    case BB_REDIST_PACK:
        return bb_plan_build_x1(pl, regular, &ss, &rs, sidx, sn, ridx, rn, BB_XPLAN_RUNS);
    case BB_REDIST_PACK_MPI:
        return bb_plan_build_x1(pl, regular, &ss, &rs, sidx, sn, ridx, rn,
                                BB_XPLAN_TYPES | BB_XPLAN_PACKED);
    case BB_REDIST_OVERLAP:
        return bb_plan_build_x1(pl, regular, &ss, &rs, sidx, sn, ridx, rn,
                                BB_XPLAN_RUNS | BB_XPLAN_PEER_RUNS);
    case BB_REDIST_AUTO:
        /* every candidate executes from this x1 until the trial decides */
        bb_plan_trial_start(pl);
        return bb_plan_build_x1(pl, regular, &ss, &rs, sidx, sn, ridx, rn,
                                BB_XPLAN_RUNS | BB_XPLAN_PEER_RUNS | BB_XPLAN_TYPES);
    case BB_REDIST_TWO_STEP: {
        /* to the receiving code's standardized distribution: regular by
         * definition, so only the sender's claim decides */
        int64_t first = 0, cnt = 0, *std = NULL;
        bb_regular_t sstd = {.kind = BB_MAP_SHAPE_STD, .n = pl->n, .size = pl->r_n};
        if (agreed & 1)
            return bb_plan_build_x1(pl, 1, &ss, &sstd, NULL, 0, NULL, 0, BB_XPLAN_TYPES);
        if (pl->receiver)
            bb_std_block(pl->n, l->rank - pl->r_first, pl->r_n, &first, &cnt);
        std = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *std);
        if (std == NULL)
            return MPI_ERR_NO_MEM;
        for (int64_t i = 0; i < cnt; i++)
            std[i] = first + i;
        rc = bb_plan_build_x1(pl, 0, NULL, NULL, sidx, sn, std, cnt, BB_XPLAN_TYPES);
        free(std);
        return rc;
    }
    default:
        return MPI_SUCCESS;
    }
}

/* Collective over the receiving code (receivers) and the sending code
 * (senders): the parts inside one code. */
static int bb_plan_build_internal(bb_redist_plan_t *pl, int sender_side, int receiver_side)
{
    int rc = MPI_SUCCESS;
    const bb_map_t *sm = bb_plan_send_map(pl), *rm = bb_plan_recv_map(pl);
    if (pl->method == BB_REDIST_TWO_STEP && pl->receiver && receiver_side) {
        int me;
        if ((rc = MPI_Comm_rank(pl->rcomm, &me)) != MPI_SUCCESS)
            return rc;
        int64_t first, cnt;
        bb_std_block(pl->n, me, pl->r_n, &first, &cnt);
        int64_t *std = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *std);
        if (std == NULL)
            return MPI_ERR_NO_MEM;
        for (int64_t i = 0; i < cnt; i++)
            std[i] = first + i;
        bb_xplan_free(&pl->x2);
        rc = bb_xplan_build(&pl->x2, pl->rcomm, pl->n, std, cnt, rm->idx, rm->count,
                            0, pl->r_n, BB_XPLAN_TYPES, pl->elem, pl->ncomp);
        free(std);
        free(pl->tmp);
        pl->tmp_n = cnt;
        pl->tmp = malloc((size_t)(cnt > 0 ? cnt : 1) * (size_t)pl->ncomp * sizeof(double));
        if (rc == MPI_SUCCESS && pl->tmp == NULL)
            rc = MPI_ERR_NO_MEM;
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (pl->method == BB_REDIST_ROOT_GATHERV) {
        if (pl->sender && sender_side && (rc = bb_gather_maps(pl->scomm, sm, &pl->sg)) != MPI_SUCCESS)
            return rc;
        if (pl->receiver && receiver_side && (rc = bb_gather_maps(pl->rcomm, rm, &pl->rg)) != MPI_SUCCESS)
            return rc;
        int64_t need = pl->sg.total > pl->rg.total ? pl->sg.total : pl->rg.total;
        free(pl->gbuf);
        pl->gbuf_n = need;
        pl->gbuf = malloc((size_t)(need > 0 ? need : 1) * (size_t)pl->ncomp * sizeof(double));
        if (pl->gbuf == NULL)
            return MPI_ERR_NO_MEM;
    }
    if ((pl->method == BB_REDIST_ROOT || pl->method == BB_REDIST_ROOT_GATHERV) && pl->full == NULL) {
        int me_s = -1, me_r = -1;
        if (pl->sender)
            MPI_Comm_rank(pl->scomm, &me_s);
        if (pl->receiver)
            MPI_Comm_rank(pl->rcomm, &me_r);
        /* root: every rank of both codes holds N elements (today's MDI);
         * root-gatherv: only the two roots do */
        if (pl->method == BB_REDIST_ROOT || me_s == 0 || me_r == 0) {
            pl->full_n = pl->n;
            pl->full = malloc((size_t)(pl->n > 0 ? pl->n : 1) * (size_t)pl->ncomp * sizeof(double));
            if (pl->full == NULL)
                return MPI_ERR_NO_MEM;
        }
    }
    return MPI_SUCCESS;
}

int bb_plan_rebuild_internal(bb_redist_plan_t *pl)
{
    return bb_plan_build_internal(pl, 1, 1);
}

bb_status_t bb_plan_agree_status(MPI_Comm comm, bb_status_t local)
{
    int64_t mine = (int64_t)local, all = 0;
    if (bb_agree_max(comm, &mine, 1, &all) != MPI_SUCCESS)
        return BB_ERR_MPI;
    return (bb_status_t)all;
}

bb_status_t bb_plan_status_from_rc(int rc)
{
    if (rc == MPI_SUCCESS)
        return BB_OK;
    if (rc == MPI_ERR_NO_MEM)
        return BB_ERR_NOMEM;
    if (rc == MPI_ERR_INTERN)
        return BB_ERR_VALIDATION;
    if (rc == BB_RC_TOO_LARGE)
        return BB_ERR_ARG;
    return BB_ERR_MPI;
}

static void bb_plan_release(bb_redist_plan_t *pl)
{
    bb_xplan_free(&pl->x1);
    bb_xplan_free(&pl->x2);
    bb_xplan_free(&pl->xfix);
    bb_gather_free(&pl->sg);
    bb_gather_free(&pl->rg);
    bb_map_free(pl->dmap);
    bb_map_free(pl->emap);
    bb_map_free(pl->eknown);
    free(pl->tmp); free(pl->tmp2); free(pl->full); free(pl->gbuf);
    if (pl->elem != MPI_DATATYPE_NULL)
        MPI_Type_free(&pl->elem);
    free(pl);
}

/* Local.  A plan of method for command, this rank's roles in it from the
 * link; NULL without memory. */
static bb_redist_plan_t *bb_plan_new(bb_redist_link_t *link, bb_redist_method_t method,
                                     int command, int64_t element_bytes)
{
    bb_redist_plan_t *pl = calloc(1, sizeof *pl);
    if (pl == NULL)
        return NULL;
    pl->link = link;
    pl->method = method;
    pl->command = command;
    pl->eb = element_bytes;
    pl->ncomp = (int)(element_bytes / 8);
    pl->elem = MPI_DATATYPE_NULL;
    pl->chosen = method;
    pl->root_chunk = BB_ROOT_CHUNK;
    snprintf(pl->reason, sizeof pl->reason, "%s: the method asked for",
             bb_redist_method_name(method));
    int send_drv = command == BB_REDIST_SEND;
    pl->s_first = send_drv ? link->driver_first : link->engine_first;
    pl->s_n = send_drv ? link->driver_n : link->engine_n;
    pl->r_first = send_drv ? link->engine_first : link->driver_first;
    pl->r_n = send_drv ? link->engine_n : link->driver_n;
    pl->sender = send_drv ? link->is_driver : link->is_engine;
    pl->receiver = send_drv ? link->is_engine : link->is_driver;
    pl->scomm = pl->sender ? link->code : MPI_COMM_NULL;
    pl->rcomm = pl->receiver ? link->code : MPI_COMM_NULL;
    return pl;
}

/* Maps refused only because some rank could not allocate are not bad maps
 * (out of memory, not a refusal). */
static int bb_plan_refused_for_memory(const bb_redist_setup_t *su)
{
    bb_map_fault_t d = su->driver_fault, e = su->engine_fault;
    return (d.resources || e.resources) && !su->n_mismatch
           && !d.out_of_range && !d.duplicates && !d.gaps && !d.n_mismatch
           && !d.epoch_mismatch && !d.missing && !e.out_of_range
           && !e.duplicates && !e.gaps && !e.n_mismatch && !e.epoch_mismatch
           && !e.missing;
}

/* Collective over the link: each code's maps validated over its own
 * communicator, copied, then one agreement over the link so that every rank
 * of both codes refuses alike, which also covers the copies' allocation and
 * teaches every rank N and both epochs.  bad_arg: this rank's arguments
 * were bad (it takes part with a stand-in plan).  BB_OK, or the status
 * create returns (alike on every rank but BB_ERR_MPI); *setup_out is
 * written where the maps were refused. */
static bb_status_t bb_plan_validate(bb_redist_plan_t *pl, const bb_map_t *driver_map,
                                    const bb_map_t *engine_map, int bad_arg, double t0,
                                    bb_redist_setup_t *su, bb_redist_setup_t *setup_out)
{
    bb_redist_link_t *link = pl->link;
    bb_map_fault_t fd, fe;
    memset(&fd, 0, sizeof fd);
    memset(&fe, 0, sizeof fe);
    bb_status_t sd = BB_OK, se = BB_OK;
    if (link->is_driver)
        sd = bb_map_validate(link->code, driver_map, &fd);
    if (link->is_engine)
        se = bb_map_validate(link->code, engine_map, &fe);
    if (sd == BB_ERR_MPI || se == BB_ERR_MPI)
        return BB_ERR_MPI;
    if (link->is_driver && driver_map)
        pl->dmap = bb_map_copy(driver_map);
    if (link->is_engine && engine_map)
        pl->emap = bb_map_copy(engine_map);
    int nomem = (link->is_driver && driver_map && pl->dmap == NULL)
                || (link->is_engine && engine_map && pl->emap == NULL)
                || MPI_Type_contiguous(pl->ncomp, MPI_DOUBLE, &pl->elem) != MPI_SUCCESS
                || MPI_Type_commit(&pl->elem) != MPI_SUCCESS;
    /* [0, 8): the driver's faults and N, [8, 16): the engine's, then the
     * allocations, both epochs, the bad argument and the three values that
     * must agree (x and -x: one MAX finds MIN too) */
    enum { F_N = 26 };
    int64_t loc[F_N] = {
        fd.out_of_range, fd.duplicates, fd.gaps, fd.n_mismatch, fd.epoch_mismatch,
        fd.missing, fd.resources, link->is_driver && driver_map ? driver_map->n : -1,
        fe.out_of_range, fe.duplicates, fe.gaps, fe.n_mismatch, fe.epoch_mismatch,
        fe.missing, fe.resources, link->is_engine && engine_map ? engine_map->n : -1,
        nomem, link->is_driver && driver_map ? driver_map->epoch : -1,
        link->is_engine && engine_map ? engine_map->epoch : -1,
        bad_arg, pl->method, -(int64_t)pl->method, pl->command, -(int64_t)pl->command,
        pl->eb, -pl->eb
    }, agg[F_N];
    if (bb_agree_max(link->comm, loc, F_N, agg) != MPI_SUCCESS)
        return BB_ERR_MPI;
    if (agg[19] != 0 || agg[20] != -agg[21] || agg[22] != -agg[23] || agg[24] != -agg[25])
        return BB_ERR_ARG;
    su->driver_fault = (bb_map_fault_t){agg[0], agg[1], agg[2], (int)agg[3],
                                        (int)agg[4], (int)agg[5], (int)agg[6]};
    su->engine_fault = (bb_map_fault_t){agg[8], agg[9], agg[10], (int)agg[11],
                                        (int)agg[12], (int)agg[13], (int)agg[14]};
    int refused = 0;
    for (int i = 0; i < 7; i++)
        refused |= agg[i] != 0 || agg[8 + i] != 0;
    if (agg[7] != agg[15]) { /* the two codes disagree on N */
        refused = 1;
        su->n_mismatch = 1;
    }
    su->validate_s = bb_time_now() - t0;
    if (refused) {
        su->total_s = bb_time_now() - t0;
        if (setup_out)
            *setup_out = *su;
        return bb_plan_refused_for_memory(su) ? BB_ERR_NOMEM : BB_REFUSED;
    }
    if (agg[16] != 0)
        return BB_ERR_NOMEM;
    pl->n = agg[7];
    pl->driver_epoch = agg[17];
    pl->engine_known = agg[18];
    return BB_OK;
}

/* Collective over the link: the map transfer, then the parts inside each
 * code, each outcome agreed; their times into *su. */
static bb_status_t bb_plan_build(bb_redist_plan_t *pl, bb_redist_setup_t *su)
{
    MPI_Comm comm = pl->link->comm;
    double t1 = bb_time_now();
    int rc = bb_plan_build_cross(pl, 0);
    bb_status_t st = bb_plan_agree_status(comm, bb_plan_status_from_rc(rc));
    su->map_transfer_s = bb_time_now() - t1;
    if (st != BB_OK)
        return st;
    double t2 = bb_time_now();
    rc = bb_plan_build_internal(pl, 1, 1);
    st = bb_plan_agree_status(comm, bb_plan_status_from_rc(rc));
    su->plan_build_s = bb_time_now() - t2;
    return st;
}

bb_status_t bb_redist_plan_create(bb_redist_link_t *link, bb_redist_method_t method,
                                  int command, int64_t element_bytes,
                                  const bb_map_t *driver_map, const bb_map_t *engine_map,
                                  bb_redist_plan_t **plan_out, bb_redist_setup_t *setup_out)
{
    bb_redist_setup_t su;
    memset(&su, 0, sizeof su);
    if (setup_out)
        *setup_out = su;
    if (link == NULL)
        return BB_ERR_ARG;
    if (bb_world_check_owner(link->world) != BB_OK)
        return BB_ERR_THREAD;
    /* A bad argument on one rank must not leave the others in validation:
     * it takes part with a stand-in plan and its flag (and the three values,
     * which must agree) enters the one agreement of the validation. */
    int bad_arg = plan_out == NULL || method < 0 || method >= BB_REDIST_METHODS
                  || (command != BB_REDIST_SEND && command != BB_REDIST_RECEIVE)
                  || (element_bytes != 8 && element_bytes != 16 && element_bytes != 24);
    if (bad_arg) {
        method = BB_REDIST_DIRECT;
        command = BB_REDIST_SEND;
        element_bytes = 8;
    }
    double t0 = bb_time_now();
    bb_redist_plan_t *pl = bb_plan_new(link, method, command, element_bytes);
    if (pl == NULL)
        return BB_ERR_NOMEM; /* other ranks would block in validation: fatal */
    bb_status_t st = bb_plan_validate(pl, driver_map, engine_map, bad_arg, t0, &su, setup_out);
    if (st != BB_OK) {
        bb_plan_release(pl); /* alike on every rank, but for BB_ERR_MPI */
        return st;
    }
    st = bb_plan_build(pl, &su);
    su.total_s = bb_time_now() - t0;
    if (setup_out)
        *setup_out = su;
    if (st == BB_ERR_MPI) { /* retained, never freed: MPI may hold it */
        bb_plan_poison(pl);
        return st;
    }
    if (st != BB_OK) {
        bb_plan_release(pl);
        return st;
    }
    link->plans++;
    *plan_out = pl;
    return BB_OK;
}

bb_status_t bb_redist_plan_set_engine_map(bb_redist_plan_t *pl, const bb_map_t *map,
                                          bb_redist_setup_t *setup_out)
{
    bb_redist_setup_t su;
    memset(&su, 0, sizeof su);
    if (setup_out)
        *setup_out = su;
    if (pl == NULL || !pl->link->is_engine)
        return BB_ERR_ARG;
    if (bb_world_check_owner(pl->link->world) != BB_OK)
        return BB_ERR_THREAD;
    if (pl->poisoned)
        return BB_ERR_POISONED;
    double t0 = bb_time_now();
    MPI_Comm ec = pl->link->code;
    bb_status_t st = bb_map_validate(ec, map, &su.engine_fault);
    su.validate_s = bb_time_now() - t0;
    if (st == BB_ERR_MPI) {
        bb_plan_poison(pl);
        return st;
    }
    /* n and epoch agree across the engine after validation, so every engine
     * rank decides these alike. */
    if (st == BB_OK && (map->n != pl->n || map->epoch <= pl->emap->epoch)) {
        su.stale_epoch = map->epoch <= pl->emap->epoch;
        su.n_mismatch = map->n != pl->n;
        st = BB_REFUSED;
    }
    if (st != BB_OK) {
        su.total_s = bb_time_now() - t0;
        if (setup_out)
            *setup_out = su;
        return st;
    }
    bb_map_t *copy = bb_map_copy(map);
    st = bb_plan_agree_status(ec, copy ? BB_OK : BB_ERR_NOMEM);
    if (st != BB_OK) {
        bb_map_free(copy);
        return st == BB_ERR_MPI ? (bb_plan_poison(pl), st) : st;
    }
    bb_map_free(pl->emap);
    pl->emap = copy;
    double t1 = bb_time_now();
    int rc = MPI_SUCCESS;
    /* Engine-internal repairs; the cross part stays as the driver knows it. */
    if (pl->command == BB_REDIST_SEND && bb_plan_cross_uses_engine(pl)) {
        /* receive in the old layout, then convert old -> new (two steps) */
        bb_xplan_free(&pl->xfix);
        rc = bb_xplan_build(&pl->xfix, ec, pl->n, pl->eknown->idx, pl->eknown->count,
                            pl->emap->idx, pl->emap->count, 0, pl->link->engine_n,
                            BB_XPLAN_TYPES, pl->elem, pl->ncomp);
        free(pl->tmp2);
        pl->tmp2_n = pl->eknown->count;
        pl->tmp2 = malloc((size_t)(pl->eknown->count > 0 ? pl->eknown->count : 1)
                          * (size_t)pl->ncomp * sizeof(double));
        if (rc == MPI_SUCCESS && pl->tmp2 == NULL)
            rc = MPI_ERR_NO_MEM;
    } else if (!bb_plan_cross_uses_engine(pl)) {
        int snd = pl->command == BB_REDIST_RECEIVE;
        rc = bb_plan_build_internal(pl, snd, !snd);
        pl->engine_known = pl->emap->epoch; /* nothing crosses with it */
    }
    st = bb_plan_agree_status(ec, bb_plan_status_from_rc(rc));
    su.plan_build_s = bb_time_now() - t1;
    su.total_s = bb_time_now() - t0;
    if (setup_out)
        *setup_out = su;
    if (st == BB_ERR_MPI)
        bb_plan_poison(pl);
    return st;
}

bb_status_t bb_redist_plan_update_maps(bb_redist_plan_t *pl, bb_redist_setup_t *setup_out)
{
    bb_redist_setup_t su;
    memset(&su, 0, sizeof su);
    if (setup_out)
        *setup_out = su;
    bb_status_t st = bb_plan_usable(pl);
    if (st != BB_OK)
        return st;
    double t0 = bb_time_now();
    bb_redist_metrics_t m;
    st = bb_exec_update(pl, &m); /* the handshake, then the cross part */
    su.map_transfer_s = m.map_s;
    su.total_s = bb_time_now() - t0;
    if (setup_out)
        *setup_out = su;
    return st;
}

int64_t bb_redist_plan_engine_epoch_known(const bb_redist_plan_t *pl) { return pl->engine_known; }
bb_redist_method_t bb_redist_plan_chosen(const bb_redist_plan_t *pl) { return pl->chosen; }
const char *bb_redist_plan_choice_reason(const bb_redist_plan_t *pl) { return pl->reason; }
int64_t bb_redist_plan_sequence(const bb_redist_plan_t *pl) { return pl->sequence; }
int bb_redist_plan_poisoned(const bb_redist_plan_t *pl) { return pl->poisoned; }
int bb_redist_plan_is_sender(const bb_redist_plan_t *pl) { return pl->sender; }
int bb_redist_plan_is_receiver(const bb_redist_plan_t *pl) { return pl->receiver; }
const bb_map_t *bb_redist_plan_send_map(const bb_redist_plan_t *pl)
{
    return pl->sender ? bb_plan_send_map(pl) : NULL;
}
const bb_map_t *bb_redist_plan_recv_map(const bb_redist_plan_t *pl)
{
    return pl->receiver ? bb_plan_recv_map(pl) : NULL;
}

bb_status_t bb_redist_plan_destroy(bb_redist_plan_t *pl)
{
    if (pl == NULL)
        return BB_OK;
    if (pl->poisoned)
        return BB_ERR_POISONED;
    if (pl->in_call)
        return BB_ERR_STATE;
    pl->link->plans--;
    bb_plan_release(pl);
    return BB_OK;
}
