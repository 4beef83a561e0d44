/* test-policy-agree: policies agreed at creation, and no collective left out
 * of step after any refused call, at any rank count.
 *
 *   test-policy-agree create sum|transfer|agreement
 *                              pairs of differing policies (pair_tried) of
 *                              the sum phase, the transfer phase or the
 *                              agreement objects, given to rank 0 alone and
 *                              to the last rank alone: BB_REFUSED on every
 *                              rank with the same cause naming the
 *                              attributes that change the wire (BB_OK and a
 *                              working object when none does), one
 *                              MPI_Allreduce made by the creation whatever
 *                              the policy; then the application's own
 *                              MPI_Allreduce(rank + 1, MPI_SUM) is exact
 *   test-policy-agree calls sum|transfer
 *                              every policy of the phase (all ranks
 *                              agreeing), every refusal case on rank 0 and
 *                              on the last rank: after each call the
 *                              application's MPI_Allreduce is exact
 *
 * Linked with tests/fault.c: the creation's collectives are counted. */
#include "config.h"
#include "bbench.h"
#include "private/hooks.h"
#include "fault.h"
#include "../check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

/* The application's own collective after a library call: a reduction the
 * library left behind (or one it still waits in) gives another sum, or a
 * hang the driver's timeout catches. */
static void app_allreduce(const char *after)
{
    int one = rank + 1, sum = -1;
    int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_MSG(rc == MPI_SUCCESS && sum == ranks * (ranks + 1) / 2,
              "%s: the application's MPI_Allreduce gave %d (rc %d), expected %d", after, sum,
              rc, ranks * (ranks + 1) / 2);
}

