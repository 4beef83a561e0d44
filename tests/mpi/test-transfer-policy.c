/* test-transfer-policy: the transfer phase's policies on real MPI, at any
 * rank count (source rank 0, destination the last rank; -n 1 is a same-rank
 * transfer).
 *
 *   test-transfer-policy        retained buffers (capacity, growth, refused
 *                               tickets holding no extra bytes) and the fused
 *                               admission's equivalence with the spec's
 *                               MIN-then-MAX pair, case by case, under both
 *                               buffer policies
 *   test-transfer-policy poison FILE  a retained phase whose second ticket is
 *                               made to fail (BB_FAULT): it keeps its buffer;
 *                               the verdict goes to FILE, then MPI_Abort(3)
 *
 * Linked with tests/fault.c: the library's MPI_Allreduce calls are counted. */
#include "config.h"
#include "bbench.h"
#include "bbench-hooks.h"
#include "fault.h"
#include "../check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

enum { CENSUS = BB_TRANSFER_CENSUS_BYTES };

/* The payload of sequence s: byte i is (s * 31 + i) mod 256. */
typedef struct fixture {
    unsigned char *data;
    int64_t len;
    int64_t seq;
    int fail;                 /* provider failure */
    int fail_consumer;
    int64_t bad;              /* bytes the consumer found wrong */
} fixture_t;

static int prepare(void *arg, const void **data_out, int64_t *len_out)
{
    fixture_t *f = arg;
    if (f->fail)
        return 1;
    for (int64_t i = 0; i < f->len; i++)
        f->data[i] = (unsigned char)(f->seq * 31 + i);
    *data_out = f->data;
    *len_out = f->len;
    return 0;
}

static int consume(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    fixture_t *f = arg;
    const unsigned char *d = data;
    *value_out = NULL;
    for (int64_t i = 0; i < nbytes; i++)
        f->bad += d[i] != (unsigned char)(f->seq * 31 + i);
    return f->fail_consumer;
}

/* Payload bytes this rank holds for a buffer of cap bytes: one buffer on the
 * source and one on the destination (one in all when they are the same
 * rank), none elsewhere. */
static int64_t held(int64_t cap)
{
    return (rank == 0 || rank == ranks - 1) ? cap : 0;
}

static bb_status_t ticket(bb_transfer_phase_t *phase, fixture_t *f, int64_t id,
                          int64_t nbytes, int64_t cap, int local_error,
                          bb_transfer_metrics_t *m)
{
    bb_transfer_provider_t prov = { prepare, NULL, f };
    bb_transfer_consumer_t cons = { consume, NULL, f };
    bb_transfer_contract_t c = { .phase_id = id, .epoch = 1, .source = 0,
                                 .destination = ranks - 1, .nbytes = nbytes,
                                 .max_bytes = cap, .batches = 0 };
    f->len = nbytes;
    f->seq = bb_transfer_phase_sequence(phase);
    bb_transfer_ticket_t t;
    bb_status_t st = bb_transfer_phase_begin(phase, &prov, &c, &t, m);
    if (st != BB_OK)
        return st;
    void *value = NULL;
    return bb_transfer_ticket_finish(&t, &cons, local_error, &value, m);
}

