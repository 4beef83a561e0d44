/* test-transfer: the bounded transfer phase on real MPI, at any rank count.
 *
 * Linked with tests/fault.c, so every MPI_Allreduce, MPI_Isend, MPI_Irecv,
 * MPI_Test and MPI_Wait the library makes is counted: "posts nothing" and
 * "rejected before any MPI call" are checked against those counters.  The
 * test's own cross-rank checks use PMPI_ directly so they are not counted.
 *
 *   test-transfer [N]      every behaviour case, N reuse tickets (default
 *                          1000); prints "N passed, N failed"
 *   test-transfer poison [FILE]  one ticket (0 -> last rank, no batches)
 *                          while BB_FAULT makes a call fail; the failing rank
 *                          checks the poisoning, writes its verdict to FILE
 *                          (default stdout) and calls MPI_Abort(3)
 */
#include "config.h"
#include "runner/runner.h"
#include "private/hooks.h"
#include "fault.h"
#include "../check-mpi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, ranks;

static long mpi_calls(void)
{
    return bbfault_calls("MPI_Allreduce") + bbfault_calls("MPI_Iallreduce")
           + bbfault_calls("MPI_Isend") + bbfault_calls("MPI_Irecv")
           + bbfault_calls("MPI_Test") + bbfault_calls("MPI_Wait");
}

static unsigned char pattern(int64_t seq, int64_t i)
{
    return (unsigned char)(i * 131 + seq * 7 + 1);
}

/* Provider: fills the pattern for the sequence the phase will present. */
typedef struct provider {
    bb_transfer_phase_t *phase;
    unsigned char *buf;
    size_t cap;
    int64_t len_delta;   /* hand out nbytes + len_delta */
    int fail;
    long prepared, released, bad_release;
    int64_t nbytes;
    /* reentry */
    int reenter;
    bb_status_t reenter_status;
    long reenter_mpi;
} provider_t;

static int provider_prepare(void *arg, const void **data_out, int64_t *len_out)
{
    provider_t *p = arg;
    if (p->reenter) {
        long before = mpi_calls();
        bb_transfer_contract_t c = { 0, 0, 0, 0, 0, 0, 0 };
        bb_transfer_ticket_t t;
        p->reenter_status = bb_transfer_phase_begin(p->phase, NULL, &c, &t, NULL);
        p->reenter_mpi = mpi_calls() - before;
    }
    if (p->fail)
        return 1;
    size_t n = (size_t)(p->nbytes + (p->len_delta > 0 ? p->len_delta : 0));
    if (n > p->cap || p->buf == NULL) {
        free(p->buf);
        p->buf = malloc(n ? n : 1);
        p->cap = n;
    }
    int64_t seq = bb_transfer_phase_sequence(p->phase);
    for (size_t i = 0; i < n; i++)
        p->buf[i] = pattern(seq, (int64_t)i);
    *data_out = p->buf;
    *len_out = p->nbytes + p->len_delta;
    p->prepared++;
    return 0;
}

static void provider_release(void *arg, const void *data)
{
    provider_t *p = arg;
    if (data != p->buf)
        p->bad_release++;
    p->released++;
}

/* Consumer: checks the pattern of the expected sequence, returns a value. */
typedef struct consumer {
    bb_transfer_ticket_t *ticket;   /* for the reentry case */
    int64_t seq;
    int fail;
    long calls, discarded;
    int64_t seen_nbytes;
    int reenter;
    bb_status_t reenter_status;
    long reenter_mpi;
} consumer_t;

static int consumer_consume(void *arg, const void *data, int64_t nbytes,
                            void **value_out)
{
    consumer_t *c = arg;
    const unsigned char *b = data;
    c->calls++;
    c->seen_nbytes = nbytes;
    if (c->reenter) {
        long before = mpi_calls();
        c->reenter_status = bb_transfer_ticket_progress(c->ticket, NULL);
        c->reenter_mpi = mpi_calls() - before;
    }
    int64_t *value = malloc(sizeof *value);
    *value = nbytes;
    for (int64_t i = 0; i < nbytes; i++)
        if (b[i] != pattern(c->seq, i))
            *value = -1 - i;
    *value_out = value;
    return (c->fail || *value != nbytes) ? 1 : 0;
}

static void consumer_discard(void *arg, void *value)
{
    consumer_t *c = arg;
    c->discarded++;
    free(value);
}

typedef struct compute {
    int fail_rank;
    int64_t fail_batch;
    long calls;
    bb_transfer_phase_t *reenter_close;
    bb_status_t reenter_status;
} compute_t;

static int compute_batch(void *arg, int64_t index)
{
    compute_t *c = arg;
    c->calls++;
    if (c->reenter_close != NULL)
        c->reenter_status = bb_transfer_phase_close(c->reenter_close);
    return (rank == c->fail_rank && index == c->fail_batch) ? 1 : 0;
}

static bb_transfer_contract_t contract(int64_t src, int64_t dst, int64_t n,
                                       int64_t batches)
{
    bb_transfer_contract_t c = { 42, 3, src, dst, n, n, batches };
    return c;
}

/* One run() through the fixtures; fills m and the consumer's value. */
static bb_status_t run_one(bb_transfer_phase_t *phase, provider_t *p, consumer_t *cs,
                           compute_t *cp, const bb_transfer_contract_t *c,
                           int64_t **value, bb_transfer_metrics_t *m)
{
    bb_transfer_provider_t prov = { provider_prepare, provider_release, p };
    bb_transfer_consumer_t cons = { consumer_consume, consumer_discard, cs };
    bb_transfer_compute_t comp = { compute_batch, cp };
    p->phase = phase;
    p->nbytes = c->nbytes;
    cs->seq = bb_transfer_phase_sequence(phase);
    void *v = NULL;
    bb_status_t st = bb_transfer_phase_run(phase, &prov, &cons, &comp, c, &v, m);
    *value = v;
    return st;
}

