/* redist-xplan.c: exchange plans, who sends which local slots to whom and
 * in which order, built with a rendezvous through the standardized
 * distribution of the receiving code: each receiver announces its elements
 * to their std holder, each sender asks the std holders where its elements
 * go, then each sender tells each receiver which elements arrive in which
 * order (its local storage order).  That is the map transfer, O(N/P) per
 * rank; no rank holds a whole map except the roots of the root methods, as
 * MDI does today. */
#include "config.h"
#include "redist-private.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

void bb_xplan_free(bb_xplan_t *x)
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
    free(x->srunat); free(x->rrunat); free(x->crun);
    free(x->ecount_s); free(x->edispl_s); free(x->ecount_r); free(x->edispl_r);
    memset(x, 0, sizeof *x);
}

int64_t bb_slot_runs_count(const int *pos, int n)
{
    int64_t r = 0;
    for (int j = 0; j < n; j++)
        if (j == 0 || pos[j] != pos[j - 1] + 1)
            r++;
    return r;
}

/* The runs of pos[0..n) as (first, length) pairs in *out (2 * count ints,
 * caller frees); count in *nrun.  0, or -1 without memory. */
static int bb_slot_runs_list(const int *pos, int n, int **out, int *nrun)
{
    int64_t nr = bb_slot_runs_count(pos, n);
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
    int64_t nr = bb_slot_runs_count(pos, n);
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
int bb_xplan_types(bb_xplan_t *x, MPI_Datatype elem)
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

/* What one build needs until it returns. */
typedef struct bb_xplan_scratch {
    int *c, *cd, *r, *rd, *cur;  /* per peer: counts and displacements out, in */
    int *destr, *dests;          /* per local slot: the peer it goes to */
    int *ordr, *ords;            /* local slots in peer order */
    int *owner, *opos;           /* directory block: receiver rank, its ordinal */
    int *dpos, *ibuf;            /* per sent slot: the receiver's ordinal */
    int64_t *gbuf, *got, *rep, *ans;
    int64_t lo, bn;              /* this rank's directory block */
    int bad;                     /* the maps were inconsistent */
} bb_xplan_scratch_t;

static void bb_xplan_scratch_free(bb_xplan_scratch_t *w)
{
    free(w->c); free(w->cd); free(w->r); free(w->rd); free(w->cur); free(w->destr);
    free(w->dests); free(w->ordr); free(w->ords); free(w->owner); free(w->opos);
    free(w->dpos); free(w->ibuf); free(w->gbuf); free(w->got); free(w->rep); free(w->ans);
}

/* Local.  The scratch for p peers, sn sent and rn received slots, and the
 * directory block (lo, bn); 1 when some allocation failed. */
static int bb_xplan_scratch_alloc(bb_xplan_scratch_t *w, int p, int64_t sn, int64_t rn,
                                  int64_t lo, int64_t bn)
{
    size_t pp = (size_t)p, zs = (size_t)(sn > 0 ? sn : 1), zr = (size_t)(rn > 0 ? rn : 1),
           zb = (size_t)(bn > 0 ? bn : 1), zm = zs > zr ? zs : zr;
    memset(w, 0, sizeof *w);
    w->lo = lo;
    w->bn = bn;
    w->c = calloc(pp, sizeof(int)); w->cd = calloc(pp, sizeof(int));
    w->r = calloc(pp, sizeof(int)); w->rd = calloc(pp, sizeof(int));
    w->cur = calloc(pp, sizeof(int));
    w->destr = calloc(zr, sizeof(int)); w->dests = calloc(zs, sizeof(int));
    w->ordr = malloc(zr * sizeof(int)); w->ords = malloc(zs * sizeof(int));
    w->owner = malloc(zb * sizeof(int)); w->opos = malloc(zb * sizeof(int));
    w->dpos = malloc(zs * sizeof(int)); w->ibuf = malloc(zs * sizeof(int));
    w->gbuf = malloc(zm * sizeof(int64_t)); w->got = malloc(zb * sizeof(int64_t));
    w->rep = malloc(zb * sizeof(int64_t)); w->ans = malloc(zs * sizeof(int64_t));
    int nomem = !w->c || !w->cd || !w->r || !w->rd || !w->cur || !w->destr || !w->dests
                || !w->ordr || !w->ords || !w->owner || !w->opos || !w->dpos || !w->ibuf
                || !w->gbuf || !w->got || !w->rep || !w->ans;
    if (!nomem)
        for (int64_t b = 0; b < bn; b++)
            w->owner[b] = -1;
    return nomem;
}

/* Local.  x's own arrays for p peers, sn sent and rn received slots of eb
 * bytes; 1 when some allocation failed. */
static int bb_xplan_alloc(bb_xplan_t *x, int64_t sn, int64_t rn, size_t eb)
{
    size_t pp = (size_t)x->p, zs = (size_t)(sn > 0 ? sn : 1), zr = (size_t)(rn > 0 ? rn : 1);
    int how = x->how;
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
        /* room for the eager layout too: a header per peer */
        size_t hs = pp * (size_t)BB_XPLAN_HEADER_BYTES;
        x->pbytes = (int64_t)hs + (int64_t)(sn > 0 ? sn : 0) * (int64_t)eb;
        x->ubytes = (int64_t)hs + (int64_t)(rn > 0 ? rn : 0) * (int64_t)eb;
        x->pbuf = malloc(hs + zs * eb);
        x->ubuf = malloc(hs + zr * eb);
    }
    if (how & BB_XPLAN_PACKED) {
        x->sbytes = calloc(pp, sizeof(int)); x->sbdispl = calloc(pp, sizeof(int));
        x->rbytes = calloc(pp, sizeof(int)); x->rbdispl = calloc(pp, sizeof(int));
    }
    if (how & (BB_XPLAN_RUNS | BB_XPLAN_PACKED)) {
        x->ecount_s = calloc(pp, sizeof(int)); x->edispl_s = calloc(pp, sizeof(int));
        x->ecount_r = calloc(pp, sizeof(int)); x->edispl_r = calloc(pp, sizeof(int));
    }
    if (x->stype && x->rtype)
        for (int d = 0; d < x->p; d++)
            x->stype[d] = x->rtype[d] = MPI_DATATYPE_NULL;
    return !x->scount || !x->sdispl || !x->rcount || !x->rdispl || !x->spos || !x->rpos
           || !x->wcount_s || !x->wcount_r || !x->wdispl || !x->wtype_s || !x->wtype_r
           || !x->stype || !x->rtype || !x->reqs || !x->stats
           || ((how & BB_XPLAN_RUNS) && (!x->pbuf || !x->ubuf))
           || ((how & BB_XPLAN_PACKED)
               && (!x->sbytes || !x->sbdispl || !x->rbytes || !x->rbdispl))
           || ((how & (BB_XPLAN_RUNS | BB_XPLAN_PACKED))
               && (!x->ecount_s || !x->edispl_s || !x->ecount_r || !x->edispl_r));
}

