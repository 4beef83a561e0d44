/* redist-link.c: the link between two codes in one world (the MDI model:
 * a driver and an engine code, or one code with two layouts of its own) and
 * the calibration of auto's threshold at its creation. */
#include "config.h"
#include "redist-private.h"

#include <stdlib.h>
#include <string.h>

/* Calibration of auto's threshold (collective over the link): for runs of
 * 8 << 2k bytes (k = 0..4), 64 KiB per rank in runs separated by gaps as long
 * as the runs, to the next link rank (from the previous one; oneself on one
 * rank), the best of 3 of (a) one MPI_Sendrecv with the indexed datatype on
 * both sides, what direct asks of MPI for each peer, and (b) a memcpy loop
 * over the runs, one contiguous MPI_Sendrecv and the unpack loop, what pack
 * does.  (Point-to-point, not MPI_Alltoallw, so that the fault tests'
 * counts of collective calls see only the plans' own.)
 * Each best time is agreed as its MAX over the link (the slowest rank
 * paces a collective), so every rank derives the same threshold: the
 * shortest run at which (a) was no slower than (b), or twice the longest
 * run when (a) was slower at every length.  Returns an MPI error code or
 * MPI_ERR_NO_MEM (agreed). */
enum { BB_CAL_BYTES = 64 * 1024, BB_CAL_LENGTHS = 5, BB_CAL_REPS = 3 };

/* The calibration's buffers: a strided source and destination of twice the
 * bytes moved, contiguous staging for (b), the runs' lengths and places. */
typedef struct bb_cal_buffers {
    int nd;                  /* doubles moved per rank */
    double *src, *dst, *stage, *stage2;
    int *bl, *dp;
} bb_cal_buffers_t;

/* Local.  The best of BB_CAL_REPS of (a) and (b), in ns, for runs of e
 * doubles, into best[0] and best[1]. */
static int bb_link_calibrate_length(const bb_redist_link_t *l, bb_cal_buffers_t *c, int e,
                                     int64_t best[2])
{
    int p = l->size, to = (l->rank + 1) % p, from = (l->rank + p - 1) % p, rc;
    int nd = c->nd, runs = nd / e;
    for (int i = 0; i < runs; i++) {
        c->bl[i] = e;
        c->dp[i] = 2 * e * i;
    }
    MPI_Datatype t;
    if ((rc = MPI_Type_indexed(runs, c->bl, c->dp, MPI_DOUBLE, &t)) != MPI_SUCCESS
        || (rc = MPI_Type_commit(&t)) != MPI_SUCCESS)
        return rc;
    best[0] = best[1] = INT64_MAX;
    for (int r = 0; r < BB_CAL_REPS && rc == MPI_SUCCESS; r++) {
        /* (a) the datatypes */
        if ((rc = MPI_Barrier(l->comm)) != MPI_SUCCESS)
            break;
        double t0 = bb_time_now();
        rc = MPI_Sendrecv(c->src, 1, t, to, BB_TAG_CALIBRATE, c->dst, 1, t, from,
                          BB_TAG_CALIBRATE, l->comm, MPI_STATUS_IGNORE);
        double ta = bb_time_now() - t0;
        if (rc != MPI_SUCCESS || (rc = MPI_Barrier(l->comm)) != MPI_SUCCESS)
            break;
        /* (b) by hand */
        t0 = bb_time_now();
        for (int i = 0; i < runs; i++)
            memcpy(c->stage + (size_t)e * (size_t)i, c->src + c->dp[i],
                   (size_t)e * sizeof(double));
        rc = MPI_Sendrecv(c->stage, nd, MPI_DOUBLE, to, BB_TAG_CALIBRATE, c->stage2, nd,
                          MPI_DOUBLE, from, BB_TAG_CALIBRATE, l->comm, MPI_STATUS_IGNORE);
        for (int i = 0; i < runs; i++)
            memcpy(c->dst + c->dp[i], c->stage2 + (size_t)e * (size_t)i,
                   (size_t)e * sizeof(double));
        double tb = bb_time_now() - t0;
        int64_t na = (int64_t)(ta * 1e9), nb = (int64_t)(tb * 1e9);
        if (na < best[0])
            best[0] = na;
        if (nb < best[1])
            best[1] = nb;
    }
    MPI_Type_free(&t);
    return rc;
}

static int bb_link_calibrate(bb_redist_link_t *l)
{
    int rc = MPI_SUCCESS, nd = BB_CAL_BYTES / 8; /* at most nd runs */
    bb_cal_buffers_t c = {
        .nd = nd,
        .src = calloc(2 * (size_t)nd, sizeof(double)),
        .dst = calloc(2 * (size_t)nd, sizeof(double)),
        .stage = malloc((size_t)nd * sizeof(double)),
        .stage2 = malloc((size_t)nd * sizeof(double)),
        .bl = malloc((size_t)nd * sizeof(int)),
        .dp = malloc((size_t)nd * sizeof(int)),
    };
    int64_t nomem = !c.src || !c.dst || !c.stage || !c.stage2 || !c.bl || !c.dp, anynomem = 0;
    int64_t best[2 * BB_CAL_LENGTHS], agreed[2 * BB_CAL_LENGTHS];
    if ((rc = bb_agree_max(l->comm, &nomem, 1, &anynomem)) != MPI_SUCCESS)
        goto free_buffers;
    if (anynomem) {
        rc = MPI_ERR_NO_MEM;
        goto free_buffers;
    }
    for (int k = 0; k < BB_CAL_LENGTHS && rc == MPI_SUCCESS; k++)
        rc = bb_link_calibrate_length(l, &c, 1 << (2 * k), best + 2 * k);
    if (rc != MPI_SUCCESS
        || (rc = bb_agree_max(l->comm, best, 2 * BB_CAL_LENGTHS, agreed)) != MPI_SUCCESS)
        goto free_buffers;
    l->auto_threshold = 2.0 * (double)(8 << (2 * (BB_CAL_LENGTHS - 1)));
    for (int k = 0; k < BB_CAL_LENGTHS; k++)
        if (agreed[2 * k] <= agreed[2 * k + 1]) {
            l->auto_threshold = (double)(8 << (2 * k));
            break;
        }
free_buffers:
    free(c.src); free(c.dst); free(c.stage); free(c.stage2); free(c.bl); free(c.dp);
    return rc;
}