static void retained_cases(bb_world_t *world)
{
    bb_phase_attr_t attr = { BB_BUFFERS_RETAINED, BB_ADMISSION_SPEC };
    bb_transfer_phase_t *phase = NULL;
    CHECK(bb_transfer_phase_create_attr(world, &attr, &phase) == BB_OK);
    fixture_t f = { .data = malloc(400) };
    bb_transfer_metrics_t m;
    int odd = rank == ranks - 1;

    CHECK(bb_transfer_phase_tracked_live(phase) == 0);
    CHECK(ticket(phase, &f, 0, 100, 100, 0, &m) == BB_OK);
    CHECK(m.tracked_bytes == CENSUS + held(100));
    CHECK_MSG(bb_transfer_phase_tracked_live(phase) == held(100),
              "retained after 100 bytes: %lld",
              (long long)bb_transfer_phase_tracked_live(phase));
    /* Smaller tickets reuse the capacity: nothing grows. */
    CHECK(ticket(phase, &f, 1, 50, 80, 0, &m) == BB_OK);
    CHECK(m.tracked_bytes == CENSUS + held(100));
    CHECK(bb_transfer_phase_tracked_live(phase) == held(100));
    /* A larger ticket grows to its cap, the old buffer kept until admission. */
    CHECK(ticket(phase, &f, 2, 150, 200, 0, &m) == BB_OK);
    CHECK_MSG(m.tracked_bytes == CENSUS + held(100 + 200), "growth peak %lld",
              (long long)m.tracked_bytes);
    CHECK(bb_transfer_phase_tracked_live(phase) == held(200));
    /* Refused tickets that would have grown hold no extra bytes after them:
     * a provider failure on the source, a field mismatch, a count over the
     * cap (refused before anything is reserved). */
    f.fail = 1;
    CHECK(ticket(phase, &f, 3, 300, 300, 0, &m) == BB_REFUSED);
    CHECK(m.refusal.stage == BB_STAGE_PREFLIGHT && m.refusal.rank == 0);
    CHECK_MSG(bb_transfer_phase_tracked_live(phase) == held(200),
              "after a preflight refusal: %lld",
              (long long)bb_transfer_phase_tracked_live(phase));
    f.fail = 0;
    if (ranks > 1) {
        bb_transfer_provider_t prov = { prepare, NULL, &f };
        bb_transfer_contract_t c = { .phase_id = 4, .epoch = odd ? 2 : 1, .source = 0,
                                     .destination = ranks - 1, .nbytes = 300,
                                     .max_bytes = 300 };
        bb_transfer_ticket_t t;
        f.len = 300;
        f.seq = bb_transfer_phase_sequence(phase);
        CHECK(bb_transfer_phase_begin(phase, &prov, &c, &t, &m) == BB_REFUSED);
        CHECK(m.refusal.stage == BB_STAGE_CONTRACT);
        CHECK(bb_transfer_phase_tracked_live(phase) == held(200));
    }
    CHECK(ticket(phase, &f, 5, 300, 250, 0, &m) == BB_REFUSED);
    CHECK(bb_transfer_phase_tracked_live(phase) == held(200));
    /* A refusal after admission (consumer) keeps the retained buffer. */
    f.fail_consumer = 1;
    CHECK(ticket(phase, &f, 6, 200, 200, 0, &m) == BB_REFUSED);
    CHECK(m.refusal.stage == BB_STAGE_CONSUMER);
    CHECK(bb_transfer_phase_tracked_live(phase) == held(200));
    f.fail_consumer = 0;
    /* Still correct after the refusals, in the retained buffers. */
    f.bad = 0;
    CHECK(ticket(phase, &f, 7, 200, 200, 0, &m) == BB_OK);
    CHECK(f.bad == 0);
    CHECK(bb_transfer_phase_tracked_live(phase) == held(200));
    CHECK(bb_transfer_phase_close(phase) == BB_OK);

    /* Fresh (the default) holds nothing between tickets. */
    CHECK(bb_transfer_phase_create(world, &phase) == BB_OK);
    CHECK(ticket(phase, &f, 0, 100, 200, 0, &m) == BB_OK);
    CHECK(m.tracked_bytes == CENSUS + held(100));
    CHECK(bb_transfer_phase_tracked_live(phase) == 0);
    CHECK(bb_transfer_phase_close(phase) == BB_OK);

    bb_phase_attr_t bad = { (bb_buffers_t)9, BB_ADMISSION_SPEC };
    phase = NULL;
    CHECK(bb_transfer_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG && phase == NULL);
    bad = (bb_phase_attr_t){ BB_BUFFERS_FRESH, (bb_admission_t)7 };
    CHECK(bb_transfer_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG && phase == NULL);
    free(f.data);
}

/* One case under one phase: the last rank differs in one thing. */
enum { C_NONE, C_PHASE_ID, C_EPOCH, C_SOURCE, C_DESTINATION, C_NBYTES, C_CAP,
       C_BATCHES, C_SEQUENCE, C_PROVIDER, C_NEGATIVE, C_OVER_CAP, C_INT64_MIN_ID,
       C_INT64_MIN_SEQUENCE, C_COMPUTE, C_CONSUMER, C_N };
static const char *const case_names[C_N] = {
    "none", "phase_id", "epoch", "source", "destination", "nbytes", "cap", "batches",
    "sequence", "provider", "negative epoch", "nbytes over cap", "INT64_MIN phase_id",
    "INT64_MIN sequence", "compute", "consumer"
};

typedef struct outcome {
    bb_status_t st;
    bb_transfer_metrics_t m;
    long allreduces;
    int64_t sequence_after, held_after;
    int64_t bad;
} outcome_t;