/* Local.  One direction of the eager layout: peer d's part is a header of
 * hb bytes, then its payload of pay[d] bytes (pay NULL: count[d] elements
 * of eb bytes); *total: the bytes of all parts. */
static void bb_xplan_eager_side(int p, int hb, const int *pay, const int *count, int64_t eb,
                                int *ecount, int *edispl, int64_t *total)
{
    int64_t at = 0;
    for (int d = 0; d < p; d++) {
        int64_t c = hb + (pay ? (int64_t)pay[d] : (int64_t)count[d] * eb);
        ecount[d] = (int)(c <= INT_MAX ? c : 0);
        edispl[d] = (int)(at <= INT_MAX ? at : 0);
        at += c;
    }
    *total = at;
}

/* Local.  The eager layout of pack's and overlap's element staging (the
 * counts are bytes, so a rank's staging over INT_MAX bytes is
 * BB_RC_TOO_LARGE; the caller agrees it); MPI_ERR_INTERN where the counts
 * outgrow the staging allocated from the maps (inconsistent maps). */
static int bb_xplan_eager_runs(bb_xplan_t *x, int64_t eb)
{
    int64_t st, rt;
    x->hbytes = BB_XPLAN_HEADER_BYTES;
    bb_xplan_eager_side(x->p, x->hbytes, NULL, x->scount, eb, x->ecount_s, x->edispl_s, &st);
    bb_xplan_eager_side(x->p, x->hbytes, NULL, x->rcount, eb, x->ecount_r, x->edispl_r, &rt);
    if (st > INT_MAX || rt > INT_MAX)
        return BB_RC_TOO_LARGE;
    return st > x->pbytes || rt > x->ubytes ? MPI_ERR_INTERN : MPI_SUCCESS;
}

