/* scalapack.c: ScaLAPACK's Cpdgemr2d as a reference redistribution
 * (scalapack.h says how a bbench point becomes a matrix). */
#include "config.h"
#include "private/bbtext.h"
#include "scalapack.h"
#ifdef HAVE_SCALAPACK
#include "scalapack-private.h"
#endif

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Which layouts are ScaLAPACK's 1 x P block-cyclic columns                 */
/* ------------------------------------------------------------------------ */

int bb_scalapack_available(const char **what_out)
{
#ifdef HAVE_SCALAPACK
    if (what_out != NULL)
        *what_out = BB_SCALAPACK_FOUND;
    return 1;
#else
    if (what_out != NULL)
        *what_out = BB_SCALAPACK_WHY_NOT;
    return 0;
#endif
}

/* numroc with source process 0, in 64 bits: whole blocks dealt round robin,
 * the partial last block to the process after the last whole one. */
static int64_t bb_bc_count(int64_t n, int64_t nb, int p, int ranks)
{
    int64_t blocks = n / nb, extra = blocks % ranks;
    int64_t cnt = (blocks / ranks) * nb;
    if (p < extra)
        cnt += nb;
    else if (p == extra)
        cnt += n % nb;
    return cnt;
}

/* The global index of process p's local element i in blocks of nb. */
static int64_t bb_bc_global(int64_t i, int64_t nb, int p, int ranks)
{
    return (i / nb) * nb * ranks + (int64_t)p * nb + i % nb;
}

/* Every rank's indices against the only block-cyclic candidate: a
 * block-cyclic layout from process 0 starts with [0, NB) on rank 0, so NB
 * is the length of rank 0's first run from 0 (all of N on one rank: any NB
 * >= N, N taken).  O(n) per rank of the side. */
static int bb_layout_block_by_indices(const bb_layout_t *layout, const char *name, int64_t n,
                                      int ranks, int64_t *nb_out, char *reason, size_t len)
{
    int64_t nb = 1;
    for (int r = 0; r < ranks; r++) {
        int64_t *idx = NULL, cnt = 0;
        bb_status_t st = bb_layout_indices(layout, n, r, ranks, &idx, &cnt);
        if (st != BB_OK) {
            bb_errorf(reason, len, "%s on %d ranks: its indices: %s", name, ranks,
                      bb_status_string(st));
            return 0;
        }
        if (r == 0 && n > 0) {
            nb = 0;
            while (nb < cnt && idx[nb] == nb)
                nb++;
            if (nb == 0) {
                bb_errorf(reason, len, "%s on %d ranks: rank 0's first element is not "
                          "element 0 (ScaLAPACK's blocks start on process 0, in order)",
                          name, ranks);
                free(idx);
                return 0;
            }
        }
        int64_t want = bb_bc_count(n, nb, r, ranks), bad = -1;
        for (int64_t i = 0; i < cnt && i < want && bad < 0; i++)
            if (idx[i] != bb_bc_global(i, nb, r, ranks))
                bad = i;
        if (bad >= 0 || cnt != want) {
            if (bad >= 0)
                bb_errorf(reason, len, "%s on %d ranks (N=%lld) is not block-cyclic: rank %d's "
                          "element %lld is %lld where NB=%lld puts %lld", name, ranks,
                          (long long)n, r, (long long)bad, (long long)idx[bad], (long long)nb,
                          (long long)bb_bc_global(bad, nb, r, ranks));
            else
                bb_errorf(reason, len, "%s on %d ranks (N=%lld) is not block-cyclic: rank %d "
                          "holds %lld elements where NB=%lld gives %lld", name, ranks,
                          (long long)n, r, (long long)cnt, (long long)nb, (long long)want);
            free(idx);
            return 0;
        }
        free(idx);
    }
    *nb_out = nb;
    return 1;
}