/* FNV-1a over the outcome, compared across ranks uncounted (PMPI). */
static int64_t outcome_hash(bb_status_t st, const bb_attr_refusal_t *r)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *c = (const unsigned char *)r->cause;
    int64_t head[4] = { st, r->differ, r->first, r->refusal.stage };
    const unsigned char *b = (const unsigned char *)head;
    for (size_t i = 0; i < sizeof head; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    for (; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    return (int64_t)(h >> 1);
}

/* The lowest set bit's index, BB_ATTR_COUNT for none. */
static int lowest(unsigned mask)
{
    for (int i = 0; i < BB_ATTR_COUNT; i++)
        if (mask & (1u << i))
            return i;
    return BB_ATTR_COUNT;
}

/* One creation's outcome against the expected attributes: the same status,
 * the same cause on every rank, naming each attribute, and one Allreduce. */
static void check_outcome(const char *what, bb_status_t st, const bb_attr_refusal_t *r,
                          unsigned expect, bbfault_collectives_t made)
{
    CHECK_MSG(bbfault_same_everywhere(outcome_hash(st, r)),
              "%s: the outcome differs between ranks (here %s, \"%s\")", what,
              bb_status_string(st), r->cause);
    CHECK_MSG(made.allreduce == 1 && made.init == 0 && made.start == 0,
              "%s: the creation made %ld Allreduce, %ld init, %ld start", what,
              made.allreduce, made.init, made.start);
    if (expect == 0) {
        CHECK_MSG(st == BB_OK && r->differ == 0 && r->first == BB_ATTR_COUNT
                      && r->cause[0] == '\0' && r->refusal.stage == BB_STAGE_NONE,
                  "%s: %s, \"%s\" (expected agreed)", what, bb_status_string(st), r->cause);
        return;
    }
    CHECK_MSG(st == BB_REFUSED && r->differ == expect && (int)r->first == lowest(expect)
                  && r->refusal.stage == BB_STAGE_CONTRACT && r->refusal.rank == -1,
              "%s: %s, differ %#x first %s (expected refused, %#x)", what,
              bb_status_string(st), r->differ, bb_attr_name(r->first), expect);
    char want[64];
    snprintf(want, sizeof want, "policies differ between ranks: %s (",
             bb_attr_name((bb_attr_id_t)lowest(expect)));
    CHECK_MSG(strncmp(r->cause, want, strlen(want)) == 0, "%s: cause \"%s\"", what, r->cause);
    for (int i = 0; i < BB_ATTR_COUNT; i++)
        if (expect & (1u << i))
            CHECK_MSG(strstr(r->cause, bb_attr_name((bb_attr_id_t)i)) != NULL,
                      "%s: cause \"%s\" does not name %s", what, r->cause,
                      bb_attr_name((bb_attr_id_t)i));
}

/* The pairs of policies tried (policies numbered in mixed radix, digit 0 the
 * admission): every pair that differs in one attribute, so that each pair of
 * values of each attribute meets every setting of the others, and the
 * default against every other policy, so that any set of attributes
 * differs at once.  (All ordered pairs take minutes at -n 4 on two cores.) */
static int pair_tried(int p, int q, int digits)
{
    static const int radix[4] = { 3, 2, 2, 2 };
    if (p == q)
        return 0;
    if (p == 0)
        return 1;
    int differ = 0;
    for (int d = 0; d < digits; d++) {
        differ += p % radix[d] != q % radix[d];
        p /= radix[d];
        q /= radix[d];
    }
    return differ == 1;
}

/* Every pair tried (p on every rank but odd_rank, q there), with rank 0 and
 * with the last rank differing. */
typedef void pair_trial_fn(bb_world_t *world, int p, int q, int odd_rank);

static void each_pair(bb_world_t *world, int policies, int digits, pair_trial_fn *trial)
{
    for (int p = 0; p < policies && ranks > 1; p++)
        for (int q = 0; q < policies; q++)
            if (pair_tried(p, q, digits)) {
                trial(world, p, q, 0);
                trial(world, p, q, ranks - 1);
            }
}

/* The attributes that change the wire and differ between a and b: the
 * admission, the requests, and the buffers when buffers_wire. */
static unsigned wire_differ(const bb_phase_attr_t *a, const bb_phase_attr_t *b,
                            int buffers_wire)
{
    return (a->admission != b->admission ? 1u << BB_ATTR_ADMISSION : 0)
           | (a->requests != b->requests ? 1u << BB_ATTR_REQUESTS : 0)
           | (buffers_wire && a->buffers != b->buffers ? 1u << BB_ATTR_BUFFERS : 0);
}

/* ---- sum phase ------------------------------------------------------------ */

enum { SUM_POLICIES = 3 * 2 * 2 * 2 };

static bb_phase_attr_t sum_policy(int i)
{
    return (bb_phase_attr_t){ .admission = (bb_admission_t)(i % 3),
                              .requests = (bb_requests_t)(i / 3 % 2),
                              .buffers = (bb_buffers_t)(i / 6 % 2),
                              .metrics = (bb_metrics_t)(i / 12 % 2) };
}

static void policy_text(const bb_phase_attr_t *a, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s/%s/%s", bb_admission_name(a->admission),
             bb_requests_name(a->requests), bb_buffers_name(a->buffers),
             bb_metrics_name(a->metrics));
}

typedef struct sum_source {
    double v[8];
    int64_t len;
    int fail;
} sum_source_t;

static int prepare_sum(void *arg, const double **data_out, int64_t *len_out)
{
    const sum_source_t *src = arg;
    if (src->fail)
        return 1;
    *data_out = src->v;
    *len_out = src->len;
    return 0;
}

/* One sum of rank + i, i < c->count (at most 8): exact, or a refusal.  The
 * provider fails when fail is 1 and hands back one element short when 2. */
