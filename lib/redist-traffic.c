/* redist-traffic.c: what a plan moves per message and holds between
 * messages (bb_redist_plan_traffic), counted from its exchange plans and
 * the root methods' MPI calls. */
#include "config.h"
#include "redist-private.h"

#include <string.h>

/* Bytes x holds (counted from the sizes it was built with). */
static int64_t bb_xplan_bytes(const bb_xplan_t *x)
{
    if (!x->built)
        return 0;
    int64_t p = x->p, b = 0;
    b += 7 * p * (int64_t)sizeof(int) + 4 * p * (int64_t)sizeof(MPI_Datatype)
         + 2 * p * (int64_t)(sizeof(MPI_Request) + sizeof(MPI_Status));
    b += ((int64_t)x->nsend + x->nrecv) * (int64_t)sizeof(int);
    b += 2 * ((int64_t)x->nsrun + x->nrrun) * (int64_t)sizeof(int);
    if (x->sbytes)
        b += 4 * p * (int64_t)sizeof(int);
    if (x->ecount_s) /* the eager layout */
        b += 4 * p * (int64_t)sizeof(int);
    if (x->srunat) /* overlap: each peer's first run, the self part's copy runs */
        b += (2 * (p + 1) + 3 * (int64_t)x->ncrun) * (int64_t)sizeof(int);
    return b + x->pbytes + x->ubytes + x->type_bytes;
}

typedef struct bb_xtraffic {
    int64_t out, in, self, peers, sruns, rruns, sslots, rslots;
} bb_xtraffic_t;

static void bb_xplan_traffic(const bb_xplan_t *x, int64_t eb, bb_xtraffic_t *t)
{
    if (!x->built)
        return;
    for (int d = 0; d < x->p; d++) {
        if (d == x->me) {
            t->self += (int64_t)x->scount[d] * eb;
            continue;
        }
        t->out += (int64_t)x->scount[d] * eb;
        t->in += (int64_t)x->rcount[d] * eb;
        if (x->scount[d] > 0 || x->rcount[d] > 0)
            t->peers++;
    }
    t->sruns += x->sruns;
    t->rruns += x->rruns;
    t->sslots += x->nsend;
    t->rslots += x->nrecv;
}

/* Bytes this rank's plan holds between messages, counted from the sizes
 * it allocated (the heap's own overhead and MPI's datatype storage aside). */
static int64_t bb_gather_bytes(const bb_gather_t *g, int ranks)
{
    if (g->counts == NULL)
        return 0;
    return 2 * (int64_t)ranks * (int64_t)sizeof(int) + g->total * (int64_t)sizeof(int64_t);
}

static int64_t bb_plan_bytes(const bb_redist_plan_t *pl)
{
    int64_t eb = pl->eb, b = (int64_t)sizeof *pl;
    const bb_map_t *maps[3] = {pl->dmap, pl->emap, pl->eknown};
    for (int i = 0; i < 3; i++)
        if (maps[i])
            b += (int64_t)sizeof *maps[i] + maps[i]->count * (int64_t)sizeof(int64_t);
    b += bb_xplan_bytes(&pl->x1) + bb_xplan_bytes(&pl->x2) + bb_xplan_bytes(&pl->xfix);
    if (pl->tmp)
        b += pl->tmp_n * eb;
    if (pl->tmp2)
        b += pl->tmp2_n * eb;
    if (pl->full)
        b += pl->full_n * eb;
    if (pl->gbuf)
        b += pl->gbuf_n * eb;
    b += bb_gather_bytes(&pl->sg, pl->s_n) + bb_gather_bytes(&pl->rg, pl->r_n);
    return b;
}

/* Local.  The root methods' traffic on this rank: the bytes each MPI call
 * names: reduce/gatherv into the sending root, the root-to-root message,
 * bcast/scatterv from the receiving root. */