int bb_scalapack_layout_block(const bb_layout_t *layout, int64_t n, int ranks, int64_t *nb_out,
                              char *reason, size_t reason_len)
{
    if (layout == NULL || nb_out == NULL || n < 0 || n > INT32_MAX || ranks < 1) {
        bb_errorf(reason, reason_len, "no layout, or N or the rank count out of range");
        return 0;
    }
    char name[64];
    bb_layout_format(layout, name, sizeof name);
    int64_t nb, ceil_block = n > 0 ? (n + ranks - 1) / ranks : 1;
    switch (layout->kind) {
    case BB_LAYOUT_CYCLIC:
        nb = 1;
        break;
    case BB_LAYOUT_BLOCK_CYCLIC:
        if (layout->block < 1 || layout->block > INT32_MAX) {
            bb_errorf(reason, reason_len, "%s: a block outside [1, %d]", name, INT32_MAX);
            return 0;
        }
        nb = layout->block;
        break;
    case BB_LAYOUT_STD_CEIL:
        nb = ceil_block;  /* at most one block per rank, in rank order */
        break;
    case BB_LAYOUT_ROOT:
        nb = n > 0 ? n : 1;
        break;
    case BB_LAYOUT_STD:
        /* Contiguous blocks in rank order are block-cyclic only with
         * NB = rank 0's count = ceil(N/P); equal counts are then equal
         * ownership. */
        nb = ceil_block;
        for (int r = 0; r < ranks; r++) {
            int64_t first, cnt, want = bb_bc_count(n, nb, r, ranks);
            bb_std_block(n, r, ranks, &first, &cnt);
            if (cnt != want) {
                bb_errorf(reason, reason_len, "std on %d ranks (N=%lld) is not block-cyclic: "
                          "rank %d holds %lld elements where NB=%lld gives %lld (N %% P must "
                          "be 0 or P-1, or N < P)", ranks, (long long)n, r, (long long)cnt,
                          (long long)nb, (long long)want);
                return 0;
            }
        }
        break;
    default:
        return bb_layout_block_by_indices(layout, name, n, ranks, nb_out, reason, reason_len);
    }
    *nb_out = nb;
    return 1;
}