static bb_status_t sum_call(bb_sum_phase_t *phase, const bb_sum_contract_t *c, int fail,
                            int retained, bb_sum_metrics_t *m)
{
    sum_source_t src = { .len = c->count - (fail == 2), .fail = fail == 1 };
    for (int i = 0; i < 8; i++)
        src.v[i] = rank + i;
    bb_sum_provider_t prov = { prepare_sum, NULL, &src };
    double *r = NULL;
    bb_status_t st = bb_sum_phase_run(phase, &prov, c, &r, m);
    if (st == BB_OK) {
        double base = (double)ranks * (ranks - 1) / 2.0;
        int exact = c->count == 0 || r != NULL;
        for (int i = 0; exact && i < c->count; i++)
            exact = r[i] == base + (double)ranks * i;
        CHECK_MSG(exact, "sum phase: wrong result");
        if (!retained)
            bb_free(r);  /* a retained phase lends its result */
    }
    return st;
}

static void sum_pair(bb_world_t *world, int p, int q, int odd_rank)
{
    bb_phase_attr_t a = sum_policy(p), b = sum_policy(q);
    bb_phase_attr_t mine = rank == odd_rank ? b : a;
    /* Buffers change the wire only under persistent requests. */
    unsigned expect = wire_differ(&a, &b, a.requests == BB_REQUESTS_PERSISTENT
                                              && b.requests == BB_REQUESTS_PERSISTENT);
    char pa[64], pb[64], what[192];
    policy_text(&a, pa, sizeof pa);
    policy_text(&b, pb, sizeof pb);
    snprintf(what, sizeof what, "sum create, %s against %s on rank %d", pa, pb,
             odd_rank);
    bb_sum_phase_t *phase = NULL;
    bb_attr_refusal_t r;
    memset(&r, 0x5a, sizeof r);
    bbfault_collectives_t before = bbfault_collectives();
    bb_status_t st = bb_sum_phase_create_checked(world, &mine, &phase, &r);
    check_outcome(what, st, &r, expect, bbfault_collectives_since(before));
    if (st == BB_OK) {
        bb_sum_contract_t c = { .phase_id = 1, .count = 4, .max_elements = 4 };
        bb_sum_metrics_t m;
        int retained = mine.buffers == BB_BUFFERS_RETAINED;
        CHECK_MSG(sum_call(phase, &c, 0, retained, &m) == BB_OK, "%s: the call",
                  what);
        CHECK(bb_sum_phase_destroy(phase) == BB_OK);
    } else {
        CHECK_MSG(phase == NULL, "%s: a phase was written", what);
    }
    app_allreduce(what);
}

static void sum_create_pairs(bb_world_t *world)
{
    each_pair(world, SUM_POLICIES, 4, sum_pair);
    /* An invalid policy on one rank is a disagreement; everywhere, an
     * argument error everywhere; a NULL phase_out on one rank too. */
    if (ranks > 1) {
        bb_phase_attr_t bad = { .metrics = (bb_metrics_t)5 };
        bb_phase_attr_t mine = rank == ranks - 1 ? bad : (bb_phase_attr_t){ 0 };
        bb_sum_phase_t *phase = NULL;
        bb_attr_refusal_t r;
        bbfault_collectives_t before = bbfault_collectives();
        bb_status_t st = bb_sum_phase_create_checked(world, &mine, &phase, &r);
        check_outcome("sum create, invalid metrics on the last rank", st, &r,
                      1u << BB_ATTR_METRICS, bbfault_collectives_since(before));
        CHECK_MSG(strstr(r.cause, "metrics (invalid .. timed)") != NULL, "cause \"%s\"",
                  r.cause);
        app_allreduce("sum create, invalid metrics on one rank");
        /* NULL attr (the defaults) on rank 0, the defaults spelled out
         * elsewhere: agreed, but only rank 0 can hand a phase out. */
        bb_phase_attr_t defaults = { 0 };
        st = bb_sum_phase_create_checked(world, rank == 0 ? NULL : &defaults,
                                         rank == 0 ? &phase : NULL, &r);
        CHECK_MSG(st == BB_ERR_ARG && bbfault_same_everywhere(st) && phase == NULL,
                  "sum create, NULL phase_out on ranks > 0: %s", bb_status_string(st));
        app_allreduce("sum create, NULL phase_out on some ranks");
    }
    bb_phase_attr_t bad = { .admission = (bb_admission_t)3 };
    bb_sum_phase_t *phase = NULL;
    bb_attr_refusal_t r;
    bb_status_t st = bb_sum_phase_create_checked(world, &bad, &phase, &r);
    CHECK_MSG(st == BB_ERR_ARG && phase == NULL && r.differ == 0,
              "sum create, invalid admission everywhere: %s", bb_status_string(st));
    app_allreduce("sum create, invalid admission everywhere");
}

