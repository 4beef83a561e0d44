/* test-redist-handshake: a message's handshake (the recv_dist flag and the
 * admission) is one agreement collective, or none where it rides in the
 * payload's exchange (eager), at any rank count >= 1.
 *
 * Linked with the interposer (tests/fault.c), which counts the MPI calls of
 * each bb_redist_plan_execute: for every distributed method, both commands,
 * intra mode and an MDI split, no MPI_Bcast, MPI_Barrier, MPI_Send or
 * MPI_Recv (the flag once went root to root and was broadcast: four
 * operations a message); exactly one MPI_Allreduce or MPI_Iallreduce per
 * message, except an eager one (pack, pack-mpi, overlap where the verdict
 * cannot change the path), which makes none: its headers go inside its one
 * MPI_Alltoallv (pack, pack-mpi) or in one message each way between every
 * pair of ranks (overlap: P - 1 Isend and P - 1 Irecv a rank, payload or
 * not).  The data arrives exact.  A message that the last rank refuses
 * costs the same calls, is refused alike on every rank and leaves the
 * receive buffers untouched, the eager ones too, whose payload moved before
 * the verdict.  Prints "handshake on P ranks: N passed, M failed" on rank
 * 0. */
#include "config.h"
#include "check-redist.h"
#include "fault.h"

#include <stdlib.h>
#include <string.h>

static int rank, ranks;

typedef struct calls {
    long agree, bcast, barrier, send, recv, alltoallv, isend, irecv;
} calls_t;

static calls_t calls_now(void)
{
    return (calls_t){ bbfault_calls("MPI_Allreduce") + bbfault_calls("MPI_Iallreduce"),
                      bbfault_calls("MPI_Bcast"), bbfault_calls("MPI_Barrier"),
                      bbfault_calls("MPI_Send"), bbfault_calls("MPI_Recv"),
                      bbfault_calls("MPI_Alltoallv"), bbfault_calls("MPI_Isend"),
                      bbfault_calls("MPI_Irecv") };
}

/* The calls one execute made on this rank. */
static bb_status_t execute_counted(bb_redist_plan_t *plan, const bb_redist_contract_t *c,
                                   const void *sb, void *rb, bb_redist_metrics_t *mt,
                                   calls_t *made)
{
    calls_t before = calls_now();
    bb_status_t st = bb_redist_plan_execute(plan, c, sb, rb, mt);
    calls_t after = calls_now();
    *made = (calls_t){ after.agree - before.agree, after.bcast - before.bcast,
                       after.barrier - before.barrier, after.send - before.send,
                       after.recv - before.recv, after.alltoallv - before.alltoallv,
                       after.isend - before.isend, after.irecv - before.irecv };
    return st;
}

/* The agreement collectives a message of its kind makes (eager: none), and
 * no root-to-root message or broadcast around it. */
static int calls_agreements(const calls_t *m, int eager)
{
    return m->agree == (eager ? 0 : 1) && m->bcast == 0 && m->barrier == 0 && m->send == 0
           && m->recv == 0;
}

/* An eager message's exchange carries every rank's header to every rank:
 * pack and pack-mpi in exactly one MPI_Alltoallv and no point-to-point;
 * overlap in one message to and from every other rank. */
static int calls_carry_headers(const calls_t *m, bb_redist_method_t method)
{
    if (method == BB_REDIST_OVERLAP)
        return m->alltoallv == 0 && m->isend == ranks - 1 && m->irecv == ranks - 1;
    return m->alltoallv == 1 && m->isend == 0 && m->irecv == 0;
}

static double *alloc_elems(const bb_map_t *m, int64_t eb)
{
    int64_t c = m ? bb_map_count(m) : 0;
    return malloc((size_t)(c > 0 ? c : 1) * (size_t)eb);
}

/* Whether a message of method and command posts its payload while the
 * handshake flies: the staged methods, except '<' across codes. */
static int want_eager(bb_redist_method_t method, int cmd, int intra)
{
    int staged = method == BB_REDIST_PACK || method == BB_REDIST_PACK_MPI
                 || method == BB_REDIST_OVERLAP;
    return staged && (cmd == BB_REDIST_SEND || intra);
}

