/* redist-plan.c: the link between two codes, the methods and the
 * redistribution plans between two data layouts (the MDI model: a driver
 * and an engine code), their admission, execution and traffic.
 *
 * Plans are built with a rendezvous through the standardized distribution of
 * the receiving code: each receiver announces its elements to their std
 * holder, each sender asks the std holders where its elements go, then each
 * sender tells each receiver which elements arrive in which order (its local
 * storage order).  That is the map transfer, O(N/P) per rank; no rank holds a
 * whole map except the roots of the root methods, as MDI does today. */
#include "config.h"
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tags on the link communicator (53 is the bound's ping-pong, harness; 54
 * the calibration of auto). */
enum { BB_TAG_FLAG = 51, BB_TAG_DATA = 52, BB_TAG_CAL = 54 };

/* Doubles per MPI call in the root methods' whole-array steps (Reduce,
 * the root-to-root message, Bcast): 2^30, so that N * components may pass
 * INT_MAX (Gatherv/Scatterv count elements, at most INT32_MAX). */
#define BB_ROOT_CHUNK ((int64_t)1 << 30)

/* ------------------------------------------------------------------------ */
/* The link: two codes in one world                                         */
/* ------------------------------------------------------------------------ */

struct bb_redist_link {
    bb_world_t *world;      /* borrowed */
    bb_redist_mode_t mode;
    MPI_Comm comm;          /* duplicate of the world: the inter-code channel */
    MPI_Comm code;          /* this rank's code (MPI_Comm_split) */
    int rank, size;
    int driver_first, driver_n, engine_first, engine_n;
    int is_driver, is_engine;
    int64_t plans;          /* plans alive: destroy refuses while > 0 */
    double auto_threshold;  /* bytes per run below which auto packs */
};

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

static int bb_link_calibrate(bb_redist_link_t *l)
{
    int p = l->size, to = (l->rank + 1) % p, from = (l->rank + p - 1) % p, rc = MPI_SUCCESS;
    int nd = BB_CAL_BYTES / 8, maxruns = nd; /* doubles moved; runs at most */
    double *src = calloc(2 * (size_t)nd, sizeof(double)), *dst = calloc(2 * (size_t)nd, sizeof(double));
    double *stage = malloc((size_t)nd * sizeof(double)), *stage2 = malloc((size_t)nd * sizeof(double));
    int *bl = malloc((size_t)maxruns * sizeof(int)), *dp = malloc((size_t)maxruns * sizeof(int));
    int64_t nomem = !src || !dst || !stage || !stage2 || !bl || !dp, anynomem = 0;
    int64_t best[2 * BB_CAL_LENGTHS], agreed[2 * BB_CAL_LENGTHS];
    if ((rc = bb_agree_max(l->comm, &nomem, 1, &anynomem)) != MPI_SUCCESS)
        goto out;
    if (anynomem) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    for (int k = 0; k < BB_CAL_LENGTHS; k++) {
        int e = 1 << (2 * k), runs = nd / e; /* doubles per run */
        for (int i = 0; i < runs; i++) {
            bl[i] = e;
            dp[i] = 2 * e * i;
        }
        MPI_Datatype t;
        if ((rc = MPI_Type_indexed(runs, bl, dp, MPI_DOUBLE, &t)) != MPI_SUCCESS
            || (rc = MPI_Type_commit(&t)) != MPI_SUCCESS)
            goto out;
        best[2 * k] = best[2 * k + 1] = INT64_MAX;
        for (int r = 0; r < BB_CAL_REPS && rc == MPI_SUCCESS; r++) {
            /* (a) the datatypes */
            if ((rc = MPI_Barrier(l->comm)) != MPI_SUCCESS)
                break;
            double t0 = bb_time_now();
            rc = MPI_Sendrecv(src, 1, t, to, BB_TAG_CAL, dst, 1, t, from, BB_TAG_CAL, l->comm,
                              MPI_STATUS_IGNORE);
            double ta = bb_time_now() - t0;
            if (rc != MPI_SUCCESS || (rc = MPI_Barrier(l->comm)) != MPI_SUCCESS)
                break;
            /* (b) by hand */
            t0 = bb_time_now();
            for (int i = 0; i < runs; i++)
                memcpy(stage + (size_t)e * (size_t)i, src + dp[i], (size_t)e * sizeof(double));
            rc = MPI_Sendrecv(stage, nd, MPI_DOUBLE, to, BB_TAG_CAL, stage2, nd, MPI_DOUBLE, from,
                              BB_TAG_CAL, l->comm, MPI_STATUS_IGNORE);
            for (int i = 0; i < runs; i++)
                memcpy(dst + dp[i], stage2 + (size_t)e * (size_t)i, (size_t)e * sizeof(double));
            double tb = bb_time_now() - t0;
            int64_t na = (int64_t)(ta * 1e9), nb = (int64_t)(tb * 1e9);
            if (na < best[2 * k])
                best[2 * k] = na;
            if (nb < best[2 * k + 1])
                best[2 * k + 1] = nb;
        }
        MPI_Type_free(&t);
        if (rc != MPI_SUCCESS)
            goto out;
    }
    if ((rc = bb_agree_max(l->comm, best, 2 * BB_CAL_LENGTHS, agreed)) != MPI_SUCCESS)
        goto out;
    l->auto_threshold = 2.0 * (double)(8 << (2 * (BB_CAL_LENGTHS - 1)));
    for (int k = 0; k < BB_CAL_LENGTHS; k++)
        if (agreed[2 * k] <= agreed[2 * k + 1]) {
            l->auto_threshold = (double)(8 << (2 * k));
            break;
        }
out:
    free(src); free(dst); free(stage); free(stage2); free(bl); free(dp);
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

/* ------------------------------------------------------------------------ */
/* Exchange plans: who sends which local slots to whom, in which order      */
/* ------------------------------------------------------------------------ */

/* How a plan's exchange moves each peer's slots (bb_xplan_build). */
enum {
    BB_XPLAN_TYPES = 1,  /* indexed slot datatypes (direct, sparse, pack-mpi) */
    BB_XPLAN_RUNS = 2,   /* run lists and element staging (pack: memcpy loop) */
    BB_XPLAN_PACKED = 4  /* MPI_PACKED staging (pack-mpi) */
};
/* A private outcome of bb_xplan_build (MPI codes are >= 0): the plan is
 * over a limit of an MPI call's int arguments (an argument error). */
#define BB_RC_TOO_LARGE (-2)

typedef struct bb_xplan {
    MPI_Comm comm;          /* borrowed */
    int p, me, built, how;
    int nsend, nrecv;       /* local slots sent / received, self included */
    int *scount, *sdispl, *rcount, *rdispl;  /* per peer, in elements */
    int *spos, *rpos;       /* local slots, grouped by peer, message order */
    MPI_Datatype *stype, *rtype;  /* indexed types per peer (direct, sparse) */
    int *wcount_s, *wcount_r, *wdispl;
    MPI_Datatype *wtype_s, *wtype_r;
    int *srun, *rrun;       /* pack: runs as (first local slot, length) pairs
                               over the whole message order */
    int nsrun, nrrun;
    int *sbytes, *sbdispl, *rbytes, *rbdispl;  /* pack-mpi: per peer, bytes */
    char *pbuf, *ubuf;      /* pack staging (elements or MPI_PACKED bytes) */
    int64_t pbytes, ubytes;
    MPI_Request *reqs;
    MPI_Status *stats;
    int64_t sruns, rruns;   /* contiguous runs of the per-peer slot lists */
    int64_t type_bytes;     /* the arrays given to MPI_Type_indexed */
} bb_xplan_t;

static void bb_xplan_free_types(bb_xplan_t *x)
{
    for (int d = 0; d < x->p; d++) {
        if (x->stype && x->stype[d] != MPI_DATATYPE_NULL)
            MPI_Type_free(&x->stype[d]);
        if (x->rtype && x->rtype[d] != MPI_DATATYPE_NULL)
            MPI_Type_free(&x->rtype[d]);
    }
    x->type_bytes = 0;
}

static void bb_xplan_free(bb_xplan_t *x)
{
    if (!x->built)
        return;
    bb_xplan_free_types(x);
    free(x->scount); free(x->sdispl); free(x->rcount); free(x->rdispl);
    free(x->spos); free(x->rpos); free(x->stype); free(x->rtype);
    free(x->wcount_s); free(x->wcount_r); free(x->wdispl);
    free(x->wtype_s); free(x->wtype_r); free(x->srun); free(x->rrun);
    free(x->sbytes); free(x->sbdispl); free(x->rbytes); free(x->rbdispl);
    free(x->pbuf); free(x->ubuf); free(x->reqs); free(x->stats);
    memset(x, 0, sizeof *x);
}

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
    return b + x->pbytes + x->ubytes + x->type_bytes;
}