static void check_refusal(const char *what, bb_status_t st,
                          const bb_transfer_metrics_t *m, bb_stage_t stage,
                          int want_rank, int64_t want_seq)
{
    CHECK_MSG(st == BB_REFUSED && m->status == BB_REFUSED, "%s: status %s", what,
              bb_status_string(st));
    CHECK_MSG(m->refusal.stage == stage, "%s: stage %s, want %s", what,
              bb_stage_name(m->refusal.stage), bb_stage_name(stage));
    CHECK_MSG(m->refusal.rank == want_rank, "%s: rank %d, want %d", what,
              m->refusal.rank, want_rank);
    CHECK_MSG(m->refusal.sequence == want_seq, "%s: sequence %lld, want %lld", what,
              (long long)m->refusal.sequence, (long long)want_seq);
    CHECK_MSG(bbfault_same_everywhere(m->refusal.stage) && bbfault_same_everywhere(m->refusal.rank)
                  && bbfault_same_everywhere(m->refusal.sequence) && bbfault_same_everywhere(m->code),
              "%s: diagnostics differ across ranks", what);
}

static int role_of(int64_t src, int64_t dst)
{
    if (rank == src && rank == dst)
        return BB_TRANSFER_ROLE_SAME_RANK;
    if (rank == src)
        return BB_TRANSFER_ROLE_SOURCE;
    if (rank == dst)
        return BB_TRANSFER_ROLE_DESTINATION;
    return BB_TRANSFER_ROLE_NONE;
}

/* A successful transfer, with every census and call-count claim checked. */
static void check_success(bb_transfer_phase_t *phase, int64_t src, int64_t dst,
                          int64_t n, int64_t batches, const char *what)
{
    provider_t p = { 0 };
    consumer_t cs = { 0 };
    compute_t cp = { -1, -1, 0, NULL, BB_OK };
    bb_transfer_contract_t c = contract(src, dst, n, batches);
    bb_transfer_metrics_t m;
    int64_t *value = NULL;
    int64_t seq = bb_transfer_phase_sequence(phase);
    long isend = bbfault_calls("MPI_Isend"), irecv = bbfault_calls("MPI_Irecv");
    long allred = bbfault_calls("MPI_Allreduce");
    bb_status_t st = run_one(phase, &p, &cs, &cp, &c, &value, &m);
    isend = bbfault_calls("MPI_Isend") - isend;
    irecv = bbfault_calls("MPI_Irecv") - irecv;
    allred = bbfault_calls("MPI_Allreduce") - allred;
    int role = role_of(src, dst);
    int data = role != BB_TRANSFER_ROLE_NONE;

    CHECK_MSG(st == BB_OK && m.status == BB_OK, "%s: %s (stage %s rank %d)", what,
              bb_status_string(st), bb_stage_name(m.refusal.stage), m.refusal.rank);
    CHECK_MSG((int)m.role == role, "%s: role %s", what, bb_transfer_role_name(m.role));
    if (rank == dst)
        CHECK_MSG(value != NULL && *value == n && cs.calls == 1 && cs.seen_nbytes == n,
                  "%s: destination value %lld", what, value ? (long long)*value : -99LL);
    else
        CHECK_MSG(value == NULL && cs.calls == 0, "%s: non-destination got a value", what);
    CHECK_MSG(p.prepared == (rank == src) && p.released == (rank == src && n >= 0)
                  && p.bad_release == 0,
              "%s: prepare %ld release %ld", what, p.prepared, p.released);
    CHECK_MSG(cp.calls == batches && m.batches_executed == batches && m.polls == batches,
              "%s: batches %ld executed %lld polls %lld", what, cp.calls,
              (long long)m.batches_executed, (long long)m.polls);
    CHECK_MSG(allred == 4, "%s: %ld Allreduce calls, want 4", what, allred);
    long want_isend = 0, want_irecv = 0;
    if (role == BB_TRANSFER_ROLE_SOURCE) { want_isend = 1; want_irecv = 1; }
    if (role == BB_TRANSFER_ROLE_DESTINATION) { want_isend = 1; want_irecv = 1; }
    CHECK_MSG(isend == want_isend && irecv == want_irecv,
              "%s: Isend %ld Irecv %ld", what, isend, irecv);
    int want_inflight = role == BB_TRANSFER_ROLE_SOURCE ? 2
                        : role == BB_TRANSFER_ROLE_DESTINATION ? 1 : 0;
    CHECK_MSG(m.max_inflight == want_inflight, "%s: max_inflight %d want %d", what,
              m.max_inflight, want_inflight);
    CHECK_MSG(m.tracked_bytes
                  == BB_TRANSFER_TRACKED_CONTROL_BYTES(BB_ADMISSION_SPEC) + (data ? n : 0),
              "%s: tracked %lld", what, (long long)m.tracked_bytes);
    CHECK_MSG(m.payload_bytes == (data ? n : 0), "%s: payload %lld", what,
              (long long)m.payload_bytes);
    int p2p = role == BB_TRANSFER_ROLE_SOURCE || role == BB_TRANSFER_ROLE_DESTINATION;
    CHECK_MSG(p2p ? (m.completed_during_batches == 0 || m.completed_during_batches == 1)
                  : m.completed_during_batches == -1,
              "%s: completed_during_batches %d", what, m.completed_during_batches);
    CHECK_MSG(batches > 0 || m.completed_during_batches <= 0,
              "%s: completion seen without a poll", what);
    CHECK_MSG(m.refusal.stage == BB_STAGE_NONE && m.refusal.rank == -1 && m.code == 0,
              "%s: provenance not reset", what);
    CHECK_MSG(m.sequence == seq && bb_transfer_phase_sequence(phase) == seq + 1,
              "%s: sequence", what);
    CHECK_MSG(bb_transfer_phase_tracked_live(phase) == 0 && bb_transfer_phase_inflight(phase) == 0
                  && !bb_transfer_phase_active(phase) && bb_transfer_live_count() == 0,
              "%s: not retired", what);
    CHECK_MSG(m.total_s >= m.admission_s + m.payload_wait_s && m.admission_s >= 0,
              "%s: times", what);
    free(value);
    free(p.buf);
}