/* ---- transfer phase ------------------------------------------------------- */

enum { TRANSFER_POLICIES = 3 * 2 * 2 };

static bb_phase_attr_t transfer_policy(int i)
{
    return (bb_phase_attr_t){ .admission = (bb_admission_t)(i % 3),
                              .requests = (bb_requests_t)(i / 3 % 2),
                              .buffers = (bb_buffers_t)(i / 6 % 2) };
}

typedef struct fixture {
    unsigned char data[64];
    int64_t len;              /* what prepare hands back */
    int fail, fail_consumer;
    int64_t bad;
} fixture_t;

static int prepare_bytes(void *arg, const void **data_out, int64_t *len_out)
{
    fixture_t *f = arg;
    if (f->fail)
        return 1;
    for (int i = 0; i < 64; i++)
        f->data[i] = (unsigned char)(i * 7 + 3);
    *data_out = f->data;
    *len_out = f->len;
    return 0;
}

static int consume_bytes(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    fixture_t *f = arg;
    const unsigned char *d = data;
    *value_out = NULL;
    for (int64_t i = 0; i < nbytes; i++)
        f->bad += d[i] != (unsigned char)(i * 7 + 3);
    return f->fail_consumer;
}

/* One 16-byte ticket from rank 0 to the last rank. */
static bb_status_t transfer_call(bb_transfer_phase_t *phase, fixture_t *f,
                                 const bb_transfer_contract_t *c, int local_error)
{
    bb_transfer_provider_t prov = { prepare_bytes, NULL, f };
    bb_transfer_consumer_t cons = { consume_bytes, NULL, f };
    bb_transfer_ticket_t t;
    bb_transfer_metrics_t m;
    if (f->len < 0)
        f->len = c != NULL ? c->nbytes : 0;
    bb_status_t st = bb_transfer_phase_begin(phase, &prov, c, &t, &m);
    if (st != BB_OK)
        return st;
    void *value = NULL;
    return bb_transfer_ticket_finish(&t, &cons, local_error, &value, &m);
}

static bb_transfer_contract_t transfer_contract(void)
{
    return (bb_transfer_contract_t){ .phase_id = 2, .epoch = 1, .source = 0,
                                     .destination = ranks - 1, .nbytes = 16,
                                     .max_bytes = 32 };
}

static void transfer_pair(bb_world_t *world, int p, int q, int odd_rank)
{
    bb_phase_attr_t a = transfer_policy(p), b = transfer_policy(q);
    bb_phase_attr_t mine = rank == odd_rank ? b : a;
    /* The payload is point-to-point per ticket: buffers may differ. */
    unsigned expect = wire_differ(&a, &b, 0);
    char pa[64], pb[64], what[192];
    policy_text(&a, pa, sizeof pa);
    policy_text(&b, pb, sizeof pb);
    snprintf(what, sizeof what, "transfer create, %s against %s on rank %d", pa,
             pb, odd_rank);
    bb_transfer_phase_t *phase = NULL;
    bb_attr_refusal_t r;
    memset(&r, 0x5a, sizeof r);
    bbfault_collectives_t before = bbfault_collectives();
    bb_status_t st = bb_transfer_phase_create_checked(world, &mine, &phase, &r);
    check_outcome(what, st, &r, expect, bbfault_collectives_since(before));
    if (st == BB_OK) {
        fixture_t f = { .len = -1 };
        bb_transfer_contract_t c = transfer_contract();
        CHECK_MSG(transfer_call(phase, &f, &c, 0) == BB_OK && f.bad == 0,
                  "%s: the ticket", what);
        CHECK(bb_transfer_phase_close(phase) == BB_OK);
    } else {
        CHECK_MSG(phase == NULL, "%s: a phase was written", what);
    }
    app_allreduce(what);
}

