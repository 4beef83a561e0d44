/* test-transfer-policy: the transfer phase's policies on real MPI, at any
 * rank count (source rank 0, destination the last rank; -n 1 is a same-rank
 * transfer).
 *
 *   test-transfer-policy        retained buffers (capacity, growth, refused
 *                               tickets holding no extra bytes), and every
 *                               admission (spec, fused, fused-op) under both
 *                               request policies (per-call, persistent)
 *                               equivalent to spec per call, case by case,
 *                               under both buffer policies, with their
 *                               collectives counted
 *   test-transfer-policy poison FILE [persistent]  a retained phase (with
 *                               persistent requests) whose second ticket is
 *                               made to fail (BB_FAULT): it keeps its buffer;
 *                               the verdict goes to FILE, then MPI_Abort(3)
 *
 * Linked with tests/fault.c: the library's MPI_Allreduce, MPI_Allreduce_init,
 * MPI_Start and MPI_Request_free calls are counted. */
#include "config.h"
#include "bbench.h"
#include "private/hooks.h"
#include "fault.h"
#include "../check-mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

/* The spec admission's counted control bytes while a ticket is live: the
 * document's 232 (checked as a figure in census_cases). */
enum { CENSUS = BB_TRANSFER_TRACKED_CONTROL_BYTES(BB_ADMISSION_SPEC) };

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
    bb_phase_attr_t attr = { .buffers = BB_BUFFERS_RETAINED };
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

    bb_phase_attr_t bad = { .buffers = (bb_buffers_t)9 };
    phase = NULL;
    CHECK(bb_transfer_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG && phase == NULL);
    bad = (bb_phase_attr_t){ .admission = (bb_admission_t)7 };
    CHECK(bb_transfer_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG && phase == NULL);
    bad = (bb_phase_attr_t){ .requests = (bb_requests_t)5 };
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
    bbfault_collectives_t calls;
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
    bbfault_collectives_t before = bbfault_collectives();
    bb_transfer_ticket_t t;
    o->st = bb_transfer_phase_begin(phase, &prov, &k, &t, &o->m);
    if (o->st == BB_OK) {
        void *value = NULL;
        CHECK(bb_transfer_ticket_progress(&t, NULL) == BB_OK);
        o->st = bb_transfer_ticket_finish(&t, &cons, local_error, &value, &o->m);
    }
    o->calls = bbfault_collectives_since(before);
    o->sequence_after = bb_transfer_phase_sequence(phase);
    o->held_after = bb_transfer_phase_tracked_live(phase);
    o->bad = f.bad;
    free(f.data);
}

/* One phase under test: its policy and which of its agreement objects have
 * made their persistent requests (the admission at the first ticket, the
 * status MAX at the first that reaches the status agreement). */
typedef struct subject {
    bb_phase_attr_t attr;
    char name[48];
    bb_transfer_phase_t *phase;
    int admission_made, status_made;
} subject_t;

/* The collectives of one ticket: the admission (two Allreduces for spec,
 * one fused or fused-op) and, when the ticket reached them, the status and
 * terminal MAX agreements; per call as MPI_Allreduce, persistent as one
 * MPI_Start each, with MPI_Allreduce_init where the object makes its
 * request. */
static void check_calls(subject_t *x, const outcome_t *o, int reached_status,
                        const char *b, const char *n)
{
    long admit = x->attr.admission == BB_ADMISSION_SPEC ? 2 : 1;
    long after = reached_status ? 2 : 0;
    bbfault_collectives_t want = { admit + after, 0, 0, 0 };
    if (x->attr.requests == BB_REQUESTS_PERSISTENT) {
        want.allreduce = 0;
        want.start = admit + after;
        want.init = (x->admission_made ? 0 : admit)
                    + (reached_status && !x->status_made ? 1 : 0);
        x->admission_made = 1;
        x->status_made |= reached_status;
    }
    CHECK_MSG(o->calls.allreduce == want.allreduce && o->calls.init == want.init
                  && o->calls.start == want.start && o->calls.request_free == 0,
              "%s %s, %s: %ld Allreduce, %ld init, %ld start, %ld free (want %ld, %ld, "
              "%ld, 0)", b, n, x->name, o->calls.allreduce, o->calls.init, o->calls.start,
              o->calls.request_free, want.allreduce, want.init, want.start);
}

/* The census is exact.  Under every admission and request policy the
 * bytes the agreements' collectives were handed, as the interposer saw
 * them, are counted: under spec the three 72-byte arrays themselves, 216
 * bytes (the admission from the local array into the MIN and MAX arrays,
 * the status agreements from the local status field into the MAX
 * array's), so the tracked figure is the document's 232 + nbytes on data
 * ranks and 232 elsewhere; under fused and fused-op the [x, ~x] staging,
 * 288 bytes counted besides the 232, and the two status fields, 16 bytes
 * of the arrays.  nbytes 0, 16 and 4096. */