static void case_success(bb_world_t *world)
{
    bb_transfer_phase_t *phase;
    CHECK_MSG(bb_transfer_phase_create(world, &phase) == BB_OK, "create");
    int last = ranks - 1;
    check_success(phase, 0, last, 1000, 3, "0->last 1000 B 3 batches");
    check_success(phase, last, 0, 65536, 1, "last->0 64 KiB");
    check_success(phase, 0, last, 0, 2, "zero bytes");
    check_success(phase, 0, last, 777, 0, "zero batches");
    check_success(phase, 0, last, 0, 0, "zero bytes, zero batches");
    for (int r = 0; r < ranks; r++)
        check_success(phase, r, r, 513, 2, "same rank");
    if (ranks >= 3)
        check_success(phase, 1, 2, 100, 1, "inner ranks (0 and others inactive)");

    bb_transfer_phase_stats_t s;
    bb_transfer_phase_stats(phase, &s);
    CHECK_MSG(s.first.first_call == 1 && s.latest.first_call == 0 && s.first.sequence == 0
                  && s.latest.sequence == s.begun - 1 && s.completed == s.begun
                  && s.refused == 0 && s.admitted == s.begun,
              "phase stats: first %d latest %d begun %lld", s.first.first_call,
              s.latest.first_call, (long long)s.begun);

    /* One slow poster: the destination still completes. */
    bb_transfer_phase_set_post_delay(phase, rank == 0 ? 0.05 : 0.0);
    check_success(phase, 0, last, 4096, 2, "delayed post on rank 0");
    bb_transfer_phase_set_post_delay(phase, rank == last ? 0.05 : 0.0);
    check_success(phase, 0, last, 4096, 2, "delayed post on the last rank");
    bb_transfer_phase_set_post_delay(phase, 0.0);
    CHECK_MSG(bb_transfer_phase_close(phase) == BB_OK, "close");
}

/* The ticket API by hand, including a message larger than an eager one. */
static void case_ticket(bb_world_t *world)
{
    bb_transfer_phase_t *phase;
    bb_transfer_phase_create(world, &phase);
    int last = ranks - 1;
    provider_t p = { 0 };
    consumer_t cs = { 0 };
    p.phase = phase;
    bb_transfer_provider_t prov = { provider_prepare, provider_release, &p };
    bb_transfer_consumer_t cons = { consumer_consume, consumer_discard, &cs };
    bb_transfer_contract_t c = contract(0, last, 1 << 20, 5);
    p.nbytes = c.nbytes;
    cs.seq = bb_transfer_phase_sequence(phase);
    bb_transfer_ticket_t t;
    bb_transfer_metrics_t m;
    bb_status_t st = bb_transfer_phase_begin(phase, &prov, &c, &t, &m);
    CHECK_MSG(st == BB_OK && t.phase == phase && t.generation > 0, "begin: %s",
              bb_status_string(st));
    CHECK_MSG(bb_transfer_phase_active(phase) && bb_transfer_live_count() == 1,
              "live registry holds the posted phase");
    int want_inflight = role_of(0, last) == BB_TRANSFER_ROLE_SOURCE ? 2
                        : role_of(0, last) == BB_TRANSFER_ROLE_DESTINATION ? 1 : 0;
    CHECK_MSG(bb_transfer_phase_inflight(phase) == want_inflight, "inflight after begin %d",
              bb_transfer_phase_inflight(phase));
    int complete = 0;
    for (int i = 0; i < 5; i++) {
        bb_time_sleep(0.002);
        CHECK_MSG(bb_transfer_ticket_progress(&t, &complete) == BB_OK, "progress");
    }
    void *v = NULL;
    st = bb_transfer_ticket_finish(&t, &cons, BB_TRANSFER_LOCAL_OK, &v, &m);
    CHECK_MSG(st == BB_OK, "finish: %s", bb_status_string(st));
    CHECK_MSG(m.polls == 5 && m.batches_executed == -1 && m.compute_s < 0,
              "ticket API metrics: polls %lld", (long long)m.polls);
    CHECK_MSG(rank != last || (v != NULL && *(int64_t *)v == c.nbytes), "ticket value");
    CHECK_MSG(!bb_transfer_phase_active(phase) && bb_transfer_live_count() == 0, "retired");
    free(v);
    free(p.buf);
    bb_transfer_phase_close(phase);
}

