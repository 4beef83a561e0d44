/* test-sum-policy: the sum phase's policies on real MPI, at any rank count.
 *
 *   test-sum-policy            retained buffers (capacity, growth, refusals
 *                              holding no extra bytes, the lent result), the
 *                              fused and fused-op admissions' equivalence
 *                              with the spec's MIN-then-MAX pair, per call
 *                              and persistent, case by case, and the life of
 *                              persistent payload requests
 *   test-sum-policy poison FILE [persistent]
 *                              a retained phase (per-call or persistent
 *                              requests) with a call made to fail
 *                              (BB_FAULT): it keeps its buffers; the
 *                              verdict goes to FILE, then MPI_Abort(3)
 *
 * Linked with tests/fault.c: the library's MPI_Allreduce calls are counted. */
#include "config.h"
#include "bbench.h"
#include "private/hooks.h"
#include "fault.h"
#include "../check-mpi.h"

/* The default (spec) admission's counted control bytes: 144. */
#define CTL BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_SPEC)

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

typedef struct provider {
    double *data;
    int64_t len;
    int fail;
} provider_t;

static int provider_prepare(void *arg, const double **data_out, int64_t *len_out)
{
    provider_t *p = arg;
    if (p->fail)
        return 1;
    *data_out = p->data;
    *len_out = p->len;
    return 0;
}

static double *values(int64_t n)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)(i % 7 + rank);
    return v;
}

static int sum_ok(const double *r, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (r[i] != (double)ranks * (double)(i % 7) + (double)ranks * (ranks - 1) / 2.0)
            return 0;
    return 1;
}

static bb_status_t run(bb_sum_phase_t *phase, provider_t *p, int64_t id, int64_t count,
                       int64_t cap, double **result, bb_sum_metrics_t *m)
{
    bb_sum_provider_t prov = { provider_prepare, NULL, p };
    bb_sum_contract_t c = { .phase_id = id, .epoch = 1, .count = count, .max_elements = cap };
    p->len = count;
    return bb_sum_phase_run(phase, &prov, &c, result, m);
}

static void retained_cases(bb_world_t *world)
{
    bb_phase_attr_t attr = { .buffers = BB_BUFFERS_RETAINED };
    bb_sum_phase_t *phase = NULL;
    CHECK(bb_sum_phase_create_attr(world, &attr, &phase) == BB_OK);
    provider_t p = { .data = values(400) };
    bb_sum_metrics_t m;
    double *r = NULL, *first = NULL;

    CHECK(bb_sum_phase_tracked_live(phase) == CTL);
    CHECK(run(phase, &p, 0, 100, 100, &r, &m) == BB_OK && sum_ok(r, 100));
    first = r;
    CHECK_MSG(bb_sum_phase_tracked_live(phase) == CTL + 16 * 100,
              "retained after count 100: %lld", (long long)bb_sum_phase_tracked_live(phase));
    /* Smaller counts reuse the capacity: nothing grows, the result is lent. */
    CHECK(run(phase, &p, 1, 50, 80, &r, &m) == BB_OK && sum_ok(r, 50));
    CHECK(r == first);
    CHECK(m.tracked_bytes == CTL + 16 * 100);
    CHECK(bb_sum_phase_tracked_live(phase) == CTL + 16 * 100);
    /* A larger cap grows to the cap. */
    CHECK(run(phase, &p, 2, 150, 200, &r, &m) == BB_OK && sum_ok(r, 150));
    CHECK(m.tracked_bytes == CTL + 16 * (100 + 200));  /* old and new during the call */
    CHECK(bb_sum_phase_tracked_live(phase) == CTL + 16 * 200);
    /* A refused call that would have grown holds no extra bytes after it. */
    p.fail = rank == ranks - 1;
    CHECK(run(phase, &p, 3, 300, 300, &r, &m) == BB_REFUSED);
    CHECK(m.refusal.stage == BB_STAGE_PREFLIGHT);
    CHECK_MSG(bb_sum_phase_tracked_live(phase) == CTL + 16 * 200,
              "after a refusal: %lld", (long long)bb_sum_phase_tracked_live(phase));
    p.fail = 0;
    /* A count over the cap is refused before anything is reserved. */
    CHECK(run(phase, &p, 4, 300, 250, &r, &m) == BB_REFUSED);
    CHECK(bb_sum_phase_tracked_live(phase) == CTL + 16 * 200);
    /* Still correct after the refusals, in the retained buffers. */
    CHECK(run(phase, &p, 5, 200, 200, &r, &m) == BB_OK && sum_ok(r, 200));
    CHECK(bb_sum_phase_tracked_live(phase) == CTL + 16 * 200);
    CHECK(bb_sum_phase_destroy(phase) == BB_OK);

    /* Fresh (the default) holds only its control bytes between calls. */
    CHECK(bb_sum_phase_create(world, &phase) == BB_OK);
    CHECK(run(phase, &p, 0, 100, 100, &r, &m) == BB_OK && sum_ok(r, 100));
    CHECK(m.tracked_bytes == CTL + 16 * 100);
    CHECK(bb_sum_phase_tracked_live(phase) == CTL);
    bb_free(r);
    CHECK(bb_sum_phase_destroy(phase) == BB_OK);

    bb_phase_attr_t bad = { .buffers = (bb_buffers_t)9 };
    CHECK(bb_sum_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG);
    free(p.data);
}

