/* test-sum: the bounded sum phase on real MPI, at any rank count.
 *
 * Linked with tests/fault.c, so every MPI_Allreduce / MPI_Iallreduce the
 * library makes is counted: "posts no payload" and "rejected before any MPI
 * call" are checked against those counters.  The test's own cross-rank
 * checks use PMPI_ directly so that they are not counted.
 *
 *   test-sum            every behaviour case; prints "N passed, N failed"
 *   test-sum poison FILE  run one phase while BB_FAULT makes a call fail, check
 *                       the poisoning on the failing rank, write the verdict to
 *                       FILE (output forwarding may not survive the abort),
 *                       then MPI_Abort(3)
 */
#include "config.h"
#include "runner/runner.h"
#include "runtime/bench.h"  /* bb_rss_current_bytes */
#include "private/hooks.h"
#include "fault.h"
#include "../check-mpi.h"

/* The default (spec) admission's counted control bytes: the document's
 * three 48-byte arrays, 144 (checked as a figure in case_success). */
#define CTL BB_SUM_TRACKED_CONTROL_BYTES(BB_ADMISSION_SPEC)

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

/* A provider whose behaviour each case sets. */
typedef struct provider {
    double *data;
    int64_t len;         /* length handed out */
    int fail;            /* return nonzero ... */
    int fail_with_data;  /* ... and still hand out an array */
    double delay_s;
    long prepared, released;
    int64_t bad_release; /* releases of an array we did not hand out */
    /* reentry case */
    bb_sum_phase_t *reenter;
    bb_status_t reenter_status;
    long reenter_mpi_calls;
} provider_t;

static int provider_prepare(void *arg, const double **data_out, int64_t *len_out)
{
    provider_t *p = arg;
    bb_time_sleep(p->delay_s);
    if (p->reenter != NULL) {
        long before = bbfault_calls("MPI_Allreduce") + bbfault_calls("MPI_Iallreduce");
        bb_sum_contract_t c = { 0, 0, 0, 0 };
        bb_sum_provider_t inner = { provider_prepare, NULL, NULL };
        double *r = NULL;
        p->reenter_status = bb_sum_phase_run(p->reenter, &inner, &c, &r, NULL);
        p->reenter_mpi_calls = bbfault_calls("MPI_Allreduce")
                               + bbfault_calls("MPI_Iallreduce") - before;
    }
    if (p->fail && !p->fail_with_data)
        return 1;
    *data_out = p->data;
    *len_out = p->len;
    p->prepared++;
    return p->fail ? 1 : 0;
}

static void provider_release(void *arg, const double *data)
{
    provider_t *p = arg;
    if (data != p->data)
        p->bad_release++;
    p->released++;
}

static void provider_fill(provider_t *p, int64_t count)
{
    free(p->data);
    p->data = malloc((size_t)(count + 1) * sizeof(double));
    for (int64_t i = 0; i <= count; i++)
        p->data[i] = (double)(i % 97 + rank);
    p->len = count;
}

static int sum_ok(const double *r, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        if (r[i] != (double)ranks * (double)(i % 97) + (double)ranks * (ranks - 1) / 2.0)
            return 0;
    return 1;
}

static bb_sum_contract_t contract_for(int64_t phase_id, int64_t count)
{
    bb_sum_contract_t c = { phase_id, 7, count, count };
    return c;
}

/* One successful phase with checked output; returns 1 if right everywhere. */
static int run_success(bb_sum_phase_t *phase, provider_t *p, int64_t count,
                       int64_t phase_id)
{
    bb_sum_provider_t prov = { provider_prepare, provider_release, p };
    bb_sum_contract_t c = contract_for(phase_id, count);
    double *r = NULL;
    bb_sum_metrics_t m;
    provider_fill(p, count);
    long posted = bbfault_calls("MPI_Iallreduce");
    bb_status_t st = bb_sum_phase_run(phase, &prov, &c, &r, &m);
    int ok = st == BB_OK && sum_ok(r, count) && (count > 0 || r == NULL)
             && bbfault_calls("MPI_Iallreduce") - posted == 1
             && m.requests_posted == 1 && m.max_inflight == 1
             && m.payload_bytes == 8 * count && m.tracked_bytes == CTL + 16 * count
             && m.ranks == ranks && m.rank == rank && m.phase_id == phase_id;
    bb_free(r);
    return bbfault_all_true(ok);
}

