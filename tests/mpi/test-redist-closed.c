/* test-redist-closed: on real MPI, the closed-form exchange plan between two
 * regular maps (bb_xplan_build_shapes) against today's per-element plan
 * (bb_xplan_build through the directory) built from the same maps' indices:
 * the same peers, counts, displacements, slot lists, runs (per peer and over
 * the message order), datatype sizes and pack-mpi byte counts, on every
 * rank.  One code of all ranks (intra) and every split into two codes,
 * both ways; N in {0, 1, 7, 1009} (N < P included), blocks 1, 3, 64, 1000,
 * > N and the standardized distribution on each side. */
#include "config.h"
#include "lib/redist-private.h"
#include "../check-mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

static int same_ints(const int *a, const int *b, int64_t n)
{
    return n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* Both types NULL, or both of one size and extent. */
static int same_type(MPI_Datatype a, MPI_Datatype b)
{
    if (a == MPI_DATATYPE_NULL || b == MPI_DATATYPE_NULL)
        return a == b;
    int sa, sb;
    MPI_Aint la, ea, lb, eb;
    MPI_Type_size(a, &sa);
    MPI_Type_size(b, &sb);
    MPI_Type_get_extent(a, &la, &ea);
    MPI_Type_get_extent(b, &lb, &eb);
    return sa == sb && la == lb && ea == eb;
}

/* Field by field; the failure names the case. */
static void compare(const bb_xplan_t *e, const bb_xplan_t *c, const char *what)
{
    int p = e->p, ok = e->p == c->p && e->nsend == c->nsend && e->nrecv == c->nrecv
                       && e->sruns == c->sruns && e->rruns == c->rruns
                       && e->nsrun == c->nsrun && e->nrrun == c->nrrun
                       && e->type_bytes == c->type_bytes && e->pbytes == c->pbytes
                       && e->ubytes == c->ubytes;
    CHECK_MSG(ok, "%s: sizes: nsend %d/%d nrecv %d/%d runs %lld/%lld %lld/%lld list %d/%d "
              "%d/%d type bytes %lld/%lld", what, e->nsend, c->nsend, e->nrecv, c->nrecv,
              (long long)e->sruns, (long long)c->sruns, (long long)e->rruns,
              (long long)c->rruns, e->nsrun, c->nsrun, e->nrrun, c->nrrun,
              (long long)e->type_bytes, (long long)c->type_bytes);
    if (!ok)
        return;
    CHECK_MSG(same_ints(e->scount, c->scount, p) && same_ints(e->sdispl, c->sdispl, p)
                  && same_ints(e->rcount, c->rcount, p) && same_ints(e->rdispl, c->rdispl, p),
              "%s: counts or displacements per peer differ", what);
    CHECK_MSG(same_ints(e->spos, c->spos, e->nsend) && same_ints(e->rpos, c->rpos, e->nrecv),
              "%s: slot lists differ", what);
    if (e->srun || c->srun)
        CHECK_MSG(same_ints(e->srun, c->srun, 2 * (int64_t)e->nsrun)
                      && same_ints(e->rrun, c->rrun, 2 * (int64_t)e->nrrun),
                  "%s: run lists differ", what);
    if (e->sbytes || c->sbytes)
        CHECK_MSG(e->sbytes && c->sbytes && same_ints(e->sbytes, c->sbytes, p)
                      && same_ints(e->rbytes, c->rbytes, p)
                      && same_ints(e->sbdispl, c->sbdispl, p)
                      && same_ints(e->rbdispl, c->rbdispl, p),
                  "%s: pack-mpi byte counts differ", what);
    int types = 1;
    for (int d = 0; d < p; d++)
        types &= same_type(e->stype[d], c->stype[d]) && same_type(e->rtype[d], c->rtype[d])
                 && e->wcount_s[d] == c->wcount_s[d] && e->wcount_r[d] == c->wcount_r[d];
    CHECK_MSG(types, "%s: datatypes differ", what);
}

static bb_map_t *make_map(int64_t n, int64_t block, int r, int size)
{
    bb_map_t *m = NULL;
    bb_status_t st = block == 0 ? bb_map_create_std(n, r, size, 1, &m)
                                : bb_map_create_block_cyclic(n, block, r, size, 1, &m);
    CHECK_MSG(st == BB_OK, "map n=%lld block=%lld", (long long)n, (long long)block);
    return m;
}

/* One case: senders on [s_first, s_first + ps), receivers on [r_first,
 * r_first + pr), blocks bs and br (0: std). */
static void one_case(MPI_Comm comm, int64_t n, int s_first, int ps, int64_t bs, int r_first,
                     int pr, int64_t br, MPI_Datatype elem)
{
    int s_me = rank >= s_first && rank < s_first + ps ? rank - s_first : -1;
    int r_me = rank >= r_first && rank < r_first + pr ? rank - r_first : -1;
    bb_map_t *sm = s_me >= 0 ? make_map(n, bs, s_me, ps) : NULL;
    bb_map_t *rm = r_me >= 0 ? make_map(n, br, r_me, pr) : NULL;
    bb_regular_t ss, rs;
    int dummy;
    ss = (bb_regular_t){.kind = bs ? BB_MAP_SHAPE_BLOCK_CYCLIC : BB_MAP_SHAPE_STD, .n = n,
                        .block = bs, .size = ps};
    rs = (bb_regular_t){.kind = br ? BB_MAP_SHAPE_BLOCK_CYCLIC : BB_MAP_SHAPE_STD, .n = n,
                        .block = br, .size = pr};
    if (sm) {
        bb_regular_t got;
        CHECK(bb_map_shape_get(sm, &got, &dummy) && got.kind == ss.kind && got.block == bs);
    }
    const int hows[2] = {BB_XPLAN_TYPES | BB_XPLAN_PACKED, BB_XPLAN_RUNS};
    for (int h = 0; h < 2; h++) {
        bb_xplan_t e, c;
        int rc1 = bb_xplan_build(&e, comm, n, sm ? bb_map_indices(sm) : NULL,
                                 sm ? bb_map_count(sm) : 0, rm ? bb_map_indices(rm) : NULL,
                                 rm ? bb_map_count(rm) : 0, r_first, pr, hows[h], elem, 3);
        int rc2 = bb_xplan_build_shapes(&c, comm, &ss, s_first, s_me, &rs, r_first, r_me,
                                        hows[h], elem, 3);
        char what[160];
        snprintf(what, sizeof what, "N=%lld senders %d+%d block %lld, receivers %d+%d block "
                 "%lld, how %d", (long long)n, s_first, ps, (long long)bs, r_first, pr,
                 (long long)br, hows[h]);
        CHECK_MSG(rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS, "%s: rc %d %d", what, rc1, rc2);
        if (rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS)
            compare(&e, &c, what);
        bb_xplan_free(&e);
        bb_xplan_free(&c);
    }
    bb_map_free(sm);
    bb_map_free(rm);
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Datatype elem;
    MPI_Type_contiguous(3, MPI_DOUBLE, &elem);
    MPI_Type_commit(&elem);
    /* The unit test covers the full grid of (rank, peer) pairs; here every
     * block on one code of all ranks, a thinner grid on two codes (each
     * build costs collectives, and -n 4 runs oversubscribed). */
    const int64_t ns[] = {0, 1, 7, 1009};
    int cases = 0;
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        int64_t n = ns[i];
        const int64_t blocks[] = {0, 1, 3, 64, 1000, n + 2};
        const size_t nb = sizeof blocks / sizeof *blocks;
        for (size_t a = 0; a < nb; a++)
            for (size_t b = 0; b < nb; b++) {
                one_case(comm, n, 0, ranks, blocks[a], 0, ranks, blocks[b], elem);
                cases++;
                /* two codes, both ways, at every split */
                for (int pd = 1; pd < ranks && n != 1 && a % 2 == b % 2; pd++) {
                    one_case(comm, n, 0, pd, blocks[a], pd, ranks - pd, blocks[b], elem);
                    one_case(comm, n, pd, ranks - pd, blocks[a], 0, pd, blocks[b], elem);
                    cases += 2;
                }
            }
    }
    MPI_Type_free(&elem);
    MPI_Comm_free(&comm);
    fflush(stdout);
    int mine[2] = {passed, failed}, tot[2];
    MPI_Reduce(mine, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("closed-form plans, %d cases, on %d ranks: %d passed, %d failed\n", cases, ranks,
               tot[0], tot[1]);
    int bad = failed > 0, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bb_world_release(world);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