/* One admission case under both admissions: the same verdict everywhere. */
enum { C_NONE, C_PHASE_ID, C_EPOCH, C_COUNT, C_CAP, C_SEQUENCE, C_PROVIDER,
       C_NEGATIVE, C_INT64_MIN_ID, C_INT64_MIN_SEQUENCE, C_OVER_CAP, C_N };
static const char *const case_names[C_N] = {
    "none", "phase_id", "epoch", "count", "cap", "sequence", "provider", "negative epoch",
    "INT64_MIN phase_id", "INT64_MIN sequence", "count over cap"
};

static void one_case(bb_sum_phase_t *phase, int c, bb_sum_metrics_t *m,
                     bbfault_collectives_t *made, bb_status_t *st)
{
    int odd = rank == ranks - 1;  /* the last rank differs */
    provider_t p = { .data = values(64) };
    bb_sum_provider_t prov = { provider_prepare, NULL, &p };
    bb_sum_contract_t k = { .phase_id = 5, .epoch = 2, .count = 32, .max_elements = 64 };
    if (odd) {
        switch (c) {
        case C_PHASE_ID: k.phase_id = 6; break;
        case C_EPOCH: k.epoch = 3; break;
        case C_COUNT: k.count = 33; break;
        case C_CAP: k.max_elements = 65; break;
        case C_SEQUENCE: bb_sum_phase_set_sequence(phase, bb_sum_phase_sequence(phase) + 1);
            break;
        case C_PROVIDER: p.fail = 1; break;
        case C_NEGATIVE: k.epoch = -1; break;
        case C_INT64_MIN_ID: k.phase_id = INT64_MIN; break;
        case C_INT64_MIN_SEQUENCE: bb_sum_phase_set_sequence(phase, INT64_MIN); break;
        case C_OVER_CAP: k.count = 65; break;
        }
    }
    p.len = k.count;
    double *r = NULL;
    bbfault_collectives_t before = bbfault_collectives();
    *st = bb_sum_phase_run(phase, &prov, &k, &r, m);
    *made = bbfault_collectives_since(before);
    if (*st == BB_OK) {
        CHECK(sum_ok(r, 32));
        bb_free(r);
    }
    free(p.data);
}

/* Every admission under both request policies, timed and untimed, against
 * spec per call, case by case: the same verdict, refusal and census
 * everywhere, and the collectives each policy promises. */
enum { ADMISSIONS = 3, POLICIES = 2 * 2 * ADMISSIONS };

