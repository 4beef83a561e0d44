/* redist-scalapack.c: ScaLAPACK's Cpdgemr2d as a reference redistribution
 * (redist-scalapack.h says how a bbench point becomes a matrix). */
#include "config.h"
#include "common.h"
#include "redist-scalapack.h"
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

/* ------------------------------------------------------------------------ */
/* The context                                                              */
/* ------------------------------------------------------------------------ */

/* The checks every build makes (local, alike where the arguments are):
 * BB_ERR_ARG, or BB_REFUSED with the reason, or BB_OK with both sides'
 * block sizes and rank counts ([0] sends, [1] receives). */
static bb_status_t bb_scalapack_express(MPI_Comm comm, bb_redist_mode_t mode, int driver_ranks,
                                        int command, int64_t n, int64_t element_bytes,
                                        const bb_layout_t *driver_layout,
                                        const bb_layout_t *engine_layout, int sides[2],
                                        int64_t nb[2], char *reason, size_t len)
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
    for (int s = 0; s < 2; s++) {
        char why[256];
        if (!bb_scalapack_layout_block(lay[s], n, sides[s], &nb[s], why, sizeof why)) {
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
    int k, n;            /* the k x n matrix */
    int sides[2];        /* processes sending, receiving */
    int first[2];        /* their first rank in comm */
    int me;              /* this rank in comm */
    int64_t nb[2];
    int ctxt_all;        /* the 1 x P grid: Cpdgemr2d's context */
    int ctxt_side[2];    /* the senders' and receivers' grids; -1 outside */
    int mdi;
    int desc_a[BB_DESC_LEN], desc_b[BB_DESC_LEN];
    int64_t send_count, recv_count;
    double empty;        /* where a buffer of no element points */
};

/* Live contexts: BLACS is started by the first and ended with the last. */
static int bb_scalapack_live;

/* The descriptor of side s (grid ctxt, -1 outside) and this rank's count. */
static int bb_scalapack_desc(const bb_scalapack_redist_t *c, int s, int ctxt, int *desc,
                             int64_t *count_out)
{
    int nprow, npcol, myrow, mycol, zero = 0, nb = (int)c->nb[s], info = 0;
    Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    if (ctxt < 0 || mycol < 0) {
        /* outside the grid: only CTXT = -1 is read (and M, N alike) */
        int out[BB_DESC_LEN] = {1, -1, c->k, c->n, c->k, nb, 0, 0, c->k};
        memcpy(desc, out, sizeof out);
        *count_out = 0;
        return 0;
    }
    descinit_(desc, &c->k, &c->n, &c->k, &nb, &zero, &zero, &ctxt, &c->k, &info);
    *count_out = numroc_(&c->n, &nb, &mycol, &zero, &npcol);
    /* the grid must be the side as planned: 1 x P, this rank in its place */
    if (info != 0 || nprow != 1 || npcol != c->sides[s] || mycol != c->me - c->first[s]
        || *count_out != bb_bc_count(c->n, c->nb[s], mycol, c->sides[s]))
        return -1;
    return 0;
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
    int64_t nb[2];
    bb_status_t st = bb_scalapack_express(comm, mode, driver_ranks, command, n, element_bytes,
                                          driver_layout, engine_layout, sides, nb, reason,
                                          reason_len);
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
    c->n = (int)n;
    c->sides[0] = sides[0];
    c->sides[1] = sides[1];
    c->nb[0] = nb[0];
    c->nb[1] = nb[1];
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
    if (c->mdi) {
        int grid[2] = {handle, handle};  /* the driver's, the engine's */
        Cblacs_gridmap(&grid[0], map, 1, 1, driver_ranks);
        Cblacs_gridmap(&grid[1], map + driver_ranks, 1, 1, p - driver_ranks);
        c->ctxt_side[0] = grid[send_engine];
        c->ctxt_side[1] = grid[!send_engine];
    } else {
        c->ctxt_side[0] = c->ctxt_side[1] = c->ctxt_all;
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
                  "planned 1 x %d and 1 x %d", me, sides[0], sides[1]);
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
    Cpdgemr2d(ctx->k, ctx->n, a, 1, 1, ctx->desc_a, b, 1, 1, ctx->desc_b, ctx->ctxt_all);
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
    bb_errorf(buf, len, "1x%d NB=%lld -> 1x%d NB=%lld, %d x %d doubles, %s", ctx->sides[0],
              (long long)ctx->nb[0], ctx->sides[1], (long long)ctx->nb[1], ctx->k, ctx->n,
              ctx->mdi ? "disjoint grids in 1 x P" : "one 1 x P grid");
}

void bb_scalapack_redist_destroy(bb_scalapack_redist_t *ctx)
{
    if (ctx == NULL)
        return;
    /* Each grid once (intra: all three are one); MPI_Comm_free is
     * collective, so every rank of comm frees in the same order. */
    if (ctx->mdi)
        for (int s = 0; s < 2; s++)
            if (ctx->ctxt_side[s] >= 0)
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
    int64_t nb[2];
    if (setup_out != NULL)
        memset(setup_out, 0, sizeof *setup_out);
    if (ctx_out != NULL)
        *ctx_out = NULL;
    bb_status_t st = bb_scalapack_express(comm, mode, driver_ranks, command, n, element_bytes,
                                          driver_layout, engine_layout, sides, nb, reason,
                                          reason_len);
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