static void transfer_create_pairs(bb_world_t *world)
{
    each_pair(world, TRANSFER_POLICIES, 3, transfer_pair);
    if (ranks > 1) {
        /* Untimed metrics are invalid for the transfer phase. */
        bb_phase_attr_t mine = { .metrics = rank == 0 ? BB_METRICS_UNTIMED
                                                      : BB_METRICS_TIMED };
        bb_transfer_phase_t *phase = NULL;
        bb_attr_refusal_t r;
        bbfault_collectives_t before = bbfault_collectives();
        bb_status_t st = bb_transfer_phase_create_checked(world, &mine, &phase, &r);
        check_outcome("transfer create, untimed on rank 0", st, &r, 1u << BB_ATTR_METRICS,
                      bbfault_collectives_since(before));
        app_allreduce("transfer create, untimed on rank 0");
    }
    bb_phase_attr_t untimed = { .metrics = BB_METRICS_UNTIMED };
    bb_transfer_phase_t *phase = NULL;
    bb_attr_refusal_t r;
    bb_status_t st = bb_transfer_phase_create_checked(world, &untimed, &phase, &r);
    CHECK_MSG(st == BB_ERR_ARG && phase == NULL && r.differ == 0,
              "transfer create, untimed everywhere: %s", bb_status_string(st));
    app_allreduce("transfer create, untimed everywhere");
}

/* ---- agreement objects ------------------------------------------------- */

enum { AGREEMENT_POLICIES = 3 * 2 * 2 };

static void agreement_pair(bb_world_t *world, int p, int q, int odd_rank)
{
    (void)world;
    /* Buffers and metrics are ignored: made to differ anyway. */
    bb_phase_attr_t a = { .admission = (bb_admission_t)(p % 3),
                          .requests = (bb_requests_t)(p / 3 % 2) };
    bb_phase_attr_t b = { .admission = (bb_admission_t)(q % 3),
                          .requests = (bb_requests_t)(q / 3 % 2),
                          .buffers = BB_BUFFERS_RETAINED, .metrics = BB_METRICS_UNTIMED };
    int na = p / 6 ? 9 : 6, nb = q / 6 ? 9 : 6;
    int odd = rank == odd_rank;
    unsigned expect = wire_differ(&a, &b, 0) | (na != nb ? 1u << BB_ATTR_FIELDS : 0);
    char what[192];
    snprintf(what, sizeof what,
             "agreement create, %s/%s/%d against %s/%s/%d on rank %d",
             bb_admission_name(a.admission), bb_requests_name(a.requests), na,
             bb_admission_name(b.admission), bb_requests_name(b.requests), nb,
             odd_rank);
    bb_agreement_t *agreement = NULL;
    bb_attr_refusal_t r;
    memset(&r, 0x5a, sizeof r);
    bbfault_collectives_t before = bbfault_collectives();
    bb_status_t st = bb_agreement_create_checked(MPI_COMM_WORLD, odd ? nb : na,
                                                 odd ? &b : &a, &agreement, &r);
    check_outcome(what, st, &r, expect, bbfault_collectives_since(before));
    if (st == BB_OK) {
        int64_t local[9], mn[9], mx[9];
        int n = odd ? nb : na;
        for (int i = 0; i < n; i++)
            local[i] = (int64_t)rank * (i + 1) - 3;
        int ok = bb_agreement_minmax(agreement, local, mn, mx) == MPI_SUCCESS
                 && bb_agreement_max(agreement, local, mx) == MPI_SUCCESS;
        for (int i = 0; ok && i < n; i++)
            ok = mn[i] == -3 && mx[i] == (int64_t)(ranks - 1) * (i + 1) - 3;
        CHECK_MSG(ok, "%s: the agreement", what);
        bb_agreement_destroy(agreement);
    } else {
        CHECK_MSG(agreement == NULL, "%s: an object was written", what);
    }
    app_allreduce(what);
}

