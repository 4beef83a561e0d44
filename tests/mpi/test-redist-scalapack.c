/* test-redist-scalapack: the ScaLAPACK reference redistribution
 * (bench/redist/scalapack.c) on real MPI, at any rank count >= 1.
 *
 *   test-redist-scalapack available  exit 0 when built with ScaLAPACK, else
 *                        77 with configure's reason (no MPI job needed)
 *   test-redist-scalapack index      bc2d's indices against ScaLAPACK's
 *                        numroc_, indxl2g_, indxg2p_ and indxg2l_
 *   test-redist-scalapack moves      cyclic -> block-cyclic:64,
 *                        block-cyclic:64 -> block-cyclic:1000, std-ceil ->
 *                        cyclic (and back, '<'), intra and every MDI split,
 *                        bc2d pairs (two grids, 1D whole columns, source
 *                        processes off the origin),
 *                        8- and 24-byte elements, several N: every received
 *                        slot holds the element bbench's own map of the
 *                        receiving layout names (bb_layout_map: slot i holds
 *                        global index idx[i]), whose double c is the global
 *                        value idx[i] * k + c the sender wrote from its map
 *   test-redist-scalapack refuse     layouts ScaLAPACK cannot express are
 *                        refused alike on every rank with a reason; the
 *                        expressible edge cases (std when N % P is 0 or
 *                        P-1, any ascending layout on 1 rank) are not
 *   test-redist-scalapack lifetime   BLACS ends with the last live context
 *                        and starts again; MPI works after it; two contexts
 *                        live at once; the job finalizes
 *   test-redist-scalapack checker    the checker fails a received buffer
 *                        with one wrong double (so the moves can fail)
 *   test-redist-scalapack time FROM TO N [CALLS]  intra link: the median of
 *                        CALLS (default 20) calls and of 5 setups, no
 *                        assertion on speed (rank 0 prints them)
 * Each case prints "CASE on P ranks: N passed, M failed" on rank 0; exit 1
 * on failure. */
#include "config.h"
#include "bench/redist/redist.h"
#include "bench/redist/scalapack.h"
#include "check-redist.h"
#ifdef HAVE_SCALAPACK
#include "bench/redist/scalapack-private.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

