/* bbench-transfer: the bounded transfer phase (W=1: agreements, payload,
 * receipt) against raw MPI_Isend/MPI_Irecv with the same compute batches,
 * in the same run.  The protocol is lib/transfer.c; the runner
 * (harness/runner.c) owns options, measurement loop, compute kernel and
 * record; this file holds the payload fixture, the two kernels, the census
 * and the descriptor. */
#include "config.h"
#include "runner.h"
#include "bbench-hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_PROTOCOL = 1, MODE_RAW = 2, MODE_BOTH = 3 };
enum { API_RUN, API_TICKET };
enum { MISMATCH_NONE, MISMATCH_PHASE_ID, MISMATCH_EPOCH, MISMATCH_SOURCE,
       MISMATCH_DESTINATION, MISMATCH_NBYTES, MISMATCH_CAP, MISMATCH_BATCHES,
       MISMATCH_SEQUENCE };
static const char *const mismatch_names[] = {
    "", "phase_id", "epoch", "source", "destination", "nbytes", "cap", "batches",
    "sequence"
};
enum { MISMATCH_N = sizeof mismatch_names / sizeof mismatch_names[0] };

typedef struct options {
    bb_size_list_t bytes, batches;
    double compute_s;         /* per batch */
    int source, destination;
    int64_t max_bytes;        /* -1: equal to each size */
    int api, mode;
    int fail_compute_rank;    /* -1: none */
    int64_t fail_compute_batch;
    int fail_consumer;
    int refuse_rank;
    int mismatch_rank, mismatch_field;
    int delay_post_rank;
    double delay_post_s;
    int64_t corrupt_byte;     /* -1: none */
} options_t;

/* ------------------------------------------------------------------------ */
/* The payload fixture: bytes from (sequence, offset), a checking consumer. */

/* Word k of sequence s: a mix of s plus k times an odd constant, so that
 * consecutive words differ in every byte and the fill is one add per word
 * (the fixture should cost little next to the transfer). */
#define PATTERN_STEP 0x9E3779B97F4A7C15u
static uint64_t pattern_base(int64_t seq)
{
    uint64_t x = (uint64_t)seq * 0xBF58476D1CE4E5B9u + 0x94D049BB133111EBu;
    return x ^ (x >> 31);
}

static uint64_t pattern_word(int64_t seq, int64_t k)
{
    return pattern_base(seq) + (uint64_t)k * PATTERN_STEP;
}

/* Byte i is byte i % 8 (least significant first) of word i / 8. */
static unsigned char pattern_byte(int64_t seq, int64_t i)
{
    return (unsigned char)(pattern_word(seq, i / 8) >> (8 * (i % 8)));
}

/* The little-endian byte order of the pattern, on any host. */
static uint64_t le64(uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(w);
#else
    return w;
#endif
}

static void pattern_fill(unsigned char *buf, int64_t n, int64_t seq)
{
    int64_t words = n / 8;
    uint64_t w = pattern_base(seq);
    for (int64_t k = 0; k < words; k++, w += PATTERN_STEP) {
        uint64_t v = le64(w);
        memcpy(buf + 8 * k, &v, 8);
    }
    for (int64_t i = 8 * words; i < n; i++)
        buf[i] = pattern_byte(seq, i);
}

/* Bytes that differ from the pattern, word by word, plus a
 * position-weighted checksum of the data against the expected one: either
 * failing is a mismatch. */
static int64_t pattern_check(const unsigned char *buf, int64_t n, int64_t seq)
{
    int64_t bad = 0, words = n / 8;
    uint64_t sum_got = 0, sum_want = 0, want = pattern_base(seq);
    for (int64_t k = 0; k < words; k++, want += PATTERN_STEP) {
        uint64_t got;
        memcpy(&got, buf + 8 * k, 8);
        got = le64(got);
        sum_got += got * (uint64_t)(2 * k + 1);
        sum_want += want * (uint64_t)(2 * k + 1);
        if (got != want)
            for (int j = 0; j < 8; j++)
                bad += (unsigned char)(got >> (8 * j)) != (unsigned char)(want >> (8 * j));
    }
    for (int64_t i = 8 * words; i < n; i++) {
        unsigned char want_byte = pattern_byte(seq, i);
        bad += buf[i] != want_byte;
        sum_got += (uint64_t)buf[i] * (uint64_t)(2 * i + 1);
        sum_want += (uint64_t)want_byte * (uint64_t)(2 * i + 1);
    }
    if (sum_got != sum_want && bad == 0)
        bad = 1;
    return bad;
}

typedef struct fixture {
    const options_t *o;
    int rank;
    unsigned char *src;       /* the provider's array */
    int64_t nbytes;
    int64_t expect_seq;       /* the sequence the destination presented */
    int64_t prepared, released;
    int64_t bad_bytes;        /* consumer check failures, this rank */
    int64_t checked;          /* consumer calls */
    int64_t iterations;       /* compute kernel iterations per batch */
    volatile double sink;
} fixture_t;

static int provider_prepare(void *arg, const void **data_out, int64_t *len_out)
{
    fixture_t *f = arg;
    if (f->rank == f->o->refuse_rank)
        return 1;
    /* The phase presents its current sequence in this ticket. */
    pattern_fill(f->src, f->nbytes, f->expect_seq);
    *data_out = f->src;
    *len_out = f->nbytes;
    f->prepared++;
    return 0;
}

static void provider_release(void *arg, const void *data)
{
    fixture_t *f = arg;
    (void)data;
    f->released++;
}

static int consumer_consume(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    fixture_t *f = arg;
    *value_out = NULL;
    f->checked++;
    int64_t bad = pattern_check(data, nbytes, f->expect_seq);
    f->bad_bytes += bad;
    return (bad > 0 || f->o->fail_consumer) ? 1 : 0;
}

static int compute_batch(void *arg, int64_t index)
{
    fixture_t *f = arg;
    f->sink += bb_compute_run(f->iterations);
    return (f->rank == f->o->fail_compute_rank && index == f->o->fail_compute_batch) ? 1 : 0;
}

static int refusal_asked(const options_t *o)
{
    return o->fail_compute_rank >= 0 || o->fail_consumer || o->refuse_rank >= 0
           || o->mismatch_rank >= 0;
}

/* ------------------------------------------------------------------------ */
/* Measurement */

