/* test-misuse: API misuse on one rank of many, at any rank count >= 1.
 *
 * The last rank alone passes a bad argument (NULL provider, contract or
 * output, a bad element size or method, a bad driver count): every rank
 * must return from the call (the driver runs this under a timeout, so a
 * rank left waiting is a failure) with the same verdict, and the objects
 * must still work afterwards.  Also: outputs untouched on misuse, tickets
 * of a closed phase, a phase at sequence INT64_MAX.
 * Prints "misuse on P ranks: N passed, M failed" on rank 0; exit 1 on
 * failure. */
#include "config.h"
#include "bench/redist/redist.h"
#include "private/hooks.h"
#include "../check-mpi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define BB_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BB_TEST_ASAN 1
#endif
#endif

static int rank, ranks, last;

/* 1 on every rank iff ok on every rank. */
static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* ---------------------------------------------------------------- sum */

static double sum_data[4] = {1, 2, 3, 4};

static int sum_prepare(void *arg, const double **data_out, int64_t *len_out)
{
    (void)arg;
    *data_out = sum_data;
    *len_out = 4;
    return 0;
}

static void case_sum(bb_world_t *world)
{
    bb_sum_phase_t *phase = NULL;
    CHECK(bb_sum_phase_create(world, &phase) == BB_OK);
    bb_sum_provider_t prov = {sum_prepare, NULL, NULL};
    bb_sum_provider_t no_prepare = {NULL, NULL, NULL};
    bb_sum_contract_t c = {7, 0, 4, 16};
    static const char *const what[] = {"NULL provider", "NULL prepare",
                                       "NULL contract", "NULL result_out"};
    for (int k = 0; k < 4; k++) {
        double *r = NULL;
        bb_sum_metrics_t m;
        int me = rank == last;
        bb_status_t st = bb_sum_phase_run(
            phase, me && k == 0 ? NULL : me && k == 1 ? &no_prepare : &prov,
            me && k == 2 ? NULL : &c, me && k == 3 ? NULL : &r, &m);
        CHECK_MSG(all_true(st == BB_REFUSED), "sum, %s on the last rank: %s",
                  what[k], bb_status_string(st));
        CHECK_MSG(r == NULL, "sum, %s: nothing published", what[k]);
        CHECK_MSG(!me || m.local_cause == BB_SUM_LOCAL_ARGUMENT,
                  "sum, %s: local cause %d", what[k], (int)m.local_cause);
        CHECK_MSG(m.refusal.stage == BB_STAGE_PREFLIGHT, "sum, %s: stage %s",
                  what[k], bb_stage_name(m.refusal.stage));
    }
    /* The sequences stayed aligned: a good call still succeeds. */
    double *r = NULL;
    bb_status_t st = bb_sum_phase_run(phase, &prov, &c, &r, NULL);
    CHECK_MSG(all_true(st == BB_OK && r != NULL && r[3] == 4.0 * ranks),
              "sum after the refusals: %s", bb_status_string(st));
    bb_free(r);
    CHECK(bb_sum_phase_destroy(phase) == BB_OK);
}

/* ----------------------------------------------------------- transfer */

static unsigned char payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static int consumed_value;

static int tr_prepare(void *arg, const void **data_out, int64_t *len_out)
{
    (void)arg;
    *data_out = payload;
    *len_out = sizeof payload;
    return 0;
}

static int tr_consume(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    (void)arg;
    if (nbytes != (int64_t)sizeof payload || memcmp(data, payload, sizeof payload) != 0)
        return 1;
    *value_out = &consumed_value;
    return 0;
}

static bb_transfer_contract_t tr_contract(void)
{
    bb_transfer_contract_t c = {3, 0, 0, last, (int64_t)sizeof payload, 64, 2};
    return c;
}

/* One ticket through begin and finish; 1 iff BB_OK everywhere. */
static int tr_ticket(bb_transfer_phase_t *phase, bb_transfer_ticket_t *t)
{
    bb_transfer_provider_t prov = {tr_prepare, NULL, NULL};
    bb_transfer_consumer_t cons = {tr_consume, NULL, NULL};
    bb_transfer_contract_t c = tr_contract();
    void *v = NULL;
    bb_status_t st = bb_transfer_phase_begin(phase, &prov, &c, t, NULL);
    if (st == BB_OK)
        st = bb_transfer_ticket_finish(t, &cons, BB_TRANSFER_LOCAL_OK, &v, NULL);
    return all_true(st == BB_OK && (rank != last || v == &consumed_value));
}

