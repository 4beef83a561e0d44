/* test-redist-codes: a link between two codes launched as two programs
 * (bb_redist_link_create_codes), one launch of tests/mpi/redist-codes.sh.
 *
 *   test-redist-codes ROLE EXPECT
 *
 * ROLE: launch (MPI_APPNUM), driver, engine, or bad-mode (a driver that
 * passes the intra mode).  EXPECT, the same on every rank of the launch:
 *   ok:PD:PE:FOUND   a link of PD driver and PE engine ranks found by FOUND;
 *                    the channel orders the drivers first, each code in world
 *                    order, and a '>' then a '<' between a std driver map and
 *                    a cyclic engine map arrive exact
 *   refused:FIELD    BB_REFUSED with that fault field set on every rank
 *   arg              BB_ERR_ARG on every rank
 * Every rank prints its verdict; the summary line is the C tests' one. */
#include "config.h"
#include "../check-mpi.h"

#include <stdlib.h>
#include <string.h>

static int fault_has(const bb_redist_codes_fault_t *f, const char *field)
{
    if (strcmp(field, "no_driver") == 0)
        return f->no_driver;
    if (strcmp(field, "no_engine") == 0)
        return f->no_engine;
    if (strcmp(field, "mixed") == 0)
        return f->mixed;
    if (strcmp(field, "no_appnum") == 0)
        return f->no_appnum;
    if (strcmp(field, "bad_appnum") == 0)
        return f->bad_appnum;
    return -1;
}

/* A '>' then a '<' of n elements: the driver's std blocks, the engine's
 * cyclic ones; each element carries its global index. */
static void check_messages(bb_redist_link_t *l, int64_t n)
{
    int drv = bb_redist_link_is_driver(l);
    int me = bb_redist_link_code_rank(l, !drv), size = bb_redist_link_code_size(l, !drv);
    bb_map_t *dm = NULL, *em = NULL, *mine;
    if (drv)
        CHECK(bb_map_create_std(n, me, size, 0, &dm) == BB_OK);
    else
        CHECK(bb_map_create_block_cyclic(n, 1, me, size, 0, &em) == BB_OK);
    mine = drv ? dm : em;
    for (int command = 0; command < 2; command++) {
        int cmd = command == 0 ? BB_REDIST_SEND : BB_REDIST_RECEIVE;
        bb_redist_plan_t *pl = NULL;
        bb_redist_setup_t setup;
        bb_status_t st = bb_redist_plan_create(l, BB_REDIST_DIRECT, cmd, sizeof(double), dm, em,
                                               &pl, &setup);
        CHECK_MSG(st == BB_OK, "plan %c: %s", cmd, bb_status_string(st));
        if (st != BB_OK)
            break;
        int64_t count = bb_map_count(mine);
        const int64_t *idx = bb_map_indices(mine);
        double *buf = malloc((size_t)(count > 0 ? count : 1) * sizeof *buf);
        int sender = bb_redist_plan_is_sender(pl);
        for (int64_t i = 0; i < count; i++)
            buf[i] = sender ? (double)idx[i] : -1.0;
        bb_redist_contract_t c = {cmd, n, sizeof(double), n};
        bb_redist_metrics_t m;
        st = bb_redist_plan_execute(pl, &c, sender ? buf : NULL, sender ? NULL : buf, &m);
        CHECK_MSG(st == BB_OK, "execute %c: %s", cmd, bb_status_string(st));
        int64_t wrong = 0;
        for (int64_t i = 0; i < count; i++)
            wrong += buf[i] != (double)idx[i];
        CHECK_MSG(wrong == 0, "%c: %lld of %lld elements wrong", cmd, (long long)wrong,
                  (long long)count);
        free(buf);
        CHECK(bb_redist_plan_destroy(pl) == BB_OK);
    }
    bb_map_free(dm);
    bb_map_free(em);
}