/* Collective over comm: each rank's counts out (c) to each peer, the
 * counts in (r) and their displacements (rd); their sum in *tot. */
static int bb_counts_exchange(MPI_Comm comm, int p, const int *c, int *r, int *rd,
                              int64_t *tot)
{
    int rc = MPI_Alltoall(c, 1, MPI_INT, r, 1, MPI_INT, comm);
    *tot = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    for (int d = 0; d < p; d++) {
        rd[d] = (int)*tot;
        *tot += r[d];
    }
    return MPI_SUCCESS;
}

/* Step 1, collective: receivers announce (index, ordinal) to the directory,
 * which records each of its elements' receiver and ordinal. */
static int bb_xplan_announce(bb_xplan_t *x, bb_xplan_scratch_t *w, int64_t n,
                             const int64_t *ridx, int64_t rn, int dir_first, int dir_count)
{
    int p = x->p, rc;
    int64_t tot;
    for (int64_t i = 0; i < rn; i++)
        w->destr[i] = dir_first + bb_std_owner(n, dir_count, ridx[i]);
    bb_bucket(w->destr, rn, p, w->c, w->cd, w->cur, w->ordr);
    for (int64_t j = 0; j < rn; j++)
        w->gbuf[j] = BB_PAIR(ridx[w->ordr[j]], w->ordr[j]);
    if ((rc = bb_counts_exchange(x->comm, p, w->c, w->r, w->rd, &tot)) != MPI_SUCCESS)
        return rc;
    if (tot != w->bn && bb_grow_i64(&w->got, tot, &w->bad) != 0)
        return MPI_ERR_NO_MEM; /* only with maps that validation refuses */
    if ((rc = MPI_Alltoallv(w->gbuf, w->c, w->cd, MPI_INT64_T, w->got, w->r, w->rd,
                            MPI_INT64_T, x->comm)) != MPI_SUCCESS)
        return rc;
    for (int d = 0; d < p; d++)
        for (int j = w->rd[d]; j < w->rd[d] + w->r[d]; j++) {
            int64_t o = BB_PAIR_HI(w->got[j]) - w->lo;
            if (o < 0 || o >= w->bn) {
                w->bad = 1;
            } else {
                w->owner[o] = d;
                w->opos[o] = BB_PAIR_LO(w->got[j]);
            }
        }
    return MPI_SUCCESS;
}

/* Step 2, collective: senders ask the directory; it answers (receiver,
 * ordinal) for each of their slots, into dests[] and dpos[]. */
static int bb_xplan_ask(bb_xplan_t *x, bb_xplan_scratch_t *w, int64_t n, const int64_t *sidx,
                        int64_t sn, int dir_first, int dir_count)
{
    int p = x->p, rc;
    int64_t tot;
    for (int64_t i = 0; i < sn; i++)
        w->dests[i] = dir_first + bb_std_owner(n, dir_count, sidx[i]);
    bb_bucket(w->dests, sn, p, w->c, w->cd, w->cur, w->ords);
    for (int64_t j = 0; j < sn; j++)
        w->gbuf[j] = sidx[w->ords[j]];
    if ((rc = bb_counts_exchange(x->comm, p, w->c, w->r, w->rd, &tot)) != MPI_SUCCESS)
        return rc;
    if (tot != w->bn
        && (bb_grow_i64(&w->got, tot, &w->bad) != 0 || bb_grow_i64(&w->rep, tot, &w->bad) != 0))
        return MPI_ERR_NO_MEM;
    if ((rc = MPI_Alltoallv(w->gbuf, w->c, w->cd, MPI_INT64_T, w->got, w->r, w->rd,
                            MPI_INT64_T, x->comm)) != MPI_SUCCESS)
        return rc;
    for (int64_t j = 0; j < tot; j++) {
        int64_t o = w->got[j] - w->lo;
        w->rep[j] = (o >= 0 && o < w->bn && w->owner[o] >= 0) ? BB_PAIR(w->owner[o], w->opos[o])
                                                              : -1;
    }
    for (int64_t j = 0; j < sn; j++)
        w->ans[j] = -1;
    if ((rc = MPI_Alltoallv(w->rep, w->r, w->rd, MPI_INT64_T, w->ans, w->c, w->cd, MPI_INT64_T,
                            x->comm)) != MPI_SUCCESS)
        return rc;
    for (int64_t j = 0; j < sn; j++) {
        int d = w->ans[j] < 0 ? -1 : (int)BB_PAIR_HI(w->ans[j]);
        if (d < 0 || d >= p) {
            w->bad = 1;
            d = x->me; /* keep going; the outcome is refused by the caller */
        }
        w->dests[w->ords[j]] = d;
        w->dpos[w->ords[j]] = w->ans[j] < 0 ? 0 : BB_PAIR_LO(w->ans[j]);
    }
    return MPI_SUCCESS;
}