static void case_refusals(bb_world_t *world)
{
    bb_transfer_phase_t *phase;
    bb_transfer_phase_create(world, &phase);
    int last = ranks - 1;
    provider_t p = { 0 };
    consumer_t cs = { 0 };
    compute_t cp = { -1, -1, 0, NULL, BB_OK };
    bb_transfer_metrics_t m;
    int64_t *v = NULL;
    int64_t seq;
    long isend, irecv;

    /* Preflight: the provider fails on the source; nothing is posted. */
    seq = bb_transfer_phase_sequence(phase);
    p.fail = 1;
    bb_transfer_contract_t c = contract(0, last, 256, 2);
    isend = bbfault_calls("MPI_Isend");
    irecv = bbfault_calls("MPI_Irecv");
    bb_status_t st = run_one(phase, &p, &cs, &cp, &c, &v, &m);
    check_refusal("provider failure", st, &m, BB_STAGE_PREFLIGHT, 0, seq);
    CHECK_MSG(bbfault_calls("MPI_Isend") == isend && bbfault_calls("MPI_Irecv") == irecv
                  && cp.calls == 0 && cs.calls == 0 && v == NULL,
              "preflight refusal posted or ran something");
    CHECK_MSG(rank != 0 || m.local_cause == BB_TRANSFER_CAUSE_PROVIDER, "cause %s",
              bb_transfer_cause_name(m.local_cause));
    CHECK_MSG(bb_transfer_phase_sequence(phase) == seq + 1 && bb_transfer_phase_tracked_live(phase) == 0,
              "sequence consumed on refusal");
    p.fail = 0;

    /* Preflight: a wrong length from prepare, released all the same. */
    seq = bb_transfer_phase_sequence(phase);
    p.len_delta = 1;
    long released = p.released;
    st = run_one(phase, &p, &cs, &cp, &c, &v, &m);
    check_refusal("wrong length", st, &m, BB_STAGE_PREFLIGHT, 0, seq);
    CHECK_MSG(rank != 0 || (m.local_cause == BB_TRANSFER_CAUSE_LENGTH && p.released == released + 1),
              "length cause %s", bb_transfer_cause_name(m.local_cause));
    p.len_delta = 0;

    /* Preflight on every rank (over the cap): the highest rank wins. */
    seq = bb_transfer_phase_sequence(phase);
    bb_transfer_contract_t over = contract(0, last, 300, 1);
    over.max_bytes = 200;
    st = run_one(phase, &p, &cs, &cp, &over, &v, &m);
    check_refusal("over cap everywhere", st, &m, BB_STAGE_PREFLIGHT, last, seq);
    CHECK_MSG(m.local_cause == BB_TRANSFER_CAUSE_OVER_CAP, "over-cap cause");
    bb_transfer_contract_t bad = contract(0, ranks, 10, 1);  /* no such rank */
    seq = bb_transfer_phase_sequence(phase);
    st = run_one(phase, &p, &cs, &cp, &bad, &v, &m);
    check_refusal("destination out of range", st, &m, BB_STAGE_PREFLIGHT, last, seq);
    bb_transfer_contract_t big = contract(0, last, (int64_t)INT32_MAX + 1, 1);
    big.max_bytes = big.nbytes;
    seq = bb_transfer_phase_sequence(phase);
    st = run_one(phase, &p, &cs, &cp, &big, &v, &m);
    check_refusal("nbytes over INT32_MAX", st, &m, BB_STAGE_PREFLIGHT, last, seq);

    /* Compute: rank k fails batch 1; no later batch there, no consumption. */
    for (int k = 0; k < ranks; k++) {
        seq = bb_transfer_phase_sequence(phase);
        cp.fail_rank = k;
        cp.fail_batch = 1;
        cp.calls = 0;
        cs.calls = 0;
        bb_transfer_contract_t cc = contract(0, last, 128, 4);
        st = run_one(phase, &p, &cs, &cp, &cc, &v, &m);
        check_refusal("compute failure", st, &m, BB_STAGE_COMPUTE, k, seq);
        CHECK_MSG(cs.calls == 0 && v == NULL, "consumer ran after a compute refusal");
        CHECK_MSG(cp.calls == (rank == k ? 2 : 4) && m.batches_executed == cp.calls,
                  "batches run %ld", cp.calls);
        CHECK_MSG(bb_transfer_phase_inflight(phase) == 0 && bb_transfer_live_count() == 0,
                  "requests drained after compute refusal");
    }
    cp.fail_rank = -1;

    /* Consumer: the destination's consumer fails; its value is discarded. */
    seq = bb_transfer_phase_sequence(phase);
    cs.fail = 1;
    cs.discarded = 0;
    bb_transfer_contract_t cc = contract(0, last, 64, 1);
    st = run_one(phase, &p, &cs, &cp, &cc, &v, &m);
    check_refusal("consumer failure", st, &m, BB_STAGE_CONSUMER, last, seq);
    CHECK_MSG(v == NULL && cs.discarded == (rank == last), "discarded %ld", cs.discarded);
    /* The transfer document's phase.metrics is the latest record, refusals
     * included ("The exception and phase.metrics expose failure_stage and
     * failure_rank"; a success resets them): unlike the sum phase's. */
    {
        bb_transfer_phase_stats_t ls;
        bb_transfer_phase_stats(phase, &ls);
        CHECK_MSG(ls.latest.status == BB_REFUSED && ls.latest.refusal.stage == BB_STAGE_CONSUMER
                      && ls.latest.refusal.rank == last && ls.latest.sequence == m.sequence,
                  "latest record after a consumer refusal: status %s stage %s",
                  bb_status_string(ls.latest.status), bb_stage_name(ls.latest.refusal.stage));
    }
    cs.fail = 0;

    /* Receipt: a wrong generation, then a wrong code, from the destination:
     * a receipt refusal attributed to the source. */
    for (int kind = 1; kind <= 2; kind++) {
        seq = bb_transfer_phase_sequence(phase);
        cs.discarded = 0;
        bb_transfer_phase_set_receipt_fault(phase, rank == last ? kind : 0);
        st = run_one(phase, &p, &cs, &cp, &cc, &v, &m);
        check_refusal(kind == 1 ? "receipt generation" : "receipt code", st, &m,
                      BB_STAGE_RECEIPT, 0, seq);
        CHECK_MSG(v == NULL && cs.discarded == (rank == last), "receipt refusal published");
        CHECK_MSG(rank != 0 || m.local_cause == BB_TRANSFER_CAUSE_RECEIPT, "receipt cause");
    }
    bb_transfer_phase_set_receipt_fault(phase, 0);

    /* A compute refusal on the last rank and a receipt refusal on the source
     * (rank 0) at once: MAX picks the highest failing rank. */
    if (ranks > 1) {
        seq = bb_transfer_phase_sequence(phase);
        cp.fail_rank = last;
        cp.fail_batch = 0;
        bb_transfer_phase_set_receipt_fault(phase, rank == last ? 1 : 0);
        st = run_one(phase, &p, &cs, &cp, &cc, &v, &m);
        check_refusal("compute and receipt", st, &m, BB_STAGE_COMPUTE, last, seq);
        bb_transfer_phase_set_receipt_fault(phase, 0);
        cp.fail_rank = -1;
    }

    /* Contract mismatch: rank none. */
    if (ranks > 1) {
        for (int field = BB_TRANSFER_PHASE_ID; field <= BB_TRANSFER_BATCHES; field++) {
            seq = bb_transfer_phase_sequence(phase);
            bb_transfer_contract_t mc = contract(0, last, 64, 1);
            if (rank == last) {
                switch (field) {
                case BB_TRANSFER_PHASE_ID: mc.phase_id++; break;
                case BB_TRANSFER_EPOCH: mc.epoch++; break;
                case BB_TRANSFER_SOURCE: mc.source = last; break;
                case BB_TRANSFER_DESTINATION: mc.destination = 0; break;
                case BB_TRANSFER_NBYTES: mc.nbytes = 32; break;
                case BB_TRANSFER_CAP: mc.max_bytes = 65; break;
                case BB_TRANSFER_BATCHES: mc.batches = 2; break;
                }
            }
            isend = bbfault_calls("MPI_Isend");
            cp.calls = 0;
            st = run_one(phase, &p, &cs, &cp, &mc, &v, &m);
            check_refusal("contract mismatch", st, &m, BB_STAGE_CONTRACT, -1, seq);
            CHECK_MSG(bbfault_calls("MPI_Isend") == isend && cp.calls == 0,
                      "mismatch posted or computed (field %d)", field);
        }

        /* Preflight precedence: rank 0's provider fails while the last rank
         * presents another epoch. */
        seq = bb_transfer_phase_sequence(phase);
        bb_transfer_contract_t pc = contract(0, last, 64, 1);
        if (rank == last)
            pc.epoch = 99;
        p.fail = 1;
        st = run_one(phase, &p, &cs, &cp, &pc, &v, &m);
        check_refusal("preflight over mismatch", st, &m, BB_STAGE_PREFLIGHT, 0, seq);
        p.fail = 0;

        /* Sequence divergence: the last rank runs ahead by 5.  Identical
         * diagnostics (the maximum sequence), and the divergence persists
         * until the caller repairs it. */
        seq = bb_transfer_phase_sequence(phase);
        if (rank == last)
            bb_transfer_phase_set_sequence(phase, seq + 5);
        st = run_one(phase, &p, &cs, &cp, &cc, &v, &m);
        check_refusal("sequence divergence", st, &m, BB_STAGE_CONTRACT, -1, seq + 5);
        CHECK_MSG(m.sequence == (rank == last ? seq + 5 : seq), "presented sequence");
        st = run_one(phase, &p, &cs, &cp, &cc, &v, &m);
        check_refusal("sequence divergence again", st, &m, BB_STAGE_CONTRACT, -1, seq + 6);
        /* Divergence plus a preflight failure: still the maximum sequence. */
        p.fail = 1;
        st = run_one(phase, &p, &cs, &cp, &cc, &v, &m);
        check_refusal("divergence with preflight", st, &m, BB_STAGE_PREFLIGHT, 0, seq + 7);
        p.fail = 0;
        bb_transfer_phase_set_sequence(phase, seq + 8);
    }

    /* Invalid local_error through the ticket API: a compute refusal. */
    {
        int k = ranks > 1 ? 1 : 0;
        seq = bb_transfer_phase_sequence(phase);
        bb_transfer_provider_t prov = { provider_prepare, provider_release, &p };
        bb_transfer_consumer_t cons = { consumer_consume, consumer_discard, &cs };
        bb_transfer_ticket_t t;
        p.phase = phase;
        p.nbytes = 64;
        cs.calls = 0;
        st = bb_transfer_phase_begin(phase, &prov, &cc, &t, &m);
        CHECK_MSG(st == BB_OK, "begin for local_error");
        void *vv = NULL;
        st = bb_transfer_ticket_finish(&t, &cons, rank == k ? 7 : BB_TRANSFER_LOCAL_OK,
                                       &vv, &m);
        check_refusal("invalid local_error", st, &m, BB_STAGE_COMPUTE, k, seq);
        CHECK_MSG(rank != k || m.local_cause == BB_TRANSFER_CAUSE_INVALID_ERROR,
                  "invalid local_error cause %s", bb_transfer_cause_name(m.local_cause));
        CHECK_MSG(cs.calls == 0 && vv == NULL, "consumed after invalid local_error");

        seq = bb_transfer_phase_sequence(phase);
        st = bb_transfer_phase_begin(phase, &prov, &cc, &t, &m);
        st = bb_transfer_ticket_finish(&t, &cons,
                                       rank == k ? BB_TRANSFER_LOCAL_FAILED : 0, &vv, &m);
        check_refusal("local_error failed", st, &m, BB_STAGE_COMPUTE, k, seq);
        CHECK_MSG(rank != k || m.local_cause == BB_TRANSFER_CAUSE_COMPUTE, "compute cause");
    }

    /* After every refusal the phase still works, and provenance resets. */
    check_success(phase, 0, last, 333, 1, "success after refusals");
    bb_transfer_phase_stats_t s;
    bb_transfer_phase_stats(phase, &s);
    CHECK_MSG(s.refused > 10 && s.latest.refusal.stage == BB_STAGE_NONE
                  && s.latest.status == BB_OK && s.latest.refusal.rank == -1,
              "stats after refusals: refused %lld", (long long)s.refused);
    free(p.buf);
    bb_transfer_phase_close(phase);
}