int bb_scalapack_layout_shape(const bb_layout_t *layout, int64_t n, int ranks, int64_t rows,
                              bb_scalapack_shape_t *shape_out, char *reason, size_t reason_len)
{
    if (layout == NULL || shape_out == NULL || rows < 1 || (n % rows != 0 && !layout->uplo)) {
        bb_errorf(reason, reason_len, "no layout, or N not a multiple of the matrix's rows");
        return 0;
    }
    char name[96];
    bb_layout_format(layout, name, sizeof name);
    bb_scalapack_shape_t sh = {rows, n / rows, rows, 1, 1, ranks, 0, 0, 1, 1};
    if (layout->kind == BB_LAYOUT_BC2D) {
        if (layout->gm > 0) {
            /* a submatrix: ScaLAPACK holds the whole matrix */
            sh.rows = layout->gm;
            sh.cols = layout->gn;
            sh.ia = layout->ia;
            sh.ja = layout->ja;
        }
        if (layout->rows != rows) {
            bb_errorf(reason, reason_len, "%s is a matrix of %lld rows, the other side's of "
                      "%lld (ScaLAPACK moves between two layouts of one matrix)", name,
                      (long long)layout->rows, (long long)rows);
            return 0;
        }
        char why[160];
        if (bb_layout_check(layout, n, ranks, why, sizeof why) != BB_OK) {
            bb_errorf(reason, reason_len, "%s", why);
            return 0;
        }
        sh.mb = layout->mb;
        sh.nb = layout->nb;
        bb_layout_grid(layout, ranks, &sh.pr, &sh.pc);
        sh.rsrc = layout->rsrc;
        sh.csrc = layout->csrc;
        *shape_out = sh;
        return 1;
    }
    /* A 1D layout is the 1 x P grid's column blocks when its blocks are
     * whole columns of the matrix (any NB for a 1-row matrix). */
    int64_t nb;
    if (!bb_scalapack_layout_block(layout, n, ranks, &nb, reason, reason_len))
        return 0;
    if (ranks == 1)
        nb = n; /* one process holds every block, in order */
    if (nb % rows != 0 && nb < n) {
        bb_errorf(reason, reason_len, "%s's blocks of %lld elements are not whole columns "
                  "of the other side's %lld-row matrix", name, (long long)nb, (long long)rows);
        return 0;
    }
    sh.nb = nb >= n ? (sh.cols > 0 ? sh.cols : 1) : nb / rows;
    *shape_out = sh;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The context                                                              */
/* ------------------------------------------------------------------------ */

/* The checks every build makes (local, alike where the arguments are):
 * BB_ERR_ARG, or BB_REFUSED with the reason, or BB_OK with both sides'
 * block sizes and rank counts ([0] sends, [1] receives). */
/* What one call copies: the m x n part at each side's (IA, JA) (elements),
 * a trapezoid of it when uplo is set. */
typedef struct bb_scalapack_copy {
    int64_t m, n;
    char uplo, diag;
} bb_scalapack_copy_t;

static bb_status_t bb_scalapack_express(MPI_Comm comm, bb_redist_mode_t mode, int driver_ranks,
                                        int command, int64_t n, int64_t element_bytes,
                                        const bb_layout_t *driver_layout,
                                        const bb_layout_t *engine_layout, int sides[2],
                                        bb_scalapack_shape_t sh[2], bb_scalapack_copy_t *copy,
                                        char *reason, size_t len)
{
    int p = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_size(comm, &p) != MPI_SUCCESS
        || (mode != BB_REDIST_MODE_MDI && mode != BB_REDIST_MODE_INTRA)
        || (mode == BB_REDIST_MODE_MDI && (driver_ranks < 1 || driver_ranks >= p))
        || (command != BB_REDIST_SEND && command != BB_REDIST_RECEIVE)
        || n < 0 || element_bytes < 8 || element_bytes % 8 != 0
        || driver_layout == NULL || engine_layout == NULL) {
        bb_errorf(reason, len, "bad arguments (communicator, mode, driver ranks, command, "
                  "N, element size or layouts)");
        return BB_ERR_ARG;
    }
    int pd = mode == BB_REDIST_MODE_MDI ? driver_ranks : p;
    int pe = mode == BB_REDIST_MODE_MDI ? p - driver_ranks : p;
    int64_t k = element_bytes / 8;
    if (n > INT_MAX || k > INT_MAX || k * n > INT_MAX) {
        bb_errorf(reason, len, "cannot express %lld elements of %lld bytes: ScaLAPACK's "
                  "32-bit ints hold at most %d doubles", (long long)n, (long long)element_bytes,
                  INT_MAX);
        return BB_REFUSED;
    }
    int send_engine = command == BB_REDIST_RECEIVE;
    const bb_layout_t *lay[2] = {send_engine ? engine_layout : driver_layout,
                                 send_engine ? driver_layout : engine_layout};
    sides[0] = send_engine ? pe : pd;
    sides[1] = send_engine ? pd : pe;
    /* one matrix: a 2D side names its rows, two 1D sides are one row */
    int64_t rows = lay[0]->kind == BB_LAYOUT_BC2D ? lay[0]->rows
                   : lay[1]->kind == BB_LAYOUT_BC2D ? lay[1]->rows : 1;
    const bb_layout_t *trap = lay[0]->uplo ? lay[0] : lay[1]->uplo ? lay[1] : NULL;
    if (trap != NULL) {
        /* one trapezoid on both sides, of doubles */
        const bb_layout_t *other = trap == lay[0] ? lay[1] : lay[0];
        if (other->kind != BB_LAYOUT_BC2D || other->gm == 0 || other->uplo != trap->uplo
            || other->diag != trap->diag || other->rows != trap->rows
            || other->cols != trap->cols) {
            bb_errorf(reason, len, "cannot express a trapezoid to another layout: Cpdtrmr2d "
                      "moves one trapezoid (UPLO, DIAG, ROWS x COLS alike on both sides)");
            return BB_REFUSED;
        }
        if (k != 1) {
            bb_errorf(reason, len, "cannot express a trapezoid of %lld-byte elements: "
                      "ScaLAPACK's trapezoid is of doubles (give -e 8)",
                      (long long)element_bytes);
            return BB_REFUSED;
        }
    }
    copy->m = rows;
    copy->n = trap != NULL ? trap->cols : rows > 0 ? n / rows : 0;
    copy->uplo = trap != NULL ? trap->uplo : 0;
    copy->diag = trap != NULL ? trap->diag : 0;
    for (int s = 0; s < 2; s++) {
        char why[256];
        if (lay[s]->kind == BB_LAYOUT_BC2D && lay[s]->gm > 0
            && (k * lay[s]->gm > INT_MAX || k * lay[s]->gm * lay[s]->gn > INT_MAX)) {
            bb_errorf(reason, len, "cannot express the %lld x %lld matrix of %lld-byte "
                      "elements: ScaLAPACK's 32-bit ints hold at most %d doubles",
                      (long long)lay[s]->gm, (long long)lay[s]->gn, (long long)element_bytes,
                      INT_MAX);
            return BB_REFUSED;
        }
        if (trap != NULL) {
            /* the count is the trapezoid's, not a rows multiple */
            if (!bb_scalapack_layout_shape(lay[s], n, sides[s], rows, &sh[s], why,
                                           sizeof why)) {
                bb_errorf(reason, len, "cannot express the %s's layout: %s",
                          (s == 0) == !send_engine ? "driver" : "engine", why);
                return BB_REFUSED;
            }
            continue;
        }
        if (n % rows != 0)
            bb_errorf(why, sizeof why, "N = %lld is not a multiple of its %lld rows",
                      (long long)n, (long long)rows);
        if (n % rows != 0
            || !bb_scalapack_layout_shape(lay[s], n, sides[s], rows, &sh[s], why, sizeof why)) {
            bb_errorf(reason, len, "cannot express the %s's layout: %s",
                      (s == 0) == !send_engine ? "driver" : "engine", why);
            return BB_REFUSED;
        }
    }
    return BB_OK;
}