/* Step 3, collective: senders tell each receiver the ordinals that arrive,
 * in message order (the sender's local storage order): x's slot lists. */
static int bb_xplan_tell(bb_xplan_t *x, bb_xplan_scratch_t *w, int64_t sn, int64_t rn)
{
    int p = x->p, rc;
    int64_t tot;
    x->nsend = (int)sn;
    bb_bucket(w->dests, sn, p, x->scount, x->sdispl, w->cur, x->spos);
    for (int64_t j = 0; j < sn; j++)
        w->ibuf[j] = w->dpos[x->spos[j]];
    if ((rc = bb_counts_exchange(x->comm, p, x->scount, x->rcount, x->rdispl, &tot))
        != MPI_SUCCESS)
        return rc;
    if (tot != rn && (w->bad = 1, (x->rpos = bb_grow_int(x->rpos, tot)) == NULL))
        return MPI_ERR_NO_MEM;
    if ((rc = MPI_Alltoallv(w->ibuf, x->scount, x->sdispl, MPI_INT, x->rpos, x->rcount,
                            x->rdispl, MPI_INT, x->comm)) != MPI_SUCCESS)
        return rc;
    x->nrecv = (int)tot;
    for (int64_t j = 0; j < tot; j++)
        if (x->rpos[j] < 0 || x->rpos[j] >= rn) {
            w->bad = 1;
            x->rpos[j] = 0;
        }
    for (int d = 0; d < p; d++) {
        x->sruns += bb_slot_runs_count(x->spos + x->sdispl[d], x->scount[d]);
        x->rruns += bb_slot_runs_count(x->rpos + x->rdispl[d], x->rcount[d]);
    }
    return MPI_SUCCESS;
}

/* Collective: pack-mpi's MPI_PACKED sizes per peer, from the count of
 * contiguous elements (the same function of the same count on both sides,
 * so the sender's and the receiver's byte counts match), and its staging;
 * over INT_MAX bytes is BB_RC_TOO_LARGE (agreed). */
static int bb_xplan_packed(bb_xplan_t *x, MPI_Datatype elem)
{
    int64_t st = 0, rt = 0;
    int rc;
    /* the eager layout's header, packed as the MPI_INT64_T it is */
    if ((rc = MPI_Pack_size(2 * BB_REDIST_FIELDS, MPI_INT64_T, x->comm, &x->hbytes))
        != MPI_SUCCESS)
        return rc;
    for (int d = 0; d < x->p; d++) {
        int sz = 0;
        if ((rc = MPI_Pack_size(x->scount[d], elem, x->comm, &sz)) != MPI_SUCCESS)
            return rc;
        x->sbytes[d] = sz;
        x->sbdispl[d] = (int)(st <= INT_MAX ? st : 0);
        st += sz;
        if ((rc = MPI_Pack_size(x->rcount[d], elem, x->comm, &sz)) != MPI_SUCCESS)
            return rc;
        x->rbytes[d] = sz;
        x->rbdispl[d] = (int)(rt <= INT_MAX ? rt : 0);
        rt += sz;
    }
    /* the staging holds either layout: the eager one is the larger */
    bb_xplan_eager_side(x->p, x->hbytes, x->sbytes, NULL, 0, x->ecount_s, x->edispl_s, &st);
    bb_xplan_eager_side(x->p, x->hbytes, x->rbytes, NULL, 0, x->ecount_r, x->edispl_r, &rt);
    int over = st > INT_MAX || rt > INT_MAX;
    x->pbytes = st;
    x->ubytes = rt;
    x->pbuf = over ? NULL : malloc((size_t)(st > 0 ? st : 1));
    x->ubuf = over ? NULL : malloc((size_t)(rt > 0 ? rt : 1));
    int fail = over ? 2 : (!x->pbuf || !x->ubuf), anyfail = 0;
    if (over)
        x->pbytes = x->ubytes = 0;
    if ((rc = MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, x->comm)) != MPI_SUCCESS)
        return rc;
    if (anyfail)
        return anyfail == 2 ? BB_RC_TOO_LARGE : MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