/* Per-call timings accumulated over one block, in this order. */
enum { T_ELAPSED, T_PREPARE, T_ADMISSION, T_POST, T_COMPUTE, T_PROGRESS, T_WAIT,
       T_WAIT_PAYLOAD, T_WAIT_RECEIPT, T_STATUS, T_CONSUMER, T_TERMINAL, T_N };
static const char *const t_names[T_N] = {
    "elapsed", "phase.prepare", "phase.admission", "phase.post", "phase.compute",
    "phase.progress", "communication.wait", "communication.wait.payload",
    "communication.wait.receipt", "phase.status_agreement", "phase.consumer",
    "phase.terminal_agreement"
};
/* Per-call counts, meaned over a block like the timings. */
enum { C_BATCHES, C_POLLS, C_COMPLETED, C_N };

/* What one variant measured at one point.  The engine's result is
 * identical on every rank; of the rest, refused_calls, bad_bytes, rss_peak
 * and p2p are agreed with MAX over ranks after the measurement, the others
 * are this rank's (the census gathers them). */
typedef struct point_result {
    bb_measure_result_t m;
    int64_t refused_calls;
    int p2p;                  /* this rank posted a payload request */
    bb_refusal_t refusal;     /* the first refusal seen */
    int64_t tracked_peak, max_inflight, payload_bytes;
    int64_t bad_bytes;        /* payload check failures */
    int64_t rss_peak;
} point_result_t;

enum { K_ROLE, K_TRACKED, K_INFLIGHT, K_PAYLOAD, K_BETWEEN, K_N };

typedef struct census {
    int64_t *per_rank;        /* rank 0: [size][K_N] */
    int over_bound;           /* some rank exceeded 232 + nbytes or its credit */
    int64_t worst[4][K_N];    /* by role: the largest tracked/inflight seen */
} census_t;

/* The descriptor's state: the options, then the run. */
typedef struct run_ctx {
    options_t o;
    bb_run_t *run;
    int rank, size;
    bb_run_kernel_t kernel;
    bb_transfer_phase_t *phase;
    fixture_t fx;
    bb_transfer_provider_t provider;
    bb_transfer_consumer_t consumer;
    bb_transfer_compute_t compute;
    unsigned char *raw_send, *raw_recv;
    int64_t raw_seq;
    int64_t phase_id;
    int64_t nbytes, batches;  /* the point being measured */
    point_result_t *pr;       /* what its calls add to */
    census_t census_all;      /* rank 0: the largest over points */
    int have_census;
    double load_start;        /* rank 0's, -1 when unknown */
} run_ctx_t;

static void add_metrics(double *t, double *cnt, const bb_transfer_metrics_t *m)
{
    t[T_PREPARE] += m->prepare_s;
    t[T_ADMISSION] += m->admission_s;
    t[T_POST] += m->post_s;
    t[T_COMPUTE] += m->compute_s > 0 ? m->compute_s : 0.0;
    t[T_PROGRESS] += m->progress_s;
    t[T_WAIT] += m->payload_wait_s + m->receipt_wait_s;
    t[T_WAIT_PAYLOAD] += m->payload_wait_s;
    t[T_WAIT_RECEIPT] += m->receipt_wait_s;
    t[T_STATUS] += m->status_agreement_s;
    t[T_CONSUMER] += m->consumer_s;
    t[T_TERMINAL] += m->terminal_agreement_s;
    cnt[C_BATCHES] += m->batches_executed > 0 ? (double)m->batches_executed : 0.0;
    cnt[C_POLLS] += (double)m->polls;
    cnt[C_COMPLETED] += m->completed_during_batches == 1;
}

/* The ticket API driven here: begin, the batches with a poll after each,
 * finish.  Compute is timed here, as the phase cannot see it. */
static bb_status_t ticket_call(run_ctx_t *ctx, const bb_transfer_contract_t *c,
                               bb_transfer_metrics_t *m)
{
    bb_transfer_ticket_t ticket;
    bb_status_t st = bb_transfer_phase_begin(ctx->phase, &ctx->provider, c, &ticket, m);
    if (st != BB_OK)
        return st;
    int failed = 0;
    int64_t executed = 0;
    double compute_s = 0.0;
    for (int64_t i = 0; i < c->batches && !failed; i++) {
        double t0 = bb_time_now();
        failed = compute_batch(&ctx->fx, i);
        compute_s += bb_time_now() - t0;
        executed++;
        if (!failed && (st = bb_transfer_ticket_progress(&ticket, NULL)) != BB_OK)
            return st;
    }
    void *value = NULL;
    st = bb_transfer_ticket_finish(&ticket, &ctx->consumer,
                                   failed ? BB_TRANSFER_LOCAL_FAILED : BB_TRANSFER_LOCAL_OK,
                                   &value, m);
    m->compute_s = compute_s;
    m->batches_executed = executed;
    return st;
}