double bb_redist_link_auto_threshold(const bb_redist_link_t *link)
{
    return link->auto_threshold;
}

bb_status_t bb_redist_link_create(bb_world_t *world, bb_redist_mode_t mode,
                                  int driver_ranks, bb_redist_link_t **link_out)
{
    if (world == NULL)
        return BB_ERR_ARG;
    if (bb_world_check_owner(world) != BB_OK)
        return BB_ERR_THREAD;
    int p = bb_world_size(world);
    /* A bad or differing argument on one rank is refused on every rank
     * after one agreement, so that no rank is left in the split. */
    int bad = link_out == NULL
              || (mode == BB_REDIST_MODE_MDI && (driver_ranks < 1 || driver_ranks >= p))
              || (mode != BB_REDIST_MODE_MDI && mode != BB_REDIST_MODE_INTRA);
    int64_t dr = mode == BB_REDIST_MODE_MDI ? driver_ranks : 0;
    int64_t args[5] = {bad, (int64_t)mode, -(int64_t)mode, dr, -dr}, all[5];
    bb_redist_link_t *l = calloc(1, sizeof *l);
    if (l == NULL)
        return BB_ERR_NOMEM;
    l->world = world;
    l->mode = mode;
    l->rank = bb_world_rank(world);
    l->size = p;
    if (mode == BB_REDIST_MODE_MDI) {
        l->driver_first = 0;
        l->driver_n = driver_ranks;
        l->engine_first = driver_ranks;
        l->engine_n = p - driver_ranks;
    } else {
        l->driver_n = l->engine_n = p;
    }
    l->is_driver = l->rank >= l->driver_first && l->rank < l->driver_first + l->driver_n;
    l->is_engine = l->rank >= l->engine_first && l->rank < l->engine_first + l->engine_n;
    int color = (mode == BB_REDIST_MODE_MDI && l->is_engine) ? 1 : 0;
    MPI_Comm wc = bb_world_comm(world);
    if (MPI_Comm_dup(wc, &l->comm) != MPI_SUCCESS) {
        free(l);
        return BB_ERR_MPI;
    }
    if (MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS
        || bb_agree_max(l->comm, args, 5, all) != MPI_SUCCESS)
        return BB_ERR_MPI; /* fatal: the caller aborts; the link is left behind */
    if (all[0] != 0 || all[1] != -all[2] || all[3] != -all[4]) {
        MPI_Comm_free(&l->comm);
        free(l);
        return BB_ERR_ARG;
    }
    if (MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS
        || MPI_Comm_split(wc, color, l->rank, &l->code) != MPI_SUCCESS
        || MPI_Comm_set_errhandler(l->code, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        return BB_ERR_MPI; /* fatal: the caller aborts; the link is left behind */
    int crc = bb_link_calibrate(l);
    if (crc == MPI_ERR_NO_MEM) { /* agreed: alike on every rank */
        MPI_Comm_free(&l->code);
        MPI_Comm_free(&l->comm);
        free(l);
        return BB_ERR_NOMEM;
    }
    if (crc != MPI_SUCCESS)
        return BB_ERR_MPI; /* fatal: the caller aborts; the link is left behind */
    *link_out = l;
    return BB_OK;
}

MPI_Comm bb_redist_link_comm(const bb_redist_link_t *link) { return link->comm; }
MPI_Comm bb_redist_link_code_comm(const bb_redist_link_t *link) { return link->code; }
int bb_redist_link_is_driver(const bb_redist_link_t *link) { return link->is_driver; }
int bb_redist_link_is_engine(const bb_redist_link_t *link) { return link->is_engine; }
int bb_redist_link_code_rank(const bb_redist_link_t *link, int engine)
{
    return engine ? link->rank - link->engine_first : link->rank - link->driver_first;
}
int bb_redist_link_code_size(const bb_redist_link_t *link, int engine)
{
    return engine ? link->engine_n : link->driver_n;
}

bb_status_t bb_redist_link_destroy(bb_redist_link_t *link)
{
    if (link == NULL)
        return BB_OK;
    if (link->plans > 0)
        return BB_ERR_STATE;
    int a = MPI_Comm_free(&link->code), b = MPI_Comm_free(&link->comm);
    free(link);
    return (a == MPI_SUCCESS && b == MPI_SUCCESS) ? BB_OK : BB_ERR_MPI;
}