static void census_cases(bb_world_t *world)
{
    static const int64_t sizes[] = { 0, 16, 4096 };
    enum { NSIZES = sizeof sizes / sizeof sizes[0] };
    CHECK_MSG(CENSUS == 232 && BB_TRANSFER_CENSUS_BYTES == 232
                  && BB_TRANSFER_TRACKED_CONTROL_BYTES(BB_ADMISSION_FUSED) == 520
                  && BB_TRANSFER_TRACKED_CONTROL_BYTES(BB_ADMISSION_FUSED_OP) == 520,
              "control bytes: spec %d, fused %d", (int)CENSUS,
              (int)BB_TRANSFER_TRACKED_CONTROL_BYTES(BB_ADMISSION_FUSED));
    fixture_t f = { .data = malloc(4096) };
    for (int i = 0; i < 6; i++) {
        bb_phase_attr_t attr = { .admission = (bb_admission_t)(i % 3),
                                 .requests = (bb_requests_t)(i / 3) };
        const char *how = bb_admission_name(attr.admission);
        const char *req = bb_requests_name(attr.requests);
        int spec = attr.admission == BB_ADMISSION_SPEC;
        int64_t control = spec ? 232 : 520;
        bb_transfer_phase_t *phase = NULL;
        CHECK(bb_transfer_phase_create_attr(world, &attr, &phase) == BB_OK);
        bbfault_buffers_reset();  /* after the creation's own agreement */
        for (int k = 0; k < NSIZES; k++) {
            bb_transfer_metrics_t m;
            int64_t n = sizes[k];
            f.bad = 0;
            CHECK(ticket(phase, &f, k, n, 4096, 0, &m) == BB_OK && f.bad == 0);
            CHECK_MSG(m.tracked_bytes == control + held(n)
                          && m.tracked_bytes
                                 == BB_TRANSFER_TRACKED_CONTROL_BYTES(attr.admission) + held(n),
                      "%s %s, %lld bytes, %s: tracked %lld", how, req, (long long)n,
                      bb_transfer_role_name(m.role), (long long)m.tracked_bytes);
            CHECK(bb_transfer_phase_tracked_live(phase) == 0);
        }
        int64_t handed = bbfault_buffer_bytes();
        int64_t want = spec ? BB_TRANSFER_CONTROL_BYTES
                            : BB_AGREE_STAGING_BYTES(BB_TRANSFER_FIELDS, attr.admission) + 16;
        CHECK_MSG(handed == want && want == (spec ? 216 : 304),
                  "%s %s: %lld bytes handed to MPI, want %lld", how, req, (long long)handed,
                  (long long)want);
        CHECK(bb_transfer_phase_close(phase) == BB_OK);
    }
    free(f.data);
}

/* Every admission under both request policies against spec per call (the
 * first subject), case by case: identical verdicts, census and sequences. */
