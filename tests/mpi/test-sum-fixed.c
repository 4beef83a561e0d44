/* test-sum-fixed: the fixed-shape sum phase and borrowed contributions on
 * real MPI, at any rank count.
 *
 *   test-sum-fixed             creation (the shape agreed or refused on every
 *                              rank), every case of the sum policy matrix
 *                              against the contract phase (the same verdict,
 *                              refusal, sequence and result; one reduction
 *                              per call), random data within the documented
 *                              tolerance, the census, and the borrowed
 *                              policy's release (once, after completion)
 *   test-sum-fixed poison FILE [persistent|borrowed]
 *                              a fixed-shape (or a borrowed) phase whose call
 *                              is made to fail (BB_FAULT): poisoned, result
 *                              NULL, buffers kept (borrowed: the array never
 *                              released); the verdict goes to FILE, then
 *                              MPI_Abort(3)
 *
 * Linked with tests/fault.c: the library's MPI calls are counted. */
#include "config.h"
#include "bbench.h"
#include "private/hooks.h"
#include "fault.h"
#include "../check-mpi.h"

/* The default (spec) admission's counted control bytes: 144. */
#define CTL BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_SPEC)

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

enum { COUNT = 32, CAP = 64 };
/* Census of a fixed phase of COUNT: the 144 control bytes, and send and
 * recv of COUNT doubles plus the fields (BB_SUM_COMBINED_FIELD_BYTES). */
static const int64_t fixed_bytes = 144 + 2 * (8 * COUNT + BB_SUM_COMBINED_FIELD_BYTES);

typedef struct provider {
    double *data;
    int64_t len;
    int fail;
    /* release bookkeeping (borrowed) */
    int released;           /* calls of release */
    long tests_at_release;  /* MPI_Test calls when release ran */
    int scribble;           /* release overwrites the array (it is ours again) */
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

static void provider_release(void *arg, const double *data)
{
    provider_t *p = arg;
    CHECK(data == p->data);
    p->released++;
    p->tests_at_release = bbfault_calls("MPI_Test");
    if (p->scribble)
        for (int64_t i = 0; i < p->len; i++)
            p->data[i] = -1e300;
}

/* Integer-valued: the sum is exact, whatever the order. */
static void fill_integers(double *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)(i % 7 + rank);
}

static int sum_ok(const double *r, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (r[i] != (double)ranks * (double)(i % 7) + (double)ranks * (ranks - 1) / 2.0)
            return 0;
    return 1;
}

/* Random data, the same function of (rank, i) on every rank, so that each
 * rank knows the sum of magnitudes of every contribution without MPI. */