static void case_success(bb_world_t *world)
{
    bb_sum_phase_t *phase;
    provider_t p = { 0 };
    CHECK_MSG(bb_sum_phase_create(world, &phase) == BB_OK, "create");
    /* The document's census, as figures: 144 between calls, 144 + 16 *
     * count during one (run_success checks CTL + 16 * count). */
    CHECK_MSG(CTL == 144 && bb_sum_phase_tracked_live(phase) == 144,
              "144 control bytes: %lld", (long long)bb_sum_phase_tracked_live(phase));
    bb_sum_metrics_t last;
    CHECK_MSG(bb_sum_phase_metrics(phase, &last) == BB_ERR_STATE,
              "no metrics before a successful call");
    CHECK(bb_sum_phase_metrics(phase, NULL) == BB_ERR_ARG
          && bb_sum_phase_metrics(NULL, &last) == BB_ERR_ARG);
    const int64_t counts[] = { 0, 1, 5, 7, 1000, 65536 };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        int64_t seq = bb_sum_phase_sequence(phase);
        CHECK_MSG(run_success(phase, &p, counts[i], (int64_t)i),
                  "count %lld sums correctly on every rank", (long long)counts[i]);
        CHECK_MSG(bb_sum_phase_sequence(phase) == seq + 1, "sequence consumed on success");
        CHECK_MSG(bb_sum_phase_metrics(phase, &last) == BB_OK && last.status == BB_OK
                      && last.sequence == seq && last.phase_id == (int64_t)i
                      && last.tracked_bytes == 144 + 16 * counts[i],
                  "count %lld: the phase's metrics are this call's (tracked %lld)",
                  (long long)counts[i], (long long)last.tracked_bytes);
    }
    CHECK_MSG(p.prepared == p.released && p.bad_release == 0,
              "provider arrays released once: %ld prepared, %ld released",
              p.prepared, p.released);
    CHECK_MSG(bb_sum_phase_destroy(phase) == BB_OK, "destroy");
    free(p.data);
}

/* How a refusal case perturbs one rank (or all). */
typedef enum perturb {
    P_PROVIDER, P_PROVIDER_DATA, P_OVER_CAP, P_LENGTH, P_PHASE_ID, P_EPOCH,
    P_COUNT, P_CAP, P_NEGATIVE_ID, P_NEGATIVE_EPOCH, P_SEQUENCE, P_RANGE
} perturb_t;

static const char *const perturb_names[] = {
    "provider failure", "provider failure with an array", "count > cap",
    "wrong length", "phase_id mismatch", "epoch mismatch", "count mismatch",
    "cap mismatch", "negative phase_id", "negative epoch", "sequence divergence",
    "count > INT32_MAX"
};

/* Run one refused phase where `who` (a rank, or -1 for all) is perturbed,
 * then a correct phase on the same object. */