static bb_status_t protocol_call(void *arg, double *t, double *cnt)
{
    run_ctx_t *ctx = arg;
    const options_t *o = &ctx->o;
    point_result_t *pr = ctx->pr;
    bb_transfer_contract_t c = {
        .phase_id = ctx->phase_id, .epoch = 1, .source = o->source,
        .destination = o->destination, .nbytes = ctx->nbytes,
        .max_bytes = o->max_bytes >= 0 ? o->max_bytes : ctx->nbytes,
        .batches = ctx->batches
    };
    ctx->fx.nbytes = ctx->nbytes;
    ctx->fx.expect_seq = bb_transfer_phase_sequence(ctx->phase);
    /* A local preflight refusal on a rank that prepares nothing: a cap
     * below nbytes (or a negative one) is refused before agreement. */
    if (ctx->rank == o->refuse_rank && ctx->rank != o->source)
        c.max_bytes = c.nbytes - 1;
    if (ctx->rank == o->mismatch_rank) {
        switch (o->mismatch_field) {
        case MISMATCH_PHASE_ID: c.phase_id++; break;
        case MISMATCH_EPOCH: c.epoch++; break;
        case MISMATCH_SOURCE: c.source = (c.source + 1) % ctx->size; break;
        case MISMATCH_DESTINATION: c.destination = (c.destination + 1) % ctx->size; break;
        case MISMATCH_NBYTES:
            c.nbytes = c.nbytes > 0 ? c.nbytes - 1 : 1;
            c.max_bytes = c.nbytes > c.max_bytes ? c.nbytes : c.max_bytes;
            ctx->fx.nbytes = c.nbytes;
            break;
        case MISMATCH_CAP: c.max_bytes++; break;
        case MISMATCH_BATCHES: c.batches++; break;
        case MISMATCH_SEQUENCE:
            bb_transfer_phase_set_sequence(ctx->phase, ctx->fx.expect_seq + 1);
            break;
        }
    }
    bb_transfer_metrics_t m;
    bb_status_t st;
    void *value = NULL;
    int64_t bad_before = ctx->fx.bad_bytes;
    double t0 = bb_time_now();
    if (o->api == API_RUN)
        st = bb_transfer_phase_run(ctx->phase, &ctx->provider, &ctx->consumer,
                                   &ctx->compute, &c, &value, &m);
    else
        st = ticket_call(ctx, &c, &m);
    double elapsed = bb_time_now() - t0;
    if (st != BB_OK && st != BB_REFUSED)
        bb_run_fatal(ctx->run, "transfer phase: %s (stage %s, rank %d)",
                     bb_status_string(st), bb_stage_name(m.refusal.stage), m.refusal.rank);
    t[T_ELAPSED] += elapsed;
    add_metrics(t, cnt, &m);
    pr->bad_bytes += ctx->fx.bad_bytes - bad_before;
    pr->p2p = m.completed_during_batches >= 0 || pr->p2p;
    if (m.tracked_bytes > pr->tracked_peak)
        pr->tracked_peak = m.tracked_bytes;
    if (m.max_inflight > pr->max_inflight)
        pr->max_inflight = m.max_inflight;
    if (m.payload_bytes > pr->payload_bytes)
        pr->payload_bytes = m.payload_bytes;
    if (st == BB_REFUSED && pr->refused_calls++ == 0)
        pr->refusal = m.refusal;
    return BB_OK;
}

/* Raw: the same fixture work (pattern on the source, check on the
 * destination) and compute batches, one MPI_Test after each, a Wait. */
static bb_status_t raw_call(void *arg, double *t, double *cnt)
{
    run_ctx_t *ctx = arg;
    const options_t *o = &ctx->o;
    point_result_t *pr = ctx->pr;
    MPI_Comm comm = bb_run_comm(ctx->run);
    int is_src = ctx->rank == o->source, is_dst = ctx->rank == o->destination;
    int count = (int)ctx->nbytes;
    int64_t seq = ctx->raw_seq++;
    MPI_Request req = MPI_REQUEST_NULL;
    double t0 = bb_time_now();
    if (is_src)
        pattern_fill(ctx->raw_send, ctx->nbytes, seq);
    if (is_src && is_dst) {
        memcpy(ctx->raw_recv, ctx->raw_send, (size_t)ctx->nbytes);
    } else if (is_src) {
        if (MPI_Isend(ctx->raw_send, count, MPI_BYTE, o->destination, 0, comm, &req)
            != MPI_SUCCESS)
            bb_run_fatal(ctx->run, "raw MPI_Isend failed");
    } else if (is_dst) {
        if (MPI_Irecv(ctx->raw_recv, count, MPI_BYTE, o->source, 0, comm, &req)
            != MPI_SUCCESS)
            bb_run_fatal(ctx->run, "raw MPI_Irecv failed");
    }
    int done = req == MPI_REQUEST_NULL, completed = 0;
    double compute_s = 0.0, progress_s = 0.0;
    for (int64_t i = 0; i < ctx->batches; i++) {
        double tb = bb_time_now();
        ctx->fx.sink += bb_compute_run(ctx->fx.iterations);
        double tp = bb_time_now();
        compute_s += tp - tb;
        if (!done) {
            if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                bb_run_fatal(ctx->run, "raw MPI_Test failed");
            completed = done;
        }
        progress_s += bb_time_now() - tp;
    }
    double tw = bb_time_now();
    if (!done && MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        bb_run_fatal(ctx->run, "raw MPI_Wait failed");
    double wait_s = bb_time_now() - tw;
    if (is_dst) {
        if (o->corrupt_byte >= 0 && o->corrupt_byte < ctx->nbytes)
            ctx->raw_recv[o->corrupt_byte] ^= 1u;
        pr->bad_bytes += pattern_check(ctx->raw_recv, ctx->nbytes, seq);
    }
    t[T_ELAPSED] += bb_time_now() - t0;
    t[T_COMPUTE] += compute_s;
    t[T_PROGRESS] += progress_s;
    t[T_WAIT] += wait_s;
    t[T_WAIT_PAYLOAD] += wait_s;
    cnt[C_BATCHES] += (double)ctx->batches;
    cnt[C_POLLS] += (double)ctx->batches;
    cnt[C_COMPLETED] += completed;
    pr->p2p = pr->p2p || (is_src != is_dst);
    pr->payload_bytes = (is_src || is_dst) ? ctx->nbytes : 0;
    return BB_OK;
}

/* Collective.  One variant at the current point; the facts its calls saw
 * that decide the status are agreed with MAX over ranks afterwards. */
static void measure_variant(run_ctx_t *ctx, int protocol, point_result_t *pr)
{
    memset(pr, 0, sizeof *pr);
    pr->refusal.rank = -1;
    ctx->pr = pr;
    bb_measure_variant_t v = { .nparts = T_N, .ncounts = C_N,
                               .call = protocol ? protocol_call : raw_call, .arg = ctx };
    bb_run_measure(ctx->run, protocol ? "protocol" : "raw", &v, &pr->m);
    ctx->pr = NULL;
    int64_t local[4] = { pr->refused_calls, pr->bad_bytes, bb_rss_peak_bytes(), pr->p2p };
    int64_t max[4];
    if (bb_agree_max(bb_run_comm(ctx->run), local, 4, max) != MPI_SUCCESS)
        bb_run_fatal(ctx->run, "MPI_Allreduce of counters failed");
    pr->refused_calls = max[0];
    pr->bad_bytes = max[1];
    pr->rss_peak = max[2];
    pr->p2p = (int)max[3];
}

/* ------------------------------------------------------------------------ */
/* The census: each rank's counted bytes and request credit, gathered. */

static int role_of(const options_t *o, int r)
{
    if (r == o->source && r == o->destination)
        return BB_TRANSFER_ROLE_SAME_RANK;
    if (r == o->source)
        return BB_TRANSFER_ROLE_SOURCE;
    if (r == o->destination)
        return BB_TRANSFER_ROLE_DESTINATION;
    return BB_TRANSFER_ROLE_NONE;
}

static void census_gather(run_ctx_t *ctx, const point_result_t *pr, census_t *cs)
{
    int64_t mine[K_N] = { role_of(&ctx->o, ctx->rank), pr->tracked_peak, pr->max_inflight,
                          pr->payload_bytes, bb_transfer_phase_tracked_live(ctx->phase) };
    memset(cs, 0, sizeof *cs);
    if (ctx->rank == 0 && (cs->per_rank = calloc((size_t)ctx->size * K_N, sizeof(int64_t))) == NULL)
        bb_run_fatal(ctx->run, "out of memory");
    if (MPI_Gather(mine, K_N, MPI_INT64_T, cs->per_rank, K_N, MPI_INT64_T, 0,
                   bb_run_comm(ctx->run)) != MPI_SUCCESS)
        bb_run_fatal(ctx->run, "MPI_Gather of the census failed");
    if (ctx->rank != 0)
        return;
    for (int r = 0; r < ctx->size; r++) {
        const int64_t *k = cs->per_rank + (size_t)r * K_N;
        int role = (int)k[K_ROLE];
        int64_t bound = BB_TRANSFER_CENSUS_BYTES
                        + (role != BB_TRANSFER_ROLE_NONE ? ctx->nbytes : 0);
        int credit = role == BB_TRANSFER_ROLE_SOURCE ? 2
                     : role == BB_TRANSFER_ROLE_DESTINATION ? 1 : 0;
        if (k[K_TRACKED] > bound || k[K_INFLIGHT] > credit || k[K_BETWEEN] != 0)
            cs->over_bound = 1;
        for (int j = 0; j < K_N; j++)
            if (k[j] > cs->worst[role][j])
                cs->worst[role][j] = k[j];
    }
}

static cJSON *census_json(const run_ctx_t *ctx, const census_t *cs)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "bound", "232 bytes of control and receipt per rank "
                            "plus nbytes on data ranks; at most 2 requests live on the "
                            "source, 1 on the destination, 0 elsewhere");
    cJSON_AddBoolToObject(c, "within_bound", !cs->over_bound);
    cJSON *arr = cJSON_AddArrayToObject(c, "per_rank");
    for (int r = 0; r < ctx->size; r++) {
        const int64_t *k = cs->per_rank + (size_t)r * K_N;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r);
        cJSON_AddStringToObject(e, "role", bb_transfer_role_name((bb_transfer_role_t)k[K_ROLE]));
        cJSON_AddNumberToObject(e, "tracked_bytes", (double)k[K_TRACKED]);
        cJSON_AddNumberToObject(e, "max_inflight", (double)k[K_INFLIGHT]);
        cJSON_AddNumberToObject(e, "payload_bytes", (double)k[K_PAYLOAD]);
        cJSON_AddNumberToObject(e, "tracked_between_calls", (double)k[K_BETWEEN]);
        cJSON_AddItemToArray(arr, e);
    }
    return c;
}