static bb_layout_t layout_of(const char *spec)
{
    bb_layout_t l;
    if (bb_layout_parse(spec, &l, NULL, 0) != BB_OK) {
        fprintf(stderr, "rank %d: bad layout %s\n", rank, spec);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return l;
}

/* This rank's map of spec in one code of the link (NULL outside it). */
/* Doubles of slot i of a buffer in map m's order: element idx[i]'s global
 * values idx[i] * k + c. */
static void fill_global(const bb_map_t *m, int64_t k, double *buf)
{
    const int64_t *idx = bb_map_indices(m);
    for (int64_t i = 0; i < bb_map_count(m); i++)
        for (int64_t c = 0; c < k; c++)
            buf[i * k + c] = (double)(idx[i] * k + c);
}

/* The doubles of buf that are not what map m says they hold (printing the
 * first). */
static int64_t wrong_doubles(const bb_map_t *m, int64_t k, const double *buf, const char *what)
{
    const int64_t *idx = bb_map_indices(m);
    int64_t wrong = 0;
    for (int64_t i = 0; i < bb_map_count(m); i++)
        for (int64_t c = 0; c < k; c++)
            if (buf[i * k + c] != (double)(idx[i] * k + c) && wrong++ == 0)
                fprintf(stderr, "rank %d: %s: slot %lld double %lld is %.17g, element %lld "
                        "wants %lld\n", rank, what, (long long)i, (long long)c, buf[i * k + c],
                        (long long)idx[i], (long long)(idx[i] * k + c));
    return wrong;
}

static double *alloc_doubles(const bb_map_t *m, int64_t k)
{
    int64_t c = m ? bb_map_count(m) * k : 0;
    return malloc((size_t)(c > 0 ? c : 1) * sizeof(double));
}

/* One ScaLAPACK redistribution on link of from (the driver's layout) and to
 * (the engine's) for command, checked slot by slot on the receivers. */
static void move_and_check(bb_redist_link_t *l, int command, const char *from, const char *to,
                           int64_t n, int64_t eb, const char *mode)
{
    char what[160], reason[512];
    snprintf(what, sizeof what, "%s %s %s%c%s N=%lld eb=%lld", mode, "scalapack", from,
             command, to, (long long)n, (long long)eb);
    bb_layout_t dl = layout_of(from), el = layout_of(to);
    bb_scalapack_redist_t *ctx = NULL;
    bb_scalapack_setup_t su;
    bb_status_t st = bb_scalapack_redist_create_on_link(l, command, n, eb, &dl, &el, &ctx, &su,
                                                        reason, sizeof reason);
    CHECK_MSG(st == BB_OK, "%s: create: %s (%s)", what, bb_status_string(st), reason);
    if (st != BB_OK)
        return;
    CHECK_MSG(su.total_s >= su.grid_s && su.grid_s >= 0.0, "%s: setup times", what);
    int64_t k = eb / 8;
    bb_map_t *dmap = check_code_map(l, 0, from, n, 0), *emap = check_code_map(l, 1, to, n, 0);
    bb_map_t *smap = command == BB_REDIST_SEND ? dmap : emap;
    bb_map_t *rmap = command == BB_REDIST_SEND ? emap : dmap;
    /* ScaLAPACK's ownership is bbench's, rank by rank */
    CHECK_MSG(bb_scalapack_redist_send_count(ctx) == (smap ? bb_map_count(smap) : 0),
              "%s: sends %lld, the map holds %lld", what,
              (long long)bb_scalapack_redist_send_count(ctx),
              (long long)(smap ? bb_map_count(smap) : 0));
    CHECK_MSG(bb_scalapack_redist_recv_count(ctx) == (rmap ? bb_map_count(rmap) : 0),
              "%s: receives %lld, the map holds %lld", what,
              (long long)bb_scalapack_redist_recv_count(ctx),
              (long long)(rmap ? bb_map_count(rmap) : 0));
    double *sbuf = alloc_doubles(smap, k), *rbuf = alloc_doubles(rmap, k);
    if (smap)
        fill_global(smap, k, sbuf);
    /* twice: a context is reusable, and the second call is not helped by
     * the first's data (sentinels again) */
    for (int rep = 0; rep < 2; rep++) {
        if (rmap)
            for (int64_t i = 0; i < bb_map_count(rmap) * k; i++)
                rbuf[i] = -1.0;
        st = bb_scalapack_redist_execute(ctx, bb_scalapack_redist_send_count(ctx) ? sbuf : NULL,
                                         bb_scalapack_redist_recv_count(ctx) ? rbuf : NULL);
        CHECK_MSG(st == BB_OK, "%s: execute: %s", what, bb_status_string(st));
        if (rmap) {
            int64_t w = wrong_doubles(rmap, k, rbuf, what);
            CHECK_MSG(w == 0, "%s call %d: %lld of %lld doubles wrong", what, rep, (long long)w,
                      (long long)(bb_map_count(rmap) * k));
        }
        if (smap) {  /* the sender's array is only read */
            int64_t w = wrong_doubles(smap, k, sbuf, what);
            CHECK_MSG(w == 0, "%s: the send buffer changed (%lld doubles)", what, (long long)w);
        }
    }
    free(sbuf);
    free(rbuf);
    bb_map_free(dmap);
    bb_map_free(emap);
    bb_scalapack_redist_destroy(ctx);
}

static const char *const pairs[][2] = {
    {"cyclic", "block-cyclic:64"},
    {"block-cyclic:64", "block-cyclic:1000"},
    {"std-ceil", "cyclic"},
};
/* matrices of 6 rows: two bc2d grids from the side's rank count, and
 * bc2d against 1D blocks of whole columns (12 elements: 2 columns) */
static const char *const pairs2d[][2] = {
    {"bc2d:6,2,3", "bc2d:6,4,1"},
    {"bc2d:6,1,2", "block-cyclic:12"},
    {"root", "bc2d:6,5,2"},
};

static void case_moves(bb_world_t *world)
{
    /* N and element size: nothing; ranks with nothing (N < P); partial
     * blocks of 64 and 1000 on every side; 24-byte elements (3 rows) */
    static const int64_t cases[][2] = {{0, 8}, {3, 24}, {2500, 8}, {7919, 24}};
    /* multiples of 6 rows: no column, one, partial blocks both ways */
    static const int64_t cases2d[][2] = {{0, 8}, {6, 24}, {2502, 8}, {7920, 24}};
    for (int split = 0; split < ranks; split++) {  /* 0: intra; else MDI Pd */
        bb_redist_link_t *l = NULL;
        bb_status_t st = bb_redist_link_create(world, split ? BB_REDIST_MODE_MDI
                                                            : BB_REDIST_MODE_INTRA,
                                               split, &l);
        CHECK_MSG(st == BB_OK, "link split %d: %s", split, bb_status_string(st));
        if (st != BB_OK)
            continue;
        char mode[32];
        if (split)
            snprintf(mode, sizeof mode, "mdi %d+%d", split, ranks - split);
        else
            snprintf(mode, sizeof mode, "intra");
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
            for (int cmd = 0; cmd < 2; cmd++)
                for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                    move_and_check(l, cmd ? BB_REDIST_RECEIVE : BB_REDIST_SEND, pairs[p][0],
                                   pairs[p][1], cases[i][0], cases[i][1], mode);
        for (size_t p = 0; p < sizeof pairs2d / sizeof pairs2d[0]; p++)
            for (int cmd = 0; cmd < 2; cmd++)
                for (size_t i = 0; i < sizeof cases2d / sizeof cases2d[0]; i++)
                    move_and_check(l, cmd ? BB_REDIST_RECEIVE : BB_REDIST_SEND,
                                   pairs2d[p][0], pairs2d[p][1], cases2d[i][0],
                                   cases2d[i][1], mode);
        if (!split) {
            /* explicit grids with source processes off the origin: P x 1
             * from row P-1 against 1 x P from column P-1 */
            char a[64], b[64];
            snprintf(a, sizeof a, "bc2d:6,1,1,%d,1,%d,0", ranks, ranks - 1);
            snprintf(b, sizeof b, "bc2d:6,2,2,1,%d,0,%d", ranks, ranks - 1);
            for (int cmd = 0; cmd < 2; cmd++)
                for (size_t i = 0; i < sizeof cases2d / sizeof cases2d[0]; i++)
                    move_and_check(l, cmd ? BB_REDIST_RECEIVE : BB_REDIST_SEND, a, b,
                                   cases2d[i][0], cases2d[i][1], mode);
        }
        bb_redist_link_destroy(l);
    }
    if (rank == 0)
        printf("moves: 3 layout pairs and 4 of bc2d, both commands, intra and %d MDI splits, "
               "checked slot by slot\n", ranks - 1);
}

/* create must refuse (or accept) alike on every rank. */
static void expect_express(MPI_Comm comm, bb_redist_mode_t mode, int pd, const char *from,
                           const char *to, int64_t n, int want_ok)
{
    bb_layout_t dl = layout_of(from), el = layout_of(to);
    bb_scalapack_redist_t *ctx = NULL;
    char reason[512];
    bb_status_t st = bb_scalapack_redist_create(comm, mode, pd, BB_REDIST_SEND, n, 8, &dl, &el,
                                                &ctx, NULL, reason, sizeof reason);
    int mine = (int)st, lo, hi;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, comm);
    CHECK_MSG(lo == hi, "%s -> %s N=%lld: status differs between ranks", from, to, (long long)n);
    if (want_ok) {
        CHECK_MSG(st == BB_OK, "%s -> %s N=%lld on %d: refused: %s", from, to, (long long)n,
                  ranks, reason);
    } else {
        CHECK_MSG(st == BB_REFUSED && strstr(reason, "cannot express") != NULL,
                  "%s -> %s N=%lld: %s, reason '%s'", from, to, (long long)n,
                  bb_status_string(st), reason);
        if (rank == 0 && st == BB_REFUSED)
            printf("refused %s -> %s N=%lld on %d ranks: %s\n", from, to, (long long)n, ranks,
                   reason);
    }
    bb_scalapack_redist_destroy(ctx);
}