/* Corrupting one byte after completion: the consumer's check catches it. */
static void case_corrupt(bb_world_t *world)
{
    bb_transfer_phase_t *phase;
    bb_transfer_phase_create(world, &phase);
    int last = ranks - 1;
    provider_t p = { 0 };
    consumer_t cs = { 0 };
    compute_t cp = { -1, -1, 0, NULL, BB_OK };
    bb_transfer_metrics_t m;
    int64_t *v = NULL;
    bb_transfer_contract_t c = contract(0, last, 4096, 1);
    int64_t seq = bb_transfer_phase_sequence(phase);
    bb_transfer_phase_set_corrupt_byte(phase, 1234);
    bb_status_t st = run_one(phase, &p, &cs, &cp, &c, &v, &m);
    check_refusal("corrupted byte", st, &m, BB_STAGE_CONSUMER, last, seq);
    /* Beyond the payload: no effect. */
    bb_transfer_phase_set_corrupt_byte(phase, 4096);
    st = run_one(phase, &p, &cs, &cp, &c, &v, &m);
    CHECK_MSG(st == BB_OK, "corrupt offset past the end changed the payload");
    free(v);
    /* Same rank: the one copy is the view, and it is checked the same way. */
    bb_transfer_phase_set_corrupt_byte(phase, 0);
    bb_transfer_contract_t same = contract(last, last, 16, 0);
    seq = bb_transfer_phase_sequence(phase);
    st = run_one(phase, &p, &cs, &cp, &same, &v, &m);
    check_refusal("corrupted byte, same rank", st, &m, BB_STAGE_CONSUMER, last, seq);
    bb_transfer_phase_set_corrupt_byte(phase, -1);
    check_success(phase, 0, last, 4096, 1, "after corruption off");
    free(p.buf);
    bb_transfer_phase_close(phase);
}