static int64_t bb_runs(const int *pos, int n)
{
    int64_t r = 0;
    for (int j = 0; j < n; j++)
        if (j == 0 || pos[j] != pos[j - 1] + 1)
            r++;
    return r;
}

/* The runs of pos[0..n) as (first, length) pairs in *out (2 * count ints,
 * caller frees); count in *nrun.  0, or -1 without memory. */
static int bb_run_list(const int *pos, int n, int **out, int *nrun)
{
    int64_t nr = bb_runs(pos, n);
    int *r = malloc((size_t)(nr > 0 ? 2 * nr : 1) * sizeof *r);
    if (r == NULL)
        return -1;
    int k = -1;
    for (int j = 0; j < n; j++) {
        if (j == 0 || pos[j] != pos[j - 1] + 1) {
            k++;
            r[2 * k] = pos[j];
            r[2 * k + 1] = 0;
        }
        r[2 * k + 1]++;
    }
    *out = r;
    *nrun = (int)nr;
    return 0;
}

/* An indexed datatype over the slots pos[0..n) of elem (runs coalesced);
 * adds the bytes of the arrays given to MPI to *bytes. */
static int bb_type_slots(const int *pos, int n, MPI_Datatype elem, MPI_Datatype *out,
                         int64_t *bytes)
{
    int64_t nr = bb_runs(pos, n);
    int *bl = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *bl);
    int *dp = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *dp);
    if (bl == NULL || dp == NULL) {
        free(bl); free(dp);
        return MPI_ERR_NO_MEM;
    }
    int r = -1;
    for (int j = 0; j < n; j++) {
        if (j == 0 || pos[j] != pos[j - 1] + 1) {
            r++;
            dp[r] = pos[j];
            bl[r] = 0;
        }
        bl[r]++;
    }
    int rc = MPI_Type_indexed((int)nr, bl, dp, elem, out);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(out);
    *bytes += 2 * nr * (int64_t)sizeof(int);
    free(bl); free(dp);
    return rc;
}

/* Defensive growth when received counts differ from what valid maps
 * imply (an internal inconsistency: *bad is set). */
static int bb_grow_i64(int64_t **buf, int64_t n, int *bad)
{
    *bad = 1;
    int64_t *nb = realloc(*buf, (size_t)(n > 0 ? n : 1) * sizeof **buf);
    if (nb == NULL)
        return -1;
    *buf = nb;
    return 0;
}

static int *bb_grow_int(int *buf, int64_t n)
{
    int *nb = realloc(buf, (size_t)(n > 0 ? n : 1) * sizeof *nb);
    if (nb == NULL)
        free(buf);
    return nb;
}

/* Local.  The indexed slot datatypes of every peer of a built x. */
static int bb_xplan_types(bb_xplan_t *x, MPI_Datatype elem)
{
    int rc;
    for (int d = 0; d < x->p; d++) {
        if (x->scount[d] > 0) {
            if ((rc = bb_type_slots(x->spos + x->sdispl[d], x->scount[d], elem, &x->stype[d],
                                    &x->type_bytes)) != MPI_SUCCESS)
                return rc;
            x->wtype_s[d] = x->stype[d];
            x->wcount_s[d] = 1;
        }
        if (x->rcount[d] > 0) {
            if ((rc = bb_type_slots(x->rpos + x->rdispl[d], x->rcount[d], elem, &x->rtype[d],
                                    &x->type_bytes)) != MPI_SUCCESS)
                return rc;
            x->wtype_r[d] = x->rtype[d];
            x->wcount_r[d] = 1;
        }
    }
    return MPI_SUCCESS;
}

/* Global index and local ordinal in one int64 (both < 2^31: N and every
 * count are at most INT32_MAX). */
#define BB_PAIR(hi, lo) ((int64_t)(hi) * ((int64_t)1 << 31) + (int64_t)(lo))
#define BB_PAIR_HI(v) ((v) >> 31)
#define BB_PAIR_LO(v) ((int)((v) & (((int64_t)1 << 31) - 1)))

/* Collective over comm.  Builds x so that slot i of the sender map (sidx,
 * sn) reaches the slot of the receiver map (ridx, rn) holding the same global
 * index.  The directory is the standardized distribution of [0, n) over comm
 * ranks [dir_first, dir_first + dir_count): receivers announce (index, their
 * ordinal) to it, senders ask it and learn (receiver, ordinal), then tell
 * each receiver the ordinals in message order.  Every step is direct
 * addressing or a counting sort by rank: O(count + N/P) time and memory, no
 * comparison sort, no search.  The maps must be valid (each side partitions
 * [0, n)), so every buffer size is known before the first exchange and one
 * agreement covers every allocation.  how: BB_XPLAN_* flags.  Returns an MPI
 * error code, MPI_ERR_NO_MEM or BB_RC_TOO_LARGE (agreed), or MPI_ERR_INTERN
 * (inconsistent maps; the caller agrees on the outcome). */