static void case_refuse(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int64_t n = 1000;
    /* always ScaLAPACK's */
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "root", "std-ceil", n, 1);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "std-ceil", "block-cyclic:7", n, 1);
    /* std: equal to std-ceil when N % P is 0 or P-1 (or N < P) */
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "std", "cyclic", (int64_t)ranks * 250, 1);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "std", "cyclic", (int64_t)ranks * 250 - 1, 1);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "std", "cyclic", ranks - 1, 1);
    if (ranks >= 3)
        expect_express(comm, BB_REDIST_MODE_INTRA, 0, "std", "cyclic", (int64_t)ranks * 250 + 1,
                       0);
    /* never (above one rank): the order or the owners differ */
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "random", "cyclic", n, 0);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "cyclic", "spatial-shuffled", n, 0);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "cyclic", "random:3", n, 0);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "block-reverse", "cyclic", n, ranks == 1);
    /* spatial on 2 ranks splits x of a 10 x 10 x 10 lattice in halves:
     * block-cyclic with NB 5; on 3 (x in 4, 3, 3) and 4 (2 x 2) not */
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "spatial", "cyclic", n, ranks <= 2);
    int64_t nb = 0;
    bb_layout_t sp = layout_of("spatial");
    CHECK(bb_scalapack_layout_block(&sp, n, ranks, &nb, NULL, 0) == (ranks <= 2));
    CHECK_MSG(ranks > 2 || nb == (ranks == 1 ? n : 5), "spatial on %d ranks: NB %lld", ranks,
              (long long)nb);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "block-irregular", "cyclic", n, ranks == 1);
    if (ranks >= 2) {
        /* the engine side has P - Pd ranks: std on 1 rank is fine, random not */
        expect_express(comm, BB_REDIST_MODE_MDI, ranks - 1, "cyclic", "std", n, 1);
        expect_express(comm, BB_REDIST_MODE_MDI, 1, "block-reverse", "cyclic", n, 1);
        expect_express(comm, BB_REDIST_MODE_MDI, 1, "cyclic", "random", n, 0);
    }
    /* bc2d: one matrix on both sides, 1D blocks of whole columns only */
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "bc2d:6,2,2", "bc2d:6,3,1", 600, 1);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "bc2d:6,2,2", "bc2d:5,3,1", 600, 0);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "bc2d:6,2,2", "block-cyclic:18", 600, 1);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "bc2d:6,2,2", "block-cyclic:4", 600,
                   ranks == 1);
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "cyclic", "bc2d:6,2,2", 600, ranks == 1);
    /* more doubles than ScaLAPACK's ints */
    expect_express(comm, BB_REDIST_MODE_INTRA, 0, "cyclic", "cyclic", (int64_t)1 << 31, 0);
    /* the local check alone: bad arguments are not refusals */
    bb_layout_t c = layout_of("cyclic");
    bb_scalapack_redist_t *ctx = NULL;
    CHECK(bb_scalapack_redist_create(comm, BB_REDIST_MODE_INTRA, 0, BB_REDIST_SEND, 10, 12, &c,
                                     &c, &ctx, NULL, NULL, 0) == BB_ERR_ARG);
    CHECK(bb_scalapack_redist_create(comm, BB_REDIST_MODE_MDI, ranks, BB_REDIST_SEND, 10, 8, &c,
                                     &c, &ctx, NULL, NULL, 0) == BB_ERR_ARG);
    CHECK(ctx == NULL);
    MPI_Comm_free(&comm);
}