static void policy_cases(bb_world_t *world, bb_buffers_t buffers)
{
    enum { SUBJECTS = 3 * 2 };
    subject_t x[SUBJECTS];
    const char *b = bb_buffers_name(buffers);
    for (int i = 0; i < SUBJECTS; i++) {
        memset(&x[i], 0, sizeof x[i]);
        x[i].attr = (bb_phase_attr_t){ .buffers = buffers,
                                       .admission = (bb_admission_t)(i % 3),
                                       .requests = (bb_requests_t)(i / 3) };
        snprintf(x[i].name, sizeof x[i].name, "%s %s", bb_admission_name(x[i].attr.admission),
                 bb_requests_name(x[i].attr.requests));
        CHECK(bb_transfer_phase_create_attr(world, &x[i].attr, &x[i].phase) == BB_OK);
    }
    for (int c = 0; c < C_N; c++) {
        const char *n = case_names[c];
        outcome_t s;  /* spec per call, the reference */
        one_case(x[0].phase, c, &s);
        bb_stage_t stage = s.m.refusal.stage;
        int reached_status = s.st == BB_OK || stage == BB_STAGE_COMPUTE
                             || stage == BB_STAGE_CONSUMER || stage == BB_STAGE_RECEIPT;
        check_calls(&x[0], &s, reached_status, b, n);
        CHECK_MSG(s.bad == 0, "%s %s: payload check failed", b, n);
        /* Identical verdicts are also the right ones. */
        int alone = ranks == 1;  /* no other rank to differ from */
        int refused_expected = c == C_PROVIDER || c == C_NEGATIVE || c == C_OVER_CAP
                               || c == C_INT64_MIN_ID || c == C_COMPUTE || c == C_CONSUMER
                               || (!alone && c != C_NONE);
        CHECK_MSG((s.st == BB_REFUSED) == refused_expected, "%s %s: %s", b, n,
                  bb_status_string(s.st));
        CHECK(bbfault_same_everywhere(s.st) && bbfault_same_everywhere(stage));
        for (int i = 1; i < SUBJECTS; i++) {
            outcome_t f;
            const char *p = x[i].name;
            one_case(x[i].phase, c, &f);
            CHECK_MSG(s.st == f.st, "%s %s: spec per-call %s, %s %s", b, n,
                      bb_status_string(s.st), p, bb_status_string(f.st));
            CHECK_MSG(s.m.refusal.stage == f.m.refusal.stage
                          && s.m.refusal.rank == f.m.refusal.rank
                          && s.m.refusal.sequence == f.m.refusal.sequence
                          && s.m.code == f.m.code && s.m.local_cause == f.m.local_cause,
                      "%s %s: refusal differs: spec per-call %s rank %d seq %lld, %s %s "
                      "rank %d seq %lld", b, n, bb_stage_name(s.m.refusal.stage),
                      s.m.refusal.rank, (long long)s.m.refusal.sequence, p,
                      bb_stage_name(f.m.refusal.stage), f.m.refusal.rank,
                      (long long)f.m.refusal.sequence);
            /* The same census but for the admission's own staging (its
             * control bytes, BB_TRANSFER_TRACKED_CONTROL_BYTES). */
            int64_t own = BB_TRANSFER_TRACKED_CONTROL_BYTES(x[i].attr.admission) - CENSUS;
            CHECK_MSG((s.m.tracked_bytes == 0 ? f.m.tracked_bytes == 0
                                              : s.m.tracked_bytes + own == f.m.tracked_bytes)
                          && s.m.payload_bytes == f.m.payload_bytes
                          && s.m.requests_posted == f.m.requests_posted
                          && s.m.max_inflight == f.m.max_inflight
                          && s.held_after == f.held_after,
                      "%s %s, %s: census differs (tracked %lld/%lld, held after %lld/%lld)",
                      b, n, p, (long long)s.m.tracked_bytes, (long long)f.m.tracked_bytes,
                      (long long)s.held_after, (long long)f.held_after);
            CHECK_MSG(s.sequence_after == f.sequence_after, "%s %s, %s: sequences diverge",
                      b, n, p);
            check_calls(&x[i], &f, reached_status, b, n);
            CHECK(bbfault_same_everywhere(f.st)
                  && bbfault_same_everywhere(f.m.refusal.stage));
            CHECK_MSG(f.bad == 0, "%s %s, %s: payload check failed", b, n, p);
        }
    }
    /* Closing frees the persistent requests made, and only those. */
    for (int i = 0; i < SUBJECTS; i++) {
        long want = 0;
        if (x[i].attr.requests == BB_REQUESTS_PERSISTENT)
            want = (x[i].admission_made
                        ? (x[i].attr.admission == BB_ADMISSION_SPEC ? 2 : 1) : 0)
                   + x[i].status_made;
        bbfault_collectives_t before = bbfault_collectives();
        CHECK(bb_transfer_phase_close(x[i].phase) == BB_OK);
        bbfault_collectives_t d = bbfault_collectives_since(before);
        CHECK_MSG(d.request_free == want, "%s, %s: close freed %ld requests, want %ld", b,
                  x[i].name, d.request_free, want);
    }
}

/* A poisoned retained phase keeps its buffer (it may still be MPI's), with
 * per-call or persistent requests. */
static void poison_case(bb_world_t *world, const char *verdict_path, bb_requests_t requests)
{
    bb_phase_attr_t attr = { .buffers = BB_BUFFERS_RETAINED, .requests = requests };
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
            fprintf(out, "rank %d: poison retained %s at ticket %lld: %d passed, %d failed\n",
                    rank, bb_requests_name(requests), (long long)id, passed, failed);
            fclose(out);
        }
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    free(f.data);
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    if ((argc == 3 || (argc == 4 && strcmp(argv[3], "persistent") == 0))
        && strcmp(argv[1], "poison") == 0) {
        poison_case(world, argv[2],
                    argc == 4 ? BB_REQUESTS_PERSISTENT : BB_REQUESTS_PER_CALL);
        printf("rank %d: no fault was injected\n", rank);
        bb_world_release(world);
        MPI_Finalize();
        return 1;
    }
    retained_cases(world);
    policy_cases(world, BB_BUFFERS_FRESH);
    policy_cases(world, BB_BUFFERS_RETAINED);
    census_cases(world);
    int ok = bbfault_all_true(failed == 0) && !bbfault_all_true(passed == 0);
    if (rank == 0)
        printf("test-transfer-policy on %d ranks: %d passed, %d failed\n", ranks, passed,
               failed);
    bb_world_release(world);
    MPI_Finalize();
    return ok ? 0 : 1;
}