static int bb_xplan_build(bb_xplan_t *x, MPI_Comm comm, int64_t n,
                          const int64_t *sidx, int64_t sn, const int64_t *ridx,
                          int64_t rn, int dir_first, int dir_count, int how,
                          MPI_Datatype elem, int ncomp)
{
    int rc = MPI_SUCCESS, bad = 0;
    memset(x, 0, sizeof *x);
    x->comm = comm;
    x->how = how;
    if ((rc = MPI_Comm_size(comm, &x->p)) != MPI_SUCCESS
        || (rc = MPI_Comm_rank(comm, &x->me)) != MPI_SUCCESS)
        return rc;
    x->built = 1;
    int p = x->p, me = x->me;
    size_t pp = (size_t)p, eb = (size_t)ncomp * sizeof(double);
    int di = me - dir_first;
    int64_t lo = 0, bn = 0;
    if (di >= 0 && di < dir_count)
        bb_std_block(n, di, dir_count, &lo, &bn);
    size_t zs = (size_t)(sn > 0 ? sn : 1), zr = (size_t)(rn > 0 ? rn : 1),
           zb = (size_t)(bn > 0 ? bn : 1), zm = zs > zr ? zs : zr;

    int *c = calloc(pp, sizeof(int)), *cd = calloc(pp, sizeof(int)),
        *r = calloc(pp, sizeof(int)), *rd = calloc(pp, sizeof(int)),
        *cur = calloc(pp, sizeof(int));
    int *destr = calloc(zr, sizeof(int)), *dests = calloc(zs, sizeof(int));
    int *ordr = malloc(zr * sizeof(int)), *ords = malloc(zs * sizeof(int));
    int *owner = malloc(zb * sizeof(int)), *opos = malloc(zb * sizeof(int));
    int *dpos = malloc(zs * sizeof(int)), *ibuf = malloc(zs * sizeof(int));
    int64_t *gbuf = malloc(zm * sizeof(int64_t)), *got = malloc(zb * sizeof(int64_t));
    int64_t *rep = malloc(zb * sizeof(int64_t)), *ans = malloc(zs * sizeof(int64_t));
    x->scount = calloc(pp, sizeof(int)); x->sdispl = calloc(pp, sizeof(int));
    x->rcount = calloc(pp, sizeof(int)); x->rdispl = calloc(pp, sizeof(int));
    x->spos = malloc(zs * sizeof(int)); x->rpos = calloc(zr, sizeof(int));
    x->wcount_s = calloc(pp, sizeof(int)); x->wcount_r = calloc(pp, sizeof(int));
    x->wdispl = calloc(pp, sizeof(int));
    x->wtype_s = malloc(pp * sizeof(MPI_Datatype)); x->wtype_r = malloc(pp * sizeof(MPI_Datatype));
    x->stype = malloc(pp * sizeof(MPI_Datatype)); x->rtype = malloc(pp * sizeof(MPI_Datatype));
    x->reqs = malloc(2 * pp * sizeof(MPI_Request));
    x->stats = malloc(2 * pp * sizeof(MPI_Status));
    if (how & BB_XPLAN_RUNS) {
        x->pbytes = (int64_t)(sn > 0 ? sn : 0) * (int64_t)eb;
        x->ubytes = (int64_t)(rn > 0 ? rn : 0) * (int64_t)eb;
        x->pbuf = malloc(zs * eb);
        x->ubuf = malloc(zr * eb);
    }
    if (how & BB_XPLAN_PACKED) {
        x->sbytes = calloc(pp, sizeof(int)); x->sbdispl = calloc(pp, sizeof(int));
        x->rbytes = calloc(pp, sizeof(int)); x->rbdispl = calloc(pp, sizeof(int));
    }
    int nomem = !c || !cd || !r || !rd || !cur || !destr || !dests || !ordr || !ords
                || !owner || !opos || !dpos || !ibuf || !gbuf || !got || !rep || !ans
                || !x->scount || !x->sdispl || !x->rcount || !x->rdispl || !x->spos
                || !x->rpos || !x->wcount_s || !x->wcount_r || !x->wdispl || !x->wtype_s
                || !x->wtype_r || !x->stype || !x->rtype || !x->reqs || !x->stats
                || ((how & BB_XPLAN_RUNS) && (!x->pbuf || !x->ubuf))
                || ((how & BB_XPLAN_PACKED)
                    && (!x->sbytes || !x->sbdispl || !x->rbytes || !x->rbdispl)),
        anynomem = 0;
    if (x->stype && x->rtype)
        for (int d = 0; d < p; d++)
            x->stype[d] = x->rtype[d] = MPI_DATATYPE_NULL;
    if ((rc = MPI_Allreduce(&nomem, &anynomem, 1, MPI_INT, MPI_MAX, comm)) != MPI_SUCCESS)
        goto out;
    if (anynomem) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    for (int64_t b = 0; b < bn; b++)
        owner[b] = -1;

    /* 1: receivers announce (index, ordinal) to the directory. */
    for (int64_t i = 0; i < rn; i++)
        destr[i] = dir_first + bb_std_owner(n, dir_count, ridx[i]);
    bb_bucket(destr, rn, p, c, cd, cur, ordr);
    for (int64_t j = 0; j < rn; j++)
        gbuf[j] = BB_PAIR(ridx[ordr[j]], ordr[j]);
    if ((rc = MPI_Alltoall(c, 1, MPI_INT, r, 1, MPI_INT, comm)) != MPI_SUCCESS)
        goto out;
    int64_t tot = 0;
    for (int d = 0; d < p; d++) {
        rd[d] = (int)tot;
        tot += r[d];
    }
    if (tot != bn && bb_grow_i64(&got, tot, &bad) != 0) {
        rc = MPI_ERR_NO_MEM; /* only with maps that validation refuses */
        goto out;
    }
    if ((rc = MPI_Alltoallv(gbuf, c, cd, MPI_INT64_T, got, r, rd, MPI_INT64_T, comm)) != MPI_SUCCESS)
        goto out;
    for (int d = 0; d < p; d++)
        for (int j = rd[d]; j < rd[d] + r[d]; j++) {
            int64_t o = BB_PAIR_HI(got[j]) - lo;
            if (o < 0 || o >= bn) {
                bad = 1;
            } else {
                owner[o] = d;
                opos[o] = BB_PAIR_LO(got[j]);
            }
        }

    /* 2: senders ask the directory; it answers (receiver, ordinal). */
    for (int64_t i = 0; i < sn; i++)
        dests[i] = dir_first + bb_std_owner(n, dir_count, sidx[i]);
    bb_bucket(dests, sn, p, c, cd, cur, ords);
    for (int64_t j = 0; j < sn; j++)
        gbuf[j] = sidx[ords[j]];
    if ((rc = MPI_Alltoall(c, 1, MPI_INT, r, 1, MPI_INT, comm)) != MPI_SUCCESS)
        goto out;
    tot = 0;
    for (int d = 0; d < p; d++) {
        rd[d] = (int)tot;
        tot += r[d];
    }
    if (tot != bn && (bb_grow_i64(&got, tot, &bad) != 0 || bb_grow_i64(&rep, tot, &bad) != 0)) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if ((rc = MPI_Alltoallv(gbuf, c, cd, MPI_INT64_T, got, r, rd, MPI_INT64_T, comm)) != MPI_SUCCESS)
        goto out;
    for (int64_t j = 0; j < tot; j++) {
        int64_t o = got[j] - lo;
        rep[j] = (o >= 0 && o < bn && owner[o] >= 0) ? BB_PAIR(owner[o], opos[o]) : -1;
    }
    for (int64_t j = 0; j < sn; j++)
        ans[j] = -1;
    if ((rc = MPI_Alltoallv(rep, r, rd, MPI_INT64_T, ans, c, cd, MPI_INT64_T, comm)) != MPI_SUCCESS)
        goto out;
    for (int64_t j = 0; j < sn; j++) {
        int d = ans[j] < 0 ? -1 : (int)BB_PAIR_HI(ans[j]);
        if (d < 0 || d >= p) {
            bad = 1;
            d = me; /* keep going; the outcome is refused by the caller */
        }
        dests[ords[j]] = d;
        dpos[ords[j]] = ans[j] < 0 ? 0 : BB_PAIR_LO(ans[j]);
    }

    /* 3: senders tell each receiver the ordinals that arrive, in message
     * order (the sender's local storage order). */
    x->nsend = (int)sn;
    bb_bucket(dests, sn, p, x->scount, x->sdispl, cur, x->spos);
    for (int64_t j = 0; j < sn; j++)
        ibuf[j] = dpos[x->spos[j]];
    if ((rc = MPI_Alltoall(x->scount, 1, MPI_INT, x->rcount, 1, MPI_INT, comm)) != MPI_SUCCESS)
        goto out;
    tot = 0;
    for (int d = 0; d < p; d++) {
        x->rdispl[d] = (int)tot;
        tot += x->rcount[d];
    }
    if (tot != rn && (bad = 1, (x->rpos = bb_grow_int(x->rpos, tot)) == NULL)) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if ((rc = MPI_Alltoallv(ibuf, x->scount, x->sdispl, MPI_INT, x->rpos, x->rcount,
                            x->rdispl, MPI_INT, comm)) != MPI_SUCCESS)
        goto out;
    x->nrecv = (int)tot;
    for (int64_t j = 0; j < tot; j++)
        if (x->rpos[j] < 0 || x->rpos[j] >= rn) {
            bad = 1;
            x->rpos[j] = 0;
        }
    for (int d = 0; d < p; d++) {
        x->sruns += bb_runs(x->spos + x->sdispl[d], x->scount[d]);
        x->rruns += bb_runs(x->rpos + x->rdispl[d], x->rcount[d]);
    }

    /* Execution scaffolding. */
    for (int d = 0; d < p; d++)
        x->wtype_s[d] = x->wtype_r[d] = elem;
    if ((how & BB_XPLAN_RUNS)
        && (bb_run_list(x->spos, x->nsend, &x->srun, &x->nsrun) != 0
            || bb_run_list(x->rpos, x->nrecv, &x->rrun, &x->nrrun) != 0)) {
        rc = MPI_ERR_NO_MEM; /* local: agreed by the caller */
        goto out;
    }
    if ((how & BB_XPLAN_TYPES) && (rc = bb_xplan_types(x, elem)) != MPI_SUCCESS)
        goto out;
    if (how & BB_XPLAN_PACKED) {
        /* MPI_PACKED sizes per peer from the count of contiguous elements:
         * the same function of the same count on both sides, so the
         * sender's and the receiver's byte counts match. */
        int64_t st = 0, rt = 0;
        for (int d = 0; d < p; d++) {
            int sz = 0;
            if ((rc = MPI_Pack_size(x->scount[d], elem, comm, &sz)) != MPI_SUCCESS)
                goto out;
            x->sbytes[d] = sz;
            x->sbdispl[d] = (int)(st <= INT_MAX ? st : 0);
            st += sz;
            if ((rc = MPI_Pack_size(x->rcount[d], elem, comm, &sz)) != MPI_SUCCESS)
                goto out;
            x->rbytes[d] = sz;
            x->rbdispl[d] = (int)(rt <= INT_MAX ? rt : 0);
            rt += sz;
        }
        int over = st > INT_MAX || rt > INT_MAX;
        x->pbytes = st;
        x->ubytes = rt;
        x->pbuf = over ? NULL : malloc((size_t)(st > 0 ? st : 1));
        x->ubuf = over ? NULL : malloc((size_t)(rt > 0 ? rt : 1));
        int fail = over ? 2 : (!x->pbuf || !x->ubuf), anyfail = 0;
        if (over)
            x->pbytes = x->ubytes = 0;
        if ((rc = MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, comm)) != MPI_SUCCESS)
            goto out;
        if (anyfail) {
            rc = anyfail == 2 ? BB_RC_TOO_LARGE : MPI_ERR_NO_MEM;
            goto out;
        }
    }
    if (bad)
        rc = MPI_ERR_INTERN;