/* Builds x (see redist-private.h).  Every step is direct addressing or a
 * counting sort by rank: O(count + N/P) time and memory, no comparison
 * sort, no search.  The maps must be valid (each side partitions [0, n)),
 * so every buffer size is known before the first exchange and one
 * agreement covers every allocation.  how: BB_XPLAN_* flags. */
int bb_xplan_build(bb_xplan_t *x, MPI_Comm comm, int64_t n, const int64_t *sidx, int64_t sn,
                   const int64_t *ridx, int64_t rn, int dir_first, int dir_count, int how,
                   MPI_Datatype elem, int ncomp)
{
    int rc = MPI_SUCCESS;
    memset(x, 0, sizeof *x);
    x->comm = comm;
    x->how = how;
    if ((rc = MPI_Comm_size(comm, &x->p)) != MPI_SUCCESS
        || (rc = MPI_Comm_rank(comm, &x->me)) != MPI_SUCCESS)
        return rc;
    x->built = 1;
    int di = x->me - dir_first;
    int64_t lo = 0, bn = 0;
    if (di >= 0 && di < dir_count)
        bb_std_block(n, di, dir_count, &lo, &bn);
    bb_xplan_scratch_t w;
    int nomem = bb_xplan_scratch_alloc(&w, x->p, sn, rn, lo, bn);
    nomem |= bb_xplan_alloc(x, sn, rn, (size_t)ncomp * sizeof(double));
    int anynomem = 0;
    if ((rc = MPI_Allreduce(&nomem, &anynomem, 1, MPI_INT, MPI_MAX, comm)) != MPI_SUCCESS)
        goto free_scratch;
    if (anynomem) {
        rc = MPI_ERR_NO_MEM;
        goto free_scratch;
    }
    if ((rc = bb_xplan_announce(x, &w, n, ridx, rn, dir_first, dir_count)) != MPI_SUCCESS
        || (rc = bb_xplan_ask(x, &w, n, sidx, sn, dir_first, dir_count)) != MPI_SUCCESS
        || (rc = bb_xplan_tell(x, &w, sn, rn)) != MPI_SUCCESS)
        goto free_scratch;

    /* What the exchange needs at each execution. */
    for (int d = 0; d < x->p; d++)
        x->wtype_s[d] = x->wtype_r[d] = elem;
    if ((how & BB_XPLAN_RUNS)
        && ((how & BB_XPLAN_PEER_RUNS) ? bb_xplan_peer_runs(x) != 0
            : (bb_slot_runs_list(x->spos, x->nsend, &x->srun, &x->nsrun) != 0
               || bb_slot_runs_list(x->rpos, x->nrecv, &x->rrun, &x->nrrun) != 0))) {
        rc = MPI_ERR_NO_MEM; /* local: agreed by the caller */
        goto free_scratch;
    }
    if ((how & BB_XPLAN_RUNS)
        && (rc = bb_xplan_eager_runs(x, (int64_t)ncomp * (int64_t)sizeof(double)))
               != MPI_SUCCESS)
        goto free_scratch; /* local: agreed by the caller */
    if ((how & BB_XPLAN_TYPES) && (rc = bb_xplan_types(x, elem)) != MPI_SUCCESS)
        goto free_scratch;
    if ((how & BB_XPLAN_PACKED) && (rc = bb_xplan_packed(x, elem)) != MPI_SUCCESS)
        goto free_scratch;
    if (w.bad)
        rc = MPI_ERR_INTERN;
free_scratch:
    bb_xplan_scratch_free(&w);
    return rc;
}

/* ---- closed-form plans between two regular maps --------------------- */

/* One side of a closed-form build: this rank's runs grouped by peer (a
 * stable counting sort of the runs, which are in slot order). */
typedef struct bb_xside {
    bb_regular_run_t *run, *byp;  /* slot order; peer order */
    int64_t nrun;
} bb_xside_t;