static void agreement_create_pairs(bb_world_t *world)
{
    each_pair(world, AGREEMENT_POLICIES, 3, agreement_pair);
    if (ranks > 1) {
        bb_agreement_t *agreement = NULL;
        bb_attr_refusal_t r;
        bbfault_collectives_t before = bbfault_collectives();
        bb_status_t st = bb_agreement_create_checked(MPI_COMM_WORLD, rank == 0 ? 0 : 6, NULL,
                                                     &agreement, &r);
        check_outcome("agreement create, n 0 on rank 0", st, &r, 1u << BB_ATTR_FIELDS,
                      bbfault_collectives_since(before));
        CHECK_MSG(strstr(r.cause, "fields (invalid .. 6)") != NULL, "cause \"%s\"", r.cause);
        app_allreduce("agreement create, n 0 on rank 0");
    }
    bb_agreement_t *agreement = NULL;
    bb_status_t st = bb_agreement_create(MPI_COMM_WORLD, 65, NULL, &agreement);
    CHECK_MSG(st == BB_ERR_ARG && agreement == NULL, "agreement create, n 65 everywhere: %s",
              bb_status_string(st));
    app_allreduce("agreement create, n 65 everywhere");
}

/* ---- every refused or failed call, every agreed policy ------------------- */

enum { S_NONE, S_PHASE_ID, S_EPOCH, S_COUNT, S_CAP, S_SEQUENCE, S_PROVIDER, S_LENGTH,
       S_NEGATIVE, S_RANGE, S_OVER_CAP, S_INT64_MIN_ID, S_INT64_MIN_SEQUENCE,
       S_NULL_CONTRACT, S_N };
static const char *const sum_case_names[S_N] = {
    "none", "phase_id", "epoch", "count", "cap", "sequence", "provider failure",
    "provider length", "negative epoch", "count over INT32_MAX", "count over cap",
    "INT64_MIN phase_id", "INT64_MIN sequence", "NULL contract"
};

/* *statuses accumulates every call's status, compared across ranks once at
 * the end (a check per call would double the collectives). */