static void case_transfer(bb_world_t *world)
{
    bb_transfer_phase_t *phase = NULL;
    CHECK(bb_transfer_phase_create(world, &phase) == BB_OK);
    bb_transfer_provider_t prov = {tr_prepare, NULL, NULL};
    bb_transfer_consumer_t cons = {tr_consume, NULL, NULL};
    bb_transfer_contract_t c = tr_contract();
    bb_transfer_metrics_t m;

    /* A NULL contract, then a NULL ticket_out, on the last rank only. */
    for (int k = 0; k < 2; k++) {
        bb_transfer_ticket_t t;
        int me = rank == last;
        bb_status_t st = bb_transfer_phase_begin(phase, &prov,
                                                 me && k == 0 ? NULL : &c,
                                                 me && k == 1 ? NULL : &t, &m);
        CHECK_MSG(all_true(st == BB_REFUSED), "begin, NULL %s on the last rank: %s",
                  k == 0 ? "contract" : "ticket_out", bb_status_string(st));
        CHECK_MSG(m.refusal.stage == BB_STAGE_PREFLIGHT && m.refusal.rank == last,
                  "begin, NULL %s: refusal %s by rank %d",
                  k == 0 ? "contract" : "ticket_out", bb_stage_name(m.refusal.stage),
                  m.refusal.rank);
        CHECK_MSG(!me || m.local_cause == BB_TRANSFER_CAUSE_ARGUMENT, "cause %s",
                  bb_transfer_cause_name(m.local_cause));
    }
    bb_transfer_ticket_t t;
    CHECK_MSG(tr_ticket(phase, &t), "a ticket after the refusals");

    /* Outputs are written on BB_OK only. */
    void *sentinel = (void *)&sentinel;
    void *v = sentinel;
    bb_status_t st = bb_transfer_ticket_finish(&t, &cons, BB_TRANSFER_LOCAL_OK, &v, NULL);
    CHECK_MSG(st == BB_ERR_STATE && v == sentinel,
              "finish of a finished ticket: %s, value %s", bb_status_string(st),
              v == sentinel ? "kept" : "overwritten");
    v = sentinel;
    st = bb_transfer_phase_run(phase, &prov, &cons, NULL, NULL, &v, NULL);
    CHECK_MSG(all_true(st == BB_REFUSED) && v == sentinel,
              "run with a NULL contract: %s, value %s", bb_status_string(st),
              v == sentinel ? "kept" : "overwritten");
    int complete = 77;
    CHECK(bb_transfer_ticket_progress(&t, &complete) == BB_ERR_STATE && complete == 77);

    /* The last sequence: refused, never wrapped. */
    bb_transfer_phase_set_sequence(phase, INT64_MAX - 1);
    CHECK_MSG(tr_ticket(phase, &t), "the ticket at INT64_MAX - 1");
    CHECK(bb_transfer_phase_sequence(phase) == INT64_MAX);
    st = bb_transfer_phase_begin(phase, &prov, &c, &t, &m);
    CHECK_MSG(all_true(st == BB_REFUSED), "begin at INT64_MAX: %s", bb_status_string(st));
    CHECK_MSG(m.refusal.sequence == INT64_MAX && bb_transfer_phase_sequence(phase) == INT64_MAX,
              "sequence after the refusal: %lld", (long long)bb_transfer_phase_sequence(phase));
    CHECK(bb_transfer_phase_active(phase) == 0);

    /* Tickets of a closed phase, and closing twice. */
    bb_transfer_phase_set_sequence(phase, 0);
    bb_transfer_ticket_t old;
    CHECK_MSG(tr_ticket(phase, &old), "a ticket before close");
    CHECK(bb_transfer_phase_close(phase) == BB_OK);
    complete = 77;
    v = sentinel;
    CHECK_MSG(bb_transfer_ticket_progress(&old, &complete) == BB_ERR_STATE && complete == 77,
              "progress after close");
    CHECK_MSG(bb_transfer_ticket_finish(&old, &cons, 0, &v, &m) == BB_ERR_STATE
                  && v == sentinel && m.status == BB_ERR_STATE,
              "finish after close");
    CHECK_MSG(bb_transfer_phase_close(phase) == BB_ERR_STATE, "close twice");
    CHECK_MSG(bb_transfer_phase_begin(phase, &prov, &c, &t, NULL) == BB_ERR_STATE,
              "begin on a closed phase");

    /* A new phase (often at the old address) must not accept the old
     * ticket, even while its own first ticket is live. */
    bb_transfer_phase_t *again = NULL;
    CHECK(bb_transfer_phase_create(world, &again) == BB_OK);
    st = bb_transfer_phase_begin(again, &prov, &c, &t, NULL);
    CHECK_MSG(all_true(st == BB_OK), "begin on the new phase: %s", bb_status_string(st));
    CHECK_MSG(bb_transfer_ticket_progress(&old, NULL) == BB_ERR_STATE,
              "the old ticket accepted by a new phase%s",
              (void *)again == (void *)old.phase ? " at the same address" : "");
    v = NULL;
    st = bb_transfer_ticket_finish(&t, &cons, BB_TRANSFER_LOCAL_OK, &v, NULL);
    CHECK_MSG(all_true(st == BB_OK), "finish on the new phase: %s", bb_status_string(st));
    CHECK(bb_transfer_phase_close(again) == BB_OK);
}