/* ------------------------------------------------------------------------ */
/* Report */

static cJSON *parameters_new(const run_ctx_t *ctx, const char *mode)
{
    const options_t *o = &ctx->o;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "bytes", (double)ctx->nbytes);
    cJSON_AddNumberToObject(p, "batches", (double)ctx->batches);
    cJSON_AddNumberToObject(p, "compute_per_batch_s", o->compute_s);
    cJSON_AddStringToObject(p, "mode", mode);
    cJSON_AddStringToObject(p, "api", o->api == API_RUN ? "run" : "ticket");
    cJSON_AddNumberToObject(p, "source", o->source);
    cJSON_AddNumberToObject(p, "destination", o->destination);
    cJSON_AddNumberToObject(p, "max_bytes",
                            (double)(o->max_bytes >= 0 ? o->max_bytes : ctx->nbytes));
    return p;
}

static const char *const elapsed_includes[] = {
    "phase.prepare", "phase.admission", "phase.post", "phase.compute", "phase.progress",
    "communication.wait", "phase.status_agreement", "phase.consumer",
    "phase.terminal_agreement", NULL
};
static const char *const wait_includes[] = {
    "communication.wait.payload", "communication.wait.receipt", NULL
};
static const char *const raw_elapsed_includes[] = {
    "phase.compute", "phase.progress", "communication.wait", NULL
};