static void sum_calls(bb_world_t *world, uint64_t *statuses)
{
    for (int p = 0; p < SUM_POLICIES; p++) {
        bb_phase_attr_t a = sum_policy(p);
        char pa[64];
        policy_text(&a, pa, sizeof pa);
        bb_sum_phase_t *phase = NULL;
        CHECK_MSG(bb_sum_phase_create_attr(world, &a, &phase) == BB_OK, "sum %s: create", pa);
        if (phase == NULL)
            continue;
        for (int c = 0; c < S_N; c++) {
            /* Rank 0 or the last rank differs, in turn: every case meets
             * both over the policies. */
            int odd_rank = (c + p) % 2 == 0 ? 0 : ranks - 1;
            int odd = rank == odd_rank;
            bb_sum_contract_t k = { .phase_id = 7, .epoch = 1, .count = 4,
                                    .max_elements = 8 };
            int fail = 0;
            if (odd) {
                switch (c) {
                case S_PHASE_ID: k.phase_id = 8; break;
                case S_EPOCH: k.epoch = 2; break;
                case S_COUNT: k.count = 3; break;
                case S_CAP: k.max_elements = 9; break;
                case S_SEQUENCE:
                    bb_sum_phase_set_sequence(phase, bb_sum_phase_sequence(phase) + 1);
                    break;
                case S_PROVIDER: fail = 1; break;
                case S_LENGTH: fail = 2; break;
                case S_NEGATIVE: k.epoch = -1; break;
                case S_RANGE: k.count = k.max_elements = (int64_t)INT32_MAX + 1; break;
                case S_OVER_CAP: k.count = 9; break;
                case S_INT64_MIN_ID: k.phase_id = INT64_MIN; break;
                case S_INT64_MIN_SEQUENCE: bb_sum_phase_set_sequence(phase, INT64_MIN);
                    break;
                }
            }
            bb_sum_metrics_t m;
            bb_status_t st;
            if (c == S_NULL_CONTRACT && odd) {
                double *res = NULL;
                sum_source_t src = { .len = 4 };
                bb_sum_provider_t prov = { prepare_sum, NULL, &src };
                st = bb_sum_phase_run(phase, &prov, NULL, &res, &m);
            } else {
                st = sum_call(phase, &k, fail, a.buffers == BB_BUFFERS_RETAINED, &m);
            }
            char what[160];
            snprintf(what, sizeof what, "sum %s, %s on rank %d: %s", pa,
                     sum_case_names[c], odd_rank, bb_status_string(st));
            int refused = c != S_NONE && (ranks > 1 || c >= S_PROVIDER);
            if (ranks == 1 && (c == S_INT64_MIN_SEQUENCE))
                refused = 0;
            CHECK_MSG(st == (refused ? BB_REFUSED : BB_OK), "%s", what);
            *statuses = *statuses * 31 + (uint64_t)st;
            app_allreduce(what);
        }
        CHECK(bb_sum_phase_destroy(phase) == BB_OK);
    }
}

enum { T_NONE, T_PHASE_ID, T_EPOCH, T_SOURCE, T_NBYTES, T_CAP, T_BATCHES, T_SEQUENCE,
       T_PROVIDER, T_LENGTH, T_OVER_CAP, T_NEGATIVE, T_NULL_CONTRACT, T_COMPUTE,
       T_INVALID_ERROR, T_CONSUMER, T_RECEIPT_SEQUENCE, T_RECEIPT_CODE, T_N };
static const char *const transfer_case_names[T_N] = {
    "none", "phase_id", "epoch", "source", "nbytes", "cap", "batches", "sequence",
    "provider failure", "provider length", "nbytes over cap", "negative epoch",
    "NULL contract", "compute failure", "invalid local_error", "consumer failure",
    "receipt sequence", "receipt code"
};