static void equivalence_cases(bb_world_t *world)
{
    bb_sum_phase_t *phase[POLICIES];
    bb_phase_attr_t attr[POLICIES];
    for (int i = 0; i < POLICIES; i++) {
        attr[i] = (bb_phase_attr_t){ .admission = (bb_admission_t)(i % ADMISSIONS),
                                     .requests = (bb_requests_t)(i / ADMISSIONS % 2),
                                     .metrics = (bb_metrics_t)(i / ADMISSIONS / 2) };
        CHECK(bb_sum_phase_create_attr(world, &attr[i], &phase[i]) == BB_OK);
    }
    for (int c = 0; c < C_N; c++) {
        bb_sum_metrics_t m[POLICIES];
        bbfault_collectives_t made[POLICIES];
        bb_status_t st[POLICIES];
        const char *n = case_names[c];
        for (int i = 0; i < POLICIES; i++)
            one_case(phase[i], c, &m[i], &made[i], &st[i]);
        for (int i = 1; i < POLICIES; i++) {
            char name[96];
            snprintf(name, sizeof name, "%s, admission %s, requests %s, %s", n,
                     bb_admission_name(attr[i].admission), bb_requests_name(attr[i].requests),
                     bb_metrics_name(attr[i].metrics));
            CHECK_MSG(st[0] == st[i], "%s: spec %s, this %s", name, bb_status_string(st[0]),
                      bb_status_string(st[i]));
            CHECK_MSG(m[0].refusal.stage == m[i].refusal.stage
                          && m[0].refusal.rank == m[i].refusal.rank
                          && m[0].refusal.sequence == m[i].refusal.sequence,
                      "%s: refusal differs: spec %s/%lld, this %s/%lld", name,
                      bb_stage_name(m[0].refusal.stage), (long long)m[0].refusal.sequence,
                      bb_stage_name(m[i].refusal.stage), (long long)m[i].refusal.sequence);
            /* The same census but for the admission's own staging. */
            CHECK_MSG(m[0].tracked_bytes - CTL
                              == m[i].tracked_bytes
                                     - BB_SUM_TRACKED_CONTROL_BYTES(attr[i].admission)
                          && m[0].payload_bytes == m[i].payload_bytes
                          && m[0].requests_posted == m[i].requests_posted,
                      "%s: census differs", name);
            CHECK_MSG(bb_sum_phase_sequence(phase[0]) == bb_sum_phase_sequence(phase[i]),
                      "%s: sequences diverge", name);
            CHECK(bbfault_same_everywhere(st[i])
                  && bbfault_same_everywhere(m[i].refusal.stage));
            /* Timed: every part measured; untimed: none (-1), not 0. */
            int timed = attr[i].metrics == BB_METRICS_TIMED;
            CHECK_MSG(timed ? m[i].total_s >= 0.0 && m[i].admission_s >= 0.0
                                  && m[i].total_s >= m[i].admission_s
                            : m[i].total_s == -1.0 && m[i].prepare_s == -1.0
                                  && m[i].admission_s == -1.0 && m[i].post_s == -1.0
                                  && m[i].test_s == -1.0 && m[i].wait_s == -1.0,
                      "%s: total %g s, admission %g s", name, m[i].total_s, m[i].admission_s);
        }
        for (int i = 0; i < POLICIES; i++) {
            int spec = attr[i].admission == BB_ADMISSION_SPEC;
            int admitted = st[i] == BB_OK;
            long agreements = spec ? 2 : 1;
            const char *a = bb_admission_name(attr[i].admission);
            if (attr[i].requests == BB_REQUESTS_PER_CALL) {
                CHECK_MSG(made[i].allreduce == agreements && made[i].init == 0
                              && made[i].start == 0,
                          "%s, %s per call: %ld Allreduce, %ld init, %ld start", n, a,
                          made[i].allreduce, made[i].init, made[i].start);
            } else {
                /* Agreements made at the first call, started at each; the
                 * payload request with its fresh buffers, once per call. */
                long inits = (c == 0 ? agreements : 0) + admitted;
                CHECK_MSG(made[i].allreduce == 0 && made[i].init == inits
                              && made[i].start == agreements + admitted
                              && made[i].request_free == admitted,
                          "%s, %s persistent: %ld Allreduce, %ld init, %ld start, %ld free",
                          n, a, made[i].allreduce, made[i].init, made[i].start,
                          made[i].request_free);
            }
        }
        /* Identical verdicts are also the right ones. */
        int refused_expected = ranks > 1 ? c != C_NONE
                             : (c == C_PROVIDER || c == C_NEGATIVE || c == C_INT64_MIN_ID
                                || c == C_OVER_CAP);
        CHECK_MSG((st[0] == BB_REFUSED) == refused_expected, "%s: %s", n,
                  bb_status_string(st[0]));
        if (c >= C_PROVIDER && c != C_INT64_MIN_SEQUENCE && st[0] == BB_REFUSED)
            CHECK_MSG(m[0].refusal.stage == BB_STAGE_PREFLIGHT, "%s: stage %s", n,
                      bb_stage_name(m[0].refusal.stage));
    }
    for (int i = 0; i < POLICIES; i++)
        CHECK(bb_sum_phase_destroy(phase[i]) == BB_OK);
}

/* Retained buffers with persistent requests: the payload request lives as
 * long as the buffers and count it names. */