static void record_point(run_ctx_t *ctx, int protocol, const point_result_t *pr,
                         const census_t *cs)
{
    const char *scope = "call/max-rank";
    int refused = pr->refused_calls > 0;
    size_t n = (size_t)pr->m.samples;
    cJSON *q = cJSON_CreateObject(), *first = cJSON_CreateObject();
    for (int i = 0; i < T_N; i++) {
        int raw_has = i == T_ELAPSED || i == T_COMPUTE || i == T_PROGRESS || i == T_WAIT
                      || i == T_WAIT_PAYLOAD;
        if (!protocol && !raw_has) {
            bb_quantities_add(q, t_names[i], bb_quantity_null("s", scope,
                              "raw mode: plain Isend/Irecv has no protocol phases"));
            continue;
        }
        const char *const *inc = NULL;
        if (i == T_ELAPSED)
            inc = protocol ? elapsed_includes : raw_elapsed_includes;
        else if (i == T_WAIT && protocol)
            inc = wait_includes;
        bb_quantities_add(q, t_names[i], bb_quantity_timing(bb_measure_part(&pr->m, i), n, scope, inc));
        bb_quantities_add(first, t_names[i], bb_quantity_value(pr->m.first[i], "s", scope));
    }
    if (!protocol)
        bb_quantities_add(q, "communication.wait.receipt",
                          bb_quantity_null("s", scope, "raw mode: no receipt"));
    bb_summary_t s;
    bb_stats_summarize(bb_measure_count(&pr->m, C_BATCHES), n, &s);
    bb_quantities_add(q, "phase.batches_executed", bb_quantity_value(s.median, "count", scope));
    bb_stats_summarize(bb_measure_count(&pr->m, C_POLLS), n, &s);
    bb_quantities_add(q, "phase.polls", bb_quantity_value(s.median, "count", scope));
    if (!pr->p2p)
        bb_quantities_add(q, "completed_during_batches",
                          bb_quantity_null("ratio", "run/max-rank", "no rank posts a "
                                           "payload request (same-rank transfer)"));
    else if (refused)
        bb_quantities_add(q, "completed_during_batches",
                          bb_quantity_null("ratio", "run/max-rank", "refused: no payload"));
    else {
        bb_stats_summarize(bb_measure_count(&pr->m, C_COMPLETED), n, &s);
        cJSON *c = bb_quantity_value(s.median, "ratio", "run/max-rank");
        cJSON_AddStringToObject(c, "note", "fraction of calls in which a poll after a "
                                "batch saw the local payload complete; not evidence of "
                                "overlap or of a faster call");
        bb_quantities_add(q, "completed_during_batches", c);
    }
    bb_quantities_add(q, "communication.payload",
                      refused ? bb_quantity_null("byte", "call/rank",
                                                 "refused: no payload was posted")
                              : bb_quantity_value((double)ctx->nbytes, "byte", "call/rank"));
    if (protocol && cs != NULL) {
        int64_t inflight = 0, tracked = 0;
        for (int r = 0; r < 4; r++) {
            if (cs->worst[r][K_INFLIGHT] > inflight)
                inflight = cs->worst[r][K_INFLIGHT];
            if (cs->worst[r][K_TRACKED] > tracked)
                tracked = cs->worst[r][K_TRACKED];
        }
        bb_quantities_add(q, "communication.max_inflight",
                          bb_quantity_value((double)inflight, "count", scope));
        bb_quantities_add(q, "memory.tracked_live",
                          bb_quantity_value((double)tracked, "byte", scope));
    } else {
        bb_quantities_add(q, "communication.max_inflight",
                          bb_quantity_null("count", scope, "raw mode: not counted by a phase"));
        bb_quantities_add(q, "memory.tracked_live",
                          bb_quantity_null("byte", scope, "raw mode: buffers are the "
                                           "benchmark's, not counted by a phase"));
    }
    bb_quantities_add(q, "memory.rss_peak",
                      bb_quantity_value((double)pr->rss_peak, "byte", "run/max-rank"));
    bb_quantities_add_unobservable(q);
    bb_record_t *rec = bb_bench_record(bb_run_bench(ctx->run));
    bb_record_add_point(rec, parameters_new(ctx, protocol ? "protocol" : "raw"),
                        refused ? "refused" : "ok", refused ? &pr->refusal : NULL, first, q);
    if (protocol && cs != NULL) {
        cJSON *points = cJSON_GetObjectItemCaseSensitive(bb_record_json(rec), "points");
        cJSON *last = points ? cJSON_GetArrayItem(points, cJSON_GetArraySize(points) - 1) : NULL;
        if (last != NULL)
            cJSON_AddItemToObject(last, "census", census_json(ctx, cs));
    }
}

static void table_header(const run_ctx_t *ctx)
{
    const options_t *o = &ctx->o;
    printf("# times in microseconds: median [min, max] of %lld samples, rank maximum\n",
           (long long)bb_run_settings(ctx->run)->samples);
    printf("%8s %7s", "bytes", "batches");
    if (o->mode & MODE_PROTOCOL)
        printf(" %12s %23s %10s %8s", "protocol_us", "range_us", "agree_us", "done");
    if (o->mode & MODE_RAW)
        printf(" %12s %23s", "raw_us", "range_us");
    if (o->mode == MODE_BOTH)
        printf(" %7s", "ratio");
    printf("  status\n");
}

static void table_row(const run_ctx_t *ctx, const point_result_t *proto,
                      const point_result_t *raw)
{
    size_t n = (size_t)bb_run_settings(ctx->run)->samples;
    char size[32], range[64];
    bb_summary_t s;
    bb_cli_format_size(ctx->nbytes, size, sizeof size);
    printf("%8s %7lld", size, (long long)ctx->batches);
    if (proto) {
        bb_stats_summarize(bb_measure_part(&proto->m, T_ELAPSED), n, &s);
        bb_stats_format_range(&s, 1e6, 2, range, sizeof range);
        double agree = bb_stats_median(bb_measure_part(&proto->m, T_ADMISSION), n)
                       + bb_stats_median(bb_measure_part(&proto->m, T_STATUS), n)
                       + bb_stats_median(bb_measure_part(&proto->m, T_TERMINAL), n);
        char done[16] = "-";
        if (proto->p2p && proto->refused_calls == 0)
            snprintf(done, sizeof done, "%.2f",
                     bb_stats_median(bb_measure_count(&proto->m, C_COMPLETED), n));
        printf(" %12.2f %23s %10.2f %8s", s.median * 1e6, range, agree * 1e6, done);
    }
    if (raw) {
        bb_stats_summarize(bb_measure_part(&raw->m, T_ELAPSED), n, &s);
        bb_stats_format_range(&s, 1e6, 2, range, sizeof range);
        printf(" %12.2f %23s", s.median * 1e6, range);
    }
    if (proto && raw)
        printf(" %7.2f", bb_stats_median(bb_measure_part(&proto->m, T_ELAPSED), n)
                             / bb_stats_median(bb_measure_part(&raw->m, T_ELAPSED), n));
    if (proto && proto->refused_calls > 0) {
        char who[32] = "none";
        if (proto->refusal.rank >= 0)
            snprintf(who, sizeof who, "%d", proto->refusal.rank);
        printf("  refused (%s, rank %s, sequence %lld)\n",
               bb_stage_name(proto->refusal.stage), who,
               (long long)proto->refusal.sequence);
    } else if ((proto && proto->bad_bytes) || (raw && raw->bad_bytes)) {
        printf("  PAYLOAD MISMATCH\n");
    } else {
        printf("  ok\n");
    }
    fflush(stdout);
}

/* ------------------------------------------------------------------------ */
/* One point */

/* Rank 0: the census of one point joins the largest over points. */
static void census_accumulate(run_ctx_t *ctx, const census_t *cs)
{
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < K_N; j++)
            if (cs->worst[r][j] > ctx->census_all.worst[r][j])
                ctx->census_all.worst[r][j] = cs->worst[r][j];
    ctx->census_all.over_bound |= cs->over_bound;
    ctx->have_census = 1;
}