#ifdef HAVE_SCALAPACK

struct bb_scalapack_redist {
    MPI_Comm comm;       /* borrowed */
    int k;               /* doubles per element: the matrix is k rows x cols */
    int sides[2];        /* processes sending, receiving */
    int first[2];        /* their first rank in comm */
    int me;              /* this rank in comm */
    bb_scalapack_shape_t sh[2];
    int ctxt_all;        /* the 1 x P grid: Cpdgemr2d's context */
    int ctxt_side[2];    /* the senders' and receivers' grids; -1 outside */
    int mdi;
    int desc_a[BB_DESC_LEN], desc_b[BB_DESC_LEN];
    bb_scalapack_copy_t copy;  /* the part moved: all, a submatrix, a trapezoid */
    int64_t send_count, recv_count;
    double empty;        /* where a buffer of no element points */
};

/* Live contexts: BLACS is started by the first and ended with the last. */
static int bb_scalapack_live;

/* An int no larger than cap (a block longer than the matrix holds all of
 * it, so the two describe the same distribution). */
static int bb_clamp_block(int64_t block, int64_t cap)
{
    return (int)(block < cap ? block : cap > 0 ? cap : 1);
}

/* The descriptor of side s (grid ctxt, -1 outside) and this rank's count
 * of elements: an element of k doubles is k consecutive rows, so the
 * matrix is k ROWS x cols in k MB x NB blocks and bbench's local buffer is
 * ScaLAPACK's local array. */
static int bb_scalapack_desc(const bb_scalapack_redist_t *c, int s, int ctxt, int *desc,
                             int64_t *count_out)
{
    const bb_scalapack_shape_t *sh = &c->sh[s];
    int nprow = -1, npcol = -1, myrow = -1, mycol = -1, info = 0;
    int m = (int)(c->k * sh->rows), n = (int)sh->cols, rsrc = sh->rsrc, csrc = sh->csrc;
    int mb = bb_clamp_block(c->k * sh->mb, m), nb = bb_clamp_block(sh->nb, n);
    if (ctxt >= 0)
        Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    if (ctxt < 0 || myrow < 0 || mycol < 0) {
        /* outside the grid: only CTXT = -1 is read (and M, N alike) */
        int out[BB_DESC_LEN] = {1, -1, m, n, mb, nb, rsrc, csrc, 1};
        memcpy(desc, out, sizeof out);
        *count_out = 0;
        return 0;
    }
    int lrows = numroc_(&m, &mb, &myrow, &rsrc, &nprow), lld = lrows > 1 ? lrows : 1;
    descinit_(desc, &m, &n, &mb, &nb, &rsrc, &csrc, &ctxt, &lld, &info);
    *count_out = (int64_t)(lrows / c->k) * numroc_(&n, &nb, &mycol, &csrc, &npcol);
    /* the grid must be the side as planned: PR x PC, this rank in its place */
    if (info != 0 || nprow != sh->pr || npcol != sh->pc
        || myrow * npcol + mycol != c->me - c->first[s])
        return -1;
    return 0;
}