static void persistent_cases(bb_world_t *world)
{
    bb_phase_attr_t attr = { .buffers = BB_BUFFERS_RETAINED,
                             .admission = BB_ADMISSION_FUSED_OP,
                             .requests = BB_REQUESTS_PERSISTENT };
    bb_sum_phase_t *phase = NULL;
    CHECK(bb_sum_phase_create_attr(world, &attr, &phase) == BB_OK);
    provider_t p = { .data = values(400) };
    bb_sum_metrics_t m;
    double *r = NULL;
    bbfault_collectives_t t0 = bbfault_collectives();
    CHECK(run(phase, &p, 0, 100, 100, &r, &m) == BB_OK && sum_ok(r, 100));
    bbfault_collectives_t t1 = bbfault_collectives();
    CHECK_MSG(t1.init - t0.init == 2 && t1.start - t0.start == 2,
              "first call: %ld init (agreement and payload), %ld start", t1.init - t0.init,
              t1.start - t0.start);
    /* The same count in the same buffers: nothing is made again. */
    CHECK(run(phase, &p, 1, 100, 100, &r, &m) == BB_OK && sum_ok(r, 100));
    bbfault_collectives_t t2 = bbfault_collectives();
    CHECK_MSG(t2.init == t1.init && t2.request_free == t1.request_free
                  && t2.start - t1.start == 2,
              "same count: %ld init, %ld free", t2.init - t1.init,
              t2.request_free - t1.request_free);
    /* Another count: the payload request is made anew (the buffers stay). */
    CHECK(run(phase, &p, 2, 60, 100, &r, &m) == BB_OK && sum_ok(r, 60));
    bbfault_collectives_t t3 = bbfault_collectives();
    CHECK_MSG(t3.init - t2.init == 1 && t3.request_free - t2.request_free == 1,
              "new count: %ld init, %ld free", t3.init - t2.init,
              t3.request_free - t2.request_free);
    /* A refusal starts nothing but the agreement and keeps the request. */
    p.fail = rank == ranks - 1;
    CHECK(run(phase, &p, 3, 60, 100, &r, &m) == BB_REFUSED);
    bbfault_collectives_t t4 = bbfault_collectives();
    CHECK(t4.start - t3.start == 1 && t4.init == t3.init && t4.request_free == t3.request_free);
    CHECK(bb_sum_phase_tracked_live(phase) == BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_FUSED_OP) + 16 * 100);
    p.fail = 0;
    /* Grown buffers: a new request on the new buffers. */
    CHECK(run(phase, &p, 4, 300, 300, &r, &m) == BB_OK && sum_ok(r, 300));
    bbfault_collectives_t t5 = bbfault_collectives();
    CHECK(t5.init - t4.init == 1 && t5.request_free - t4.request_free == 1);
    CHECK(bb_sum_phase_tracked_live(phase) == BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_FUSED_OP) + 16 * 300);
    /* Count 0 is admitted and posted like any other. */
    CHECK(run(phase, &p, 5, 0, 300, &r, &m) == BB_OK);
    CHECK(run(phase, &p, 6, 300, 300, &r, &m) == BB_OK && sum_ok(r, 300));
    bbfault_collectives_t t6 = bbfault_collectives();
    CHECK(bb_sum_phase_destroy(phase) == BB_OK);
    bbfault_collectives_t t7 = bbfault_collectives();
    CHECK_MSG(t7.request_free - t6.request_free == 2,
              "destroy frees the agreement's and the payload's requests: %ld",
              t7.request_free - t6.request_free);
    bb_phase_attr_t bad = { .requests = (bb_requests_t)7 };
    CHECK(bb_sum_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG);
    bad = (bb_phase_attr_t){ .admission = (bb_admission_t)3 };
    CHECK(bb_sum_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG);
    bad = (bb_phase_attr_t){ .metrics = (bb_metrics_t)2 };
    CHECK(bb_sum_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG);
    free(p.data);
}