/* Collective.  The protocol at the current point, on a fresh phase (its
 * first ticket is the cold call), and its census (rank 0 gets it). */
static void measure_protocol(run_ctx_t *ctx, point_result_t *proto, census_t *cs)
{
    const options_t *o = &ctx->o;
    if (bb_transfer_phase_create(bb_bench_world(bb_run_bench(ctx->run)), &ctx->phase) != BB_OK)
        bb_run_fatal(ctx->run, "cannot create the transfer phase");
    if (ctx->rank == o->delay_post_rank)
        bb_transfer_phase_set_post_delay(ctx->phase, o->delay_post_s);
    if (o->corrupt_byte >= 0)
        bb_transfer_phase_set_corrupt_byte(ctx->phase, o->corrupt_byte);
    measure_variant(ctx, 1, proto);
    census_gather(ctx, proto, cs);
    bb_status_t st = bb_transfer_phase_close(ctx->phase);
    if (st != BB_OK)
        bb_run_fatal(ctx->run, "closing the transfer phase: %s", bb_status_string(st));
    ctx->phase = NULL;
}

static int transfer_point(bb_run_t *run, void *state, size_t i)
{
    run_ctx_t *ctx = state;
    const options_t *o = &ctx->o;
    point_result_t proto = {0}, raw = {0};
    census_t cs = {0};
    int code = BB_EXIT_OK;
    ctx->nbytes = o->bytes.values[i / o->batches.n];
    ctx->batches = o->batches.values[i % o->batches.n];
    ctx->phase_id = (int64_t)i;
    if (o->mode & MODE_PROTOCOL)
        measure_protocol(ctx, &proto, &cs);
    if (o->mode & MODE_RAW)
        measure_variant(ctx, 0, &raw);
    if (ctx->rank == 0) {
        table_row(ctx, (o->mode & MODE_PROTOCOL) ? &proto : NULL,
                  (o->mode & MODE_RAW) ? &raw : NULL);
        if (o->mode & MODE_PROTOCOL)
            record_point(ctx, 1, &proto, &cs);
        if (o->mode & MODE_RAW)
            record_point(ctx, 0, &raw, NULL);
    }
    if (o->mode & MODE_PROTOCOL) {
        if (proto.refused_calls > 0 && !refusal_asked(o)) {
            bb_run_note(run, "error: %lld bytes refused (%s) without a refusal being "
                        "asked for", (long long)ctx->nbytes,
                        bb_stage_name(proto.refusal.stage));
            code = BB_EXIT_FAILURE;
        }
        if (proto.bad_bytes > 0) {
            bb_run_note(run, "error: %lld bytes, %lld batches: payload check failed "
                        "(%lld bad bytes in one call)", (long long)ctx->nbytes,
                        (long long)ctx->batches, (long long)proto.bad_bytes);
            code = BB_EXIT_FAILURE;
        }
        /* The census is rank 0's alone; the runner's exit code is rank 0's. */
        if (ctx->rank == 0 && cs.over_bound) {
            bb_run_note(run, "error: %lld bytes: census over its bound",
                        (long long)ctx->nbytes);
            code = BB_EXIT_FAILURE;
        }
        if (ctx->rank == 0)
            census_accumulate(ctx, &cs);
    }
    if ((o->mode & MODE_RAW) && raw.bad_bytes > 0) {
        bb_run_note(run, "error: raw %lld bytes: payload check failed", (long long)ctx->nbytes);
        code = BB_EXIT_FAILURE;
    }
    free(cs.per_rank);
    bb_measure_result_clear(&proto.m);
    bb_measure_result_clear(&raw.m);
    return code;
}

/* ------------------------------------------------------------------------ */
/* The descriptor */

enum { OPT_BATCHES = BB_OPT_LONG, OPT_COMPUTE, OPT_SOURCE, OPT_DEST, OPT_MAX, OPT_API,
       OPT_MODE, OPT_FAIL_COMPUTE, OPT_FAIL_CONSUMER, OPT_REFUSE, OPT_MISMATCH, OPT_DPOST,
       OPT_CORRUPT };

static const bb_option_t transfer_options[] = {
    {"bytes", 'b', "LIST", "payload bytes: 8,64K,4M or 8:4M[:x4|:+N]\n"
                           "(suffixes K=2^10, M=2^20; default 8,4K,64K,1M,4M)"},
    {"batches", OPT_BATCHES, "LIST", "compute batches per call (default 0,1,4,16)"},
    {"compute", OPT_COMPUTE, "SECONDS", "compute per batch, MPI-free kernel calibrated\n"
                                        "at start-up (default 10e-6)"},
    {"source", OPT_SOURCE, "R", "the sending rank (default 0)"},
    {"destination", OPT_DEST, "R", "the receiving rank (default the last rank)"},
    {"max-bytes", OPT_MAX, "N", "the cap presented (default: each size)"},
    {"api", OPT_API, "API", "run or ticket (begin, batches and progress\n"
                            "driven here, finish) (default run)"},
    {"mode", OPT_MODE, "MODE", "protocol, raw or both (default both)"},
    {"fail-compute", OPT_FAIL_COMPUTE, "R:BATCH", "rank R's compute batch BATCH fails"},
    {"fail-consumer", OPT_FAIL_CONSUMER, NULL, "the destination's consumer fails"},
    {"refuse-rank", OPT_REFUSE, "R", "rank R refuses locally in preflight"},
    {"mismatch-rank", OPT_MISMATCH, "R:FIELD", "rank R presents another phase_id, epoch,\n"
                                               "source, destination, nbytes, cap, batches\n"
                                               "or sequence"},
    {"delay-post", OPT_DPOST, "R:SECONDS", "rank R sleeps before posting"},
    {"corrupt-byte", OPT_CORRUPT, "OFFSET", "test: flip a bit of that payload byte before\n"
                                            "the consumer's check (a validation failure,\n"
                                            "exit 1)"},
    {NULL, 0, NULL, NULL}
};

static void transfer_defaults(void *state)
{
    options_t *o = &((run_ctx_t *)state)->o;
    o->compute_s = 10e-6;
    o->destination = -1;  /* the last rank, once the size is known */
    o->max_bytes = -1;
    o->api = API_RUN;
    o->mode = MODE_BOTH;
    o->fail_compute_rank = o->refuse_rank = o->mismatch_rank = o->delay_post_rank = -1;
    o->corrupt_byte = -1;
}