static void case_refusal(bb_world_t *world, perturb_t what, int who,
                         bb_stage_t want_stage)
{
    const char *name = perturb_names[what];
    bb_sum_phase_t *phase;
    provider_t p = { 0 };
    bb_sum_provider_t prov = { provider_prepare, provider_release, &p };
    int64_t count = 100;
    CHECK_MSG(bb_sum_phase_create(world, &phase) == BB_OK, "create");
    CHECK_MSG(run_success(phase, &p, count, 1), "%s: warm-up phase", name);
    bb_sum_metrics_t before, after;
    CHECK_MSG(bb_sum_phase_metrics(phase, &before) == BB_OK && before.phase_id == 1,
              "%s: the warm-up's metrics", name);
    provider_fill(&p, count + 1);
    p.len = count;
    bb_sum_contract_t c = contract_for(2, count);
    int me = who < 0 || who == rank;
    if (me) {
        switch (what) {
        case P_PROVIDER: p.fail = 1; break;
        case P_PROVIDER_DATA: p.fail = 1; p.fail_with_data = 1; break;
        case P_OVER_CAP: c.max_elements = count - 1; break;
        case P_LENGTH: p.len = count - 1; break;
        case P_PHASE_ID: c.phase_id = 3; break;
        case P_EPOCH: c.epoch = 8; break;
        case P_COUNT: c.count = count + 1; c.max_elements = count + 1; p.len = count + 1; break;
        case P_CAP: c.max_elements = count + 5; break;
        case P_NEGATIVE_ID: c.phase_id = -1; break;
        case P_NEGATIVE_EPOCH: c.epoch = -2; break;
        case P_SEQUENCE:
            bb_sum_phase_set_sequence(phase, bb_sum_phase_sequence(phase) + 10);
            break;
        case P_RANGE: c.count = (int64_t)INT32_MAX + 1; c.max_elements = c.count; break;
        }
    }
    int64_t seq = bb_sum_phase_sequence(phase);
    long posted = bbfault_calls("MPI_Iallreduce");
    long allreduces = bbfault_calls("MPI_Allreduce");
    long released = p.released;
    double *r = (double *)&p;  /* must be reset to NULL on refusal */
    bb_sum_metrics_t m;
    bb_status_t st = bb_sum_phase_run(phase, &prov, &c, &r, &m);
    CHECK_MSG(bbfault_all_true(st == BB_REFUSED), "%s: refused on every rank (got %s)", name,
              bb_status_string(st));
    CHECK_MSG(r == NULL, "%s: no output published", name);
    CHECK_MSG(bbfault_all_true(bbfault_calls("MPI_Iallreduce") == posted),
              "%s: no payload posted", name);
    CHECK_MSG(bbfault_all_true(bbfault_calls("MPI_Allreduce") - allreduces == 2),
              "%s: exactly two admission Allreduces", name);
    CHECK_MSG(bbfault_all_true(m.requests_posted == 0 && m.payload_bytes == 0),
              "%s: metrics say nothing posted", name);
    CHECK_MSG(bbfault_all_true(m.refusal.stage == want_stage), "%s: stage %s, want %s", name,
              bb_stage_name(m.refusal.stage), bb_stage_name(want_stage));
    CHECK_MSG(bbfault_same_everywhere(m.refusal.stage) && bbfault_same_everywhere(m.refusal.rank)
                  && bbfault_same_everywhere(m.refusal.sequence),
              "%s: identical diagnostics on every rank", name);
    CHECK_MSG(m.refusal.rank == -1, "%s: no rank attributed", name);
    int64_t want_seq = what == P_SEQUENCE ? seq + 10 : seq;
    CHECK_MSG(m.refusal.sequence == want_seq, "%s: sequence %lld, want max presented %lld",
              name, (long long)m.refusal.sequence, (long long)want_seq);
    CHECK_MSG(bb_sum_phase_sequence(phase) == seq + 1, "%s: sequence consumed", name);
    /* The document: "The last successful record is not a refusal record":
     * the phase's metrics stay the warm-up's; the refusal's record is the
     * call's own (m). */
    CHECK_MSG(bb_sum_phase_metrics(phase, &after) == BB_OK && after.status == BB_OK
                  && after.sequence == before.sequence && after.phase_id == 1
                  && after.refusal.stage == BB_STAGE_NONE
                  && after.payload_bytes == 8 * count && after.total_s == before.total_s,
              "%s: the phase's metrics are still the last success's (sequence %lld, "
              "status %s)", name, (long long)after.sequence, bb_status_string(after.status));
    CHECK_MSG(m.status == BB_REFUSED && m.sequence == (what == P_SEQUENCE && me ? seq + 10 : seq),
              "%s: the call's own record is the refusal's", name);
    CHECK_MSG(bb_sum_phase_tracked_live(phase) == CTL, "%s: payload buffers released", name);
    long want_released = (p.prepared > 0 && (!p.fail || p.fail_with_data)) ? 1 : 0;
    if (what == P_OVER_CAP || what == P_NEGATIVE_ID || what == P_NEGATIVE_EPOCH
        || what == P_RANGE)
        want_released = me ? 0 : 1;  /* invalid contract: prepare is not called */
    else if ((what == P_PROVIDER) && me)
        want_released = 0;            /* the provider handed out nothing */
    CHECK_MSG(p.released - released == want_released,
              "%s: provider arrays released %ld times, want %ld", name,
              p.released - released, want_released);
    p.fail = p.fail_with_data = 0;
    CHECK_MSG(run_success(phase, &p, count, 4), "%s: the next phase succeeds", name);
    CHECK_MSG(bb_sum_phase_metrics(phase, &after) == BB_OK && after.phase_id == 4
                  && after.sequence == seq + 1,
              "%s: the next success replaces the phase's metrics", name);
    CHECK_MSG(p.prepared == p.released && p.bad_release == 0,
              "%s: every array released exactly once (%ld/%ld)", name, p.prepared, p.released);
    CHECK_MSG(bb_sum_phase_destroy(phase) == BB_OK, "destroy");
    free(p.data);
}