int main(int argc, char **argv)
{
    int rank, ranks;
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    if (argc != 3) {
        fprintf(stderr, "usage: test-redist-codes launch|driver|engine|bad-mode EXPECT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *role_s = argv[1], *expect = argv[2];
    bb_redist_role_t role = BB_REDIST_ROLE_LAUNCH;
    bb_redist_mode_t mode = BB_REDIST_MODE_MDI;
    if (strcmp(role_s, "driver") == 0 || strcmp(role_s, "bad-mode") == 0)
        role = BB_REDIST_ROLE_DRIVER;
    else if (strcmp(role_s, "engine") == 0)
        role = BB_REDIST_ROLE_ENGINE;
    if (strcmp(role_s, "bad-mode") == 0)
        mode = BB_REDIST_MODE_INTRA;

    bb_redist_link_t *l = NULL;
    bb_redist_codes_fault_t f;
    memset(&f, 0xff, sizeof f);
    bb_status_t st = bb_redist_link_create_codes_checked(world, mode, role, &l, &f);
    printf("rank %d: %s: %s (no_driver %d no_engine %d mixed %d no_appnum %d bad_appnum %d)\n",
           rank, role_s, bb_status_string(st), f.no_driver, f.no_engine, f.mixed, f.no_appnum,
           f.bad_appnum);
    if (strncmp(expect, "ok:", 3) == 0) {
        int pd = 0, pe = 0;
        char found[16] = "";
        CHECK(sscanf(expect, "ok:%d:%d:%15s", &pd, &pe, found) == 3);
        CHECK_MSG(st == BB_OK, "create: %s", bb_status_string(st));
        if (st == BB_OK) {
            CHECK(f.no_driver == 0 && f.no_engine == 0 && f.mixed == 0 && f.no_appnum == 0
                  && f.bad_appnum == 0);
            CHECK_MSG(strcmp(bb_redist_link_found_by(l), found) == 0, "found by %s, not %s",
                      bb_redist_link_found_by(l), found);
            CHECK(bb_redist_link_code_size(l, 0) == pd);
            CHECK(bb_redist_link_code_size(l, 1) == pe);
            int drv = bb_redist_link_is_driver(l);
            CHECK(drv != bb_redist_link_is_engine(l));
            if (role != BB_REDIST_ROLE_LAUNCH)
                CHECK(drv == (role == BB_REDIST_ROLE_DRIVER));
            /* The channel: drivers first, each code in world order. */
            MPI_Comm c = bb_redist_link_comm(l);
            int lrank, lsize;
            MPI_Comm_rank(c, &lrank);
            MPI_Comm_size(c, &lsize);
            CHECK(lsize == ranks && lsize == pd + pe);
            CHECK(drv ? lrank < pd : lrank >= pd);
            CHECK(bb_redist_link_code_rank(l, !drv) == (drv ? lrank : lrank - pd));
            int *order = malloc((size_t)lsize * 2 * sizeof *order), mine[2] = {rank, drv};
            MPI_Allgather(mine, 2, MPI_INT, order, 2, MPI_INT, c);
            for (int i = 0; i < lsize; i++) {
                CHECK_MSG(order[2 * i + 1] == (i < pd), "link rank %d is %s", i,
                          order[2 * i + 1] ? "a driver" : "an engine");
                if (i > 0 && i != pd)
                    CHECK_MSG(order[2 * i] > order[2 * i - 2], "link rank %d: world order", i);
            }
            free(order);
            int csize;
            MPI_Comm_size(bb_redist_link_code_comm(l), &csize);
            CHECK(csize == (drv ? pd : pe));
            check_messages(l, 97);
            CHECK(bb_redist_link_destroy(l) == BB_OK);
        }
    } else if (strncmp(expect, "refused:", 8) == 0) {
        CHECK_MSG(st == BB_REFUSED, "create: %s, not refused", bb_status_string(st));
        CHECK_MSG(fault_has(&f, expect + 8) > 0, "fault %s not set", expect + 8);
    } else {
        CHECK_MSG(st == BB_ERR_ARG, "create: %s, not BB_ERR_ARG", bb_status_string(st));
    }
    /* The verdict is the same everywhere: a rank that saw otherwise fails
     * its own checks above; the summary adds every rank's. */
    int local[2] = {passed, failed}, sum[2];
    MPI_Allreduce(local, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test-redist-codes on %d ranks: %d passed, %d failed\n", ranks, sum[0], sum[1]);
    bb_world_release(world);
    MPI_Finalize();
    return sum[1] == 0 && sum[0] > 0 ? 0 : 1;
}