static void one_case(bb_transfer_phase_t *phase, int c, outcome_t *o)
{
    int odd = rank == ranks - 1;
    fixture_t f = { .data = malloc(128) };
    bb_transfer_provider_t prov = { prepare, NULL, &f };
    bb_transfer_consumer_t cons = { consume, NULL, &f };
    bb_transfer_contract_t k = { .phase_id = 5, .epoch = 2, .source = 0,
                                 .destination = ranks - 1, .nbytes = 64, .max_bytes = 96,
                                 .batches = 1 };
    int local_error = BB_TRANSFER_LOCAL_OK;
    f.seq = bb_transfer_phase_sequence(phase);
    /* The source is rank 0: a provider failure there; on the last rank the
     * contract fields differ. */
    if (c == C_PROVIDER && rank == 0)
        f.fail = 1;
    if (c == C_CONSUMER)
        f.fail_consumer = 1;
    if (odd) {
        switch (c) {
        case C_PHASE_ID: k.phase_id = 6; break;
        case C_EPOCH: k.epoch = 3; break;
        case C_SOURCE: k.source = (k.source + 1) % ranks; break;
        case C_DESTINATION: k.destination = (k.destination + 1) % ranks; break;
        case C_NBYTES: k.nbytes = 63; break;
        case C_CAP: k.max_bytes = 97; break;
        case C_BATCHES: k.batches = 2; break;
        case C_SEQUENCE:
            bb_transfer_phase_set_sequence(phase, bb_transfer_phase_sequence(phase) + 1);
            break;
        case C_NEGATIVE: k.epoch = -1; break;
        case C_OVER_CAP: k.nbytes = 97; break;
        case C_INT64_MIN_ID: k.phase_id = INT64_MIN; break;
        case C_INT64_MIN_SEQUENCE: bb_transfer_phase_set_sequence(phase, INT64_MIN); break;
        case C_COMPUTE: local_error = BB_TRANSFER_LOCAL_FAILED; break;
        }
    }
    f.len = k.nbytes;
    long before = bbfault_calls("MPI_Allreduce");
    bb_transfer_ticket_t t;
    o->st = bb_transfer_phase_begin(phase, &prov, &k, &t, &o->m);
    if (o->st == BB_OK) {
        void *value = NULL;
        CHECK(bb_transfer_ticket_progress(&t, NULL) == BB_OK);
        o->st = bb_transfer_ticket_finish(&t, &cons, local_error, &value, &o->m);
    }
    o->allreduces = bbfault_calls("MPI_Allreduce") - before;
    o->sequence_after = bb_transfer_phase_sequence(phase);
    o->held_after = bb_transfer_phase_tracked_live(phase);
    o->bad = f.bad;
    free(f.data);
}