/* Misuse: all rejected locally, with no MPI call. */
typedef struct thread_arg {
    bb_world_t *world;
    bb_transfer_phase_t *phase;
    bb_transfer_ticket_t *ticket;
    bb_status_t create, begin, progress, finish, close;
} thread_arg_t;

static void *thread_main(void *arg)
{
    thread_arg_t *a = arg;
    bb_transfer_phase_t *other = NULL;
    bb_transfer_contract_t c = contract(0, 0, 0, 0);
    bb_transfer_ticket_t t;
    a->create = bb_transfer_phase_create(a->world, &other);
    a->begin = bb_transfer_phase_begin(a->phase, NULL, &c, &t, NULL);
    a->progress = bb_transfer_ticket_progress(a->ticket, NULL);
    a->finish = bb_transfer_ticket_finish(a->ticket, NULL, 0, NULL, NULL);
    a->close = bb_transfer_phase_close(a->phase);
    return NULL;
}

static void case_misuse(bb_world_t *world)
{
    bb_transfer_phase_t *phase;
    bb_transfer_phase_create(world, &phase);
    int last = ranks - 1;
    provider_t p = { 0 };
    consumer_t cs = { 0 };
    p.phase = phase;
    bb_transfer_provider_t prov = { provider_prepare, provider_release, &p };
    bb_transfer_consumer_t cons = { consumer_consume, consumer_discard, &cs };
    bb_transfer_contract_t c = contract(0, last, 100, 2);
    p.nbytes = c.nbytes;
    cs.seq = bb_transfer_phase_sequence(phase);
    bb_transfer_ticket_t t, t2;
    bb_status_t st = bb_transfer_phase_begin(phase, &prov, &c, &t, NULL);
    CHECK_MSG(st == BB_OK, "begin");

    long before = mpi_calls();
    int64_t seq = bb_transfer_phase_sequence(phase);
    bb_transfer_ticket_t keep = t;
    st = bb_transfer_phase_begin(phase, &prov, &c, &t, NULL);
    CHECK_MSG(st == BB_ERR_STATE && t.generation == keep.generation,
              "second begin while live: %s", bb_status_string(st));
    st = bb_transfer_phase_begin(phase, &prov, &c, &t2, NULL);
    CHECK_MSG(st == BB_ERR_STATE, "begin while live (other handle)");
    CHECK_MSG(bb_transfer_phase_close(phase) == BB_ERR_STATE, "close while live");
    CHECK_MSG(bb_transfer_phase_sequence(phase) == seq && bb_transfer_phase_active(phase),
              "misuse changed the phase");

    /* Thread misuse, from a thread that does not own MPI. */
    thread_arg_t a = { world, phase, &t, BB_OK, BB_OK, BB_OK, BB_OK, BB_OK };
    pthread_t th;
    pthread_create(&th, NULL, thread_main, &a);
    pthread_join(th, NULL);
    CHECK_MSG(a.create == BB_ERR_THREAD && a.begin == BB_ERR_THREAD
                  && a.progress == BB_ERR_THREAD && a.finish == BB_ERR_THREAD
                  && a.close == BB_ERR_THREAD,
              "thread misuse: %d %d %d %d %d", a.create, a.begin, a.progress, a.finish,
              a.close);
    CHECK_MSG(mpi_calls() == before, "misuse made %ld MPI calls", mpi_calls() - before);

    /* Reentry from the consumer (progress on its own ticket). */
    cs.ticket = &t;
    cs.reenter = 1;
    void *v = NULL;
    st = bb_transfer_ticket_finish(&t, &cons, 0, &v, NULL);
    CHECK_MSG(st == BB_OK, "finish: %s", bb_status_string(st));
    CHECK_MSG(rank != last || (cs.reenter_status == BB_ERR_REENTRY && cs.reenter_mpi == 0),
              "consumer reentry: %s, %ld MPI calls", bb_status_string(cs.reenter_status),
              cs.reenter_mpi);
    cs.reenter = 0;
    free(v);

    /* Finished tickets reject progress and finish. */
    before = mpi_calls();
    CHECK_MSG(bb_transfer_ticket_progress(&t, NULL) == BB_ERR_STATE, "progress finished");
    CHECK_MSG(bb_transfer_ticket_finish(&t, &cons, 0, NULL, NULL) == BB_ERR_STATE,
              "finish finished");
    bb_transfer_ticket_t zero = { NULL, 0 };
    CHECK_MSG(bb_transfer_ticket_progress(&zero, NULL) == BB_ERR_ARG, "null ticket");
    CHECK_MSG(mpi_calls() == before, "finished-ticket misuse called MPI");

    /* A stale handle stays rejected after the next begin. */
    keep = t;
    st = bb_transfer_phase_begin(phase, &prov, &c, &t2, NULL);
    cs.seq = seq;
    CHECK_MSG(st == BB_OK, "begin 2");
    before = mpi_calls();
    CHECK_MSG(bb_transfer_ticket_progress(&keep, NULL) == BB_ERR_STATE
                  && bb_transfer_ticket_finish(&keep, &cons, 0, NULL, NULL) == BB_ERR_STATE,
              "stale handle accepted");
    CHECK_MSG(mpi_calls() == before, "stale handle called MPI");
    st = bb_transfer_ticket_finish(&t2, &cons, 0, &v, NULL);
    CHECK_MSG(st == BB_OK, "finish 2");
    free(v);

    /* A refused begin hands out a ticket that every call rejects. */
    p.fail = 1;
    bb_transfer_ticket_t t3;
    st = bb_transfer_phase_begin(phase, &prov, &c, &t3, NULL);
    CHECK_MSG(st == BB_REFUSED && bb_transfer_ticket_progress(&t3, NULL) == BB_ERR_STATE,
              "refused ticket");
    p.fail = 0;

    /* Reentry from prepare (begin) and from a compute batch (close). */
    p.reenter = 1;
    cs.seq = bb_transfer_phase_sequence(phase);
    compute_t cp = { -1, -1, 0, phase, BB_OK };
    bb_transfer_compute_t comp = { compute_batch, &cp };
    st = bb_transfer_phase_run(phase, &prov, &cons, &comp, &c, &v, NULL);
    CHECK_MSG(st == BB_OK, "run with reentrant callbacks: %s", bb_status_string(st));
    CHECK_MSG(rank != 0 || (p.reenter_status == BB_ERR_REENTRY && p.reenter_mpi == 0),
              "prepare reentry: %s", bb_status_string(p.reenter_status));
    CHECK_MSG(cp.reenter_status == BB_ERR_REENTRY, "compute reentry: %s",
              bb_status_string(cp.reenter_status));
    p.reenter = 0;
    free(v);

    /* Close after retirement; then the world still works, and a new phase
     * on it too. */
    CHECK_MSG(bb_transfer_phase_close(phase) == BB_OK, "close idle");
    int one = 1, sum = 0;
    CHECK_MSG(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS
                  && sum == ranks, "world after close");
    CHECK_MSG(bb_transfer_phase_create(world, &phase) == BB_OK, "create after close");
    check_success(phase, 0, last, 10, 1, "new phase after close");
    CHECK_MSG(bb_transfer_phase_close(phase) == BB_OK, "close again");
    free(p.buf);
}