/* ------------------------------------------------------------- redist */

static bb_map_t *std_map(int64_t n)
{
    bb_layout_t lay;
    bb_map_t *m = NULL;
    if (bb_layout_parse("std", &lay, NULL, 0) != BB_OK
        || bb_layout_map(&lay, n, rank, ranks, 1, &m) != BB_OK)
        MPI_Abort(MPI_COMM_WORLD, 3);
    return m;
}

static void case_redist(bb_world_t *world)
{
    bb_redist_link_t *l = NULL;
    bb_status_t st;
    int me = rank == last;

    /* link_create: a bad driver count, or a NULL link_out, on one rank.
     * Intra mode ignores driver_ranks, so MDI is tried where it exists. */
    if (ranks >= 2) {
        st = bb_redist_link_create(world, BB_REDIST_MODE_MDI, me ? 0 : 1, &l);
        CHECK_MSG(all_true(st == BB_ERR_ARG), "link, driver_ranks 0 on the last rank: %s",
                  bb_status_string(st));
        st = bb_redist_link_create(world, BB_REDIST_MODE_MDI, me ? ranks - 1 : 1, &l);
        CHECK_MSG(ranks > 2 ? all_true(st == BB_ERR_ARG) : all_true(st == BB_OK),
                  "link, driver_ranks differing: %s", bb_status_string(st));
        if (ranks == 2 && st == BB_OK)
            CHECK(bb_redist_link_destroy(l) == BB_OK);
    }
    st = bb_redist_link_create(world, BB_REDIST_MODE_INTRA, 0, me ? NULL : &l);
    CHECK_MSG(all_true(st == BB_ERR_ARG), "link, NULL link_out on the last rank: %s",
              bb_status_string(st));
    st = bb_redist_link_create(world, BB_REDIST_MODE_INTRA, 0, &l);
    CHECK_MSG(all_true(st == BB_OK), "link: %s", bb_status_string(st));
    if (st != BB_OK)
        return;

    int64_t n = 10;
    bb_map_t *map = std_map(n);
    bb_redist_plan_t *plan = NULL;
    /* plan_create: a bad element size, a differing element size or
     * method, a bad method, a NULL plan_out, on the last rank. */
    static const char *const what[] = {"element size 12", "element size 16",
                                       "method sparse", "method 99", "NULL plan_out"};
    for (int k = 0; k < 5; k++) {
        int64_t eb = me && k == 0 ? 12 : me && k == 1 ? 16 : 8;
        bb_redist_method_t method = me && k == 2 ? BB_REDIST_SPARSE
                                    : me && k == 3 ? (bb_redist_method_t)99
                                                   : BB_REDIST_DIRECT;
        st = bb_redist_plan_create(l, method, BB_REDIST_SEND, eb, map, map,
                                   me && k == 4 ? NULL : &plan, NULL);
        CHECK_MSG(all_true(st == (ranks == 1 && (k == 1 || k == 2) ? BB_OK : BB_ERR_ARG)),
                  "plan, %s on the last rank: %s", what[k], bb_status_string(st));
        if (st == BB_OK)
            CHECK(bb_redist_plan_destroy(plan) == BB_OK);
    }
    st = bb_redist_plan_create(l, BB_REDIST_DIRECT, BB_REDIST_SEND, 8, map, map, &plan, NULL);
    CHECK_MSG(all_true(st == BB_OK), "plan: %s", bb_status_string(st));
    if (st == BB_OK) {
        double *buf = malloc((size_t)bb_map_count(map) * 8 + 8);
        double *out = malloc((size_t)bb_map_count(map) * 8 + 8);
        bb_redist_contract_t c = {BB_REDIST_SEND, n, 8, n};
        bb_redist_metrics_t m;
        bb_rd_fill(map, 8, 0, buf);
        st = bb_redist_plan_execute(plan, me ? NULL : &c, buf, out, &m);
        CHECK_MSG(all_true(st == BB_REFUSED), "execute, NULL contract on the last rank: %s",
                  bb_status_string(st));
        CHECK_MSG(!me || m.local_cause == BB_REDIST_LOCAL_CONTRACT, "execute cause %d",
                  (int)m.local_cause);
        st = bb_redist_plan_execute(plan, &c, buf, out, NULL);
        CHECK_MSG(all_true(st == BB_OK), "execute after the refusal: %s",
                  bb_status_string(st));
        bb_redist_traffic_t tr;
        st = bb_redist_plan_traffic(plan, me ? NULL : &tr);
        CHECK_MSG(all_true(me ? st == BB_ERR_ARG : st == BB_OK),
                  "traffic, NULL output on the last rank: %s", bb_status_string(st));
        bb_rd_bound_t b;
        st = bb_rd_link_bound(l, me ? -1 : 64, 64, 1, &b);
        CHECK_MSG(all_true(st == BB_ERR_ARG), "bound, remote_bytes -1 on the last rank: %s",
                  bb_status_string(st));
        st = bb_rd_link_bound(l, 64, 64, me ? 2 : 1, &b);
        CHECK_MSG(all_true(st == (ranks == 1 ? BB_OK : BB_ERR_ARG)),
                  "bound, reps differing: %s", bb_status_string(st));
        free(buf);
        free(out);
        CHECK(bb_redist_plan_destroy(plan) == BB_OK);
    }
    bb_map_free(map);
    CHECK(bb_redist_link_destroy(l) == BB_OK);
}