/* "R:NAME": a rank, then one of names[1..]; the field's index. */
static void transfer_parse(bb_run_t *run, void *state, int key, const char *value)
{
    static const char *const modes[] = { "protocol", "raw", "both" };
    options_t *o = &((run_ctx_t *)state)->o;
    char err[512];
    const char *rest;
    switch (key) {
    case 'b': bb_run_parse_size_list(run, "bytes", value, 0, INT32_MAX, &o->bytes); break;
    case OPT_BATCHES:
        bb_run_parse_size_list(run, "batches", value, 0, 1000000, &o->batches);
        break;
    case OPT_COMPUTE: o->compute_s = bb_run_parse_seconds(run, "compute", value, 0.0, 10.0);
        break;
    case OPT_SOURCE: o->source = bb_run_parse_rank(run, "source", value); break;
    case OPT_DEST: o->destination = bb_run_parse_rank(run, "destination", value); break;
    case OPT_MAX: o->max_bytes = bb_run_parse_size(run, "max-bytes", value, 0, INT32_MAX);
        break;
    case OPT_API:
        if (strcmp(value, "run") == 0)
            o->api = API_RUN;
        else if (strcmp(value, "ticket") == 0)
            o->api = API_TICKET;
        else
            bb_run_usage(run, "--api: '%s' is not run or ticket", value);
        break;
    case OPT_MODE: {
        unsigned m = bb_run_parse_choices(run, "mode", value, modes, 3);
        o->mode = (m & 4u) ? MODE_BOTH : (int)m;
        break;
    }
    case OPT_FAIL_COMPUTE:
        if (bb_cli_parse_rank_prefix(value, bb_run_size(run), &o->fail_compute_rank, &rest,
                                     err, sizeof err) != BB_OK)
            bb_run_usage(run, "--fail-compute: %s", err);
        o->fail_compute_batch = bb_run_parse_size(run, "fail-compute", rest, 0, INT64_MAX);
        break;
    case OPT_FAIL_CONSUMER: o->fail_consumer = 1; break;
    case OPT_REFUSE: o->refuse_rank = bb_run_parse_rank(run, "refuse-rank", value); break;
    case OPT_MISMATCH:
        o->mismatch_field = bb_run_parse_rank_choice(run, "mismatch-rank", value,
                                                     mismatch_names, 1, MISMATCH_N,
                                                     &o->mismatch_rank);
        break;
    case OPT_DPOST:
        bb_run_parse_rank_seconds(run, "delay-post", value, 3600.0, &o->delay_post_rank,
                                  &o->delay_post_s);
        break;
    case OPT_CORRUPT:
        o->corrupt_byte = bb_run_parse_size(run, "corrupt-byte", value, 0, INT32_MAX);
        break;
    }
}

static size_t transfer_validate(bb_run_t *run, void *state)
{
    run_ctx_t *ctx = state;
    options_t *o = &ctx->o;
    ctx->run = run;
    ctx->rank = bb_run_rank(run);
    ctx->size = bb_run_size(run);
    bb_run_message_sizes(run, "bytes", 1, 8, 4 << 20, &o->bytes);  /* -m */
    if (o->bytes.n == 0)
        bb_run_parse_size_list(run, "bytes", "8,4K,64K,1M,4M", 0, INT32_MAX, &o->bytes);
    if (o->batches.n == 0)
        bb_run_parse_size_list(run, "batches", "0,1,4,16", 0, 1000000, &o->batches);
    if (o->destination < 0)
        o->destination = ctx->size - 1;
    return o->bytes.n * o->batches.n;
}

/* Collective: buffers, the kernel, the header lines and the table header. */
static void transfer_setup(bb_run_t *run, void *state)
{
    run_ctx_t *ctx = state;
    const options_t *o = &ctx->o;
    int64_t max_bytes = 1;
    for (size_t i = 0; i < o->bytes.n; i++)
        if (o->bytes.values[i] + 1 > max_bytes)
            max_bytes = o->bytes.values[i] + 1;
    ctx->fx.o = o;
    ctx->fx.rank = ctx->rank;
    ctx->fx.src = malloc((size_t)max_bytes);
    ctx->raw_send = malloc((size_t)max_bytes);
    ctx->raw_recv = malloc((size_t)max_bytes);
    if (!ctx->fx.src || !ctx->raw_send || !ctx->raw_recv)
        bb_run_fatal(run, "cannot allocate %lld bytes", (long long)max_bytes);
    /* Touch every page before measuring. */
    memset(ctx->fx.src, 0, (size_t)max_bytes);
    memset(ctx->raw_send, 0, (size_t)max_bytes);
    memset(ctx->raw_recv, 0, (size_t)max_bytes);

    bb_run_kernel_calibrate(run, o->compute_s, &ctx->kernel);
    ctx->fx.iterations = ctx->kernel.iterations;
    ctx->provider = (bb_transfer_provider_t){ provider_prepare, provider_release, &ctx->fx };
    ctx->consumer = (bb_transfer_consumer_t){ consumer_consume, NULL, &ctx->fx };
    ctx->compute = (bb_transfer_compute_t){ compute_batch, &ctx->fx };

    /* Other load on the host distorts every figure here (busy-polling ranks
     * time-share a core), so the load around the run is recorded. */
    double load[1];
    ctx->load_start = getloadavg(load, 1) == 1 ? load[0] : -1.0;
    if (ctx->rank != 0)
        return;
    if (ctx->load_start >= 0.0)
        printf("# host load average (1 min) at start: %.2f\n", ctx->load_start);
    printf("# source %d, destination %d, api %s, compute %.3g s per batch = %lld "
           "kernel iterations (calibrated %.4g iterations/s, slowest rank; a batch "
           "measured %.3g s)\n", o->source, o->destination,
           o->api == API_RUN ? "run" : "ticket", o->compute_s,
           (long long)ctx->fx.iterations, ctx->kernel.slowest_rate,
           ctx->kernel.batch_measured_s);
    printf("# raw: Isend/Irecv, the same batches with one MPI_Test after each, a Wait; "
           "no agreement, so a sender may run ahead of its receiver by what MPI "
           "buffers\n");
    table_header(ctx);
}