static void transfer_calls(bb_world_t *world, uint64_t *statuses)
{
    for (int p = 0; p < TRANSFER_POLICIES; p++) {
        bb_phase_attr_t a = transfer_policy(p);
        char pa[64];
        policy_text(&a, pa, sizeof pa);
        bb_transfer_phase_t *phase = NULL;
        CHECK_MSG(bb_transfer_phase_create_attr(world, &a, &phase) == BB_OK,
                  "transfer %s: create", pa);
        if (phase == NULL)
            continue;
        for (int c = 0; c < T_N; c++) {
            int odd_rank = (c + p) % 2 == 0 ? 0 : ranks - 1;  /* in turn */
            int odd = rank == odd_rank;
            fixture_t f = { .bad = 0 };
            bb_transfer_contract_t k = transfer_contract();
            int local_error = 0;
            /* Cases that need the source or the destination act there:
             * rank 0 is the source, the last rank the destination. */
            int src = rank == 0, dst = rank == ranks - 1;
            if (odd) {
                switch (c) {
                case T_PHASE_ID: k.phase_id = 3; break;
                case T_EPOCH: k.epoch = 2; break;
                case T_SOURCE: k.source = ranks > 1 ? 1 : 0; break;
                case T_NBYTES: k.nbytes = 15; break;
                case T_CAP: k.max_bytes = 33; break;
                case T_BATCHES: k.batches = 1; break;
                case T_SEQUENCE:
                    bb_transfer_phase_set_sequence(phase,
                                                   bb_transfer_phase_sequence(phase) + 1);
                    break;
                case T_OVER_CAP: k.nbytes = 33; break;
                case T_NEGATIVE: k.epoch = -1; break;
                case T_COMPUTE: local_error = BB_TRANSFER_LOCAL_FAILED; break;
                case T_INVALID_ERROR: local_error = 9; break;
                }
            }
            f.fail = c == T_PROVIDER && src;
            f.len = c == T_LENGTH && src ? k.nbytes - 1 : -1;
            f.fail_consumer = c == T_CONSUMER && dst;
            if (c == T_RECEIPT_SEQUENCE || c == T_RECEIPT_CODE)
                bb_transfer_phase_set_receipt_fault(phase,
                                                    dst ? (c == T_RECEIPT_SEQUENCE ? 1 : 2)
                                                        : 0);
            bb_status_t st = transfer_call(phase, &f,
                                           c == T_NULL_CONTRACT && odd ? NULL : &k,
                                           local_error);
            bb_transfer_phase_set_receipt_fault(phase, 0);
            /* The sequence case moved this rank's for good: back in step. */
            if (c == T_SEQUENCE && odd)
                bb_transfer_phase_set_sequence(phase,
                                               bb_transfer_phase_sequence(phase) - 1);
            char what[160];
            snprintf(what, sizeof what, "transfer %s, %s on rank %d: %s", pa,
                     transfer_case_names[c], odd_rank, bb_status_string(st));
            int local_only = c == T_PHASE_ID || c == T_EPOCH || c == T_SOURCE
                             || c == T_NBYTES || c == T_CAP || c == T_BATCHES
                             || c == T_SEQUENCE;  /* mismatches: need two ranks */
            int refused = c != T_NONE && (ranks > 1 || !local_only);
            CHECK_MSG(st == (refused ? BB_REFUSED : BB_OK) && f.bad == 0, "%s", what);
            *statuses = *statuses * 31 + (uint64_t)st;
            app_allreduce(what);
        }
        CHECK(bb_transfer_phase_close(phase) == BB_OK);
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    check_rank = rank;
    bb_world_t *world = NULL;
    uint64_t statuses = 0;  /* unsigned: the hash wraps */
    const char *mode = argc == 3 ? argv[1] : "", *object = argc == 3 ? argv[2] : "";
    int create = strcmp(mode, "create") == 0, calls = strcmp(mode, "calls") == 0;
    if ((!create && !calls) || bb_world_bind(MPI_COMM_WORLD, &world) != BB_OK) {
        fprintf(stderr, "usage: test-policy-agree create|calls sum|transfer|agreement\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (create && strcmp(object, "sum") == 0)
        sum_create_pairs(world);
    else if (create && strcmp(object, "transfer") == 0)
        transfer_create_pairs(world);
    else if (create && strcmp(object, "agreement") == 0)
        agreement_create_pairs(world);
    else if (calls && strcmp(object, "sum") == 0)
        sum_calls(world, &statuses);
    else if (calls && strcmp(object, "transfer") == 0)
        transfer_calls(world, &statuses);
    else {
        fprintf(stderr, "usage: test-policy-agree create|calls sum|transfer|agreement\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CHECK_MSG(bbfault_same_everywhere((int64_t)(statuses >> 1)),
              "the calls' statuses differ between ranks");
    int ok = bbfault_all_true(failed == 0);
    if (rank == 0)
        printf("test-policy-agree %s %s on %d ranks: %d passed, %d failed\n", mode, object,
               ranks, passed, failed);
    bb_world_release(world);
    MPI_Finalize();
    return ok ? 0 : 1;
}