static void fused_cases(bb_world_t *world, bb_buffers_t buffers)
{
    bb_phase_attr_t spec_attr = { buffers, BB_ADMISSION_SPEC };
    bb_phase_attr_t fused_attr = { buffers, BB_ADMISSION_FUSED };
    bb_transfer_phase_t *spec = NULL, *fused = NULL;
    CHECK(bb_transfer_phase_create_attr(world, &spec_attr, &spec) == BB_OK);
    CHECK(bb_transfer_phase_create_attr(world, &fused_attr, &fused) == BB_OK);
    const char *b = buffers == BB_BUFFERS_FRESH ? "fresh" : "retained";
    for (int c = 0; c < C_N; c++) {
        outcome_t s, f;
        one_case(spec, c, &s);
        one_case(fused, c, &f);
        const char *n = case_names[c];
        CHECK_MSG(s.st == f.st, "%s %s: spec %s, fused %s", b, n, bb_status_string(s.st),
                  bb_status_string(f.st));
        CHECK_MSG(s.m.refusal.stage == f.m.refusal.stage
                      && s.m.refusal.rank == f.m.refusal.rank
                      && s.m.refusal.sequence == f.m.refusal.sequence
                      && s.m.code == f.m.code && s.m.local_cause == f.m.local_cause,
                  "%s %s: refusal differs: spec %s rank %d seq %lld, fused %s rank %d "
                  "seq %lld", b, n, bb_stage_name(s.m.refusal.stage), s.m.refusal.rank,
                  (long long)s.m.refusal.sequence, bb_stage_name(f.m.refusal.stage),
                  f.m.refusal.rank, (long long)f.m.refusal.sequence);
        CHECK_MSG(s.m.tracked_bytes == f.m.tracked_bytes
                      && s.m.payload_bytes == f.m.payload_bytes
                      && s.m.requests_posted == f.m.requests_posted
                      && s.m.max_inflight == f.m.max_inflight
                      && s.held_after == f.held_after,
                  "%s %s: census differs (tracked %lld/%lld, held after %lld/%lld)", b, n,
                  (long long)s.m.tracked_bytes, (long long)f.m.tracked_bytes,
                  (long long)s.held_after, (long long)f.held_after);
        CHECK_MSG(s.sequence_after == f.sequence_after, "%s %s: sequences diverge", b, n);
        /* The admission is two Allreduces or one; an admitted ticket adds the
         * status and terminal agreements to both. */
        bb_stage_t stage = s.m.refusal.stage;
        long after = s.st == BB_OK || stage == BB_STAGE_COMPUTE || stage == BB_STAGE_CONSUMER
                             || stage == BB_STAGE_RECEIPT
                         ? 2 : 0;
        CHECK_MSG(s.allreduces == 2 + after && f.allreduces == 1 + after,
                  "%s %s: %ld spec and %ld fused Allreduce", b, n, s.allreduces,
                  f.allreduces);
        CHECK(bbfault_same_everywhere(f.st) && bbfault_same_everywhere(f.m.refusal.stage));
        CHECK_MSG(s.bad == 0 && f.bad == 0, "%s %s: payload check failed", b, n);
        /* Identical verdicts are also the right ones. */
        int alone = ranks == 1;  /* no other rank to differ from */
        int refused_expected = c == C_PROVIDER || c == C_NEGATIVE || c == C_OVER_CAP
                               || c == C_INT64_MIN_ID || c == C_COMPUTE || c == C_CONSUMER
                               || (!alone && c != C_NONE);
        CHECK_MSG((f.st == BB_REFUSED) == refused_expected, "%s %s: %s", b, n,
                  bb_status_string(f.st));
    }
    CHECK(bb_transfer_phase_close(spec) == BB_OK);
    CHECK(bb_transfer_phase_close(fused) == BB_OK);
}

/* A poisoned retained phase keeps its buffer (it may still be MPI's). */
static void poison_case(bb_world_t *world, const char *verdict_path)
{
    bb_phase_attr_t attr = { BB_BUFFERS_RETAINED, BB_ADMISSION_SPEC };
    bb_transfer_phase_t *phase = NULL;
    CHECK(bb_transfer_phase_create_attr(world, &attr, &phase) == BB_OK);
    fixture_t f = { .data = malloc(100) };
    bb_transfer_metrics_t m;
    for (int64_t id = 0; id < 2; id++) {
        bb_status_t st = ticket(phase, &f, id, 100, 100, 0, &m);
        if (st != BB_ERR_MPI)
            continue;
        CHECK(bb_transfer_phase_poisoned(phase));
        CHECK(m.refusal.stage == BB_STAGE_TRANSPORT);
        CHECK_MSG(bb_transfer_phase_tracked_live(phase) == CENSUS + held(100),
                  "poisoned retained phase holds %lld bytes",
                  (long long)bb_transfer_phase_tracked_live(phase));
        CHECK(bb_transfer_phase_close(phase) == BB_ERR_POISONED);
        FILE *out = fopen(verdict_path, "w");
        if (out != NULL) {
            fprintf(out, "rank %d: poison retained at ticket %lld: %d passed, %d failed\n",
                    rank, (long long)id, passed, failed);
            fclose(out);
        }
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    free(f.data);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    check_rank = rank;
    bb_world_t *world = NULL;
    if (bb_world_bind(MPI_COMM_WORLD, &world) != BB_OK) {
        fprintf(stderr, "cannot bind the world\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (argc == 3 && strcmp(argv[1], "poison") == 0) {
        poison_case(world, argv[2]);
        printf("rank %d: no fault was injected\n", rank);
        bb_world_release(world);
        MPI_Finalize();
        return 1;
    }
    retained_cases(world);
    fused_cases(world, BB_BUFFERS_FRESH);
    fused_cases(world, BB_BUFFERS_RETAINED);
    int ok = bbfault_all_true(failed == 0);
    if (rank == 0)
        printf("test-transfer-policy on %d ranks: %d passed, %d failed\n", ranks, passed,
               failed);
    bb_world_release(world);
    MPI_Finalize();
    return ok ? 0 : 1;
}