static void case_delays(bb_world_t *world)
{
    bb_sum_phase_t *phase;
    provider_t p = { 0 };
    CHECK_MSG(bb_sum_phase_create(world, &phase) == BB_OK, "create");
    p.delay_s = rank == 0 ? 0.2 : 0.0;
    CHECK_MSG(run_success(phase, &p, 5000, 1), "delayed prepare on rank 0 completes");
    p.delay_s = 0.0;
    if (rank == ranks - 1)
        bb_sum_phase_set_post_delay(phase, 0.2);
    double t0 = bb_time_now();
    CHECK_MSG(run_success(phase, &p, 5000, 2), "delayed posting on the last rank completes");
    double waited = bb_time_now() - t0;
    CHECK_MSG(bbfault_all_true(waited >= 0.19), "every rank waited for the late poster (%.3f s)", waited);
    bb_sum_phase_set_post_delay(phase, 0.0);
    CHECK_MSG(bb_sum_phase_destroy(phase) == BB_OK, "destroy");
    free(p.data);
}

/* 1000 phases; on an oversubscribed machine (more ranks than 2) fewer, since
 * each collective then costs milliseconds of time-sharing. */
static void case_reuse(bb_world_t *world)
{
    const int calls = ranks <= 2 ? 1000 : 300;
    bb_sum_phase_t *phase;
    provider_t p = { 0 };
    bb_sum_provider_t prov = { provider_prepare, provider_release, &p };
    CHECK_MSG(bb_sum_phase_create(world, &phase) == BB_OK, "create");
    provider_fill(&p, 1000);
    bb_sum_contract_t c = contract_for(9, 1000);
    int ok = 1;
    int64_t rss_start = 0, tracked_max = 0;
    for (int i = 0; i < calls; i++) {
        if (i == 50)
            rss_start = bb_rss_current_bytes();  /* after allocator warm-up */
        double *r = NULL;
        bb_sum_metrics_t m;
        ok &= bb_sum_phase_run(phase, &prov, &c, &r, &m) == BB_OK && sum_ok(r, 1000);
        bb_free(r);
        if (m.tracked_bytes > tracked_max)
            tracked_max = m.tracked_bytes;
        ok &= bb_sum_phase_tracked_live(phase) == CTL;
    }
    int64_t rss_end = bb_rss_current_bytes();
    CHECK_MSG(bbfault_all_true(ok), "%d reused phases all correct, 144 bytes between calls", calls);
    CHECK_MSG(tracked_max == CTL + 16 * 1000, "tracked peak %lld", (long long)tracked_max);
#ifdef __SANITIZE_ADDRESS__
    /* ASan's quarantine keeps freed blocks resident: RSS says nothing here;
     * the tracked bytes above still must be flat. */
    rss_end = rss_start;
#endif
    CHECK_MSG(rss_start > 0 && rss_end - rss_start < 1024 * 1024,
              "RSS flat over %d phases: %lld -> %lld bytes", calls - 50,
              (long long)rss_start, (long long)rss_end);
    CHECK_MSG(bb_sum_phase_sequence(phase) == calls, "every sequence consumed");
    CHECK_MSG(p.prepared == calls && p.released == calls, "every array released once");
    CHECK_MSG(bb_sum_phase_destroy(phase) == BB_OK, "destroy");
    free(p.data);
}