static int64_t rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : (int64_t)resident * sysconf(_SC_PAGESIZE);
}

/* Many tickets (1000 by default) on one phase: tracked bytes flat,
 * nothing accumulates. */
static void case_reuse(bb_world_t *world, int tickets)
{
    bb_transfer_phase_t *phase;
    bb_transfer_phase_create(world, &phase);
    int last = ranks - 1;
    provider_t p = { 0 };
    consumer_t cs = { 0 };
    compute_t cp = { -1, -1, 0, NULL, BB_OK };
    bb_transfer_contract_t c = contract(0, last, 8192, 1);
    int64_t want = BB_TRANSFER_TRACKED_CONTROL_BYTES(BB_ADMISSION_SPEC)
                   + (role_of(0, last) ? c.nbytes : 0);
    int ok = 1, ok_live = 1;
    int64_t rss_early = 0;
    for (int i = 0; i < tickets; i++) {
        bb_transfer_metrics_t m;
        int64_t *v = NULL;
        bb_status_t st = run_one(phase, &p, &cs, &cp, &c, &v, &m);
        if (st != BB_OK || m.tracked_bytes != want || (rank == last && (!v || *v != c.nbytes)))
            ok = 0;
        if (bb_transfer_phase_tracked_live(phase) != 0 || bb_transfer_live_count() != 0)
            ok_live = 0;
        free(v);
        if (i == tickets / 10)
            rss_early = rss_bytes();
    }
    int64_t rss_late = rss_bytes();
#ifdef __SANITIZE_ADDRESS__
    /* ASan's quarantine keeps freed blocks resident: RSS says nothing here;
     * the tracked bytes still must be flat. */
    rss_late = rss_early;
#endif
    CHECK_MSG(ok, "%d tickets: a ticket failed or its tracked bytes moved", tickets);
    CHECK_MSG(ok_live, "%d tickets: bytes or registry left between tickets", tickets);
    CHECK_MSG(rss_early > 0 && rss_late - rss_early < 512 * 1024,
              "RSS grew by %lld bytes over %d tickets", (long long)(rss_late - rss_early),
              tickets - tickets / 10);
    bb_transfer_phase_stats_t s;
    bb_transfer_phase_stats(phase, &s);
    CHECK_MSG(s.completed == tickets && s.first.first_call && !s.latest.first_call
                  && s.latest.sequence == tickets - 1,
              "stats after reuse: %lld completed", (long long)s.completed);
    free(p.buf);
    bb_transfer_phase_close(phase);
}