static void case_lifetime(void)
{
    bb_layout_t a = layout_of("block-cyclic:3"), b = layout_of("cyclic");
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int64_t n = 100;
    for (int round = 0; round < 2; round++) {
        /* two live at once: the first destroyed must not end the second's
         * BLACS */
        bb_scalapack_redist_t *x = NULL, *y = NULL;
        CHECK(bb_scalapack_redist_create(comm, BB_REDIST_MODE_INTRA, 0, BB_REDIST_SEND, n, 8, &a,
                                         &b, &x, NULL, NULL, 0) == BB_OK);
        CHECK(bb_scalapack_redist_create(comm, BB_REDIST_MODE_INTRA, 0, BB_REDIST_RECEIVE, n, 8,
                                         &a, &b, &y, NULL, NULL, 0) == BB_OK);
        bb_scalapack_redist_destroy(x);
        bb_map_t *am = NULL, *bm = NULL;
        bb_layout_map(&a, n, rank, ranks, 0, &am);
        bb_layout_map(&b, n, rank, ranks, 0, &bm);
        double *s = alloc_doubles(bm, 1), *r = alloc_doubles(am, 1);
        fill_global(bm, 1, s);
        for (int64_t i = 0; i < bb_map_count(am); i++)
            r[i] = -1.0;
        CHECK(bb_scalapack_redist_execute(y, s, r) == BB_OK);
        CHECK_MSG(wrong_doubles(am, 1, r, "lifetime") == 0, "round %d: '<' after a destroy", round);
        bb_scalapack_redist_destroy(y);  /* BLACS ends here (Cblacs_exit(1)) */
        free(s);
        free(r);
        bb_map_free(am);
        bb_map_free(bm);
        /* MPI continues: a collective on the same communicator and the world */
        int one = 1, sum = 0;
        CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && sum == ranks);
        sum = 0;
        CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS
              && sum == ranks);
    }
    int fin = 1;
    MPI_Finalized(&fin);
    CHECK(fin == 0);
    MPI_Comm_free(&comm);
}