/* Collective over the handle's communicator: side s's PR x PC grid of
 * ranks first + pr PC + pc (BLACS's row-major order, as bc2d's), -1 on a
 * rank outside it. */
static int bb_scalapack_grid(int handle, const bb_scalapack_shape_t *sh, int first, int *map)
{
    int ctxt = handle;
    for (int r = 0; r < sh->pr; r++)
        for (int q = 0; q < sh->pc; q++)
            map[r + q * sh->pr] = first + r * sh->pc + q;
    Cblacs_gridmap(&ctxt, map, sh->pr, sh->pr, sh->pc);
    return ctxt;
}

bb_status_t bb_scalapack_redist_create(MPI_Comm comm, bb_redist_mode_t mode, int driver_ranks,
                                       int command, int64_t n, int64_t element_bytes,
                                       const bb_layout_t *driver_layout,
                                       const bb_layout_t *engine_layout,
                                       bb_scalapack_redist_t **ctx_out,
                                       bb_scalapack_setup_t *setup_out, char *reason,
                                       size_t reason_len)
{
    bb_scalapack_setup_t su = {0};
    double t0 = bb_time_now();
    bb_errorf(reason, reason_len, "%s", "");
    if (ctx_out == NULL) {
        bb_errorf(reason, reason_len, "no ctx_out");
        return BB_ERR_ARG;
    }
    *ctx_out = NULL;
    int sides[2];
    bb_scalapack_shape_t sh[2];
    bb_scalapack_copy_t copy;
    bb_status_t st = bb_scalapack_express(comm, mode, driver_ranks, command, n, element_bytes,
                                          driver_layout, engine_layout, sides, sh, &copy,
                                          reason, reason_len);
    su.express_s = bb_time_now() - t0;
    if (st != BB_OK)
        goto out;

    double t1 = bb_time_now();
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    bb_scalapack_redist_t *c = calloc(1, sizeof *c);
    int *map = malloc((size_t)p * sizeof *map);
    /* BLACS aborts on its own errors, so only allocation can fail here:
     * agreed, so that no rank enters the grids' collectives alone. */
    int bad = c == NULL || map == NULL, anybad = 1;
    int rc = MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS || anybad) {
        st = rc != MPI_SUCCESS ? BB_ERR_MPI : BB_ERR_NOMEM;
        bb_errorf(reason, reason_len, "%s", bad ? "out of memory" : "another rank failed");
        goto free_ctx;
    }
    c->comm = comm;
    c->k = (int)(element_bytes / 8);
    c->sides[0] = sides[0];
    c->sides[1] = sides[1];
    c->sh[0] = sh[0];
    c->sh[1] = sh[1];
    c->copy = copy;
    c->mdi = mode == BB_REDIST_MODE_MDI;
    c->me = me;
    int send_engine = command == BB_REDIST_RECEIVE;
    c->first[0] = c->mdi && send_engine ? driver_ranks : 0;
    c->first[1] = c->mdi && !send_engine ? driver_ranks : 0;
    for (int i = 0; i < p; i++)
        map[i] = i;
    /* Grids over the link's ranks in order (gridmap: 1 x npcol, ldumap 1),
     * each collective over comm; -1 where this rank is outside. */
    int handle = Csys2blacs_handle(comm);
    c->ctxt_all = handle;
    Cblacs_gridmap(&c->ctxt_all, map, 1, 1, p);
    /* each side's grid (intra 1 x P: the grid of all; a grid smaller than
     * its code: its first PR*PC ranks, -1 on the others, as ScaLAPACK's
     * own tester does); the same order on every rank, the driver's first */
    for (int d = 0; d < 2; d++) {
        int s = d == send_engine ? 0 : 1;  /* d 0: the driver's side */
        c->ctxt_side[s] = !c->mdi && sh[s].pr == 1 && sh[s].pc == p
                              ? c->ctxt_all
                              : bb_scalapack_grid(handle, &sh[s], c->first[s], map);
    }
    /* The handle is read only while grids are made. */
    Cfree_blacs_system_handle(handle);
    bb_scalapack_live++;
    su.grid_s = bb_time_now() - t1;

    double t2 = bb_time_now();
    int dbad = bb_scalapack_desc(c, 0, c->ctxt_side[0], c->desc_a, &c->send_count) != 0
               || bb_scalapack_desc(c, 1, c->ctxt_side[1], c->desc_b, &c->recv_count) != 0;
    su.desc_s = bb_time_now() - t2;
    if (dbad) {
        /* not expected: the grids or descinit disagree with the plan */
        bb_errorf(reason, reason_len, "rank %d: the BLACS grids or descriptors are not the "
                  "planned %d x %d and %d x %d", me, sh[0].pr, sh[0].pc, sh[1].pr, sh[1].pc);
        bb_scalapack_redist_destroy(c);
        c = NULL;
        st = BB_ERR_ARG;
        goto free_map;
    }
    *ctx_out = c;
    c = NULL;