typedef struct thread_arg {
    bb_sum_phase_t *phase;
    bb_status_t status;
} thread_arg_t;

static void *thread_call(void *arg)
{
    thread_arg_t *t = arg;
    provider_t p = { 0 };
    bb_sum_provider_t prov = { provider_prepare, provider_release, &p };
    bb_sum_contract_t c = contract_for(0, 0);
    double *r = NULL;
    t->status = bb_sum_phase_run(t->phase, &prov, &c, &r, NULL);
    return NULL;
}

static void case_misuse(bb_world_t *world)
{
    bb_sum_phase_t *phase;
    provider_t p = { 0 };
    CHECK_MSG(bb_sum_phase_create(world, &phase) == BB_OK, "create");

    /* Another thread: rejected before any MPI call. */
    long calls = bbfault_calls("MPI_Allreduce") + bbfault_calls("MPI_Iallreduce");
    thread_arg_t t = { phase, BB_OK };
    pthread_t th;
    pthread_create(&th, NULL, thread_call, &t);
    pthread_join(th, NULL);
    CHECK_MSG(t.status == BB_ERR_THREAD, "call from another thread: %s",
              bb_status_string(t.status));
    CHECK_MSG(bbfault_calls("MPI_Allreduce") + bbfault_calls("MPI_Iallreduce") == calls,
              "no MPI call from the other thread");
    CHECK_MSG(bb_sum_phase_sequence(phase) == 0, "no sequence consumed by the thread call");

    /* Reentry from prepare: rejected locally, the outer phase still works. */
    p.reenter = phase;
    CHECK_MSG(run_success(phase, &p, 10, 1), "outer phase succeeds around a reentrant call");
    CHECK_MSG(p.reenter_status == BB_ERR_REENTRY, "reentrant call: %s",
              bb_status_string(p.reenter_status));
    CHECK_MSG(p.reenter_mpi_calls == 0, "reentrant call made no MPI call");
    p.reenter = NULL;

    bb_sum_contract_t c = contract_for(0, 0);
    double *r = NULL;
    /* A NULL provider on every rank is a refusal on every rank (the
     * one-rank case: tests/mpi/test-misuse.c). */
    CHECK_MSG(bb_sum_phase_run(phase, NULL, &c, &r, NULL) == BB_REFUSED, "NULL provider");
    bb_sum_metrics_t last;
    CHECK_MSG(bb_sum_phase_metrics(phase, &last) == BB_OK && last.status == BB_OK
                  && last.phase_id == 1 && last.count == 10,
              "after misuse and a refusal the phase's metrics are the last success's");
    CHECK_MSG(bb_sum_phase_destroy(phase) == BB_OK, "destroy");
    free(p.data);
}

/* BB_FAULT makes one MPI call fail on some rank: that rank must see
 * BB_ERR_MPI, a poisoned phase that refuses later calls without MPI and keeps
 * its resources; then the job must be aborted (exit 3). */