/* Two exact messages, then one the last rank refuses (a wrong N). */
static void handshake_one(bb_redist_link_t *l, bb_redist_method_t method, int cmd, int intra,
                          const char *what)
{
    int64_t n = 41, eb = 24;
    bb_map_t *dm = check_code_map(l, 0, "block-irregular:3", n, 0);
    bb_map_t *em = check_code_map(l, 1, "random:7", n, 0);
    bb_redist_plan_t *plan = NULL;
    bb_status_t st = bb_redist_plan_create(l, method, cmd, eb, dm, em, &plan, NULL);
    CHECK_MSG(st == BB_OK, "%s: plan: %s", what, bb_status_string(st));
    if (st != BB_OK)
        goto free_maps;
    const bb_map_t *sm = bb_redist_plan_send_map(plan), *rm = bb_redist_plan_recv_map(plan);
    double *sb = alloc_elems(sm, eb), *rb = alloc_elems(rm, eb);
    int64_t rcount = rm ? bb_map_count(rm) : 0;
    for (int k = 0; k < 3; k++) {
        int refuse = k == 2;
        bb_redist_contract_t c = {cmd, refuse && rank == ranks - 1 ? n + 1 : n, eb, n + 1};
        if (sm)
            bb_rd_fill(sm, eb, k, sb);
        if (rm)
            bb_rd_fill_sentinel(rcount, eb, rb);
        bb_redist_metrics_t mt;
        calls_t made;
        st = execute_counted(plan, &c, sb, rb, &mt, &made);
        CHECK_MSG(mt.eager == want_eager(method, cmd, intra), "%s k=%d: eager %d", what, k,
                  mt.eager);
        int eager = want_eager(method, cmd, intra);
        CHECK_MSG(calls_agreements(&made, eager),
                  "%s k=%d: %ld agreement collectives, %ld Bcast, %ld Barrier, %ld Send, "
                  "%ld Recv (want %d, 0, 0, 0, 0)", what, k, made.agree, made.bcast,
                  made.barrier, made.send, made.recv, eager ? 0 : 1);
        if (eager)
            CHECK_MSG(calls_carry_headers(&made, method),
                      "%s k=%d: %ld Alltoallv, %ld Isend, %ld Irecv (the headers to and from "
                      "every rank on %d ranks)", what, k, made.alltoallv, made.isend,
                      made.irecv, ranks);
        if (refuse) {
            int64_t code = st == BB_REFUSED ? 8 * (int64_t)mt.refusal.rank + mt.refusal.stage : -1;
            CHECK_MSG(st == BB_REFUSED && mt.refusal.stage == BB_STAGE_PREFLIGHT
                          && mt.refusal.rank == ranks - 1 && bbfault_same_everywhere(code),
                      "%s: a refusal by rank %d alike everywhere: %s, rank %d", what, ranks - 1,
                      bb_status_string(st), mt.refusal.rank);
            int untouched = 1;
            for (int64_t i = 0; i < rcount * (eb / 8); i++)
                untouched &= rb[i] == -1.0;
            CHECK_MSG(untouched, "%s: the refused message wrote the receive buffer", what);
            continue;
        }
        CHECK_MSG(st == BB_OK && mt.recv_dist == BB_RECV_DIST_DATA,
                  "%s k=%d: %s, recv_dist %lld", what, k, bb_status_string(st),
                  (long long)mt.recv_dist);
        bb_rd_check_t ck;
        st = bb_rd_check(bb_redist_link_comm(l), rm, n, eb, k, rb, &ck);
        CHECK_MSG(st == BB_OK, "%s k=%d: %lld bad slots, checksum %s", what, k,
                  (long long)ck.bad_slots, ck.checksum_ok ? "ok" : "wrong");
    }
    free(sb);
    free(rb);
    bb_redist_plan_destroy(plan);
free_maps:
    bb_map_free(dm);
    bb_map_free(em);
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    for (int mode = 0; mode < 2; mode++) {
        int intra = mode == 0;
        if (!intra && ranks < 2)
            continue;
        bb_redist_link_t *l = NULL;
        bb_status_t st = bb_redist_link_create(
            world, intra ? BB_REDIST_MODE_INTRA : BB_REDIST_MODE_MDI, intra ? 0 : ranks / 2, &l);
        CHECK_MSG(st == BB_OK, "link: %s", bb_status_string(st));
        if (st != BB_OK)
            continue;
        for (int m = 0; m < BB_REDIST_METHODS; m++) {
            bb_redist_method_t method = (bb_redist_method_t)m;
            /* the root methods' payload is itself root to root and
             * broadcast; auto's trial agrees its timings once more, in the
             * messages that end a trial window (test-redist-auto) */
            if (method == BB_REDIST_ROOT || method == BB_REDIST_ROOT_GATHERV
                || method == BB_REDIST_AUTO)
                continue;
            for (int d = 0; d < 2; d++) {
                char what[96];
                int cmd = d ? BB_REDIST_RECEIVE : BB_REDIST_SEND;
                snprintf(what, sizeof what, "%s %s %c", intra ? "intra" : "mdi",
                         bb_redist_method_name(method), cmd);
                handshake_one(l, method, cmd, intra, what);
            }
        }
        CHECK_MSG(bb_redist_link_destroy(l) == BB_OK, "link destroy");
    }
    fflush(stdout);
    int mine[2] = {passed, failed}, tot[2];
    MPI_Reduce(mine, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("handshake on %d ranks: %d passed, %d failed\n", ranks, tot[0], tot[1]);
    int bad = failed > 0, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bb_world_release(world);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