static void case_checker(void)
{
    bb_layout_t l = layout_of("block-cyclic:5");
    bb_map_t *m = NULL;
    CHECK(bb_layout_map(&l, 100, rank, ranks, 0, &m) == BB_OK);
    double *buf = alloc_doubles(m, 3);
    fill_global(m, 3, buf);
    CHECK(wrong_doubles(m, 3, buf, "checker, right") == 0);
    if (bb_map_count(m) > 0) {
        buf[bb_map_count(m) * 3 - 2] += 1.0;
        fprintf(stderr, "rank %d: checker: the next line is expected\n", rank);
        CHECK(wrong_doubles(m, 3, buf, "checker, one wrong") == 1);
    }
    free(buf);
    bb_map_free(m);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The MAX over ranks of each call, the median of those. */
static double median_max(double *t, int count)
{
    MPI_Allreduce(MPI_IN_PLACE, t, count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    qsort(t, (size_t)count, sizeof *t, cmp_double);
    return count % 2 ? t[count / 2] : 0.5 * (t[count / 2 - 1] + t[count / 2]);
}

static void case_time(bb_world_t *world, const char *from, const char *to, int64_t n, int calls)
{
    bb_redist_link_t *l = NULL;
    CHECK(bb_redist_link_create(world, BB_REDIST_MODE_INTRA, 0, &l) == BB_OK);
    bb_layout_t dl = layout_of(from), el = layout_of(to);
    enum { SETUPS = 5 };
    double setup[SETUPS], grid[SETUPS];
    bb_scalapack_redist_t *ctx = NULL;
    char reason[512];
    for (int s = 0; s < SETUPS; s++) {
        bb_scalapack_setup_t su;
        bb_scalapack_redist_destroy(ctx);
        ctx = NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        bb_status_t st = bb_scalapack_redist_create_on_link(l, BB_REDIST_SEND, n, 8, &dl, &el,
                                                            &ctx, &su, reason, sizeof reason);
        CHECK_MSG(st == BB_OK, "time: %s", reason);
        if (st != BB_OK)
            break;
        setup[s] = su.total_s;
        grid[s] = su.grid_s;
    }
    if (ctx == NULL) {
        bb_redist_link_destroy(l);
        return;
    }
    bb_map_t *dmap = check_code_map(l, 0, from, n, 0), *emap = check_code_map(l, 1, to, n, 0);
    double *sbuf = alloc_doubles(dmap, 1), *rbuf = alloc_doubles(emap, 1);
    fill_global(dmap, 1, sbuf);
    double *t = malloc((size_t)calls * sizeof *t);
    for (int warm = 0; warm < 2; warm++)
        bb_scalapack_redist_execute(ctx, sbuf, rbuf);
    for (int i = 0; i < calls; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bb_time_now();
        bb_scalapack_redist_execute(ctx, sbuf, rbuf);
        t[i] = bb_time_now() - t0;
    }
    CHECK(wrong_doubles(emap, 1, rbuf, "time") == 0);
    /* median_max sorts: the fastest call is then t[0] (a load-proof floor) */
    double call = median_max(t, calls), fastest = t[0], su = median_max(setup, SETUPS),
           gr = median_max(grid, SETUPS);
    char desc[160];
    bb_scalapack_redist_describe(ctx, desc, sizeof desc);
    if (rank == 0)
        printf("time %s -> %s N=%lld on %d ranks (%s): per call %.1f us (median of %d, max "
               "over ranks; fastest %.1f us), setup %.1f us (grids %.1f us; median of %d)\n",
               from, to, (long long)n, ranks, desc, call * 1e6, calls, fastest * 1e6, su * 1e6,
               gr * 1e6, SETUPS);
    free(t);
    free(sbuf);
    free(rbuf);
    bb_map_free(dmap);
    bb_map_free(emap);
    bb_scalapack_redist_destroy(ctx);
    bb_redist_link_destroy(l);
}

#ifdef HAVE_SCALAPACK
/* bc2d against ScaLAPACK's own index arithmetic (numroc_, indxl2g_,
 * indxg2p_, indxg2l_ of the library linked), for every rank of a grid of
 * shapes: the count, the global index of every local slot, and for every
 * global element its owner and local place.  Local on each rank. */
static void case_index(void)
{
    static const int rowsv[] = {1, 5, 6, 13}, mbv[] = {1, 2, 4, 7}, nbv[] = {1, 3, 5},
                     colsv[] = {0, 1, 7, 12}, grids[][2] = {{1, 1}, {1, 3}, {2, 2}, {3, 1},
                                                            {2, 3}};
    int64_t shapes = 0, slots = 0;
    for (size_t a = 0; a < 4; a++)
    for (size_t b = 0; b < 4; b++)
    for (size_t c = 0; c < 3; c++)
    for (size_t d = 0; d < 4; d++)
    for (size_t e = 0; e < 5; e++)
    for (int rs = 0; rs < grids[e][0]; rs++)
    for (int cs = 0; cs < grids[e][1]; cs++) {
        int m = rowsv[a], mb = mbv[b], nb = nbv[c], cols = colsv[d], pr = grids[e][0],
            pc = grids[e][1], p = pr * pc;
        char spec[64];
        snprintf(spec, sizeof spec, "bc2d:%d,%d,%d,%d,%d,%d,%d", m, mb, nb, pr, pc, rs, cs);
        bb_layout_t lay = layout_of(spec);
        int64_t n = (int64_t)m * cols, bad = 0, owned = 0;
        for (int r = 0; r < p; r++) {
            int myr = r / pc, myc = r % pc;
            int lr = numroc_(&m, &mb, &myr, &rs, &pr), lc = numroc_(&cols, &nb, &myc, &cs, &pc);
            int64_t *idx = NULL, cnt = 0;
            if (bb_layout_indices(&lay, n, r, p, &idx, &cnt) != BB_OK || cnt != (int64_t)lr * lc) {
                CHECK_MSG(0, "%s N=%lld rank %d: %lld slots, numroc gives %d x %d", spec,
                          (long long)n, r, (long long)cnt, lr, lc);
                free(idx);
                continue;
            }
            for (int64_t l = 0; l < cnt; l++) {
                int li = (int)(l % lr) + 1, lj = (int)(l / lr) + 1;
                int64_t gi = indxl2g_(&li, &mb, &myr, &rs, &pr) - 1,
                        gj = indxl2g_(&lj, &nb, &myc, &cs, &pc) - 1;
                int ig = (int)(idx[l] % m) + 1, jg = (int)(idx[l] / m) + 1;
                bad += idx[l] != gi + gj * m
                       || indxg2p_(&ig, &mb, &myr, &rs, &pr) != myr
                       || indxg2p_(&jg, &nb, &myc, &cs, &pc) != myc
                       || indxg2l_(&ig, &mb, &myr, &rs, &pr) != li
                       || indxg2l_(&jg, &nb, &myc, &cs, &pc) != lj;
            }
            owned += cnt;
            slots += cnt;
            free(idx);
        }
        CHECK_MSG(bad == 0 && owned == n, "%s N=%lld: %lld slots disagree with ScaLAPACK's "
                  "index functions; %lld of %lld elements owned", spec, (long long)n,
                  (long long)bad, (long long)owned, (long long)n);
        shapes++;
    }
    if (rank == 0)
        printf("index: %lld bc2d shapes, %lld slots against numroc_, indxl2g_, indxg2p_, "
               "indxg2l_\n", (long long)shapes, (long long)slots);
}
#endif

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    const char *what = NULL;
    if (strcmp(which, "available") == 0) {  /* no MPI: a plain question */
        int yes = bb_scalapack_available(&what);
        printf("%s: %s\n", yes ? "scalapack" : "SKIP: ScaLAPACK not configured", what);
        return yes ? 0 : 77;
    }
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    if (!bb_scalapack_available(&what)) {
        if (rank == 0)
            printf("SKIP: ScaLAPACK not configured: %s\n", what);
        bb_world_release(world);
        MPI_Finalize();
        return 77;
    }
    int all = strcmp(which, "all") == 0;
    if (strcmp(which, "time") == 0) {
        if (argc < 5) {
            fprintf(stderr, "usage: test-redist-scalapack time FROM TO N [CALLS]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        char *end;
        int64_t n = (int64_t)strtod(argv[4], &end);
        long long calls = argc > 5 ? strtoll(argv[5], &end, 10) : 20;
        if (*end != '\0' || n < 0 || calls < 1 || calls > 1000000) {
            fprintf(stderr, "test-redist-scalapack time: N and CALLS must be numbers >= 0 "
                    "and in [1, 1e6]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        case_time(world, argv[2], argv[3], n, (int)calls);
    }
#ifdef HAVE_SCALAPACK /* (main has returned 77 above otherwise) */
    if (all || strcmp(which, "index") == 0)
        case_index();
#endif
    if (all || strcmp(which, "moves") == 0)
        case_moves(world);
    if (all || strcmp(which, "refuse") == 0)
        case_refuse();
    if (all || strcmp(which, "lifetime") == 0)
        case_lifetime();
    if (all || strcmp(which, "checker") == 0)
        case_checker();
    fflush(stdout);
    int mine[2] = {passed, failed}, tot[2];
    MPI_Reduce(mine, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s on %d ranks: %d passed, %d failed\n", which, ranks, tot[0], tot[1]);
    int bad = failed > 0, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bb_world_release(world);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