out:
    free(c); free(cd); free(r); free(rd); free(cur); free(destr); free(dests); free(ordr);
    free(ords); free(owner); free(opos); free(dpos); free(ibuf); free(gbuf); free(got);
    free(rep); free(ans);
    return rc;
}

static inline void bb_copy_elem(double *dst, int di, const double *src, int si, int ncomp)
{
    switch (ncomp) {
    case 1:
        dst[di] = src[si];
        break;
    case 3:
        dst[3 * (size_t)di] = src[3 * (size_t)si];
        dst[3 * (size_t)di + 1] = src[3 * (size_t)si + 1];
        dst[3 * (size_t)di + 2] = src[3 * (size_t)si + 2];
        break;
    default:
        for (int c = 0; c < ncomp; c++)
            dst[(size_t)ncomp * di + c] = src[(size_t)ncomp * si + c];
    }
}

/* One MPI_Alltoallw with the slot datatypes. */
static int bb_xplan_alltoallw(bb_xplan_t *x, const double *send, double *recv)
{
    return MPI_Alltoallw(send, x->wcount_s, x->wdispl, x->wtype_s, recv,
                         x->wcount_r, x->wdispl, x->wtype_r, x->comm);
}

/* Copy runs (first slot, length) between the strided side and the packed
 * staging: to_packed packs, else unpacks.  A hand loop of memcpy per run,
 * the element copy inlined for single-element runs. */
static void bb_runs_copy(const int *run, int nrun, double *local, double *packed, int ncomp,
                         int to_packed)
{
    size_t j = 0, eb = (size_t)ncomp * sizeof(double);
    for (int k = 0; k < nrun; k++) {
        int first = run[2 * k], len = run[2 * k + 1];
        if (len == 1) {
            if (to_packed)
                bb_copy_elem(packed, (int)j, local, first, ncomp);
            else
                bb_copy_elem(local, first, packed, (int)j, ncomp);
        } else if (to_packed) {
            memcpy(packed + j * (size_t)ncomp, local + (size_t)first * (size_t)ncomp, (size_t)len * eb);
        } else {
            memcpy(local + (size_t)first * (size_t)ncomp, packed + j * (size_t)ncomp, (size_t)len * eb);
        }
        j += (size_t)len;
    }
}

/* pack: the runs copied by hand into peer order, one MPI_Alltoallv of
 * contiguous elements, the runs copied out. */