static void transfer_label(const void *state, size_t i, char *buf, size_t len)
{
    const options_t *o = &((const run_ctx_t *)state)->o;
    snprintf(buf, len, "%lld bytes, %lld batches",
             (long long)o->bytes.values[i / o->batches.n],
             (long long)o->batches.values[i % o->batches.n]);
}

static void census_print(const run_ctx_t *ctx)
{
    static const char *const roles[4] = { "inactive", "source", "destination", "same-rank" };
    const census_t *all = &ctx->census_all;
    printf("# census (measured, largest over points): ");
    for (int r = 0; r < 4; r++) {
        int seen = 0;
        for (int q = 0; q < ctx->size; q++)
            seen |= role_of(&ctx->o, q) == r;
        if (seen)
            printf("%s %lld B, %lld requests; ", roles[r], (long long)all->worst[r][K_TRACKED],
                   (long long)all->worst[r][K_INFLIGHT]);
    }
    printf("%s\n", all->over_bound ? "OVER THE BOUND" : "within the bound");
}

/* The record's compute_kernel member: the runner's calibration. */
static cJSON *kernel_json(const run_ctx_t *ctx)
{
    const bb_run_kernel_t *kr = &ctx->kernel;
    cJSON *k = cJSON_CreateObject();
    cJSON_AddStringToObject(k, "kernel", "bb_compute_run: " BB_KERNEL_DESCRIPTION);
    cJSON_AddNumberToObject(k, "iterations_per_s_rank0", kr->local.iters_per_s);
    cJSON_AddNumberToObject(k, "iterations_per_s_slowest_rank", kr->slowest_rate);
    cJSON_AddNumberToObject(k, "iterations_per_s_fastest_rank", kr->fastest_rate);
    cJSON_AddNumberToObject(k, "rank0_slowest_trial_iterations_per_s",
                            kr->local.slowest_iters_per_s);
    cJSON_AddNumberToObject(k, "trials", kr->local.trials);
    cJSON_AddNumberToObject(k, "trial_s", kr->local.trial_s);
    cJSON_AddNumberToObject(k, "calibration_s", kr->local.calibration_s);
    cJSON_AddNumberToObject(k, "requested_s_per_batch", kr->batch_s);
    cJSON_AddNumberToObject(k, "iterations_per_batch", (double)kr->iterations);
    cJSON_AddNumberToObject(k, "measured_batch_s_max_rank", kr->batch_measured_s);
    cJSON_AddStringToObject(k, "measured_batch_note", "mean of 100 batches right "
                            "after calibration, maximum over ranks");
    return k;
}

static void add_load(cJSON *load, const char *name, double value)
{
    if (value >= 0.0)
        cJSON_AddNumberToObject(load, name, value);
    else
        cJSON_AddNullToObject(load, name);
}

/* Collective: every provider array released exactly once; rank 0 prints
 * the census line and sets the record's run section. */
static int transfer_finish(bb_run_t *run, void *state)
{
    run_ctx_t *ctx = state;
    int code = bb_run_check_released(run, "provider arrays", ctx->fx.prepared,
                                     ctx->fx.released);
    if (ctx->rank != 0)
        return code;
    if (ctx->have_census)
        census_print(ctx);
    cJSON *summary = cJSON_CreateObject();
    double load_end[1];
    cJSON *load = cJSON_AddObjectToObject(summary, "host_load_average_1min");
    add_load(load, "start", ctx->load_start);
    add_load(load, "end", getloadavg(load_end, 1) == 1 ? load_end[0] : -1.0);
    cJSON_AddStringToObject(load, "note", "rank 0's host (getloadavg); load from "
                            "other processes time-shares the cores and inflates "
                            "every synchronizing call");
    cJSON_AddItemToObject(summary, "compute_kernel", kernel_json(ctx));
    cJSON_AddNumberToObject(summary, "provider_arrays_prepared", (double)ctx->fx.prepared);
    cJSON_AddNumberToObject(summary, "provider_arrays_released", (double)ctx->fx.released);
    cJSON_AddStringToObject(summary, "fixture", "payload byte i of sequence s is byte i%8 "
                            "(least significant first) of the 64-bit word mix(s) + (i/8) * "
                            "0x9E3779B97F4A7C15; "
                            "the consumer checks every word and a position-weighted "
                            "checksum inside the call; raw mode does the same "
                            "generation and check");
    bb_record_set(bb_bench_record(bb_run_bench(run)), "run", summary);
    return code;
}

static void transfer_teardown(void *state)
{
    run_ctx_t *ctx = state;
    free(ctx->fx.src);
    free(ctx->raw_send);
    free(ctx->raw_recv);
    bb_size_list_clear(&ctx->o.bytes);
    bb_size_list_clear(&ctx->o.batches);
}

static const bb_bench_desc_t transfer_bench = {
    .program = "bbench-transfer",
    .benchmark = "transfer",
    .summary = "Measure the bounded transfer phase (nine-field MIN/MAX agreement, payload\n"
               "Isend/Irecv, compute batches with one poll after each, status agreement,\n"
               "consumer, receipt, terminal agreement) against raw MPI_Isend/MPI_Irecv\n"
               "with the same compute batches, one MPI_Test after each, and a Wait.\n"
               "Launch with mpiexec -n P (P = 1: a same-rank transfer).",
    .notes = "Demonstrations: a refusal asked for (--fail-compute, --fail-consumer,\n"
             "--refuse-rank, --mismatch-rank) is recorded and exits 0.  The payload is a\n"
             "byte pattern of the ticket's sequence and the offset; the destination\n"
             "checks every byte and a checksum inside the timed call (raw mode does the\n"
             "same generation and check).  Times in the table are microseconds.  Exit 1\n"
             "also for an unrequested refusal, a payload mismatch or a census over its\n"
             "bound.",
    .options = transfer_options,
    .state_size = sizeof(run_ctx_t),
    .defaults = transfer_defaults,
    .parse = transfer_parse,
    .validate = transfer_validate,
    .setup = transfer_setup,
    .label = transfer_label,
    .point = transfer_point,
    .finish = transfer_finish,
    .teardown = transfer_teardown,
};

int main(int argc, char **argv) { return bb_run_main(&transfer_bench, argc, argv); }