free_map:
    free(map);
free_ctx:
    free(c);
out:
    su.total_s = bb_time_now() - t0;
    if (setup_out != NULL)
        *setup_out = su;
    return st;
}

bb_status_t bb_scalapack_redist_execute(bb_scalapack_redist_t *ctx, const void *send, void *recv)
{
    if (ctx == NULL || (send == NULL && ctx->send_count > 0)
        || (recv == NULL && ctx->recv_count > 0))
        return BB_ERR_ARG;
    /* A is only read (Cpdgemr2d's prototype is not const). */
    double *a = send != NULL ? (double *)(uintptr_t)send : &ctx->empty;
    double *b = recv != NULL ? recv : &ctx->empty;
    /* an element is k rows: the part's rows and first row scale by k */
    int k = ctx->k, m = (int)(k * ctx->copy.m), n = (int)ctx->copy.n;
    int ia = (int)(k * (ctx->sh[0].ia - 1) + 1), ja = (int)ctx->sh[0].ja;
    int ib = (int)(k * (ctx->sh[1].ia - 1) + 1), jb = (int)ctx->sh[1].ja;
    if (ctx->copy.uplo) {
        char uplo[2] = {ctx->copy.uplo, '\0'}, diag[2] = {ctx->copy.diag, '\0'};
        Cpdtrmr2d(uplo, diag, m, n, a, ia, ja, ctx->desc_a, b, ib, jb, ctx->desc_b,
                  ctx->ctxt_all);
    } else {
        Cpdgemr2d(m, n, a, ia, ja, ctx->desc_a, b, ib, jb, ctx->desc_b, ctx->ctxt_all);
    }
    return BB_OK;
}

int64_t bb_scalapack_redist_send_count(const bb_scalapack_redist_t *ctx)
{
    return ctx != NULL ? ctx->send_count : 0;
}

int64_t bb_scalapack_redist_recv_count(const bb_scalapack_redist_t *ctx)
{
    return ctx != NULL ? ctx->recv_count : 0;
}

void bb_scalapack_redist_describe(const bb_scalapack_redist_t *ctx, char *buf, size_t len)
{
    if (ctx == NULL) {
        bb_errorf(buf, len, "none");
        return;
    }
    const bb_scalapack_shape_t *a = &ctx->sh[0], *b = &ctx->sh[1];
    char part[96] = "";
    if (ctx->copy.uplo || a->ia != 1 || a->ja != 1 || b->ia != 1 || b->ja != 1
        || a->rows != ctx->copy.m || b->rows != ctx->copy.m)
        bb_errorf(part, sizeof part, "%s at (%lld, %lld) -> (%lld, %lld) of %lld x %lld -> "
                  "%lld x %lld", ctx->copy.uplo == 'U' ? " upper" : ctx->copy.uplo ? " lower"
                  : "", (long long)a->ia, (long long)a->ja, (long long)b->ia,
                  (long long)b->ja, (long long)a->rows, (long long)a->cols,
                  (long long)b->rows, (long long)b->cols);
    bb_errorf(buf, len, "%dx%d MBxNB=%lldx%lld -> %dx%d MBxNB=%lldx%lld, %lld x %lld doubles%s, "
              "%s", a->pr, a->pc, (long long)a->mb, (long long)a->nb, b->pr, b->pc,
              (long long)b->mb, (long long)b->nb, (long long)(ctx->k * ctx->copy.m),
              (long long)ctx->copy.n, part,
              ctx->mdi ? "disjoint grids in 1 x P" : "grids of all P");
}