static int bb_xplan_pack_alltoallv(bb_xplan_t *x, const double *send, double *recv,
                                   MPI_Datatype elem, int ncomp)
{
    bb_runs_copy(x->srun, x->nsrun, (double *)send, (double *)x->pbuf, ncomp, 1);
    int rc = MPI_Alltoallv(x->pbuf, x->scount, x->sdispl, elem, x->ubuf, x->rcount,
                           x->rdispl, elem, x->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    bb_runs_copy(x->rrun, x->nrrun, recv, (double *)x->ubuf, ncomp, 0);
    return MPI_SUCCESS;
}

/* pack-mpi: MPI_Pack through each peer's slot datatype, one MPI_Alltoallv
 * of MPI_PACKED, MPI_Unpack through the receiving slot datatypes. */
static int bb_xplan_pack_mpi(bb_xplan_t *x, const double *send, double *recv)
{
    int rc;
    for (int d = 0; d < x->p; d++) {
        if (x->scount[d] == 0)
            continue;
        int pos = x->sbdispl[d];
        if ((rc = MPI_Pack(send, 1, x->stype[d], x->pbuf, (int)x->pbytes, &pos, x->comm))
            != MPI_SUCCESS)
            return rc;
        if (pos != x->sbdispl[d] + x->sbytes[d])
            return MPI_ERR_INTERN; /* a packed size other than MPI_Pack_size's */
    }
    if ((rc = MPI_Alltoallv(x->pbuf, x->sbytes, x->sbdispl, MPI_PACKED, x->ubuf, x->rbytes,
                            x->rbdispl, MPI_PACKED, x->comm)) != MPI_SUCCESS)
        return rc;
    for (int d = 0; d < x->p; d++) {
        if (x->rcount[d] == 0)
            continue;
        int pos = x->rbdispl[d];
        if ((rc = MPI_Unpack(x->ubuf, (int)x->ubytes, &pos, recv, 1, x->rtype[d], x->comm))
            != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Isend/Irecv to nonzero remote peers only; the self part is copied. */
static int bb_xplan_sparse_isend(bb_xplan_t *x, const double *send, double *recv,
                                 int ncomp)
{
    int nreq = 0, rc = MPI_SUCCESS;
    for (int d = 0; d < x->p; d++)
        if (d != x->me && x->rcount[d] > 0
            && (rc = MPI_Irecv(recv, 1, x->rtype[d], d, BB_TAG_DATA, x->comm,
                               &x->reqs[nreq++])) != MPI_SUCCESS)
            goto wait;
    for (int d = 0; d < x->p; d++)
        if (d != x->me && x->scount[d] > 0
            && (rc = MPI_Isend(send, 1, x->stype[d], d, BB_TAG_DATA, x->comm,
                               &x->reqs[nreq++])) != MPI_SUCCESS)
            goto wait;
    {
        const int *sp = x->spos + x->sdispl[x->me], *rp = x->rpos + x->rdispl[x->me];
        for (int j = 0; j < x->scount[x->me]; j++)
            bb_copy_elem(recv, rp[j], send, sp[j], ncomp);
    }
wait:
    if (rc != MPI_SUCCESS)
        return rc; /* requests stay with the poisoned plan */
    return MPI_Waitall(nreq, x->reqs, x->stats);
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

/* ------------------------------------------------------------------------ */
/* Plans                                                                    */
/* ------------------------------------------------------------------------ */

static const char *const bb_method_names[BB_REDIST_METHODS] = {
    "root", "root-gatherv", "two-step", "direct", "pack", "sparse", "pack-mpi", "auto"
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

/* Root-gatherv: a code root's copy of its code's maps. */
typedef struct bb_gather {
    int *counts, *displs;   /* per code rank */
    int64_t *idx;           /* all maps, code-rank order */
    int64_t total;
} bb_gather_t;

struct bb_redist_plan {
    bb_poison_node_t poison;
    bb_redist_link_t *link;          /* borrowed */
    bb_redist_method_t method;
    int command;                     /* '>' or '<' */
    int64_t n, eb;
    int ncomp;
    MPI_Datatype elem;
    int sender, receiver;            /* this rank's roles in the command */
    int s_first, s_n, r_first, r_n;  /* the two codes, link ranks */
    MPI_Comm scomm, rcomm;           /* the codes' communicators (borrowed) */
    bb_map_t *dmap;                  /* the driver map (driver ranks) */
    bb_map_t *emap;                  /* the engine map now (engine ranks) */
    bb_map_t *eknown;                /* the engine map the cross part was built
                                        for (engine ranks) */
    int64_t driver_epoch, engine_known; /* learned at the last map transfer */
    bb_xplan_t x1, x2, xfix;         /* cross, receiver-internal, epoch fixup */
    double *tmp, *tmp2;              /* two-step / fixup staging */
    double *full;                    /* root methods: a whole array */
    double *gbuf;                    /* root-gatherv: code-order staging */
    bb_gather_t sg, rg;              /* root-gatherv: gathered maps on roots */
    int64_t tmp_n, tmp2_n, full_n, gbuf_n;  /* their sizes, elements */
    bb_redist_method_t chosen;       /* what runs: auto's choice, else method */
    char reason[200];                /* why (bb_redist_plan_choice_reason) */
    int64_t root_chunk;              /* doubles per MPI call of the root
                                        methods' whole-array steps */
    int64_t sequence;
    int poisoned, in_call;
};

static const bb_map_t *bb_plan_send_map(const bb_redist_plan_t *pl)
{
    return pl->command == BB_REDIST_SEND ? pl->dmap : pl->emap;
}
static const bb_map_t *bb_plan_recv_map(const bb_redist_plan_t *pl)
{
    return pl->command == BB_REDIST_SEND ? pl->emap : pl->dmap;
}

/* Does the cross-code part depend on the engine map (so that a change of it
 * is an epoch mismatch for the other code)? */
static int bb_plan_cross_uses_engine(const bb_redist_plan_t *pl)
{
    switch (pl->method) {
    case BB_REDIST_DIRECT:
    case BB_REDIST_PACK:
    case BB_REDIST_SPARSE:
    case BB_REDIST_PACK_MPI:
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

static void bb_plan_poison(bb_redist_plan_t *pl)
{
    if (!pl->poisoned) {
        pl->poisoned = 1;
        bb_poison_retain(&pl->poison, BB_POISON_REDIST, pl);
    }
}

/* Collective over the link (after bb_xplan_build of x1 for auto, whatever
 * its outcome, so that no rank is left waiting): auto's choice from the
 * agreed fragmentation.  Each side's mean run, in bytes, over all ranks;
 * the shorter one decides (the more fragmented side is where datatypes
 * cost): pack below the link's threshold, direct at or above it.  Every rank
 * decides from the same sums and the same threshold, so alike.  x1 was
 * built for pack: direct adds the datatypes and releases the pack lists and
 * buffers.  Returns rc, an MPI error of the reduction or of the datatypes,
 * or MPI_ERR_NO_MEM (local: the caller agrees). */
static int bb_plan_choose(bb_redist_plan_t *pl, int rc)
{
    bb_xplan_t *x = &pl->x1;
    int64_t loc[4] = {x->nsend, x->sruns, x->nrecv, x->rruns}, sum[4];
    int rr = MPI_Allreduce(loc, sum, 4, MPI_INT64_T, MPI_SUM, pl->link->comm);
    if (rr != MPI_SUCCESS)
        return rr;
    double thr = pl->link->auto_threshold;
    double sb = sum[1] > 0 ? (double)sum[0] * (double)pl->eb / (double)sum[1] : -1.0;
    double rb = sum[3] > 0 ? (double)sum[2] * (double)pl->eb / (double)sum[3] : -1.0;
    double frag = sb < 0 ? rb : (rb < 0 || sb < rb ? sb : rb);
    if (frag < 0) {
        pl->chosen = BB_REDIST_DIRECT;
        snprintf(pl->reason, sizeof pl->reason,
                 "auto: direct: no elements to move (threshold %.0f B per run)", thr);
    } else {
        pl->chosen = frag < thr ? BB_REDIST_PACK : BB_REDIST_DIRECT;
        snprintf(pl->reason, sizeof pl->reason,
                 "auto: %s: mean run %.1f B (send %.1f B, recv %.1f B per run; the "
                 "shorter decides) %s threshold %.0f B", bb_redist_method_name(pl->chosen),
                 frag, sb, rb, frag < thr ? "<" : ">=", thr);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (pl->chosen == BB_REDIST_DIRECT) {
        if ((rc = bb_xplan_types(x, pl->elem)) != MPI_SUCCESS)
            return rc;
        free(x->srun); free(x->rrun); free(x->pbuf); free(x->ubuf);
        x->srun = x->rrun = NULL;
        x->pbuf = x->ubuf = NULL;
        x->nsrun = x->nrrun = 0;
        x->pbytes = x->ubytes = 0;
    }
    return rc;
}

/* Collective over the link: the cross-code part (the map transfer), with
 * the maps held now.  Also learns both epochs. */
static int bb_plan_build_cross(bb_redist_plan_t *pl, int learn_epochs)
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
    switch (pl->method) {
    case BB_REDIST_DIRECT:
    case BB_REDIST_SPARSE:
        return bb_xplan_build(&pl->x1, l->comm, pl->n, sidx, sn, ridx, rn, pl->r_first,
                              pl->r_n, BB_XPLAN_TYPES, pl->elem, pl->ncomp);
    case BB_REDIST_PACK:
        return bb_xplan_build(&pl->x1, l->comm, pl->n, sidx, sn, ridx, rn, pl->r_first,
                              pl->r_n, BB_XPLAN_RUNS, pl->elem, pl->ncomp);
    case BB_REDIST_PACK_MPI:
        return bb_xplan_build(&pl->x1, l->comm, pl->n, sidx, sn, ridx, rn, pl->r_first,
                              pl->r_n, BB_XPLAN_TYPES | BB_XPLAN_PACKED, pl->elem, pl->ncomp);
    case BB_REDIST_AUTO:
        /* built for pack; the datatypes are added if direct is chosen */
        rc = bb_xplan_build(&pl->x1, l->comm, pl->n, sidx, sn, ridx, rn, pl->r_first,
                            pl->r_n, BB_XPLAN_RUNS, pl->elem, pl->ncomp);
        return bb_plan_choose(pl, rc);
    case BB_REDIST_TWO_STEP: {
        /* to the receiving code's standardized distribution */
        int64_t first = 0, cnt = 0, *std = NULL;
        if (pl->receiver)
            bb_std_block(pl->n, l->rank - pl->r_first, pl->r_n, &first, &cnt);
        std = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *std);
        if (std == NULL)
            return MPI_ERR_NO_MEM;
        for (int64_t i = 0; i < cnt; i++)
            std[i] = first + i;
        rc = bb_xplan_build(&pl->x1, l->comm, pl->n, sidx, sn, std, cnt, pl->r_first,
                            pl->r_n, BB_XPLAN_TYPES, pl->elem, pl->ncomp);
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

/* Collective over comm: combine a local outcome into one on every rank. */
static bb_status_t bb_agree_status(MPI_Comm comm, bb_status_t local)
{
    int64_t mine = (int64_t)local, all = 0;
    if (bb_agree_max(comm, &mine, 1, &all) != MPI_SUCCESS)
        return BB_ERR_MPI;
    return (bb_status_t)all;
}

static bb_status_t bb_status_from_rc(int rc)
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
     * which must agree) enters the one agreement below. */
    int bad_arg = plan_out == NULL || method < 0 || method >= BB_REDIST_METHODS
                  || (command != BB_REDIST_SEND && command != BB_REDIST_RECEIVE)
                  || (element_bytes != 8 && element_bytes != 16 && element_bytes != 24);
    if (bad_arg) {
        method = BB_REDIST_DIRECT;
        command = BB_REDIST_SEND;
        element_bytes = 8;
    }
    double t0 = bb_time_now();
    bb_redist_plan_t *pl = calloc(1, sizeof *pl);
    if (pl == NULL)
        return BB_ERR_NOMEM; /* other ranks would block in validation: fatal */
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
    bb_status_t st = BB_OK;
    int rc;

    /* Validation: each code's maps over its own communicator, then one
     * agreement over the link so that every rank of both codes refuses. */
    bb_map_fault_t fd, fe;
    memset(&fd, 0, sizeof fd);
    memset(&fe, 0, sizeof fe);
    bb_status_t sd = BB_OK, se = BB_OK;
    if (link->is_driver)
        sd = bb_map_validate(link->code, driver_map, &fd);
    if (link->is_engine)
        se = bb_map_validate(link->code, engine_map, &fe);
    if (sd == BB_ERR_MPI || se == BB_ERR_MPI) {
        bb_plan_release(pl);
        return BB_ERR_MPI;
    }
    /* Copies first, so that one agreement also covers their allocation and
     * teaches every rank both epochs. */
    if (link->is_driver && driver_map)
        pl->dmap = bb_map_copy(driver_map);
    if (link->is_engine && engine_map)
        pl->emap = bb_map_copy(engine_map);
    int nomem = (link->is_driver && driver_map && pl->dmap == NULL)
                || (link->is_engine && engine_map && pl->emap == NULL)
                || MPI_Type_contiguous(pl->ncomp, MPI_DOUBLE, &pl->elem) != MPI_SUCCESS
                || MPI_Type_commit(&pl->elem) != MPI_SUCCESS;
    enum { F_N = 26 };
    int64_t loc[F_N] = {
        fd.out_of_range, fd.duplicates, fd.gaps, fd.n_mismatch, fd.epoch_mismatch,
        fd.missing, fd.resources, link->is_driver && driver_map ? driver_map->n : -1,
        fe.out_of_range, fe.duplicates, fe.gaps, fe.n_mismatch, fe.epoch_mismatch,
        fe.missing, fe.resources, link->is_engine && engine_map ? engine_map->n : -1,
        nomem, link->is_driver && driver_map ? driver_map->epoch : -1,
        link->is_engine && engine_map ? engine_map->epoch : -1,
        bad_arg, method, -(int64_t)method, command, -(int64_t)command,
        element_bytes, -element_bytes  /* x and -x: one MAX finds MIN too */
    }, agg[F_N];
    if (bb_agree_max(link->comm, loc, F_N, agg) != MPI_SUCCESS) {
        bb_plan_release(pl);
        return BB_ERR_MPI;
    }
    if (agg[19] != 0 || agg[20] != -agg[21] || agg[22] != -agg[23]
        || agg[24] != -agg[25]) {
        bb_plan_release(pl);  /* alike on every rank */
        return BB_ERR_ARG;
    }
    su.driver_fault = (bb_map_fault_t){agg[0], agg[1], agg[2], (int)agg[3],
                                       (int)agg[4], (int)agg[5], (int)agg[6]};
    su.engine_fault = (bb_map_fault_t){agg[8], agg[9], agg[10], (int)agg[11],
                                       (int)agg[12], (int)agg[13], (int)agg[14]};
    int64_t dn = agg[7], en = agg[15];
    int refused = 0;
    for (int i = 0; i < 7; i++)
        refused |= agg[i] != 0 || agg[8 + i] != 0;
    if (dn != en) { /* the two codes disagree on N */
        refused = 1;
        su.n_mismatch = 1;
    }
    su.validate_s = bb_time_now() - t0;
    if (refused) {
        su.total_s = bb_time_now() - t0;
        if (setup_out)
            *setup_out = su;
        bb_plan_release(pl);
        /* Maps refused only because some rank could not allocate are not
         * bad maps: say out of memory (alike: the faults are agreed). */
        bb_map_fault_t d = su.driver_fault, e = su.engine_fault;
        if ((d.resources || e.resources) && !su.n_mismatch
            && !d.out_of_range && !d.duplicates && !d.gaps && !d.n_mismatch
            && !d.epoch_mismatch && !d.missing && !e.out_of_range
            && !e.duplicates && !e.gaps && !e.n_mismatch && !e.epoch_mismatch
            && !e.missing)
            return BB_ERR_NOMEM;
        return BB_REFUSED;
    }
    if (agg[16] != 0) {
        bb_plan_release(pl);
        return BB_ERR_NOMEM;
    }
    pl->n = dn;
    pl->driver_epoch = agg[17];
    pl->engine_known = agg[18];

    double t1 = bb_time_now();
    rc = bb_plan_build_cross(pl, 0);
    st = bb_agree_status(link->comm, bb_status_from_rc(rc));
    su.map_transfer_s = bb_time_now() - t1;
    if (st == BB_OK) {
        double t2 = bb_time_now();
        rc = bb_plan_build_internal(pl, 1, 1);
        st = bb_agree_status(link->comm, bb_status_from_rc(rc));
        su.plan_build_s = bb_time_now() - t2;
    }
    su.total_s = bb_time_now() - t0;
    if (setup_out)
        *setup_out = su;
    if (st != BB_OK) {
        if (st == BB_ERR_MPI) { /* retained, never freed: MPI may hold it */
            bb_plan_poison(pl);
            return st;
        }
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
    st = bb_agree_status(ec, copy ? BB_OK : BB_ERR_NOMEM);
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
    st = bb_agree_status(ec, bb_status_from_rc(rc));
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
    if (pl == NULL)
        return BB_ERR_ARG;
    if (bb_world_check_owner(pl->link->world) != BB_OK)
        return BB_ERR_THREAD;
    if (pl->poisoned)
        return BB_ERR_POISONED;
    double t0 = bb_time_now();
    int rc = bb_plan_build_cross(pl, 1);
    bb_status_t st = bb_agree_status(pl->link->comm, bb_status_from_rc(rc));
    su.map_transfer_s = su.total_s = bb_time_now() - t0;
    if (setup_out)
        *setup_out = su;
    if (st == BB_ERR_MPI)
        bb_plan_poison(pl);
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

/* ------------------------------------------------------------------------ */
/* One message                                                              */
/* ------------------------------------------------------------------------ */

void bb_redist_plan_set_root_chunk(bb_redist_plan_t *pl, int64_t doubles)
{
    pl->root_chunk = doubles >= 1 && doubles <= BB_ROOT_CHUNK ? doubles : BB_ROOT_CHUNK;
}

/* The next piece of a whole array of total doubles from *at: its length
 * (at most the plan's chunk, so an int), 0 at the end. */
static int bb_root_piece(const bb_redist_plan_t *pl, int64_t total, int64_t at)
{
    int64_t left = total - at;
    return (int)(left < pl->root_chunk ? left : pl->root_chunk);
}

/* The one root-to-root message of the root methods: the full array from the
 * sending code's root to the receiving code's (none when they are one rank),
 * in pieces of at most the plan's chunk (the counts are ints). */
static int bb_root_message(bb_redist_plan_t *pl, int64_t cnt)
{
    bb_redist_link_t *l = pl->link;
    int rc, k;
    if (pl->s_first == pl->r_first)
        return MPI_SUCCESS;
    for (int64_t at = 0; (k = bb_root_piece(pl, cnt, at)) > 0; at += k) {
        if (l->rank == pl->s_first
            && (rc = MPI_Send(pl->full + at, k, MPI_DOUBLE, pl->r_first, BB_TAG_DATA, l->comm))
                   != MPI_SUCCESS)
            return rc;
        if (l->rank == pl->r_first
            && (rc = MPI_Recv(pl->full + at, k, MPI_DOUBLE, pl->s_first, BB_TAG_DATA, l->comm,
                              MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* root: reduce the whole array to the sending root, one root-to-root
 * message, broadcast, every receiver picks its elements (today's MDI). */
static int bb_run_root(bb_redist_plan_t *pl, const double *send, double *recv)
{
    int rc, k, nc = pl->ncomp;
    int64_t cnt = pl->n * nc;
    int me_s = -1, me_r = -1;
    if (pl->sender) {
        const bb_map_t *sm = bb_plan_send_map(pl);
        MPI_Comm_rank(pl->scomm, &me_s);
        memset(pl->full, 0, (size_t)cnt * sizeof(double));
        for (int64_t i = 0; i < sm->count; i++)
            bb_copy_elem(pl->full, (int)sm->idx[i], send, (int)i, nc);
        for (int64_t at = 0; (k = bb_root_piece(pl, cnt, at)) > 0; at += k)
            if ((rc = MPI_Reduce(me_s == 0 ? MPI_IN_PLACE : pl->full + at,
                                 me_s == 0 ? pl->full + at : NULL, k, MPI_DOUBLE, MPI_SUM, 0,
                                 pl->scomm)) != MPI_SUCCESS)
                return rc;
    }
    if (pl->receiver)
        MPI_Comm_rank(pl->rcomm, &me_r);
    if ((rc = bb_root_message(pl, cnt)) != MPI_SUCCESS)
        return rc;
    if (pl->receiver) {
        const bb_map_t *rm = bb_plan_recv_map(pl);
        for (int64_t at = 0; (k = bb_root_piece(pl, cnt, at)) > 0; at += k)
            if ((rc = MPI_Bcast(pl->full + at, k, MPI_DOUBLE, 0, pl->rcomm)) != MPI_SUCCESS)
                return rc;
        for (int64_t i = 0; i < rm->count; i++)
            bb_copy_elem(recv, (int)i, pl->full, (int)rm->idx[i], nc);
    }
    return MPI_SUCCESS;
}

/* root-gatherv: gather local arrays to the sending root, permute to global
 * order, one root-to-root message, permute to receiver order, scatter. */
static int bb_run_root_gatherv(bb_redist_plan_t *pl, const double *send, double *recv)
{
    int rc, nc = pl->ncomp;
    int64_t cnt = pl->n * nc;
    int me_s = -1, me_r = -1;
    if (pl->sender) {
        const bb_map_t *sm = bb_plan_send_map(pl);
        MPI_Comm_rank(pl->scomm, &me_s);
        if ((rc = MPI_Gatherv(send, (int)sm->count, pl->elem, pl->gbuf, pl->sg.counts,
                              pl->sg.displs, pl->elem, 0, pl->scomm)) != MPI_SUCCESS)
            return rc;
        if (me_s == 0)
            for (int64_t j = 0; j < pl->sg.total; j++)
                bb_copy_elem(pl->full, (int)pl->sg.idx[j], pl->gbuf, (int)j, nc);
    }
    if (pl->receiver)
        MPI_Comm_rank(pl->rcomm, &me_r);
    if ((rc = bb_root_message(pl, cnt)) != MPI_SUCCESS)
        return rc;
    if (pl->receiver) {
        const bb_map_t *rm = bb_plan_recv_map(pl);
        if (me_r == 0)
            for (int64_t j = 0; j < pl->rg.total; j++)
                bb_copy_elem(pl->gbuf, (int)j, pl->full, (int)pl->rg.idx[j], nc);
        if ((rc = MPI_Scatterv(pl->gbuf, pl->rg.counts, pl->rg.displs, pl->elem, recv,
                               (int)rm->count, pl->elem, 0, pl->rcomm)) != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* One exchange of x by what the plan runs (auto's choice, else its
 * method): pack, pack-mpi, sparse or (direct and the steps of two-step)
 * Alltoallw. */
static int bb_xplan_run_method(bb_redist_plan_t *pl, bb_xplan_t *x, const double *send,
                               double *recv)
{
    switch (pl->chosen) {
    case BB_REDIST_PACK:
        return bb_xplan_pack_alltoallv(x, send, recv, pl->elem, pl->ncomp);
    case BB_REDIST_PACK_MPI:
        return bb_xplan_pack_mpi(x, send, recv);
    case BB_REDIST_SPARSE:
        return bb_xplan_sparse_isend(x, send, recv, pl->ncomp);
    default:
        return bb_xplan_alltoallw(x, send, recv);
    }
}

bb_status_t bb_redist_plan_execute(bb_redist_plan_t *pl, const bb_redist_contract_t *contract,
                                   const void *send, void *recv,
                                   bb_redist_metrics_t *metrics_out)
{
    bb_redist_metrics_t m;
    memset(&m, 0, sizeof m);
    m.refusal.rank = -1;
    double t0 = bb_time_now();
    bb_status_t st = BB_OK;
    if (pl == NULL) {
        st = BB_ERR_ARG;
        goto done;
    }
    if (bb_world_check_owner(pl->link->world) != BB_OK) {
        st = BB_ERR_THREAD;
        goto done;
    }
    if (pl->in_call) {
        st = BB_ERR_REENTRY;
        goto done;
    }
    if (pl->poisoned) {
        st = BB_ERR_POISONED;
        goto done;
    }
    pl->in_call = 1;
    bb_redist_link_t *l = pl->link;
    int rc = MPI_SUCCESS;
    m.sequence = pl->sequence;

    /* Local refusals still enter the admission, so no rank waits.  A
     * missing contract presents an impossible one (and the refusal). */
    const bb_map_t *sm = bb_plan_send_map(pl), *rm = bb_plan_recv_map(pl);
    bb_redist_local_t cause = BB_REDIST_LOCAL_NONE;
    const bb_redist_contract_t none = {0, -1, -1, -1};
    if (contract == NULL) {
        contract = &none;
        cause = BB_REDIST_LOCAL_CONTRACT;
    } else if (contract->command != pl->command)
        cause = BB_REDIST_LOCAL_COMMAND;
    else if (contract->n != pl->n)
        cause = BB_REDIST_LOCAL_ELEMENTS;
    else if (contract->element_bytes != pl->eb)
        cause = BB_REDIST_LOCAL_ELEMENT_BYTES;
    else if (contract->cap < 0 || contract->n > contract->cap)
        cause = BB_REDIST_LOCAL_OVER_CAP;
    else if ((pl->sender && sm->count > 0 && send == NULL)
             || (pl->receiver && rm->count > 0 && recv == NULL))
        cause = BB_REDIST_LOCAL_BUFFER;
    m.local_cause = cause;

    /* The recv_dist flag before every message: the sending code's root
     * tells the receiving code's root, which broadcasts it in its code. */
    int cross_stale_possible = bb_plan_cross_uses_engine(pl);
    int64_t flag;
    if (pl->method == BB_REDIST_ROOT || pl->method == BB_REDIST_ROOT_GATHERV)
        flag = BB_RECV_DIST_ROOT;
    else if (pl->command == BB_REDIST_RECEIVE && cross_stale_possible && l->is_engine
             && pl->emap->epoch != pl->engine_known)
        flag = BB_RECV_DIST_MAP; /* the engine's map comes with this reply */
    else
        flag = BB_RECV_DIST_DATA;
    if (pl->s_first != pl->r_first) {
        if (l->rank == pl->s_first
            && (rc = MPI_Send(&flag, 1, MPI_INT64_T, pl->r_first, BB_TAG_FLAG, l->comm)) != MPI_SUCCESS)
            goto mpi_fail;
        if (l->rank == pl->r_first
            && (rc = MPI_Recv(&flag, 1, MPI_INT64_T, pl->s_first, BB_TAG_FLAG, l->comm,
                              MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            goto mpi_fail;
    }
    if (pl->receiver && (rc = MPI_Bcast(&flag, 1, MPI_INT64_T, 0, pl->rcomm)) != MPI_SUCCESS)
        goto mpi_fail;

    /* Admission: MIN then MAX.  Engine ranks present the engine epoch they
     * hold, the others the one they last learned: a difference is the epoch
     * mismatch, which changes the path, not the verdict. */
    int64_t local[BB_REDIST_FIELDS], mn[BB_REDIST_FIELDS], mx[BB_REDIST_FIELDS];
    local[BB_REDIST_SEQUENCE] = pl->sequence;
    local[BB_REDIST_COMMAND] = contract->command;
    local[BB_REDIST_N] = contract->n;
    local[BB_REDIST_ELEMENT_BYTES] = contract->element_bytes;
    local[BB_REDIST_DRIVER_EPOCH] = l->is_driver ? pl->dmap->epoch : pl->driver_epoch;
    local[BB_REDIST_ENGINE_EPOCH] = l->is_engine ? pl->emap->epoch : pl->engine_known;
    local[BB_REDIST_CAP] = contract->cap;
    local[BB_REDIST_RECV_DIST] = flag;
    local[BB_REDIST_REFUSAL] = cause != BB_REDIST_LOCAL_NONE ? 8 * (int64_t)l->rank + BB_STAGE_PREFLIGHT : 0;
    if ((rc = bb_agree_minmax(l->comm, local, BB_REDIST_FIELDS, mn, mx)) != MPI_SUCCESS)
        goto mpi_fail;
    pl->sequence++;
    m.recv_dist = mx[BB_REDIST_RECV_DIST];
    double t1 = bb_time_now();
    m.admission_s = t1 - t0;
    int agreed = bb_agree_fields_equal(mn, mx, BB_REDIST_SEQUENCE, BB_REDIST_ENGINE_EPOCH)
                 && bb_agree_fields_equal(mn, mx, BB_REDIST_CAP, 2)
                 && mn[BB_REDIST_ENGINE_EPOCH] >= 0;
    if (mx[BB_REDIST_REFUSAL] != 0 || !agreed) {
        m.refusal.sequence = mx[BB_REDIST_SEQUENCE];
        if (mx[BB_REDIST_REFUSAL] != 0) {
            m.refusal.stage = BB_STAGE_PREFLIGHT;
            m.refusal.rank = (int)(mx[BB_REDIST_REFUSAL] / 8);
        } else {
            m.refusal.stage = BB_STAGE_CONTRACT;
        }
        st = BB_REFUSED;
        pl->in_call = 0;
        goto done;
    }
    int stale = cross_stale_possible && mx[BB_REDIST_ENGINE_EPOCH] != pl->engine_known;

    /* '<' with a stale copy: the map comes with the reply (rebuild the cross
     * part over the link), then one step. */
    if (stale && pl->command == BB_REDIST_RECEIVE) {
        double tm = bb_time_now();
        rc = bb_plan_build_cross(pl, 1);
        bb_status_t bs = bb_agree_status(l->comm, bb_status_from_rc(rc));
        m.map_s = bb_time_now() - tm;
        m.map_sent = 1;
        if (bs != BB_OK) {
            st = bs;
            if (bs == BB_ERR_MPI)
                bb_plan_poison(pl);
            pl->in_call = 0;
            goto done;
        }
        stale = 0;
    }

    double t2 = bb_time_now();
    const double *sb = send;
    double *rb = recv;
    switch (pl->method) {
    case BB_REDIST_ROOT:
        rc = bb_run_root(pl, sb, rb);
        m.steps = 1;
        break;
    case BB_REDIST_ROOT_GATHERV:
        rc = bb_run_root_gatherv(pl, sb, rb);
        m.steps = 1;
        break;
    case BB_REDIST_TWO_STEP:
        rc = bb_xplan_alltoallw(&pl->x1, sb, pl->receiver ? pl->tmp : NULL);
        if (rc == MPI_SUCCESS && pl->receiver)
            rc = bb_xplan_alltoallw(&pl->x2, pl->tmp, rb);
        m.steps = 2;
        break;
    default:
        if (stale) {
            /* '>' after the engine changed its map: deliver in the layout
             * the driver knows, then convert inside the engine. */
            rc = bb_xplan_run_method(pl, &pl->x1, sb, pl->receiver ? pl->tmp2 : NULL);
            if (rc == MPI_SUCCESS && pl->receiver)
                rc = bb_xplan_alltoallw(&pl->xfix, pl->tmp2, rb);
            m.steps = 2;
        } else {
            rc = bb_xplan_run_method(pl, &pl->x1, sb, rb);
            m.steps = 1;
        }
    }
    if (rc != MPI_SUCCESS)
        goto mpi_fail;
    double t3 = bb_time_now();
    m.payload_s = t3 - t2;
    pl->in_call = 0;
    goto done;

mpi_fail:
    bb_plan_poison(pl);
    pl->in_call = 0;
    st = BB_ERR_MPI;
done:
    m.status = st;
    m.total_s = bb_time_now() - t0;
    if (metrics_out)
        *metrics_out = m;
    return st;
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

/* ------------------------------------------------------------------------ */
/* Traffic of a plan (collective over the link)                             */
/* ------------------------------------------------------------------------ */

bb_status_t bb_redist_plan_traffic(bb_redist_plan_t *pl, bb_redist_traffic_t *out)
{
    /* A NULL out still takes part (no rank waits) and gets BB_ERR_ARG. */
    if (pl == NULL)
        return BB_ERR_ARG;
    if (bb_world_check_owner(pl->link->world) != BB_OK)
        return BB_ERR_THREAD;
    if (pl->poisoned)
        return BB_ERR_POISONED;
    bb_redist_link_t *l = pl->link;
    bb_xtraffic_t t;
    memset(&t, 0, sizeof t);
    int64_t full = pl->n * pl->eb;
    int steps = 1;
    switch (pl->method) {
    case BB_REDIST_ROOT:
    case BB_REDIST_ROOT_GATHERV: {
        /* the bytes each MPI call names: reduce/gatherv into the sending
         * root, the root-to-root message, bcast/scatterv from the root */
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
                t.in += gv ? full - own_s : (int64_t)(pl->s_n - 1) * full;
                t.self += own_s;
                t.peers += pl->s_n - 1;
            } else {
                t.out += gv ? own_s : full;
                t.peers += 1;
            }
        }
        if (pl->s_first != pl->r_first) {
            if (l->rank == pl->s_first) { t.out += full; t.peers++; }
            if (l->rank == pl->r_first) { t.in += full; t.peers++; }
        }
        if (pl->receiver) {
            if (me_r == 0) {
                t.out += gv ? full - own_r : (int64_t)(pl->r_n - 1) * full;
                t.self += own_r;
                if (!pl->sender || pl->s_first != pl->r_first)
                    t.peers += pl->r_n - 1;
            } else {
                t.in += gv ? own_r : full;
                if (!pl->sender)
                    t.peers += 1;
            }
        }
        break;
    }
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