static void bb_root_traffic(const bb_redist_plan_t *pl, bb_xtraffic_t *t)
{
    const bb_redist_link_t *l = pl->link;
    int64_t full = pl->n * pl->eb;
    int gv = pl->method == BB_REDIST_ROOT_GATHERV;
    int me_s = -1, me_r = -1;
    if (pl->sender)
        MPI_Comm_rank(pl->scomm, &me_s);
    if (pl->receiver)
        MPI_Comm_rank(pl->rcomm, &me_r);
    int64_t own_s = pl->sender ? bb_plan_send_map(pl)->count * pl->eb : 0;
    int64_t own_r = pl->receiver ? bb_plan_recv_map(pl)->count * pl->eb : 0;
    if (pl->sender) {
        if (me_s == 0) {
            t->in += gv ? full - own_s : (int64_t)(pl->s_n - 1) * full;
            t->self += own_s;
            t->peers += pl->s_n - 1;
        } else {
            t->out += gv ? own_s : full;
            t->peers += 1;
        }
    }
    if (pl->s_first != pl->r_first) {
        if (l->rank == pl->s_first) { t->out += full; t->peers++; }
        if (l->rank == pl->r_first) { t->in += full; t->peers++; }
    }
    if (pl->receiver) {
        if (me_r == 0) {
            t->out += gv ? full - own_r : (int64_t)(pl->r_n - 1) * full;
            t->self += own_r;
            if (!pl->sender || pl->s_first != pl->r_first)
                t->peers += pl->r_n - 1;
        } else {
            t->in += gv ? own_r : full;
            if (!pl->sender)
                t->peers += 1;
        }
    }
}

bb_status_t bb_redist_plan_traffic(bb_redist_plan_t *pl, bb_redist_traffic_t *out)
{
    /* A NULL out still takes part (no rank waits) and gets BB_ERR_ARG. */
    bb_status_t st = bb_plan_usable(pl);
    if (st != BB_OK)
        return st;
    bb_redist_link_t *l = pl->link;
    bb_xtraffic_t t;
    memset(&t, 0, sizeof t);
    int64_t full = pl->n * pl->eb;
    int steps = 1;
    switch (pl->method) {
    case BB_REDIST_ROOT:
    case BB_REDIST_ROOT_GATHERV:
        bb_root_traffic(pl, &t);
        break;
    case BB_REDIST_TWO_STEP:
        bb_xplan_traffic(&pl->x1, pl->eb, &t);
        bb_xplan_traffic(&pl->x2, pl->eb, &t);
        steps = 2;
        break;
    default:
        bb_xplan_traffic(&pl->x1, pl->eb, &t);
    }
    int64_t sums[6] = {t.out, t.peers, t.sruns, t.sslots, t.rruns, t.rslots}, s[6];
    int64_t maxs[7] = {t.in, t.out, t.self, t.peers, t.sruns, t.rruns, bb_plan_bytes(pl)}, mx[7];
    if (MPI_Allreduce(sums, s, 6, MPI_INT64_T, MPI_SUM, l->comm) != MPI_SUCCESS
        || bb_agree_max(l->comm, maxs, 7, mx) != MPI_SUCCESS) {
        bb_plan_poison(pl);
        return BB_ERR_MPI;
    }
    if (out == NULL)
        return BB_ERR_ARG;
    memset(out, 0, sizeof *out);
    out->payload_bytes = full;
    out->moved_bytes = s[0];
    out->max_in_bytes = mx[0];
    out->max_out_bytes = mx[1];
    out->max_self_bytes = mx[2];
    out->max_peers = mx[3];
    out->mean_peers = (double)s[1] / l->size;
    out->mean_run_elements = s[2] + s[4] > 0 ? (double)(s[3] + s[5]) / (double)(s[2] + s[4]) : -1.0;
    out->send_mean_run_elements = s[2] > 0 ? (double)s[3] / (double)s[2] : -1.0;
    out->recv_mean_run_elements = s[4] > 0 ? (double)s[5] / (double)s[4] : -1.0;
    out->send_runs_max = mx[4];
    out->recv_runs_max = mx[5];
    out->plan_bytes_max = mx[6];
    out->message_bytes_max = 0; /* execute allocates nothing: staging is the plan's */
    out->chosen = pl->chosen;
    out->steps = steps;
    return BB_OK;
}