static int run_poison(bb_world_t *world, const char *verdict_path)
{
    bb_sum_phase_t *phase;
    provider_t p = { 0 };
    bb_sum_provider_t prov = { provider_prepare, provider_release, &p };
    int64_t count = 1 << 16;
    if (bb_sum_phase_create(world, &phase) != BB_OK)
        return 1;
    provider_fill(&p, count);
    bb_sum_contract_t c = contract_for(1, count);
    /* The last rank posts late, so the first rank's Test cannot complete and
     * it reaches MPI_Wait. */
    if (rank == ranks - 1 && ranks > 1)
        bb_sum_phase_set_post_delay(phase, 0.3);
    double *r = NULL;
    bb_sum_metrics_t m;
    bb_status_t st = bb_sum_phase_run(phase, &prov, &c, &r, &m);
    if (st == BB_OK) {
        /* Not the faulted rank: nothing to check, wait to be aborted. */
        bb_free(r);
        bb_time_sleep(30.0);
        return 1;
    }
    CHECK_MSG(st == BB_ERR_MPI, "faulted call: %s", bb_status_string(st));
    CHECK_MSG(bb_sum_phase_poisoned(phase), "phase poisoned");
    CHECK_MSG(m.refusal.stage == BB_STAGE_TRANSPORT && m.refusal.rank == rank,
              "fatal metrics: stage %s rank %d", bb_stage_name(m.refusal.stage),
              m.refusal.rank);
    CHECK_MSG(bb_poisoned_count() == 1, "retained in the fatal list");
    bb_sum_metrics_t none;
    CHECK_MSG(bb_sum_phase_metrics(phase, &none) == BB_ERR_STATE,
              "a failed call is no success record");
    CHECK_MSG(bb_sum_phase_tracked_live(phase) >= BB_SUM_CONTROL_BYTES,
              "resources kept: %lld bytes", (long long)bb_sum_phase_tracked_live(phase));
    long calls = bbfault_calls("MPI_Allreduce") + bbfault_calls("MPI_Iallreduce");
    st = bb_sum_phase_run(phase, &prov, &c, &r, NULL);
    CHECK_MSG(st == BB_ERR_POISONED, "later call refused: %s", bb_status_string(st));
    CHECK_MSG(bbfault_calls("MPI_Allreduce") + bbfault_calls("MPI_Iallreduce") == calls,
              "later call made no MPI call");
    CHECK_MSG(bb_sum_phase_destroy(phase) == BB_ERR_POISONED, "destroy refused");
    FILE *f = fopen(verdict_path, "w");
    if (f != NULL) {
        fprintf(f, "rank %d: poison: %d passed, %d failed\n", rank, passed, failed);
        fclose(f);
    }
    MPI_Abort(MPI_COMM_WORLD, failed ? 1 : BB_EXIT_FATAL);
    return 1;
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    if (argc > 2 && strcmp(argv[1], "poison") == 0)
        return run_poison(world, argv[2]);

    int last = ranks - 1;
    case_success(world);
    case_refusal(world, P_PROVIDER, last, BB_STAGE_PREFLIGHT);
    case_refusal(world, P_PROVIDER, -1, BB_STAGE_PREFLIGHT);
    case_refusal(world, P_PROVIDER_DATA, 0, BB_STAGE_PREFLIGHT);
    case_refusal(world, P_OVER_CAP, last, BB_STAGE_PREFLIGHT);
    case_refusal(world, P_LENGTH, 0, BB_STAGE_PREFLIGHT);
    case_refusal(world, P_NEGATIVE_ID, last, BB_STAGE_PREFLIGHT);
    case_refusal(world, P_NEGATIVE_EPOCH, 0, BB_STAGE_PREFLIGHT);
    case_refusal(world, P_RANGE, last, BB_STAGE_PREFLIGHT);
    /* A mismatch needs two ranks to disagree; on one rank it is no mismatch. */
    if (ranks > 1) {
        case_refusal(world, P_PHASE_ID, last, BB_STAGE_CONTRACT);
        case_refusal(world, P_EPOCH, 0, BB_STAGE_CONTRACT);
        case_refusal(world, P_COUNT, last, BB_STAGE_CONTRACT);
        case_refusal(world, P_CAP, 0, BB_STAGE_CONTRACT);
        case_refusal(world, P_SEQUENCE, last, BB_STAGE_CONTRACT);
    }
    case_delays(world);
    case_reuse(world);
    case_misuse(world);

    int local[2] = { passed, failed }, total[2];
    PMPI_Allreduce(local, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test-sum on %d ranks: %d passed, %d failed\n", ranks, total[0], total[1]);
    bb_world_release(world);
    MPI_Finalize();
    return total[1] == 0 ? 0 : 1;
}