/* Local.  me's runs of mine against other (whose rank c is link rank
 * first + c); 1 without memory. */
static int bb_xside_runs(bb_xside_t *sd, const bb_regular_t *mine, int me, const bb_regular_t *other,
                         int first)
{
    memset(sd, 0, sizeof *sd);
    if (me < 0)
        return 0;
    sd->nrun = bb_regular_runs(mine, me, other, NULL, 0);
    size_t z = (size_t)(sd->nrun > 0 ? sd->nrun : 1);
    sd->run = malloc(z * sizeof *sd->run);
    sd->byp = malloc(z * sizeof *sd->byp);
    if (sd->run == NULL || sd->byp == NULL)
        return 1;
    bb_regular_runs(mine, me, other, sd->run, sd->nrun);
    for (int64_t k = 0; k < sd->nrun; k++)
        sd->run[k].peer += first;
    return 0;
}

/* Local.  The slot list, counts and displacements per peer of one side
 * from its runs, as the per-element build leaves them: each peer's slots
 * in slot order (the sender's storage order is increasing global index on
 * both sides of a regular pair, so the receiver's list in the sender's
 * message order is its own slot order too). */
static void bb_xside_fill(bb_xside_t *sd, int p, int *count, int *displ, int *cursor, int *pos)
{
    for (int d = 0; d < p; d++)
        count[d] = 0;
    for (int64_t k = 0; k < sd->nrun; k++)
        count[sd->run[k].peer] += sd->run[k].len;
    int acc = 0;
    for (int d = 0; d < p; d++) {
        displ[d] = cursor[d] = acc;
        acc += count[d];
    }
    for (int64_t k = 0; k < sd->nrun; k++) {
        bb_regular_run_t r = sd->run[k];
        for (int j = 0; j < r.len; j++)
            pos[cursor[r.peer] + j] = r.first + j;
        cursor[r.peer] += r.len;
    }
    /* the runs themselves in peer order (types, the whole-list runs) */
    int64_t at = 0;
    int *nr = cursor; /* reused: runs per peer, then their cursors */
    for (int d = 0; d < p; d++)
        nr[d] = 0;
    for (int64_t k = 0; k < sd->nrun; k++)
        nr[sd->run[k].peer]++;
    for (int d = 0; d < p; d++) {
        int c = nr[d];
        nr[d] = (int)at;
        at += c;
    }
    for (int64_t k = 0; k < sd->nrun; k++)
        sd->byp[nr[sd->run[k].peer]++] = sd->run[k];
}

/* Local.  The whole message order's runs as (first, length) pairs (what
 * bb_slot_runs_list gives over the slot list): the peer-ordered runs, the
 * last of one peer joined to the first of the next where they touch. */
static int bb_xside_list(const bb_xside_t *sd, int **out, int *nrun)
{
    int *r = malloc((size_t)(sd->nrun > 0 ? 2 * sd->nrun : 1) * sizeof *r);
    if (r == NULL)
        return -1;
    int k = -1;
    for (int64_t i = 0; i < sd->nrun; i++) {
        bb_regular_run_t u = sd->byp[i];
        if (k >= 0 && r[2 * k] + r[2 * k + 1] == u.first) {
            r[2 * k + 1] += u.len;
        } else {
            k++;
            r[2 * k] = u.first;
            r[2 * k + 1] = u.len;
        }
    }
    *out = r;
    *nrun = k + 1;
    return 0;
}

/* Local.  Each peer's indexed datatype from its runs (bb_type_slots' type,
 * built from the runs instead of the slots). */