/* A poisoned retained phase keeps its buffers (they may still be MPI's). */
static int poison_case(bb_world_t *world, const char *verdict_path, bb_requests_t requests)
{
    bb_phase_attr_t attr = { .buffers = BB_BUFFERS_RETAINED, .requests = requests };
    bb_sum_phase_t *phase = NULL;
    CHECK(bb_sum_phase_create_attr(world, &attr, &phase) == BB_OK);
    provider_t p = { .data = values(100) };
    bb_sum_metrics_t m;
    double *r = NULL;
    bb_status_t st = run(phase, &p, 0, 100, 100, &r, &m);
    if (st == BB_ERR_MPI) {
        CHECK(bb_sum_phase_poisoned(phase));
        CHECK_MSG(bb_sum_phase_tracked_live(phase) == CTL + 16 * 100,
                  "poisoned retained phase holds %lld bytes",
                  (long long)bb_sum_phase_tracked_live(phase));
        CHECK(bb_sum_phase_destroy(phase) == BB_ERR_POISONED);
        FILE *f = fopen(verdict_path, "w");
        if (f != NULL) {
            fprintf(f, "rank %d: poison retained: %d passed, %d failed\n", rank, passed,
                    failed);
            fclose(f);
        }
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return 1;
}

/* The census is exact.  Under every admission and request policy the
 * bytes the agreement's collectives were handed, as the interposer saw
 * them (the payload, in MPI_DOUBLE, apart), are counted: under spec they
 * are the three 48-byte arrays themselves, 144 bytes and no staging (the
 * document's control storage: BB_SUM_TRACKED_CONTROL_BYTES(spec) ==
 * BB_SUM_CONTROL_BYTES == 144); under fused and fused-op the [x, ~x]
 * staging, 192 bytes, counted besides the arrays (which they then never
 * hand to MPI).  The tracked figure is those control bytes and 16 * count
 * of payload, for counts 0, 1 and 5 (the document's 144 + 16 * count under
 * spec) and 100. */
static void census_cases(bb_world_t *world)
{
    static const int64_t counts[] = { 0, 1, 5, 100 };
    enum { NCOUNTS = sizeof counts / sizeof counts[0] };
    CHECK_MSG(BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_SPEC) == 144
                  && BB_SUM_CONTROL_BYTES == 144
                  && BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_FUSED) == 336
                  && BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_FUSED_OP) == 336,
              "control bytes: spec %d, fused %d", (int)BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_SPEC),
              (int)BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_FUSED));
    for (int i = 0; i < 6; i++) {
        bb_phase_attr_t attr = { .admission = (bb_admission_t)(i % 3),
                                 .requests = (bb_requests_t)(i / 3) };
        const char *how = bb_admission_name(attr.admission);
        const char *req = bb_requests_name(attr.requests);
        int spec = attr.admission == BB_ADMISSION_SPEC;
        bb_sum_phase_t *phase = NULL;
        CHECK(bb_sum_phase_create_attr(world, &attr, &phase) == BB_OK);
        CHECK_MSG(bb_sum_phase_tracked_live(phase) == (spec ? 144 : 336),
                  "%s %s: %lld bytes between calls", how, req,
                  (long long)bb_sum_phase_tracked_live(phase));
        bbfault_buffers_reset();  /* after the creation's own agreement */
        provider_t p = { .data = values(100) };
        for (int k = 0; k < NCOUNTS; k++) {
            bb_sum_metrics_t m;
            double *r = NULL;
            int64_t count = counts[k];
            CHECK(run(phase, &p, k, count, 100, &r, &m) == BB_OK && sum_ok(r, count));
            bb_free(r);
            CHECK_MSG(m.tracked_bytes == (spec ? 144 : 336) + 16 * count
                          && m.tracked_bytes
                                 == BB_SUM_TRACKED_CONTROL_BYTES(attr.admission) + 16 * count,
                      "%s %s, count %lld: tracked %lld", how, req, (long long)count,
                      (long long)m.tracked_bytes);
        }
        int64_t handed = bbfault_buffer_bytes();
        int64_t want = spec ? BB_SUM_CONTROL_BYTES
                            : BB_AGREE_STAGING_BYTES(BB_SUM_FIELDS, attr.admission);
        CHECK_MSG(handed == want && want == (spec ? 144 : 192)
                      && BB_SUM_TRACKED_CONTROL_BYTES(attr.admission)
                             == BB_SUM_CONTROL_BYTES
                                    + BB_AGREE_STAGING_BYTES(BB_SUM_FIELDS, attr.admission),
                  "%s %s: %lld bytes handed to MPI, %lld counted as handed", how, req,
                  (long long)handed, (long long)want);
        CHECK(bb_sum_phase_destroy(phase) == BB_OK);
        free(p.data);
    }
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "poison") == 0) {
        poison_case(world, argv[2],
                    argc == 4 && strcmp(argv[3], "persistent") == 0 ? BB_REQUESTS_PERSISTENT
                                                                     : BB_REQUESTS_PER_CALL);
        printf("rank %d: no fault was injected\n", rank);
        bb_world_release(world);
        MPI_Finalize();
        return 1;
    }
    retained_cases(world);
    equivalence_cases(world);
    persistent_cases(world);
    census_cases(world);
    int ok = bbfault_all_true(failed == 0) && !bbfault_all_true(passed == 0);
    if (rank == 0)
        printf("test-sum-policy on %d ranks: %d passed, %d failed\n", ranks, passed, failed);
    bb_world_release(world);
    MPI_Finalize();
    return ok ? 0 : 1;
}