static double random_value(int r, int64_t i)
{
    uint64_t x = (uint64_t)(r + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return ((double)(x >> 11) / 9007199254740992.0 - 0.5) * pow(10.0, (double)(x % 7) - 3.0);
}

static bb_sum_phase_t *make(bb_world_t *world, bb_buffers_t buffers, bb_requests_t requests,
                            bb_shape_t shape)
{
    bb_phase_attr_t a = { .buffers = buffers, .requests = requests, .shape = shape,
                          .shape_count = shape == BB_SHAPE_FIXED ? COUNT : 0,
                          .shape_cap = shape == BB_SHAPE_FIXED ? CAP : 0 };
    bb_sum_phase_t *phase = NULL;
    CHECK(bb_sum_phase_create_attr(world, &a, &phase) == BB_OK);
    return phase;
}

/* ---- creation ---------------------------------------------------------- */

static void creation_cases(bb_world_t *world)
{
    bb_sum_phase_t *phase = NULL;
    bb_attr_refusal_t r;
    int last = rank == ranks - 1;
    bb_phase_attr_t a = { .shape = BB_SHAPE_FIXED, .shape_count = COUNT, .shape_cap = CAP };

    /* One reduction, whatever the shape. */
    bbfault_collectives_t before = bbfault_collectives();
    CHECK(bb_sum_phase_create_checked(world, &a, &phase, &r) == BB_OK);
    bbfault_collectives_t made = bbfault_collectives_since(before);
    CHECK_MSG(made.allreduce == 1 && made.init == 0, "creation: %ld Allreduce", made.allreduce);
    CHECK(r.differ == 0 && r.min[BB_ATTR_SHAPE_COUNT] == COUNT
          && r.max[BB_ATTR_SHAPE_CAP] == CAP);
    CHECK(bb_sum_phase_tracked_live(phase) == fixed_bytes);
    CHECK(bb_sum_phase_destroy(phase) == BB_OK);

    /* The shape differs on the last rank: refused everywhere, the cause
     * names it, no phase. */
    static const struct { const char *what; unsigned bit; } diff[] = {
        { "count", 1u << BB_ATTR_SHAPE_COUNT }, { "cap", 1u << BB_ATTR_SHAPE_CAP },
        { "shape", 1u << BB_ATTR_SHAPE | 1u << BB_ATTR_SHAPE_COUNT | 1u << BB_ATTR_SHAPE_CAP },
    };
    for (int d = 0; d < 3 && ranks > 1; d++) {
        bb_phase_attr_t mine = a;
        if (last && d == 0)
            mine.shape_count = COUNT + 1;
        if (last && d == 1)
            mine.shape_cap = CAP + 1;
        if (last && d == 2)
            mine = (bb_phase_attr_t){ 0 };
        phase = NULL;
        bb_status_t st = bb_sum_phase_create_checked(world, &mine, &phase, &r);
        CHECK_MSG(st == BB_REFUSED && phase == NULL && r.differ == diff[d].bit
                      && r.refusal.stage == BB_STAGE_CONTRACT,
                  "shape %s differs on one rank: %s, differ %#x (%s)", diff[d].what,
                  bb_status_string(st), r.differ, r.cause);
        CHECK(bbfault_same_everywhere(st) && bbfault_same_everywhere(r.differ));
        CHECK(strstr(r.cause, "shape") != NULL);
    }
    /* Invalid everywhere: a cap under the count, a negative count, borrowed
     * buffers (the fields cannot lie next to the provider's array). */
    bb_phase_attr_t bad = a;
    bad.shape_cap = COUNT - 1;
    CHECK(bb_sum_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG);
    bad = a;
    bad.shape_count = -1;
    CHECK(bb_sum_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG);
    bad = a;
    bad.buffers = BB_BUFFERS_BORROWED;
    CHECK(bb_sum_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG);
    bad = (bb_phase_attr_t){ .shape = (bb_shape_t)2 };
    CHECK(bb_sum_phase_create_attr(world, &bad, &phase) == BB_ERR_ARG);
    /* The other objects take the free shape and owned buffers only. */
    bb_transfer_phase_t *t = NULL;
    CHECK(bb_transfer_phase_create_attr(world, &a, &t) == BB_ERR_ARG);
    bad = (bb_phase_attr_t){ .buffers = BB_BUFFERS_BORROWED };
    CHECK(bb_transfer_phase_create_attr(world, &bad, &t) == BB_ERR_ARG);
    bb_agreement_t *ag = NULL;
    CHECK(bb_agreement_create(bb_world_comm(world), 6, &a, &ag) == BB_ERR_ARG);
}

/* ---- the policy matrix against the contract phase ------------------------ */

enum { C_NONE, C_PHASE_ID, C_EPOCH, C_COUNT, C_CAP, C_SEQUENCE, C_PROVIDER, C_LENGTH,
       C_NEGATIVE, C_INT64_MIN_ID, C_INT64_MIN_SEQUENCE, C_INT64_MAX_ID,
       C_INT64_MAX_SEQUENCE, C_OVER_CAP, C_NULL_CONTRACT, C_NOT_FIXED, C_NOT_FIXED_CAP,
       C_N };
static const char *const case_names[C_N] = {
    "none", "phase_id", "epoch", "count", "cap", "sequence", "provider", "length",
    "negative epoch", "INT64_MIN phase_id", "INT64_MIN sequence", "INT64_MAX phase_id",
    "INT64_MAX sequence", "count over cap", "NULL contract",
    "count not the fixed count (every rank)", "cap not the fixed cap (every rank)"
};

typedef struct outcome {
    bb_status_t st;
    bb_sum_metrics_t m;
    bbfault_collectives_t made;
    long iallreduce;
    double *result;          /* the published result, copied */
    int result_null;         /* *result_out was NULL after the call */
} outcome_t;

static void one_case(bb_sum_phase_t *phase, int c, bb_buffers_t buffers, outcome_t *o)
{
    int odd = rank == ranks - 1;  /* the last rank differs */
    provider_t p = { .data = malloc(CAP * sizeof(double)) };
    fill_integers(p.data, CAP);
    bb_sum_provider_t prov = { provider_prepare, NULL, &p };
    bb_sum_contract_t k = { .phase_id = 5, .epoch = 2, .count = COUNT, .max_elements = CAP };
    const bb_sum_contract_t *kp = &k;
    if (c == C_NOT_FIXED)
        k.count = COUNT - 1;
    if (c == C_NOT_FIXED_CAP)
        k.max_elements = CAP - 1;
    if (odd) {
        switch (c) {
        case C_PHASE_ID: k.phase_id = 6; break;
        case C_EPOCH: k.epoch = 3; break;
        case C_COUNT: k.count = COUNT + 1; break;
        case C_CAP: k.max_elements = CAP + 1; break;
        case C_SEQUENCE: bb_sum_phase_set_sequence(phase, bb_sum_phase_sequence(phase) + 1);
            break;
        case C_PROVIDER: p.fail = 1; break;
        case C_LENGTH: p.len = -1; break;
        case C_NEGATIVE: k.epoch = -1; break;
        case C_INT64_MIN_ID: k.phase_id = INT64_MIN; break;
        case C_INT64_MIN_SEQUENCE: bb_sum_phase_set_sequence(phase, INT64_MIN); break;
        case C_INT64_MAX_ID: k.phase_id = INT64_MAX; break;
        case C_INT64_MAX_SEQUENCE: bb_sum_phase_set_sequence(phase, INT64_MAX); break;
        case C_OVER_CAP: k.count = CAP + 1; break;
        case C_NULL_CONTRACT: kp = NULL; break;
        }
    }
    p.len = p.len < 0 ? k.count + 1 : k.count;
    double *r = (double *)&o->result;  /* any non-NULL value: it must be reset */
    bbfault_collectives_t before = bbfault_collectives();
    long ia = bbfault_calls("MPI_Iallreduce");
    o->st = bb_sum_phase_run(phase, &prov, kp, &r, &o->m);
    o->made = bbfault_collectives_since(before);
    o->iallreduce = bbfault_calls("MPI_Iallreduce") - ia;
    o->result_null = r == NULL;
    o->result = NULL;
    if (o->st == BB_OK) {
        o->result = calloc(COUNT, sizeof(double));
        memcpy(o->result, r, (size_t)(k.count < COUNT ? k.count : COUNT) * sizeof(double));
        if (buffers == BB_BUFFERS_FRESH)
            bb_free(r);  /* the caller's: a plain allocation */
    }
    free(p.data);
}

/* The fixed shape under fresh and retained buffers, per call and
 * persistent, timed and untimed, against the contract phase (spec, per
 * call, fresh): the same verdict everywhere; one reduction per call. */
enum { FIXED = 2 * 2 * 2 };

static void equivalence_cases(bb_world_t *world)
{
    bb_sum_phase_t *contract = make(world, BB_BUFFERS_FRESH, BB_REQUESTS_PER_CALL,
                                    BB_SHAPE_FREE);
    bb_sum_phase_t *fixed[FIXED];
    bb_phase_attr_t attr[FIXED];
    for (int i = 0; i < FIXED; i++) {
        attr[i] = (bb_phase_attr_t){ .buffers = (bb_buffers_t)(i % 2),
                                     .requests = (bb_requests_t)(i / 2 % 2),
                                     .metrics = (bb_metrics_t)(i / 4),
                                     .shape = BB_SHAPE_FIXED, .shape_count = COUNT,
                                     .shape_cap = CAP };
        CHECK(bb_sum_phase_create_attr(world, &attr[i], &fixed[i]) == BB_OK);
    }
    for (int c = 0; c < C_N; c++) {
        outcome_t ref, o[FIXED];
        const char *n = case_names[c];
        one_case(contract, c, BB_BUFFERS_FRESH, &ref);
        /* On one rank, the last rank's count or cap is every rank's. */
        int not_shape = c == C_NOT_FIXED || c == C_NOT_FIXED_CAP
                        || (ranks == 1 && (c == C_COUNT || c == C_CAP));
        for (int i = 0; i < FIXED; i++)
            one_case(fixed[i], c, attr[i].buffers, &o[i]);
        for (int i = 0; i < FIXED; i++) {
            char name[128];
            snprintf(name, sizeof name, "%s, fixed, buffers %s, requests %s, %s", n,
                     bb_buffers_name(attr[i].buffers), bb_requests_name(attr[i].requests),
                     bb_metrics_name(attr[i].metrics));
            bb_status_t want = ref.st;
            bb_stage_t stage = ref.m.refusal.stage;
            int64_t sequence = ref.m.refusal.sequence;
            /* The contract phase admits any count up to the cap; the fixed
             * one refuses a count or cap other than its own, a contract
             * refusal (the call's contract is not the phase's). */
            if (not_shape) {
                CHECK_MSG(ref.st == BB_OK, "%s: the contract phase admits it", name);
                want = BB_REFUSED;
                stage = BB_STAGE_CONTRACT;
                sequence = ref.m.sequence;  /* the one every rank presented */
            }
            CHECK_MSG(o[i].st == want, "%s: contract phase %s, fixed %s", name,
                      bb_status_string(want), bb_status_string(o[i].st));
            CHECK_MSG(o[i].m.refusal.stage == stage && o[i].m.refusal.rank == ref.m.refusal.rank
                          && o[i].m.refusal.sequence == sequence,
                      "%s: refusal %s/%d/%lld, contract phase %s/%d/%lld", name,
                      bb_stage_name(o[i].m.refusal.stage), o[i].m.refusal.rank,
                      (long long)o[i].m.refusal.sequence, bb_stage_name(stage),
                      ref.m.refusal.rank, (long long)sequence);
            CHECK_MSG(o[i].m.local_cause == ref.m.local_cause, "%s: local cause %d, %d", name,
                      (int)o[i].m.local_cause, (int)ref.m.local_cause);
            CHECK_MSG(bb_sum_phase_sequence(fixed[i]) == bb_sum_phase_sequence(contract),
                      "%s: sequences diverge", name);
            CHECK(bbfault_same_everywhere(o[i].st)
                  && bbfault_same_everywhere(o[i].m.refusal.stage)
                  && bbfault_same_everywhere(o[i].m.refusal.sequence));
            /* Nothing published on refusal; the contract's exact sum on success. */
            CHECK_MSG(o[i].result_null == (o[i].st != BB_OK), "%s: result pointer", name);
            if (o[i].st == BB_OK && ref.st == BB_OK)
                CHECK_MSG(memcmp(o[i].result, ref.result, COUNT * sizeof(double)) == 0
                              && sum_ok(o[i].result, COUNT),
                          "%s: the sum differs from the contract phase's", name);
            CHECK_MSG(o[i].st != BB_OK || o[i].m.payload_bytes == 8 * COUNT,
                      "%s: payload bytes", name);
            /* Exactly one reduction per call, refused or not. */
            const bbfault_collectives_t *k = &o[i].made;
            if (attr[i].requests == BB_REQUESTS_PER_CALL)
                CHECK_MSG(k->allreduce == 1 && k->init == 0 && k->start == 0
                              && o[i].iallreduce == 0,
                          "%s: %ld Allreduce, %ld init, %ld start, %ld Iallreduce", name,
                          k->allreduce, k->init, k->start, o[i].iallreduce);
            else
                CHECK_MSG(k->allreduce == 0 && k->start == 1 && k->init <= 1
                              && o[i].iallreduce == 0,
                          "%s: %ld Allreduce, %ld init, %ld start, %ld Iallreduce", name,
                          k->allreduce, k->init, k->start, o[i].iallreduce);
            int timed = attr[i].metrics == BB_METRICS_TIMED;
            CHECK_MSG(timed ? o[i].m.total_s >= o[i].m.admission_s && o[i].m.admission_s >= 0
                            : o[i].m.total_s == -1.0 && o[i].m.admission_s == -1.0,
                      "%s: times", name);
            free(o[i].result);
        }
        /* Identical verdicts are also the right ones. */
        int refused_expected = not_shape || c == C_PROVIDER || c == C_LENGTH || c == C_NEGATIVE
                             || c == C_INT64_MIN_ID || c == C_OVER_CAP || c == C_NULL_CONTRACT
                             || (ranks > 1 && c != C_NONE);
        CHECK_MSG((o[0].st == BB_REFUSED) == refused_expected, "%s: %s", n,
                  bb_status_string(o[0].st));
        free(ref.result);
        /* The census: send and recv kept, no spare between calls. */
        for (int i = 0; i < FIXED; i++)
            CHECK_MSG(bb_sum_phase_tracked_live(fixed[i]) == fixed_bytes, "%s: census %lld",
                      n, (long long)bb_sum_phase_tracked_live(fixed[i]));
    }
    bbfault_collectives_t before = bbfault_collectives();
    for (int i = 0; i < FIXED; i++)
        CHECK(bb_sum_phase_destroy(fixed[i]) == BB_OK);
    bbfault_collectives_t freed = bbfault_collectives_since(before);
    /* Persistent and retained: the one request; persistent and fresh: the
     * request made since the last success (cases after it were refused). */
    CHECK_MSG(freed.request_free == 4, "destroy frees %ld persistent requests",
              freed.request_free);
    CHECK(bb_sum_phase_destroy(contract) == BB_OK);
}

/* Random data: the fixed shape's user op and the built-in MPI_SUM may add
 * in other orders.  Both are sums of P terms, each within (P-1) u S of the
 * exact sum (u = DBL_EPSILON / 2, S the sum of magnitudes), so they differ
 * by at most 2 (P-1) u S = (P-1) DBL_EPSILON S per element. */
static void random_cases(bb_world_t *world)
{
    bb_sum_phase_t *contract = make(world, BB_BUFFERS_RETAINED, BB_REQUESTS_PER_CALL,
                                    BB_SHAPE_FREE);
    bb_sum_phase_t *fixed = make(world, BB_BUFFERS_RETAINED, BB_REQUESTS_PERSISTENT,
                                 BB_SHAPE_FIXED);
    provider_t p = { .data = malloc(COUNT * sizeof(double)), .len = COUNT };
    for (int64_t i = 0; i < COUNT; i++)
        p.data[i] = random_value(rank, i);
    bb_sum_provider_t prov = { provider_prepare, NULL, &p };
    bb_sum_contract_t k = { .phase_id = 1, .epoch = 1, .count = COUNT, .max_elements = CAP };
    double *a = NULL, *b = NULL;
    CHECK(bb_sum_phase_run(contract, &prov, &k, &a, NULL) == BB_OK);
    CHECK(bb_sum_phase_run(fixed, &prov, &k, &b, NULL) == BB_OK);
    int within = a != NULL && b != NULL;
    for (int64_t i = 0; within && i < COUNT; i++) {
        double s = 0.0, exact = 0.0;
        for (int r = 0; r < ranks; r++) {
            s += fabs(random_value(r, i));
            exact += random_value(r, i);
        }
        double tol = (ranks - 1) * DBL_EPSILON * s;
        if (fabs(a[i] - b[i]) > tol || fabs(b[i] - exact) > tol) {
            CHECK_MSG(0, "random element %lld: contract %.17g, fixed %.17g, tolerance %g",
                      (long long)i, a[i], b[i], tol);
            within = 0;
        }
    }
    CHECK(within);
    CHECK(bb_sum_phase_destroy(contract) == BB_OK && bb_sum_phase_destroy(fixed) == BB_OK);
    free(p.data);
}

/* Fresh fixed buffers: the caller owns the result, the phase holds a
 * spare during the call; the reference hook reduces the last contribution
 * again, with no verdict. */
static void fresh_cases(bb_world_t *world)
{
    bb_sum_phase_t *phase = make(world, BB_BUFFERS_FRESH, BB_REQUESTS_PER_CALL,
                                 BB_SHAPE_FIXED);
    provider_t p = { .data = malloc(COUNT * sizeof(double)), .len = COUNT };
    fill_integers(p.data, COUNT);
    bb_sum_provider_t prov = { provider_prepare, NULL, &p };
    bb_sum_contract_t k = { .phase_id = 1, .epoch = 1, .count = COUNT, .max_elements = CAP };
    double *r1 = NULL, *r2 = NULL;
    bb_sum_metrics_t m;
    CHECK(bb_sum_phase_run(phase, &prov, &k, &r1, &m) == BB_OK && sum_ok(r1, COUNT));
    CHECK(m.tracked_bytes == fixed_bytes + (8 * COUNT + BB_SUM_COMBINED_FIELD_BYTES));
    CHECK(bb_sum_phase_run(phase, &prov, &k, &r2, &m) == BB_OK && sum_ok(r2, COUNT));
    CHECK(r1 != r2 && sum_ok(r1, COUNT));  /* the first result stays the caller's */
    bb_free(r1);
    bb_free(r2);
    const double *raw = NULL;
    bbfault_collectives_t before = bbfault_collectives();
    CHECK(bb_sum_phase_combined_raw(phase, &raw) == MPI_SUCCESS && sum_ok(raw, COUNT));
    CHECK(bbfault_collectives_since(before).allreduce == 1);
    CHECK(bb_sum_phase_sequence(phase) == 2);  /* the reference consumes nothing */
    CHECK(bb_sum_phase_destroy(phase) == BB_OK);
    bb_sum_phase_t *free_shape = make(world, BB_BUFFERS_FRESH, BB_REQUESTS_PER_CALL,
                                      BB_SHAPE_FREE);
    CHECK(bb_sum_phase_combined_raw(free_shape, &raw) == MPI_ERR_ARG);
    CHECK(bb_sum_phase_destroy(free_shape) == BB_OK);
    free(p.data);
}

/* ---- borrowed contributions ------------------------------------------- */

/* A provider that hands back (part of) the result the phase lent it, as an
 * iterative reduction would: refused on its rank before admission, so every
 * rank refuses at preflight, its own cause ALIAS (MPI_Iallreduce would have rejected
 * the aliasing on that rank alone, the others waiting); released once; the
 * next call exact. */
static void alias_case(bb_sum_phase_t *phase, provider_t *p, const char *how)
{
    bb_sum_provider_t prov = { provider_prepare, provider_release, p };
    bb_sum_contract_t k = { .phase_id = 5, .epoch = 2, .count = COUNT, .max_elements = CAP };
    bb_sum_metrics_t m;
    double *r = NULL, *own = p->data;
    p->fail = 0;
    p->len = COUNT;
    p->scribble = 0;
    fill_integers(own, CAP);
    CHECK(bb_sum_phase_run(phase, &prov, &k, &r, &m) == BB_OK && sum_ok(r, COUNT));
    int odd = rank == ranks - 1;
    if (odd && r != NULL)
        p->data = r + COUNT / 2;  /* overlapping, not the same pointer */
    p->released = 0;
    bb_status_t st = bb_sum_phase_run(phase, &prov, &k, &r, &m);
    CHECK_MSG(bbfault_all_true(st == BB_REFUSED && m.refusal.stage == BB_STAGE_PREFLIGHT
                               && m.refusal.rank == -1 && r == NULL),
              "borrowed %s, a contribution inside the lent result: %s, stage %d, rank %d",
              how, bb_status_string(st), (int)m.refusal.stage, m.refusal.rank);
    CHECK_MSG(m.local_cause == (odd ? BB_SUM_LOCAL_ALIAS : BB_SUM_LOCAL_NONE),
              "borrowed %s, aliasing: local cause %d", how, (int)m.local_cause);
    CHECK_MSG(p->released == 1, "borrowed %s, aliasing: released %d times", how, p->released);
    p->data = own;
    fill_integers(own, CAP);
    CHECK_MSG(bb_sum_phase_run(phase, &prov, &k, &r, &m) == BB_OK && sum_ok(r, COUNT),
              "borrowed %s: the call after the aliasing refusal is exact", how);
    p->scribble = 1;
}

/* One rank's provider hands out another array (of the same values) while
 * the others keep theirs: protocol.md 2.2 allows it at any call.  Under
 * persistent requests the payload request names the array, and making it
 * anew is collective: the admission agrees it, so every rank makes it again
 * at that call (one MPI_Allreduce_init and one MPI_Request_free each; was:
 * that rank alone, and every rank waited).  A call that is refused makes
 * nothing; the next one does. */
static void switch_case(bb_sum_phase_t *phase, provider_t *p, int persistent, const char *how)
{
    bb_sum_provider_t prov = { provider_prepare, provider_release, p };
    bb_sum_contract_t k = { .phase_id = 5, .epoch = 2, .count = COUNT, .max_elements = CAP };
    double *own = p->data, *other = malloc(CAP * sizeof(double));
    int switcher = rank == ranks - 1;
    CHECK(other != NULL);
    p->len = COUNT;
    /* own, other, own, other (refused on rank 0), other, other */
    for (int call = 0; call < 6; call++) {
        int on_other = call == 1 || call >= 3;
        int changed = call == 1 || call == 2 || call == 4;  /* from the last admitted call */
        int refused = call == 3;
        p->data = switcher && on_other ? other : own;
        p->fail = refused && rank == 0;
        fill_integers(p->data, CAP);
        double *r = NULL;
        bb_sum_metrics_t m;
        bbfault_collectives_t before = bbfault_collectives();
        bb_status_t st = bb_sum_phase_run(phase, &prov, &k, &r, &m);
        bbfault_collectives_t made = bbfault_collectives_since(before);
        CHECK_MSG(bbfault_all_true(refused ? st == BB_REFUSED && r == NULL
                                           : st == BB_OK && sum_ok(r, COUNT)),
                  "borrowed %s, call %d with the last rank's array %s: %s", how, call,
                  on_other ? "changed" : "kept", bb_status_string(st));
        if (persistent) {
            long remade = changed && !refused;
            CHECK_MSG(bbfault_all_true(made.init == remade && made.request_free == remade),
                      "borrowed persistent, call %d: %ld init, %ld free (want %ld)", call,
                      made.init, made.request_free, remade);
        }
    }
    p->data = own;
    p->fail = 0;
    free(other);
}

/* The provider's array is posted as it is: released once per call, at its
 * end, after the payload completed (an admitted call's MPI_Test came
 * first) or after the refusal; the verdicts are the contract phase's. */
static void borrowed_cases(bb_world_t *world)
{
    for (int persistent = 0; persistent < 2; persistent++) {
        bb_requests_t req = persistent ? BB_REQUESTS_PERSISTENT : BB_REQUESTS_PER_CALL;
        bb_sum_phase_t *phase = make(world, BB_BUFFERS_BORROWED, req, BB_SHAPE_FREE);
        bb_sum_phase_t *ref = make(world, BB_BUFFERS_RETAINED, req, BB_SHAPE_FREE);
        const char *how = bb_requests_name(req);
        provider_t p = { .data = malloc(CAP * sizeof(double)), .scribble = 1 };
        bb_sum_provider_t prov = { provider_prepare, provider_release, &p };
        for (int c = 0; c < C_N; c++) {
            bb_sum_contract_t k = { .phase_id = 5, .epoch = 2, .count = COUNT,
                                    .max_elements = CAP };
            int odd = rank == ranks - 1;
            p.fail = odd && c == C_PROVIDER;
            if (odd && c == C_PHASE_ID)
                k.phase_id = 6;
            if (odd && c == C_OVER_CAP)
                k.count = CAP + 1;
            if (odd && c == C_SEQUENCE) {
                bb_sum_phase_set_sequence(phase, bb_sum_phase_sequence(phase) + 1);
                bb_sum_phase_set_sequence(ref, bb_sum_phase_sequence(ref) + 1);
            }
            p.len = odd && c == C_LENGTH ? k.count + 1 : k.count;
            bb_sum_metrics_t m, mr;
            double *r = NULL, *rr = NULL;
            fill_integers(p.data, CAP);
            bb_status_t sr = bb_sum_phase_run(ref, &prov, &k, &rr, &mr);
            fill_integers(p.data, CAP);  /* the release scribbled it */
            p.released = 0;
            long tests = bbfault_calls("MPI_Test");
            bbfault_collectives_t before = bbfault_collectives();
            bb_status_t st = bb_sum_phase_run(phase, &prov, &k, &r, &m);
            bbfault_collectives_t made = bbfault_collectives_since(before);
            /* A provider that failed, or a call refused before prepare (over
             * the cap), lent nothing. */
            int lent = !(p.fail || (odd && c == C_OVER_CAP));
            CHECK_MSG(p.released == lent, "borrowed %s, %s: released %d times", how,
                      case_names[c], p.released);
            CHECK_MSG(st == sr && m.refusal.stage == mr.refusal.stage
                          && m.refusal.sequence == mr.refusal.sequence,
                      "borrowed %s, %s: %s, retained %s", how, case_names[c],
                      bb_status_string(st), bb_status_string(sr));
            if (st == BB_OK) {
                /* Released after the payload's MPI_Test; the release
                 * scribbled the array, the result is the exact sum. */
                CHECK_MSG(p.tests_at_release == tests + 1, "borrowed %s: released before "
                          "completion", how);
                CHECK(sum_ok(r, COUNT) && memcmp(r, rr, COUNT * sizeof(double)) == 0);
                CHECK(m.tracked_bytes == CTL + 8 * CAP);
            } else {
                CHECK(r == NULL && bbfault_calls("MPI_Test") == tests);
            }
            /* Persistent: the same array, the same payload request (made at
             * the first admitted call only). */
            if (persistent && c > C_NONE && st == BB_OK)
                CHECK_MSG(made.init == 0 && made.request_free == 0,
                          "borrowed persistent, %s: %ld init, %ld free", case_names[c],
                          made.init, made.request_free);
        }
        CHECK(bb_sum_phase_tracked_live(phase) == CTL + 8 * CAP);
        alias_case(phase, &p, how);
        switch_case(phase, &p, persistent, how);
        CHECK(bb_sum_phase_destroy(phase) == BB_OK && bb_sum_phase_destroy(ref) == BB_OK);
        free(p.data);
    }
}

/* ---- poison ------------------------------------------------------------- */

static int poison_case(bb_world_t *world, const char *verdict_path, const char *how)
{
    int borrowed = strcmp(how, "borrowed") == 0;
    bb_requests_t req = strcmp(how, "persistent") == 0 ? BB_REQUESTS_PERSISTENT
                                                       : BB_REQUESTS_PER_CALL;
    bb_sum_phase_t *phase = make(world, borrowed ? BB_BUFFERS_BORROWED : BB_BUFFERS_RETAINED,
                                 req, borrowed ? BB_SHAPE_FREE : BB_SHAPE_FIXED);
    provider_t p = { .data = malloc(COUNT * sizeof(double)), .len = COUNT };
    fill_integers(p.data, COUNT);
    bb_sum_provider_t prov = { provider_prepare, provider_release, &p };
    bb_sum_contract_t k = { .phase_id = 1, .epoch = 1, .count = COUNT, .max_elements = CAP };
    int64_t held = bb_sum_phase_tracked_live(phase);
    for (int call = 0; call < 3; call++) {
        double *r = (double *)&p;
        bb_sum_metrics_t m;
        int released = p.released;
        bb_status_t st = bb_sum_phase_run(phase, &prov, &k, &r, &m);
        if (st != BB_ERR_MPI)
            continue;
        CHECK(bb_sum_phase_poisoned(phase) && r == NULL && m.mpi_call != NULL);
        CHECK(m.refusal.stage == BB_STAGE_TRANSPORT);
        if (borrowed)  /* the array may still be MPI's: never released */
            CHECK_MSG(p.released == released, "poisoned borrowed call released its array");
        else
            CHECK_MSG(bb_sum_phase_tracked_live(phase) == held,
                      "poisoned fixed phase holds %lld bytes, %lld before",
                      (long long)bb_sum_phase_tracked_live(phase), (long long)held);
        CHECK(bb_sum_phase_destroy(phase) == BB_ERR_POISONED);
        CHECK(bb_sum_phase_run(phase, &prov, &k, &r, &m) == BB_ERR_POISONED);
        FILE *f = fopen(verdict_path, "w");
        if (f != NULL) {
            fprintf(f, "rank %d: poison %s: %d passed, %d failed\n", rank, how, passed, failed);
            fclose(f);
        }
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return 1;
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "poison") == 0) {
        poison_case(world, argv[2], argc == 4 ? argv[3] : "per-call");
        printf("rank %d: no fault was injected\n", rank);
        bb_world_release(world);
        MPI_Finalize();
        return 1;
    }
    creation_cases(world);
    equivalence_cases(world);
    random_cases(world);
    fresh_cases(world);
    borrowed_cases(world);
    int ok = bbfault_all_true(failed == 0) && !bbfault_all_true(passed == 0);
    if (rank == 0)
        printf("test-sum-fixed on %d ranks: %d passed, %d failed\n", ranks, passed, failed);
    bb_world_release(world);
    MPI_Finalize();
    return ok ? 0 : 1;
}