void bb_scalapack_redist_destroy(bb_scalapack_redist_t *ctx)
{
    if (ctx == NULL)
        return;
    /* Each grid once (intra: all three are one); MPI_Comm_free is
     * collective, so every rank of comm frees in the same order. */
    for (int s = 0; s < 2; s++)
        if (ctx->ctxt_side[s] >= 0 && ctx->ctxt_side[s] != ctx->ctxt_all
            && (s == 0 || ctx->ctxt_side[1] != ctx->ctxt_side[0]))
            Cblacs_gridexit(ctx->ctxt_side[s]);
    Cblacs_gridexit(ctx->ctxt_all);
    free(ctx);
    if (--bb_scalapack_live == 0)
        Cblacs_exit(1);  /* 1: BLACS ends, MPI continues */
}

#else /* !HAVE_SCALAPACK: every create refuses, saying why */

struct bb_scalapack_redist {
    int unused;
};

bb_status_t bb_scalapack_redist_create(MPI_Comm comm, bb_redist_mode_t mode, int driver_ranks,
                                       int command, int64_t n, int64_t element_bytes,
                                       const bb_layout_t *driver_layout,
                                       const bb_layout_t *engine_layout,
                                       bb_scalapack_redist_t **ctx_out,
                                       bb_scalapack_setup_t *setup_out, char *reason,
                                       size_t reason_len)
{
    int sides[2];
    bb_scalapack_shape_t sh[2];
    bb_scalapack_copy_t copy;
    if (setup_out != NULL)
        memset(setup_out, 0, sizeof *setup_out);
    if (ctx_out != NULL)
        *ctx_out = NULL;
    bb_status_t st = bb_scalapack_express(comm, mode, driver_ranks, command, n, element_bytes,
                                          driver_layout, engine_layout, sides, sh, &copy,
                                          reason, reason_len);
    if (st == BB_ERR_ARG || ctx_out == NULL)
        return BB_ERR_ARG;
    bb_errorf(reason, reason_len, "built without ScaLAPACK: %s", BB_SCALAPACK_WHY_NOT);
    return BB_REFUSED;
}

bb_status_t bb_scalapack_redist_execute(bb_scalapack_redist_t *ctx, const void *send, void *recv)
{
    (void)ctx, (void)send, (void)recv;
    return BB_ERR_ARG;
}

int64_t bb_scalapack_redist_send_count(const bb_scalapack_redist_t *ctx)
{
    (void)ctx;
    return 0;
}

int64_t bb_scalapack_redist_recv_count(const bb_scalapack_redist_t *ctx)
{
    (void)ctx;
    return 0;
}

void bb_scalapack_redist_describe(const bb_scalapack_redist_t *ctx, char *buf, size_t len)
{
    (void)ctx;
    bb_errorf(buf, len, "none (built without ScaLAPACK)");
}

void bb_scalapack_redist_destroy(bb_scalapack_redist_t *ctx)
{
    (void)ctx;
}

#endif

bb_status_t bb_scalapack_redist_create_on_link(const bb_redist_link_t *link, int command,
                                               int64_t n, int64_t element_bytes,
                                               const bb_layout_t *driver_layout,
                                               const bb_layout_t *engine_layout,
                                               bb_scalapack_redist_t **ctx_out,
                                               bb_scalapack_setup_t *setup_out,
                                               char *reason, size_t reason_len)
{
    if (link == NULL) {
        bb_errorf(reason, reason_len, "no link");
        return BB_ERR_ARG;
    }
    MPI_Comm comm = bb_redist_link_comm(link);
    int p = 0;
    MPI_Comm_size(comm, &p);
    /* Two codes cover the link once; intra mode's two "codes" are both all
     * of it. */
    int pd = bb_redist_link_code_size(link, 0), pe = bb_redist_link_code_size(link, 1);
    bb_redist_mode_t mode = pd + pe == p ? BB_REDIST_MODE_MDI : BB_REDIST_MODE_INTRA;
    return bb_scalapack_redist_create(comm, mode, pd, command, n, element_bytes, driver_layout,
                                      engine_layout, ctx_out, setup_out, reason, reason_len);
}