/* Maps that validation cannot count for lack of memory are out of memory,
 * not bad maps (a benchmark said "a generator bug").  The address space is
 * capped just above what the process uses, so the large allocations of
 * validation fail while MPI's small ones still fit.  Not under ASan, whose
 * shadow memory needs the whole address space. */
static void case_redist_nomem(bb_world_t *world)
{
#ifndef BB_TEST_ASAN
    bb_redist_link_t *l = NULL;
    if (bb_redist_link_create(world, BB_REDIST_MODE_INTRA, 0, &l) != BB_OK) {
        CHECK_MSG(0, "link for the memory case");
        return;
    }
    int64_t n = 8000000;  /* validation wants 4 bytes per element at least */
    bb_map_t *map = std_map(n);
    long pages = 0, page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/statm", "r");
    int have = f != NULL && fscanf(f, "%ld", &pages) == 1;
    if (f != NULL)
        fclose(f);
    struct rlimit old, cap;
    have = have && getrlimit(RLIMIT_AS, &old) == 0;
    if (!all_true(have)) {
        CHECK_MSG(0, "cannot read the address space size");
    } else {
        cap = old;
        cap.rlim_cur = (rlim_t)pages * (rlim_t)page + ((rlim_t)4 << 20);
        if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < cap.rlim_cur)
            cap.rlim_cur = old.rlim_cur;
        bb_redist_plan_t *plan = NULL;
        bb_redist_setup_t su;
        int limited = setrlimit(RLIMIT_AS, &cap) == 0;
        bb_status_t st = bb_redist_plan_create(l, BB_REDIST_DIRECT, BB_REDIST_SEND, 8,
                                               map, map, &plan, &su);
        if (limited)
            setrlimit(RLIMIT_AS, &old);
        CHECK_MSG(all_true(limited), "setrlimit(RLIMIT_AS)");
        CHECK_MSG(all_true(st == BB_ERR_NOMEM),
                  "plan with validation out of memory: %s (resources %d/%d)",
                  bb_status_string(st), su.driver_fault.resources,
                  su.engine_fault.resources);
        if (st == BB_OK)
            bb_redist_plan_destroy(plan);
    }
    bb_map_free(map);
    CHECK(bb_redist_link_destroy(l) == BB_OK);
#else
    (void)world;
#endif
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    last = ranks - 1;
    case_sum(world);
    case_transfer(world);
    case_redist(world);
    case_redist_nomem(world);
    int counts[2] = {passed, failed}, total[2] = {0, 0};
    MPI_Reduce(counts, total, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("misuse on %d ranks: %d passed, %d failed\n", ranks, total[0], total[1]);
    bb_world_release(world);
    MPI_Finalize();
    return total[1] == 0 && failed == 0 ? 0 : 1;
}
