/* test-sum-policy: the sum phase's policies on real MPI, at any rank count.
 *
 *   test-sum-policy            retained buffers (capacity, growth, refusals
 *                              holding no extra bytes, the lent result) and
 *                              the fused admission's equivalence with the
 *                              spec's MIN-then-MAX pair, case by case
 *   test-sum-policy poison FILE  a retained phase with a payload call made to
 *                              fail (BB_FAULT): it keeps its buffers; the
 *                              verdict goes to FILE, then MPI_Abort(3)
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
    bb_phase_attr_t attr = { BB_BUFFERS_RETAINED, BB_ADMISSION_SPEC };
    bb_sum_phase_t *phase = NULL;
    CHECK(bb_sum_phase_create_attr(world, &attr, &phase) == BB_OK);
    provider_t p = { .data = values(400) };
    bb_sum_metrics_t m;
    double *r = NULL, *first = NULL;

    CHECK(bb_sum_phase_tracked_live(phase) == 144);
    CHECK(run(phase, &p, 0, 100, 100, &r, &m) == BB_OK && sum_ok(r, 100));
    first = r;
    CHECK_MSG(bb_sum_phase_tracked_live(phase) == 144 + 16 * 100,
              "retained after count 100: %lld", (long long)bb_sum_phase_tracked_live(phase));
    /* Smaller counts reuse the capacity: nothing grows, the result is lent. */
    CHECK(run(phase, &p, 1, 50, 80, &r, &m) == BB_OK && sum_ok(r, 50));
    CHECK(r == first);
    CHECK(m.tracked_bytes == 144 + 16 * 100);
    CHECK(bb_sum_phase_tracked_live(phase) == 144 + 16 * 100);
    /* A larger cap grows to the cap. */
    CHECK(run(phase, &p, 2, 150, 200, &r, &m) == BB_OK && sum_ok(r, 150));
    CHECK(m.tracked_bytes == 144 + 16 * (100 + 200));  /* old and new during the call */
    CHECK(bb_sum_phase_tracked_live(phase) == 144 + 16 * 200);
    /* A refused call that would have grown holds no extra bytes after it. */
    p.fail = rank == ranks - 1;
    CHECK(run(phase, &p, 3, 300, 300, &r, &m) == BB_REFUSED);
    CHECK(m.refusal.stage == BB_STAGE_PREFLIGHT);
    CHECK_MSG(bb_sum_phase_tracked_live(phase) == 144 + 16 * 200,
              "after a refusal: %lld", (long long)bb_sum_phase_tracked_live(phase));
    p.fail = 0;
    /* A count over the cap is refused before anything is reserved. */
    CHECK(run(phase, &p, 4, 300, 250, &r, &m) == BB_REFUSED);
    CHECK(bb_sum_phase_tracked_live(phase) == 144 + 16 * 200);
    /* Still correct after the refusals, in the retained buffers. */
    CHECK(run(phase, &p, 5, 200, 200, &r, &m) == BB_OK && sum_ok(r, 200));
    CHECK(bb_sum_phase_tracked_live(phase) == 144 + 16 * 200);
    CHECK(bb_sum_phase_destroy(phase) == BB_OK);

    /* Fresh (the default) holds only its control bytes between calls. */
    CHECK(bb_sum_phase_create(world, &phase) == BB_OK);
    CHECK(run(phase, &p, 0, 100, 100, &r, &m) == BB_OK && sum_ok(r, 100));
    CHECK(m.tracked_bytes == 144 + 16 * 100);
    CHECK(bb_sum_phase_tracked_live(phase) == 144);
    bb_free(r);
    CHECK(bb_sum_phase_destroy(phase) == BB_OK);

    bb_phase_attr_t bad = { (bb_buffers_t)9, BB_ADMISSION_SPEC };
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

static void one_case(bb_sum_phase_t *phase, int c, bb_sum_metrics_t *m, long *allreduces,
                     bb_status_t *st)
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
    long before = bbfault_calls("MPI_Allreduce");
    *st = bb_sum_phase_run(phase, &prov, &k, &r, m);
    *allreduces = bbfault_calls("MPI_Allreduce") - before;
    if (*st == BB_OK) {
        CHECK(sum_ok(r, 32));
        bb_free(r);
    }
    free(p.data);
}