static int bb_xside_types(const bb_xside_t *sd, int p, const int *count, MPI_Datatype elem,
                          MPI_Datatype *type, MPI_Datatype *wtype, int *wcount, int64_t *bytes)
{
    int64_t i = 0;
    int *bl = malloc((size_t)(sd->nrun > 0 ? sd->nrun : 1) * sizeof *bl);
    int *dp = malloc((size_t)(sd->nrun > 0 ? sd->nrun : 1) * sizeof *dp);
    int rc = MPI_SUCCESS;
    if (bl == NULL || dp == NULL) {
        rc = MPI_ERR_NO_MEM;
        goto free_lists;
    }
    for (int d = 0; d < p && rc == MPI_SUCCESS; d++) {
        int nr = 0;
        for (; i < sd->nrun && sd->byp[i].peer == d; i++, nr++) {
            bl[nr] = sd->byp[i].len;
            dp[nr] = sd->byp[i].first;
        }
        if (count[d] == 0)
            continue;
        rc = MPI_Type_indexed(nr, bl, dp, elem, &type[d]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_commit(&type[d]);
        *bytes += 2 * (int64_t)nr * (int64_t)sizeof(int);
        wtype[d] = type[d];
        wcount[d] = 1;
    }
free_lists:
    free(bl); free(dp);
    return rc;
}

int bb_xplan_build_shapes(bb_xplan_t *x, MPI_Comm comm, const bb_regular_t *ss, int s_first,
                          int s_me, const bb_regular_t *rs, int r_first, int r_me, int how,
                          MPI_Datatype elem, int ncomp)
{
    int rc = MPI_SUCCESS;
    memset(x, 0, sizeof *x);
    x->comm = comm;
    x->how = how;
    if ((rc = MPI_Comm_size(comm, &x->p)) != MPI_SUCCESS
        || (rc = MPI_Comm_rank(comm, &x->me)) != MPI_SUCCESS)
        return rc;
    x->built = 1;
    int64_t sn = s_me >= 0 ? bb_regular_below(ss, s_me, ss->n) : 0;
    int64_t rn = r_me >= 0 ? bb_regular_below(rs, r_me, rs->n) : 0;
    bb_xside_t snd, rcv;
    int *cursor = malloc((size_t)x->p * sizeof *cursor);
    int nomem = bb_xside_runs(&snd, ss, s_me, rs, r_first);
    nomem |= bb_xside_runs(&rcv, rs, r_me, ss, s_first);
    nomem |= cursor == NULL;
    nomem |= bb_xplan_alloc(x, sn, rn, (size_t)ncomp * sizeof(double));
    /* Only pack-mpi's sizes are collective below: without them a local
     * failure is agreed by the caller, as every outcome is. */
    int anynomem = nomem;
    if ((how & BB_XPLAN_PACKED)
        && (rc = MPI_Allreduce(&nomem, &anynomem, 1, MPI_INT, MPI_MAX, comm)) != MPI_SUCCESS)
        goto free_runs;
    if (anynomem) {
        rc = MPI_ERR_NO_MEM;
        goto free_runs;
    }
    bb_xside_fill(&snd, x->p, x->scount, x->sdispl, cursor, x->spos);
    bb_xside_fill(&rcv, x->p, x->rcount, x->rdispl, cursor, x->rpos);
    x->nsend = (int)sn;
    x->nrecv = (int)rn;
    x->sruns = snd.nrun;  /* each peer's runs are maximal: its slot list's */
    x->rruns = rcv.nrun;
    for (int d = 0; d < x->p; d++)
        x->wtype_s[d] = x->wtype_r[d] = elem;
    /* overlap's runs split at peers come from the slot lists, as on the
     * per-element path */
    if ((how & BB_XPLAN_RUNS)
        && ((how & BB_XPLAN_PEER_RUNS) ? bb_xplan_peer_runs(x) != 0
            : (bb_xside_list(&snd, &x->srun, &x->nsrun) != 0
               || bb_xside_list(&rcv, &x->rrun, &x->nrrun) != 0))) {
        rc = MPI_ERR_NO_MEM; /* local: agreed by the caller */
        goto free_runs;
    }
    if ((how & BB_XPLAN_RUNS)
        && (rc = bb_xplan_eager_runs(x, (int64_t)ncomp * (int64_t)sizeof(double)))
               != MPI_SUCCESS)
        goto free_runs; /* local: agreed by the caller */
    if ((how & BB_XPLAN_TYPES)
        && ((rc = bb_xside_types(&snd, x->p, x->scount, elem, x->stype, x->wtype_s,
                                 x->wcount_s, &x->type_bytes)) != MPI_SUCCESS
            || (rc = bb_xside_types(&rcv, x->p, x->rcount, elem, x->rtype, x->wtype_r,
                                    x->wcount_r, &x->type_bytes)) != MPI_SUCCESS))
        goto free_runs;
    if ((how & BB_XPLAN_PACKED) && (rc = bb_xplan_packed(x, elem)) != MPI_SUCCESS)
        goto free_runs;
free_runs:
    free(snd.run); free(snd.byp); free(rcv.run); free(rcv.byp); free(cursor);
    return rc;
}

void bb_xplan_drop_runs(bb_xplan_t *x)
{
    free(x->srun); free(x->rrun); free(x->pbuf); free(x->ubuf);
    free(x->ecount_s); free(x->edispl_s); free(x->ecount_r); free(x->edispl_r);
    x->srun = x->rrun = NULL;
    x->pbuf = x->ubuf = NULL;
    x->ecount_s = x->edispl_s = x->ecount_r = x->edispl_r = NULL;
    x->nsrun = x->nrrun = x->hbytes = 0;
    x->pbytes = x->ubytes = 0;
    bb_xplan_drop_peer_runs(x);
}

/* The runs of each peer's part of pos (count[d] slots from displ[d]), split
 * at peers so that each message is packed on its own: (first, length)
 * pairs in *out, peer d's from (*at)[d] to (*at)[d + 1].  0, or -1 without
 * memory (nothing allocated). */
static int bb_slot_runs_by_peer(const int *pos, const int *count, const int *displ, int p,
                                int **out, int **at, int *nrun)
{
    int64_t nr = 0;
    for (int d = 0; d < p; d++)
        nr += bb_slot_runs_count(pos + displ[d], count[d]);
    int *r = malloc((size_t)(nr > 0 ? 2 * nr : 1) * sizeof *r);
    int *a = malloc((size_t)(p + 1) * sizeof *a);
    if (r == NULL || a == NULL) {
        free(r); free(a);
        return -1;
    }
    int k = 0;
    for (int d = 0; d < p; d++) {
        const int *q = pos + displ[d];
        a[d] = k;
        for (int j = 0; j < count[d]; j++) {
            if (j == 0 || q[j] != q[j - 1] + 1) {
                r[2 * k] = q[j];
                r[2 * k + 1] = 0;
                k++;
            }
            r[2 * k - 1]++;
        }
    }
    a[p] = k;
    *out = r;
    *at = a;
    *nrun = k;
    return 0;
}

int bb_xplan_peer_runs(bb_xplan_t *x)
{
    if (bb_slot_runs_by_peer(x->spos, x->scount, x->sdispl, x->p, &x->srun, &x->srunat,
                             &x->nsrun) != 0
        || bb_slot_runs_by_peer(x->rpos, x->rcount, x->rdispl, x->p, &x->rrun, &x->rrunat,
                                &x->nrrun) != 0)
        return MPI_ERR_NO_MEM;
    /* The self part: slot j of this rank's own message leaves sp[j] and
     * lands in rp[j]; a copy run ends where either side jumps. */
    const int *sp = x->spos + x->sdispl[x->me], *rp = x->rpos + x->rdispl[x->me];
    int n = x->scount[x->me] < x->rcount[x->me] ? x->scount[x->me] : x->rcount[x->me];
    int k = 0;
    for (int j = 0; j < n; j++)
        if (j == 0 || sp[j] != sp[j - 1] + 1 || rp[j] != rp[j - 1] + 1)
            k++;
    x->crun = malloc((size_t)(k > 0 ? 3 * k : 1) * sizeof *x->crun);
    if (x->crun == NULL)
        return MPI_ERR_NO_MEM;
    k = 0;
    for (int j = 0; j < n; j++) {
        if (j == 0 || sp[j] != sp[j - 1] + 1 || rp[j] != rp[j - 1] + 1) {
            x->crun[3 * k] = sp[j];
            x->crun[3 * k + 1] = rp[j];
            x->crun[3 * k + 2] = 0;
            k++;
        }
        x->crun[3 * k - 1]++;
    }
    x->ncrun = k;
    return MPI_SUCCESS;
}

void bb_xplan_drop_peer_runs(bb_xplan_t *x)
{
    free(x->srunat); free(x->rrunat); free(x->crun);
    x->srunat = x->rrunat = x->crun = NULL;
    x->ncrun = 0;
}

void bb_xplan_drop_types(bb_xplan_t *x, MPI_Datatype elem)
{
    bb_xplan_free_types(x);
    /* as a build without datatypes leaves them (Alltoallw unused) */
    for (int d = 0; d < x->p; d++) {
        x->wtype_s[d] = x->wtype_r[d] = elem;
        x->wcount_s[d] = x->wcount_r[d] = 0;
    }
}