/* Poison: every call after the failure is refused, close too, the phase is
 * retained; then abort as an application must. */
static int mode_poison(bb_world_t *world, const char *verdict_path)
{
    bb_transfer_phase_t *phase;
    if (bb_transfer_phase_create(world, &phase) != BB_OK)
        return 1;
    int last = ranks - 1;
    provider_t p = { 0 };
    consumer_t cs = { 0 };
    compute_t cp = { -1, -1, 0, NULL, BB_OK };
    bb_transfer_contract_t c = contract(0, last, 1 << 16, 0);
    bb_transfer_metrics_t m;
    int64_t *v = NULL;
    bb_status_t st = run_one(phase, &p, &cs, &cp, &c, &v, &m);
    if (st != BB_ERR_MPI) {
        printf("rank %d: no fault here (%s)\n", rank, bb_status_string(st));
        fflush(stdout);
        /* The failing rank aborts the job; if none does, fail (exit 1). */
        bb_time_sleep(10.0);
        fprintf(stderr, "rank %d: no rank was poisoned\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int ok = m.status == BB_ERR_MPI && m.refusal.stage == BB_STAGE_TRANSPORT
             && m.refusal.rank == rank && m.local_cause == BB_TRANSFER_CAUSE_MPI
             && bb_transfer_phase_poisoned(phase) && bb_poisoned_count() == 1
             && bb_transfer_live_count() == 1 && bb_transfer_phase_active(phase);
    long before = mpi_calls();
    bb_transfer_ticket_t t;
    ok = ok && bb_transfer_phase_begin(phase, NULL, &c, &t, NULL) == BB_ERR_POISONED
         && bb_transfer_phase_close(phase) == BB_ERR_POISONED
         && bb_transfer_phase_run(phase, NULL, NULL, NULL, &c, NULL, NULL) == BB_ERR_POISONED
         && mpi_calls() == before && bb_poisoned_count() == 1;
    /* The verdict goes to a file, closed before the abort: output on a
     * stream the launcher relays can be lost when the job is killed. */
    FILE *f = verdict_path != NULL ? fopen(verdict_path, "w") : stdout;
    if (f != NULL) {
        fprintf(f, "rank %d: poisoned at stage %s: %s\n", rank,
                bb_stage_name(m.refusal.stage), ok ? "checks passed" : "CHECKS FAILED");
        if (f != stdout)
            fclose(f);
        else
            fflush(f);
    }
    MPI_Abort(MPI_COMM_WORLD, ok ? BB_EXIT_FATAL : 1);
    return 1;
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    if (argc > 1 && strcmp(argv[1], "poison") == 0)
        return mode_poison(world, argc > 2 ? argv[2] : NULL);

    case_success(world);
    case_ticket(world);
    case_refusals(world);
    case_corrupt(world);
    case_misuse(world);
    int tickets = 1000;
    if (argc > 1) {
        char *end;
        long n = strtol(argv[1], &end, 10);
        if (*end != '\0' || n < 10 || n > 1000000) {
            if (rank == 0)
                fprintf(stderr, "test-transfer: bad ticket count '%s'\n", argv[1]);
            MPI_Finalize();
            return 2;
        }
        tickets = (int)n;
    }
    double t0 = bb_time_now();
    case_reuse(world, tickets);
    double reuse_s = bb_time_now() - t0;

    int fails_any = !bbfault_all_true(failed == 0) || bbfault_all_true(passed == 0);
    int total_passed = 0, total_failed = 0;
    PMPI_Allreduce(&passed, &total_passed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(&failed, &total_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test-transfer on %d ranks: %d passed, %d failed (%d reuse tickets "
               "in %.2f s)\n", ranks, total_passed, total_failed, tickets, reuse_s);
    bb_world_release(world);
    MPI_Finalize();
    return fails_any ? 1 : 0;
}