static void fused_cases(bb_world_t *world)
{
    bb_phase_attr_t spec_attr = { BB_BUFFERS_FRESH, BB_ADMISSION_SPEC };
    bb_phase_attr_t fused_attr = { BB_BUFFERS_FRESH, BB_ADMISSION_FUSED };
    bb_sum_phase_t *spec = NULL, *fused = NULL;
    CHECK(bb_sum_phase_create_attr(world, &spec_attr, &spec) == BB_OK);
    CHECK(bb_sum_phase_create_attr(world, &fused_attr, &fused) == BB_OK);
    for (int c = 0; c < C_N; c++) {
        bb_sum_metrics_t ms, mf;
        long as, af;
        bb_status_t ss, sf;
        one_case(spec, c, &ms, &as, &ss);
        one_case(fused, c, &mf, &af, &sf);
        const char *n = case_names[c];
        CHECK_MSG(ss == sf, "%s: spec %s, fused %s", n, bb_status_string(ss),
                  bb_status_string(sf));
        CHECK_MSG(ms.refusal.stage == mf.refusal.stage && ms.refusal.rank == mf.refusal.rank
                      && ms.refusal.sequence == mf.refusal.sequence,
                  "%s: refusal differs: spec %s/%lld, fused %s/%lld", n,
                  bb_stage_name(ms.refusal.stage), (long long)ms.refusal.sequence,
                  bb_stage_name(mf.refusal.stage), (long long)mf.refusal.sequence);
        CHECK_MSG(ms.tracked_bytes == mf.tracked_bytes && ms.payload_bytes == mf.payload_bytes
                      && ms.requests_posted == mf.requests_posted,
                  "%s: census differs", n);
        CHECK_MSG(bb_sum_phase_sequence(spec) == bb_sum_phase_sequence(fused),
                  "%s: sequences diverge", n);
        CHECK_MSG(as == 2 && af == 1, "%s: %ld spec and %ld fused admission Allreduce", n,
                  as, af);
        CHECK(bbfault_same_everywhere(sf) && bbfault_same_everywhere(mf.refusal.stage));
        /* Identical verdicts are also the right ones. */
        int refused_expected = ranks > 1 ? c != C_NONE
                             : (c == C_PROVIDER || c == C_NEGATIVE || c == C_INT64_MIN_ID
                                || c == C_OVER_CAP);
        CHECK_MSG((sf == BB_REFUSED) == refused_expected, "%s: %s", n, bb_status_string(sf));
        if (c >= C_PROVIDER && c != C_INT64_MIN_SEQUENCE && sf == BB_REFUSED)
            CHECK_MSG(mf.refusal.stage == BB_STAGE_PREFLIGHT, "%s: stage %s", n,
                      bb_stage_name(mf.refusal.stage));
    }
    CHECK(bb_sum_phase_destroy(spec) == BB_OK);
    CHECK(bb_sum_phase_destroy(fused) == BB_OK);
}

/* A poisoned retained phase keeps its buffers (they may still be MPI's). */
static int poison_case(bb_world_t *world, const char *verdict_path)
{
    bb_phase_attr_t attr = { BB_BUFFERS_RETAINED, BB_ADMISSION_SPEC };
    bb_sum_phase_t *phase = NULL;
    CHECK(bb_sum_phase_create_attr(world, &attr, &phase) == BB_OK);
    provider_t p = { .data = values(100) };
    bb_sum_metrics_t m;
    double *r = NULL;
    bb_status_t st = run(phase, &p, 0, 100, 100, &r, &m);
    if (st == BB_ERR_MPI) {
        CHECK(bb_sum_phase_poisoned(phase));
        CHECK_MSG(bb_sum_phase_tracked_live(phase) == 144 + 16 * 100,
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
    fused_cases(world);
    int ok = bbfault_all_true(failed == 0);
    if (rank == 0)
        printf("test-sum-policy on %d ranks: %d passed, %d failed\n", ranks, passed, failed);
    bb_world_release(world);
    MPI_Finalize();
    return ok ? 0 : 1;
}
