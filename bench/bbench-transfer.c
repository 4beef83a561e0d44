/* bbench-transfer: the bounded transfer phase (W=1: agreements, payload,
 * receipt) against references measured in the same run, their samples
 * interleaved: raw MPI_Isend/MPI_Irecv with the same compute batches (a
 * stream), a ping-pong (payload one way, receipt back), that ping-pong with
 * the phase's agreements at their places, and the agreements alone.  The
 * protocol is lib/transfer.c; the runner (harness/runner.c) owns options,
 * measurement loop, compute kernel, table and record; this file holds the
 * payload fixture, the kernels, the census and the descriptor. */
#include "config.h"
#include "runner.h"
#include "policy.h"
#include "bbench-hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The protocol and the references, each differing from its neighbour in the
 * ratio chain in one thing (the mode of a point, in this order). */
enum { V_PROTOCOL, V_RAW, V_PINGPONG, V_ROUNDS, V_AGREEMENTS, V_ADMISSION, V_N };
static const char *const variant_names[V_N] = {
    "protocol", "raw", "raw-pingpong", "raw-rounds", "agreements", "admission"
};
static const char *const variant_differs[V_N] = {
    "the bounded transfer phase: the nine-field admission, payload copied into the "
    "phase's buffer, Isend/Irecv with the batches and a poll after each, status MAX "
    "agreement, consumer check, 16-byte receipt back, terminal MAX agreement",
    "a stream: Isend/Irecv with the same fixture work and batches, one MPI_Test after "
    "each, a Wait; no agreement and no receipt, so a sender may run ahead of its "
    "receiver by what MPI buffers (not a latency)",
    "raw made a round trip: the source posts a 16-byte receipt Irecv before its "
    "payload Isend, the destination checks the payload and sends the receipt back",
    "raw-pingpong with the phase's collectives at their places, made as its admission "
    "and requests policies make them: the nine-field admission before posting, a "
    "one-field MAX after the payload and another after the receipt (the phase's whole "
    "control traffic, without the library)",
    "the phase's collectives alone, on every rank: the nine-field admission and two "
    "one-field MAX agreements, no payload and no receipt",
    "the admission alone: the phase's nine-field agreement, no payload"
};
enum { MODE_PROTOCOL = 1u << V_PROTOCOL, MODE_RAW = 1u << V_RAW,
       MODE_BOTH = MODE_PROTOCOL | MODE_RAW };
/* The references that make the phase's agreements follow its admission and
 * requests policies (one row per distinct pair asked for). */
#define HAS_ADMISSION(v) ((v) == V_ROUNDS || (v) == V_AGREEMENTS || (v) == V_ADMISSION)

/* One measured line of a point: a variant and a policy, an index into the
 * policies measured (the protocol's whole policy; the agreement-bearing
 * references' admission and requests; 0 for the others). */
typedef struct row {
    int variant;
    int policy;
} row_t;
/* Admission and requests pairs: at most 3 x 2. */
enum { PAIRS_MAX = 6, ROWS_MAX = BB_POLICY_MAX + 2 + 3 * PAIRS_MAX };

enum { API_RUN, API_TICKET };
enum { MISMATCH_NONE, MISMATCH_PHASE_ID, MISMATCH_EPOCH, MISMATCH_SOURCE,
       MISMATCH_DESTINATION, MISMATCH_NBYTES, MISMATCH_CAP, MISMATCH_BATCHES,
       MISMATCH_SEQUENCE };
static const char *const mismatch_names[] = {
    "", "phase_id", "epoch", "source", "destination", "nbytes", "cap", "batches",
    "sequence"
};
enum { MISMATCH_N = sizeof mismatch_names / sizeof mismatch_names[0] };

/* The default sweep is short (a few seconds at -n 2); --full-sweep restores
 * the long one. */
#define BYTES_DEFAULT "8,64K,1M"
#define BATCHES_DEFAULT "0,4"
#define BYTES_FULL "8,4K,64K,1M,4M"
#define BATCHES_FULL "0,1,4,16"

typedef struct options {
    bb_size_list_t bytes, batches;
    double compute_s;         /* per batch */
    int source, destination;
    int64_t max_bytes;        /* -1: equal to each size */
    int api;
    unsigned mode;            /* bit v: variant v */
    bb_policy_choice_t choice;
    bb_phase_attr_t policies[BB_POLICY_MAX];  /* every combination asked for */
    int npolicies;
    int full_sweep;
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

/* The parts each variant times (bit i: t_names[i]). */
#define PART(i) (1u << (i))
#define PARTS_RAW (PART(T_ELAPSED) | PART(T_COMPUTE) | PART(T_PROGRESS) | PART(T_WAIT) \
                   | PART(T_WAIT_PAYLOAD))
#define PARTS_AGREE (PART(T_ADMISSION) | PART(T_STATUS) | PART(T_TERMINAL))
static const unsigned variant_parts[V_N] = {
    (1u << T_N) - 1u, PARTS_RAW, PARTS_RAW | PART(T_WAIT_RECEIPT),
    PARTS_RAW | PART(T_WAIT_RECEIPT) | PARTS_AGREE, PART(T_ELAPSED) | PARTS_AGREE,
    PART(T_ELAPSED) | PART(T_ADMISSION)
};
/* Variants that move a payload (and run the batches). */
#define HAS_PAYLOAD(v) ((v) <= V_ROUNDS)

enum { K_ROLE, K_TRACKED, K_INFLIGHT, K_PAYLOAD, K_BETWEEN, K_N };

typedef struct census {
    int64_t *per_rank;        /* rank 0: [size][K_N] */
    int over_bound;           /* some rank exceeded its bound or its credit */
    int64_t bound_payload;    /* the payload bytes a data rank may hold */
    int64_t worst[4][K_N];    /* by role: the largest tracked/inflight seen */
} census_t;

/* What one row measured at one point.  The engine's result is identical on
 * every rank; of the rest, refused_calls, bad_bytes, rss_peak and p2p are
 * agreed with MAX over ranks after the measurement, the others are this
 * rank's (the census gathers them). */
typedef struct point_result {
    bb_measure_result_t m;
    int64_t refused_calls;
    int64_t p2p;              /* this rank posted a payload request */
    bb_refusal_t refusal;     /* the first refusal seen */
    int64_t tracked_peak, max_inflight, payload_bytes;
    int64_t bad_bytes;        /* payload (or receipt, agreement) check failures */
    int64_t rss_peak;
    census_t cs;              /* protocol rows */
} point_result_t;

typedef struct run_ctx run_ctx_t;
typedef struct row_arg {
    run_ctx_t *ctx;
    int r;
} row_arg_t;

/* The descriptor's state: the options, then the run. */
struct run_ctx {
    options_t o;
    row_t rows[ROWS_MAX];     /* what each point measures, in order */
    int nrows;
    bb_run_t *run;
    int rank, size;
    bb_run_kernel_t kernel;
    bb_transfer_phase_t *phases[ROWS_MAX];  /* protocol rows, this point */
    bb_transfer_phase_t *phase;             /* the one being measured */
    /* Agreement-bearing references, this point: the nine-field admission
     * and the one-field MAX (status and terminal), as the phase holds them. */
    bb_agreement_t *admissions[ROWS_MAX], *maxes[ROWS_MAX];
    bb_agreement_t *admission, *max;        /* the row being measured */
    point_result_t results[ROWS_MAX];
    row_arg_t args[ROWS_MAX];
    fixture_t fx;
    bb_transfer_provider_t provider;
    bb_transfer_consumer_t consumer;
    bb_transfer_compute_t compute;
    unsigned char *raw_send, *raw_recv;
    int64_t raw_seq;
    int64_t phase_id;
    int64_t nbytes, batches;  /* the point being measured */
    point_result_t *pr;       /* what the current call adds to */
    census_t census_all;      /* rank 0: the largest over points */
    int have_census;
    double load_start;        /* rank 0's, -1 when unknown */
};

static int64_t cap_of(const run_ctx_t *ctx)
{
    return ctx->o.max_bytes >= 0 ? ctx->o.max_bytes : ctx->nbytes;
}

static const bb_phase_attr_t *row_attr(const run_ctx_t *ctx, const row_t *row)
{
    return &ctx->o.policies[row->policy];
}

/* The row's name in column heads and progress lines: the protocol's and the
 * agreement-bearing references' with what their policy changes
 * ("protocol-retained-fused", "raw-rounds-fused-op-persistent"), the
 * others' plain. */
static void row_label(const run_ctx_t *ctx, const row_t *row, char *buf, size_t len)
{
    bb_phase_attr_t attr = *row_attr(ctx, row);
    if (row->variant != V_PROTOCOL)
        attr.buffers = BB_BUFFERS_FRESH;  /* no payload buffer of the phase's */
    if (row->variant == V_PROTOCOL || HAS_ADMISSION(row->variant))
        bb_policy_label(variant_names[row->variant], &attr, buf, len);
    else
        snprintf(buf, len, "%s", variant_names[row->variant]);
}

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

static bb_status_t protocol_call(run_ctx_t *ctx, double *t, double *cnt)
{
    const options_t *o = &ctx->o;
    point_result_t *pr = ctx->pr;
    bb_transfer_contract_t c = {
        .phase_id = ctx->phase_id, .epoch = 1, .source = o->source,
        .destination = o->destination, .nbytes = ctx->nbytes, .max_bytes = cap_of(ctx),
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

/* The phase's nine-field admission, with the fields the phase presents,
 * through the row's agreement object (the row's admission and requests);
 * fields that differ would be a bug (counted). */
static void reference_admission(run_ctx_t *ctx, int64_t seq)
{
    const options_t *o = &ctx->o;
    int64_t local[BB_TRANSFER_FIELDS] = { seq, ctx->phase_id, 1, o->source, o->destination,
                                          ctx->nbytes, cap_of(ctx), ctx->batches, 0 };
    int64_t mn[BB_TRANSFER_FIELDS], mx[BB_TRANSFER_FIELDS];
    if (bb_agreement_minmax(ctx->admission, local, mn, mx) != MPI_SUCCESS)
        bb_run_fatal(ctx->run, "reference admission: the agreement failed");
    if (!bb_agree_fields_equal(mn, mx, 0, BB_TRANSFER_FIELDS))
        ctx->pr->bad_bytes++;
}

/* One one-field MAX agreement, as the phase's status and terminal ones (one
 * object for both, as the phase's). */
static void reference_max(run_ctx_t *ctx)
{
    int64_t local = 0, max = -1;
    if (bb_agreement_max(ctx->max, &local, &max) != MPI_SUCCESS)
        bb_run_fatal(ctx->run, "reference agreement: the MAX agreement failed");
    if (max != 0)
        ctx->pr->bad_bytes++;
}

/* raw, raw-pingpong and raw-rounds: the same fixture work (pattern on the
 * source, check on the destination) and compute batches, one MPI_Test after
 * each, a Wait; the round trip adds the receipt, the rounds add the
 * agreements. */
static bb_status_t raw_call(run_ctx_t *ctx, double *t, double *cnt, int variant)
{
    const options_t *o = &ctx->o;
    point_result_t *pr = ctx->pr;
    MPI_Comm comm = bb_run_comm(ctx->run);
    int is_src = ctx->rank == o->source, is_dst = ctx->rank == o->destination;
    int round_trip = variant == V_PINGPONG || variant == V_ROUNDS;
    int rounds = variant == V_ROUNDS;
    int count = (int)ctx->nbytes;
    int64_t seq = ctx->raw_seq++;
    int64_t receipt[2] = { -1, -1 };
    MPI_Request req = MPI_REQUEST_NULL, receipt_req = MPI_REQUEST_NULL;
    double t0 = bb_time_now(), ta;
    if (is_src)
        pattern_fill(ctx->raw_send, ctx->nbytes, seq);
    if (rounds) {
        ta = bb_time_now();
        reference_admission(ctx, seq);
        t[T_ADMISSION] += bb_time_now() - ta;
    }
    if (is_src && is_dst) {
        memcpy(ctx->raw_recv, ctx->raw_send, (size_t)ctx->nbytes);
    } else if (is_src) {
        if (round_trip && MPI_Irecv(receipt, 2, MPI_INT64_T, o->destination, 1, comm,
                                    &receipt_req) != MPI_SUCCESS)
            bb_run_fatal(ctx->run, "%s MPI_Irecv failed", variant_names[variant]);
        if (MPI_Isend(ctx->raw_send, count, MPI_BYTE, o->destination, 0, comm, &req)
            != MPI_SUCCESS)
            bb_run_fatal(ctx->run, "%s MPI_Isend failed", variant_names[variant]);
    } else if (is_dst) {
        if (MPI_Irecv(ctx->raw_recv, count, MPI_BYTE, o->source, 0, comm, &req)
            != MPI_SUCCESS)
            bb_run_fatal(ctx->run, "%s MPI_Irecv failed", variant_names[variant]);
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
                bb_run_fatal(ctx->run, "%s MPI_Test failed", variant_names[variant]);
            completed = done;
        }
        progress_s += bb_time_now() - tp;
    }
    double tw = bb_time_now();
    if (!done && MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        bb_run_fatal(ctx->run, "%s MPI_Wait failed", variant_names[variant]);
    double wait_s = bb_time_now() - tw, receipt_s = 0.0;
    if (rounds) {
        ta = bb_time_now();
        reference_max(ctx);
        t[T_STATUS] += bb_time_now() - ta;
    }
    if (is_dst) {
        if (o->corrupt_byte >= 0 && o->corrupt_byte < ctx->nbytes)
            ctx->raw_recv[o->corrupt_byte] ^= 1u;
        int64_t bad = pattern_check(ctx->raw_recv, ctx->nbytes, seq);
        pr->bad_bytes += bad;
        if (round_trip && !is_src) {
            int64_t back[2] = { seq, bad > 0 };
            double tr = bb_time_now();
            if (MPI_Send(back, 2, MPI_INT64_T, o->source, 1, comm) != MPI_SUCCESS)
                bb_run_fatal(ctx->run, "%s MPI_Send failed", variant_names[variant]);
            receipt_s = bb_time_now() - tr;
        }
    }
    if (round_trip && is_src && !is_dst) {
        double tr = bb_time_now();
        if (MPI_Wait(&receipt_req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            bb_run_fatal(ctx->run, "%s MPI_Wait failed", variant_names[variant]);
        receipt_s = bb_time_now() - tr;
        if (receipt[0] != seq)
            pr->bad_bytes++;
    }
    if (rounds) {
        ta = bb_time_now();
        reference_max(ctx);
        t[T_TERMINAL] += bb_time_now() - ta;
    }
    t[T_ELAPSED] += bb_time_now() - t0;
    t[T_COMPUTE] += compute_s;
    t[T_PROGRESS] += progress_s;
    t[T_WAIT] += wait_s + receipt_s;
    t[T_WAIT_PAYLOAD] += wait_s;
    t[T_WAIT_RECEIPT] += receipt_s;
    cnt[C_BATCHES] += (double)ctx->batches;
    cnt[C_POLLS] += (double)ctx->batches;
    cnt[C_COMPLETED] += completed;
    pr->p2p = pr->p2p || (is_src != is_dst);
    pr->payload_bytes = (is_src || is_dst) ? ctx->nbytes : 0;
    return BB_OK;
}

/* agreements and admission: the phase's collectives with no payload. */
static bb_status_t agreements_call(run_ctx_t *ctx, double *t, int all)
{
    double t0 = bb_time_now();
    reference_admission(ctx, ctx->raw_seq++);
    double t1 = bb_time_now();
    t[T_ADMISSION] += t1 - t0;
    if (all) {
        reference_max(ctx);
        double t2 = bb_time_now();
        t[T_STATUS] += t2 - t1;
        reference_max(ctx);
        t[T_TERMINAL] += bb_time_now() - t2;
    }
    t[T_ELAPSED] += bb_time_now() - t0;
    return BB_OK;
}

static bb_status_t row_call(void *arg, double *t, double *cnt)
{
    row_arg_t *a = arg;
    run_ctx_t *ctx = a->ctx;
    const row_t *row = &ctx->rows[a->r];
    ctx->pr = &ctx->results[a->r];
    ctx->phase = ctx->phases[a->r];
    ctx->admission = ctx->admissions[a->r];
    ctx->max = ctx->maxes[a->r];
    switch (row->variant) {
    case V_PROTOCOL: return protocol_call(ctx, t, cnt);
    case V_AGREEMENTS: return agreements_call(ctx, t, 1);
    case V_ADMISSION: return agreements_call(ctx, t, 0);
    default: return raw_call(ctx, t, cnt, row->variant);
    }
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

/* Collective.  Fresh buffers: a data rank holds 232 + nbytes during a
 * ticket and nothing between; retained: 232 + the largest cap presented
 * (its buffer's capacity) during one and at most that cap between. */
static void census_gather(run_ctx_t *ctx, int r, census_t *cs)
{
    const point_result_t *pr = &ctx->results[r];
    int retained = row_attr(ctx, &ctx->rows[r])->buffers == BB_BUFFERS_RETAINED;
    int64_t mine[K_N] = { role_of(&ctx->o, ctx->rank), pr->tracked_peak, pr->max_inflight,
                          pr->payload_bytes, bb_transfer_phase_tracked_live(ctx->phases[r]) };
    memset(cs, 0, sizeof *cs);
    cs->bound_payload = retained ? cap_of(ctx) + (ctx->o.mismatch_field == MISMATCH_CAP)
                                 : ctx->nbytes;
    if (ctx->rank == 0 && (cs->per_rank = calloc((size_t)ctx->size * K_N, sizeof(int64_t))) == NULL)
        bb_run_fatal(ctx->run, "out of memory");
    if (MPI_Gather(mine, K_N, MPI_INT64_T, cs->per_rank, K_N, MPI_INT64_T, 0,
                   bb_run_comm(ctx->run)) != MPI_SUCCESS)
        bb_run_fatal(ctx->run, "MPI_Gather of the census failed");
    if (ctx->rank != 0)
        return;
    for (int q = 0; q < ctx->size; q++) {
        const int64_t *k = cs->per_rank + (size_t)q * K_N;
        int role = (int)k[K_ROLE];
        int64_t payload = role != BB_TRANSFER_ROLE_NONE ? cs->bound_payload : 0;
        int credit = role == BB_TRANSFER_ROLE_SOURCE ? 2
                     : role == BB_TRANSFER_ROLE_DESTINATION ? 1 : 0;
        if (k[K_TRACKED] > BB_TRANSFER_CENSUS_BYTES + payload || k[K_INFLIGHT] > credit
            || k[K_BETWEEN] > (retained ? payload : 0))
            cs->over_bound = 1;
        for (int j = 0; j < K_N; j++)
            if (k[j] > cs->worst[role][j])
                cs->worst[role][j] = k[j];
    }
}

static cJSON *census_json(const run_ctx_t *ctx, const census_t *cs, int retained)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "bound", retained
                            ? "retained buffers: 232 bytes of control and receipt per "
                              "rank plus the largest cap presented on data ranks during "
                              "a ticket, at most that cap between tickets; at most 2 "
                              "requests live on the source, 1 on the destination, 0 "
                              "elsewhere"
                            : "232 bytes of control and receipt per rank plus nbytes on "
                              "data ranks, nothing between tickets; at most 2 requests "
                              "live on the source, 1 on the destination, 0 elsewhere");
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

static cJSON *parameters_new(const run_ctx_t *ctx, const row_t *row)
{
    const options_t *o = &ctx->o;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "bytes", (double)ctx->nbytes);
    cJSON_AddNumberToObject(p, "batches", (double)ctx->batches);
    cJSON_AddNumberToObject(p, "compute_per_batch_s", o->compute_s);
    cJSON_AddStringToObject(p, "mode", variant_names[row->variant]);
    cJSON_AddStringToObject(p, "api", o->api == API_RUN ? "run" : "ticket");
    cJSON_AddNumberToObject(p, "source", o->source);
    cJSON_AddNumberToObject(p, "destination", o->destination);
    cJSON_AddNumberToObject(p, "max_bytes", (double)cap_of(ctx));
    /* The references have no payload buffer of the phase's: no buffers. */
    if (row->variant == V_PROTOCOL || HAS_ADMISSION(row->variant))
        bb_policy_parameters(p, row_attr(ctx, row), row->variant == V_PROTOCOL);
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
static const char *const rounds_elapsed_includes[] = {
    "phase.admission", "phase.compute", "phase.progress", "communication.wait",
    "phase.status_agreement", "phase.terminal_agreement", NULL
};
static const char *const agreements_elapsed_includes[] = {
    "phase.admission", "phase.status_agreement", "phase.terminal_agreement", NULL
};

static void record_point(run_ctx_t *ctx, int r)
{
    const row_t *row = &ctx->rows[r];
    const point_result_t *pr = &ctx->results[r];
    int v = row->variant, protocol = v == V_PROTOCOL;
    const char *scope = "call/max-rank";
    int refused = pr->refused_calls > 0;
    size_t n = (size_t)pr->m.samples;
    char absent[160];
    if (v == V_RAW)
        snprintf(absent, sizeof absent, "raw mode: plain Isend/Irecv has no protocol phases");
    else
        snprintf(absent, sizeof absent, "%s reference: not part of it", variant_names[v]);
    cJSON *q = cJSON_CreateObject(), *first = cJSON_CreateObject();
    for (int i = 0; i < T_N; i++) {
        if (!(variant_parts[v] & PART(i))) {
            bb_quantities_add(q, t_names[i], bb_quantity_null("s", scope,
                              v == V_RAW && i == T_WAIT_RECEIPT ? "raw mode: no receipt"
                                                                : absent));
            continue;
        }
        const char *const *inc = NULL;
        if (i == T_ELAPSED)
            inc = protocol ? elapsed_includes
                : v == V_ROUNDS ? rounds_elapsed_includes
                : v == V_AGREEMENTS ? agreements_elapsed_includes
                : v == V_ADMISSION ? NULL : raw_elapsed_includes;
        else if (i == T_WAIT && v != V_RAW)
            inc = wait_includes;
        bb_quantities_add(q, t_names[i],
                          bb_quantity_timing(bb_measure_part(&pr->m, i), n, scope, inc));
        bb_quantities_add(first, t_names[i], bb_quantity_value(pr->m.first[i], "s", scope));
    }
    bb_summary_t s;
    if (HAS_PAYLOAD(v)) {
        bb_stats_summarize(bb_measure_count(&pr->m, C_BATCHES), n, &s);
        bb_quantities_add(q, "phase.batches_executed",
                          bb_quantity_value(s.median, "count", scope));
        bb_stats_summarize(bb_measure_count(&pr->m, C_POLLS), n, &s);
        bb_quantities_add(q, "phase.polls", bb_quantity_value(s.median, "count", scope));
    } else {
        bb_quantities_add(q, "phase.batches_executed", bb_quantity_null("count", scope, absent));
        bb_quantities_add(q, "phase.polls", bb_quantity_null("count", scope, absent));
    }
    if (!HAS_PAYLOAD(v))
        bb_quantities_add(q, "completed_during_batches",
                          bb_quantity_null("ratio", "run/max-rank", absent));
    else if (!pr->p2p)
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
                      !HAS_PAYLOAD(v) ? bb_quantity_null("byte", "call/rank", absent)
                      : refused ? bb_quantity_null("byte", "call/rank",
                                                   "refused: no payload was posted")
                                : bb_quantity_value((double)ctx->nbytes, "byte", "call/rank"));
    if (protocol && pr->cs.per_rank != NULL) {
        int64_t inflight = 0, tracked = 0, between = 0;
        for (int k = 0; k < 4; k++) {
            if (pr->cs.worst[k][K_INFLIGHT] > inflight)
                inflight = pr->cs.worst[k][K_INFLIGHT];
            if (pr->cs.worst[k][K_TRACKED] > tracked)
                tracked = pr->cs.worst[k][K_TRACKED];
            if (pr->cs.worst[k][K_BETWEEN] > between)
                between = pr->cs.worst[k][K_BETWEEN];
        }
        bb_quantities_add(q, "communication.max_inflight",
                          bb_quantity_value((double)inflight, "count", scope));
        bb_quantities_add(q, "memory.tracked_live",
                          bb_quantity_value((double)tracked, "byte", scope));
        bb_quantities_add(q, "memory.tracked_between_calls",
                          bb_quantity_value((double)between, "byte", "call/max-rank"));
    } else {
        bb_quantities_add(q, "communication.max_inflight",
                          bb_quantity_null("count", scope, v == V_RAW
                                           ? "raw mode: not counted by a phase" : absent));
        bb_quantities_add(q, "memory.tracked_live",
                          bb_quantity_null("byte", scope, "raw mode: buffers are the "
                                           "benchmark's, not counted by a phase"));
    }
    bb_quantities_add(q, "memory.rss_peak",
                      bb_quantity_value((double)pr->rss_peak, "byte", "run/max-rank"));
    bb_quantities_add_unobservable(q);
    bb_record_t *rec = bb_bench_record(bb_run_bench(ctx->run));
    bb_record_add_point(rec, parameters_new(ctx, row), refused ? "refused" : "ok",
                        refused ? &pr->refusal : NULL, first, q);
    if (protocol && pr->cs.per_rank != NULL) {
        cJSON *points = cJSON_GetObjectItemCaseSensitive(bb_record_json(rec), "points");
        cJSON *last = points ? cJSON_GetArrayItem(points, cJSON_GetArraySize(points) - 1) : NULL;
        if (last != NULL)
            cJSON_AddItemToObject(last, "census",
                                  census_json(ctx, &pr->cs, row_attr(ctx, row)->buffers
                                                                == BB_BUFFERS_RETAINED));
    }
}

/* 1 when policies p and q make the same agreements (admission and
 * requests; the buffers do not enter them). */
static int same_agreements(const run_ctx_t *ctx, int p, int q)
{
    const bb_phase_attr_t *a = &ctx->o.policies[p], *b = &ctx->o.policies[q];
    return a->admission == b->admission && a->requests == b->requests;
}

/* The row measured for variant v (with policy's admission and requests when
 * v makes agreements), or -1. */
static int row_find(const run_ctx_t *ctx, int v, int policy)
{
    for (int r = 0; r < ctx->nrows; r++)
        if (ctx->rows[r].variant == v
            && (!HAS_ADMISSION(v) || same_agreements(ctx, ctx->rows[r].policy, policy)))
            return r;
    return -1;
}

static void table_columns(run_ctx_t *ctx)
{
    bb_table_t *t = bb_run_table(ctx->run);
    int full = bb_run_full(ctx->run);
    char label[64], ref[64], name[96], legend[320], policy[128];
    bb_table_column(t, "bytes", "B", "payload bytes", 8);
    bb_table_column(t, "batches", NULL, "compute batches per call, a poll after each", 7);
    for (int r = 0; r < ctx->nrows; r++) {
        const row_t *row = &ctx->rows[r];
        const bb_phase_attr_t *attr = row_attr(ctx, row);
        row_label(ctx, row, label, sizeof label);
        if (row->variant == V_PROTOCOL) {
            bb_policy_describe(attr, policy, sizeof policy);
            snprintf(legend, sizeof legend, "the phase (%s): time per call (median, min, "
                     "max of the samples; each sample the rank maximum)", policy);
            bb_table_time_columns(t, label, legend, full);
            snprintf(name, sizeof name, "%s_agree", label);
            bb_table_column(t, name, "us", "median admission + status + terminal "
                            "agreements, each a rank maximum taken separately (a part "
                            "of the whole, not the critical path)", 0);
            snprintf(name, sizeof name, "%s_done", label);
            bb_table_column(t, name, NULL, "fraction of calls where a poll after a batch "
                            "saw the local payload complete", 0);
        } else if (row->variant == V_RAW) {
            bb_table_time_columns(t, label, "raw stream: time per call (median, min, max)",
                                  full);
        } else if (HAS_ADMISSION(row->variant)) {
            snprintf(legend, sizeof legend, "%s reference (admission %s, requests %s): "
                     "median time per call", variant_names[row->variant],
                     bb_admission_name(attr->admission), bb_requests_name(attr->requests));
            bb_table_column(t, label, "us", legend, 10);
        } else {
            snprintf(legend, sizeof legend, "%s reference: median time per call",
                     variant_names[row->variant]);
            bb_table_column(t, label, "us", legend, 10);
        }
    }
    for (int r = 0; r < ctx->nrows; r++) {
        const row_t *row = &ctx->rows[r];
        if (row->variant != V_PROTOCOL)
            continue;
        row_label(ctx, row, label, sizeof label);
        if (row_find(ctx, V_RAW, 0) >= 0) {
            snprintf(name, sizeof name, "%s_raw_ratio", label);
            snprintf(legend, sizeof legend, "%s median / raw median", label);
            bb_table_column(t, name, NULL, legend, 0);
        }
        int rounds = row_find(ctx, V_ROUNDS, row->policy);
        if (rounds >= 0) {
            row_label(ctx, &ctx->rows[rounds], ref, sizeof ref);
            snprintf(name, sizeof name, "%s_rounds_ratio", label);
            snprintf(legend, sizeof legend, "%s median / %s median (its own control round "
                     "trips: the same admission and requests)", label, ref);
            bb_table_column(t, name, NULL, legend, 0);
        }
    }
    bb_table_column(t, "status", NULL, "ok, refused:STAGE:seqS:rankR (the first "
                    "refusal of the protocol), or payload-mismatch", 0);
}

static double median_of(const point_result_t *pr, int part)
{
    return bb_stats_median(bb_measure_part(&pr->m, part), (size_t)pr->m.samples);
}

static void table_row(run_ctx_t *ctx)
{
    bb_table_t *t = bb_run_table(ctx->run);
    int full = bb_run_full(ctx->run);
    bb_table_integer(t, ctx->nbytes);
    bb_table_integer(t, ctx->batches);
    const point_result_t *refused = NULL;
    int mismatch = 0;
    for (int r = 0; r < ctx->nrows; r++) {
        const row_t *row = &ctx->rows[r];
        const point_result_t *pr = &ctx->results[r];
        size_t n = (size_t)pr->m.samples;
        mismatch |= pr->bad_bytes > 0;
        if (row->variant == V_PROTOCOL) {
            if (refused == NULL && pr->refused_calls > 0)
                refused = pr;
            bb_table_time_cells(t, bb_measure_part(&pr->m, T_ELAPSED), n, pr->m.reps, full);
            bb_table_number(t, (median_of(pr, T_ADMISSION) + median_of(pr, T_STATUS)
                                + median_of(pr, T_TERMINAL)) * 1e6, 2);
            if (pr->p2p && pr->refused_calls == 0)
                bb_table_number(t, bb_stats_median(bb_measure_count(&pr->m, C_COMPLETED), n),
                                2);
            else
                bb_table_missing(t);
        } else if (row->variant == V_RAW) {
            bb_table_time_cells(t, bb_measure_part(&pr->m, T_ELAPSED), n, pr->m.reps, full);
        } else {
            bb_table_number(t, median_of(pr, T_ELAPSED) * 1e6, 2);
        }
    }
    for (int r = 0; r < ctx->nrows; r++) {
        const row_t *row = &ctx->rows[r];
        const point_result_t *pr = &ctx->results[r];
        if (row->variant != V_PROTOCOL)
            continue;
        int refs[2] = { row_find(ctx, V_RAW, 0), row_find(ctx, V_ROUNDS, row->policy) };
        for (int k = 0; k < 2; k++) {
            if (refs[k] < 0)
                continue;
            if (pr->refused_calls > 0)
                bb_table_missing(t);
            else
                bb_table_number(t, median_of(pr, T_ELAPSED)
                                       / median_of(&ctx->results[refs[k]], T_ELAPSED), 2);
        }
    }
    char status[64];
    if (refused != NULL) {
        bb_run_format_refusal(&refused->refusal, status, sizeof status);
    } else {
        snprintf(status, sizeof status, "%s", mismatch ? "payload-mismatch" : "ok");
    }
    bb_table_text(t, status);
    bb_table_row_end(t);
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

/* Collective.  Every row at the current point, their samples interleaved;
 * each protocol row on a new phase of its policy (its first ticket is the
 * cold call), with its census (rank 0 gets it). */
static void measure_point(run_ctx_t *ctx)
{
    const options_t *o = &ctx->o;
    bb_measure_variant_t mv[ROWS_MAX];
    bb_measure_result_t res[ROWS_MAX];
    memset(res, 0, sizeof res);
    for (int r = 0; r < ctx->nrows; r++) {
        const row_t *row = &ctx->rows[r];
        point_result_t *pr = &ctx->results[r];
        memset(pr, 0, sizeof *pr);
        pr->refusal.rank = -1;
        ctx->args[r] = (row_arg_t){ ctx, r };
        mv[r] = (bb_measure_variant_t){ .nparts = T_N, .ncounts = C_N, .call = row_call,
                                        .arg = &ctx->args[r] };
        ctx->phases[r] = NULL;
        ctx->admissions[r] = ctx->maxes[r] = NULL;
        const bb_phase_attr_t *attr = row_attr(ctx, row);
        if (HAS_ADMISSION(row->variant)) {
            /* Made per point, as the phase's are, so that a persistent
             * request is made at the point's first call in both.  The
             * one-field MAX is one Allreduce whatever the admission: spec,
             * as the phase's, makes no fused-op type for it. */
            bb_phase_attr_t max_attr = *attr;
            max_attr.admission = BB_ADMISSION_SPEC;
            if (bb_agreement_create(bb_run_comm(ctx->run), BB_TRANSFER_FIELDS, attr,
                                    &ctx->admissions[r]) != BB_OK
                || bb_agreement_create(bb_run_comm(ctx->run), 1, &max_attr,
                                       &ctx->maxes[r]) != BB_OK)
                bb_run_fatal(ctx->run, "cannot create the reference agreements");
        }
        if (row->variant != V_PROTOCOL)
            continue;
        if (bb_transfer_phase_create_attr(bb_bench_world(bb_run_bench(ctx->run)), attr,
                                          &ctx->phases[r]) != BB_OK)
            bb_run_fatal(ctx->run, "cannot create the transfer phase");
        if (ctx->rank == o->delay_post_rank)
            bb_transfer_phase_set_post_delay(ctx->phases[r], o->delay_post_s);
        if (o->corrupt_byte >= 0)
            bb_transfer_phase_set_corrupt_byte(ctx->phases[r], o->corrupt_byte);
    }
    /* The first row's calls per sample (given or fitted to the budget) serve
     * every row, so that every column is a mean over as many calls. */
    bb_run_measure_set(ctx->run, "transfer point", mv, ctx->nrows, 1, res);
    ctx->pr = NULL;
    ctx->phase = NULL;
    ctx->admission = ctx->max = NULL;
    /* Their persistent requests are inactive now (every call waited). */
    for (int r = 0; r < ctx->nrows; r++) {
        bb_agreement_destroy(ctx->admissions[r]);
        bb_agreement_destroy(ctx->maxes[r]);
        ctx->admissions[r] = ctx->maxes[r] = NULL;
    }
    /* The facts that decide the status, agreed with MAX over ranks. */
    int64_t local[ROWS_MAX * 4], max[ROWS_MAX * 4];
    int64_t rss = bb_rss_peak_bytes();
    for (int r = 0; r < ctx->nrows; r++) {
        const point_result_t *pr = &ctx->results[r];
        local[4 * r] = pr->refused_calls;
        local[4 * r + 1] = pr->bad_bytes;
        local[4 * r + 2] = rss;
        local[4 * r + 3] = pr->p2p;
    }
    if (bb_agree_max(bb_run_comm(ctx->run), local, 4 * ctx->nrows, max) != MPI_SUCCESS)
        bb_run_fatal(ctx->run, "MPI_Allreduce of counters failed");
    for (int r = 0; r < ctx->nrows; r++) {
        point_result_t *pr = &ctx->results[r];
        pr->m = res[r];
        pr->refused_calls = max[4 * r];
        pr->bad_bytes = max[4 * r + 1];
        pr->rss_peak = max[4 * r + 2];
        pr->p2p = max[4 * r + 3];
        if (ctx->phases[r] == NULL)
            continue;
        census_gather(ctx, r, &pr->cs);
        bb_status_t st = bb_transfer_phase_close(ctx->phases[r]);
        if (st != BB_OK)
            bb_run_fatal(ctx->run, "closing the transfer phase: %s", bb_status_string(st));
        ctx->phases[r] = NULL;
    }
}

static int transfer_point(bb_run_t *run, void *state, size_t i)
{
    run_ctx_t *ctx = state;
    const options_t *o = &ctx->o;
    int code = BB_EXIT_OK;
    ctx->nbytes = o->bytes.values[i / o->batches.n];
    ctx->batches = o->batches.values[i % o->batches.n];
    ctx->phase_id = (int64_t)i;
    measure_point(ctx);
    if (ctx->rank == 0) {
        table_row(ctx);
        for (int r = 0; r < ctx->nrows; r++)
            record_point(ctx, r);
    }
    char label[64];
    for (int r = 0; r < ctx->nrows; r++) {
        point_result_t *pr = &ctx->results[r];
        row_label(ctx, &ctx->rows[r], label, sizeof label);
        if (ctx->rows[r].variant == V_PROTOCOL) {
            if (pr->refused_calls > 0 && !refusal_asked(o)) {
                bb_run_note(run, "error: %lld bytes refused (%s) without a refusal being "
                            "asked for", (long long)ctx->nbytes,
                            bb_stage_name(pr->refusal.stage));
                code = BB_EXIT_FAILURE;
            }
            if (pr->bad_bytes > 0) {
                bb_run_note(run, "error: %lld bytes, %lld batches: payload check failed "
                            "(%lld bad bytes in one call)", (long long)ctx->nbytes,
                            (long long)ctx->batches, (long long)pr->bad_bytes);
                code = BB_EXIT_FAILURE;
            }
            /* The census is rank 0's alone; the runner's exit code is rank 0's. */
            if (ctx->rank == 0 && pr->cs.over_bound) {
                bb_run_note(run, "error: %s %lld bytes: census over its bound", label,
                            (long long)ctx->nbytes);
                code = BB_EXIT_FAILURE;
            }
            if (ctx->rank == 0)
                census_accumulate(ctx, &pr->cs);
        } else if (pr->bad_bytes > 0) {
            bb_run_note(run, "error: %s %lld bytes: payload check failed", label,
                        (long long)ctx->nbytes);
            code = BB_EXIT_FAILURE;
        }
        free(pr->cs.per_rank);
        pr->cs.per_rank = NULL;
        bb_measure_result_clear(&pr->m);
    }
    return code;
}

/* ------------------------------------------------------------------------ */
/* The descriptor */

enum { OPT_BATCHES = BB_OPT_LONG, OPT_COMPUTE, OPT_SOURCE, OPT_DEST, OPT_MAX, OPT_API,
       OPT_MODE, OPT_FAIL_COMPUTE,
       OPT_FAIL_CONSUMER, OPT_REFUSE, OPT_MISMATCH, OPT_DPOST, OPT_CORRUPT };

static const bb_option_t transfer_options[] = {
    {"bytes", 'b', "LIST", "payload bytes: 8,64K,4M or 8:4M[:x4|:+N]\n"
                           "(suffixes K=2^10, M=2^20; default " BYTES_DEFAULT ",\n"
                           "--full-sweep " BYTES_FULL "); or -m in bytes"},
    {"batches", OPT_BATCHES, "LIST", "compute batches per call (default " BATCHES_DEFAULT ",\n"
                                       "--full-sweep " BATCHES_FULL ")"},
    {"compute", OPT_COMPUTE, "SECONDS", "compute per batch, MPI-free kernel calibrated\n"
                                        "at start-up (default 10e-6)"},
    {"source", OPT_SOURCE, "R", "the sending rank (default 0)"},
    {"destination", OPT_DEST, "R", "the receiving rank (default the last rank)"},
    {"max-bytes", OPT_MAX, "N", "the cap presented (default: each size)"},
    {"api", OPT_API, "API", "run or ticket (begin, batches and progress\n"
                            "driven here, finish) (default run)"},
    {"mode", OPT_MODE, "LIST", "what to measure, a comma list of protocol, raw,\n"
                               "raw-pingpong, raw-rounds, agreements, admission;\n"
                               "both (= protocol,raw, the default) or all"},
    BB_POLICY_OPTIONS("ticket"),
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
    bb_policy_defaults(&o->choice);
    o->fail_compute_rank = o->refuse_rank = o->mismatch_rank = o->delay_post_rank = -1;
    o->corrupt_byte = -1;
}

static void transfer_parse(bb_run_t *run, void *state, int key, const char *value)
{
    options_t *o = &((run_ctx_t *)state)->o;
    char err[512];
    const char *rest;
    /* Options without a value (--fail-consumer) never reach the policy
     * parser, which reads value before looking at key. */
    if (value != NULL && bb_policy_parse(run, key, value, &o->choice))
        return;
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
    case OPT_MODE:
        o->mode = strcmp(value, "both") == 0
                      ? MODE_BOTH
                      : bb_run_parse_choices(run, "mode", value, variant_names, V_N);
        break;
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
    o->full_sweep = bb_run_full_sweep(run);  /* --full-sweep: the long lists */
    if (o->full_sweep && (o->bytes.n > 0 || o->batches.n > 0))
        bb_run_usage(run, "--full-sweep chooses the default lists: not with --bytes or "
                     "--batches");
    bb_run_message_sizes(run, "bytes", 1, 8, 4 << 20, &o->bytes);  /* -m */
    if (o->bytes.n == 0)
        bb_run_parse_size_list(run, "bytes", o->full_sweep ? BYTES_FULL : BYTES_DEFAULT, 0,
                               INT32_MAX, &o->bytes);
    if (o->batches.n == 0)
        bb_run_parse_size_list(run, "batches", o->full_sweep ? BATCHES_FULL : BATCHES_DEFAULT,
                               0, 1000000, &o->batches);
    if (o->destination < 0)
        o->destination = ctx->size - 1;
    if (!(o->mode & MODE_PROTOCOL) && o->choice.buffers != 1u)
        bb_run_usage(run, "--buffers chooses the protocol's policy: --mode must include "
                     "protocol");
    int agreeing = (o->mode & MODE_PROTOCOL) != 0;
    for (int v = V_RAW; v < V_N; v++)
        agreeing |= HAS_ADMISSION(v) && (o->mode & (1u << v));
    if (!agreeing && bb_policy_given(&o->choice))
        bb_run_usage(run, "--admission and --requests choose the protocol's and the "
                     "references' agreements: --mode must include protocol, raw-rounds, "
                     "agreements or admission");
    /* The rows of every point: the protocol under each policy asked for, then
     * the references in their order, those that make agreements once per
     * distinct admission and requests pair (at its first policy). */
    o->npolicies = bb_policy_list(&o->choice, o->policies);
    ctx->nrows = 0;
    if (o->mode & MODE_PROTOCOL)
        for (int p = 0; p < o->npolicies; p++)
            ctx->rows[ctx->nrows++] = (row_t){ V_PROTOCOL, p };
    for (int v = V_RAW; v < V_N; v++) {
        if (!(o->mode & (1u << v)))
            continue;
        if (!HAS_ADMISSION(v)) {
            ctx->rows[ctx->nrows++] = (row_t){ v, 0 };
            continue;
        }
        for (int p = 0; p < o->npolicies; p++) {
            int seen = 0;
            for (int q = 0; q < p && !seen; q++)
                seen = same_agreements(ctx, p, q);
            if (!seen)
                ctx->rows[ctx->nrows++] = (row_t){ v, p };
        }
    }
    return o->bytes.n * o->batches.n;
}

/* What each label suffix in use means, once. */
static void policy_notes(run_ctx_t *ctx)
{
    bb_table_t *t = bb_run_table(ctx->run);
    int retained = 0, fused = 0, fused_op = 0, persistent = 0;
    for (int r = 0; r < ctx->nrows; r++) {
        const row_t *row = &ctx->rows[r];
        const bb_phase_attr_t *attr = row_attr(ctx, row);
        if (row->variant != V_PROTOCOL && !HAS_ADMISSION(row->variant))
            continue;
        retained |= row->variant == V_PROTOCOL && attr->buffers == BB_BUFFERS_RETAINED;
        fused |= attr->admission == BB_ADMISSION_FUSED;
        fused_op |= attr->admission == BB_ADMISSION_FUSED_OP;
        persistent |= attr->requests == BB_REQUESTS_PERSISTENT;
    }
    if (retained)
        bb_table_note(t, "-retained: the phase keeps its payload buffer between tickets "
                      "(capacity the largest cap presented)");
    if (fused)
        bb_table_note(t, "-fused: the admission as one MPI_Allreduce(MIN) over the nine "
                      "fields and their complements");
    if (fused_op)
        bb_table_note(t, "-fused-op: the same 18 int64 as one element of a contiguous "
                      "type under a user-defined MIN (the MPI library picks its algorithm "
                      "for one element)");
    if (persistent)
        bb_table_note(t, "-persistent: every agreement a persistent collective, "
                      "MPI_Allreduce_init at the first call of a point (the phase's first "
                      "ticket; the references' first call), MPI_Start at each; the "
                      "payload stays Isend/Irecv");
}

/* Collective: buffers, the kernel, the notes and the table's columns. */
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
    bb_table_t *t = bb_run_table(run);
    if (ctx->load_start >= 0.0)
        bb_table_note(t, "host load average (1 min) at start: %.2f", ctx->load_start);
    bb_table_note(t, "source %d, destination %d, api %s, compute %.3g s per batch = %lld "
                  "kernel iterations (calibrated %.4g iterations/s, slowest rank; a batch "
                  "measured %.3g s)", o->source, o->destination,
                  o->api == API_RUN ? "run" : "ticket", o->compute_s,
                  (long long)ctx->fx.iterations, ctx->kernel.slowest_rate,
                  ctx->kernel.batch_measured_s);
    bb_table_note(t, "times in microseconds per call, each sample the rank maximum; the "
                  "rows' samples interleaved, %lld per point",
                  (long long)bb_run_settings(run)->samples);
    for (int v = 0; v < V_N; v++)
        if (o->mode & (1u << v))
            bb_table_note(t, "%s: %s", variant_names[v], variant_differs[v]);
    policy_notes(ctx);
    table_columns(ctx);
}

static void transfer_label(const void *state, size_t i, char *buf, size_t len)
{
    const options_t *o = &((const run_ctx_t *)state)->o;
    snprintf(buf, len, "%lld bytes, %lld batches",
             (long long)o->bytes.values[i / o->batches.n],
             (long long)o->batches.values[i % o->batches.n]);
}

static void census_note(run_ctx_t *ctx)
{
    static const char *const roles[4] = { "inactive", "source", "destination", "same-rank" };
    const census_t *all = &ctx->census_all;
    char line[512];
    size_t used = 0;
    used += (size_t)snprintf(line, sizeof line, "census (measured, largest over points): ");
    for (int r = 0; r < 4; r++) {
        int seen = 0;
        for (int q = 0; q < ctx->size; q++)
            seen |= role_of(&ctx->o, q) == r;
        if (seen && used < sizeof line)
            used += (size_t)snprintf(line + used, sizeof line - used,
                                     "%s %lld B, %lld requests; ", roles[r],
                                     (long long)all->worst[r][K_TRACKED],
                                     (long long)all->worst[r][K_INFLIGHT]);
    }
    if (used < sizeof line)
        snprintf(line + used, sizeof line - used, "%s",
                 all->over_bound ? "OVER THE BOUND" : "within the bound");
    bb_table_note(bb_run_table(ctx->run), "%s", line);
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

/* Collective: every provider array released exactly once; rank 0 notes the
 * census and sets the record's run section. */
static int transfer_finish(bb_run_t *run, void *state)
{
    run_ctx_t *ctx = state;
    int code = bb_run_check_released(run, "provider arrays", ctx->fx.prepared,
                                     ctx->fx.released);
    if (ctx->rank != 0)
        return code;
    if (ctx->have_census)
        census_note(ctx);
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
                            "checksum inside the call; the raw references do the same "
                            "generation and check");
    cJSON *modes = cJSON_CreateObject();
    for (int v = 0; v < V_N; v++)
        if (ctx->o.mode & (1u << v))
            cJSON_AddStringToObject(modes, variant_names[v], variant_differs[v]);
    cJSON_AddItemToObject(summary, "modes", modes);
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
    .summary = "Measure the bounded transfer phase (nine-field admission, payload\n"
               "Isend/Irecv, compute batches with one poll after each, status agreement,\n"
               "consumer, receipt, terminal agreement) against references in the same\n"
               "run, their samples interleaved: a raw Isend/Irecv stream with the same\n"
               "batches, a ping-pong (payload one way, receipt back), the ping-pong with\n"
               "the phase's agreements (its control round trips), the agreements alone\n"
               "and the admission alone.  The protocol is measured under every policy\n"
               "asked for (--buffers, --admission, --requests); the references that make\n"
               "its agreements (raw-rounds, agreements, admission) once per admission\n"
               "and requests pair asked for, with the same agreements.  Launch with\n"
               "mpiexec -n P (P = 1: a same-rank transfer).",
    .notes = "Demonstrations: a refusal asked for (--fail-compute, --fail-consumer,\n"
             "--refuse-rank, --mismatch-rank) is recorded and exits 0.  The payload is a\n"
             "byte pattern of the ticket's sequence and the offset; the destination\n"
             "checks every byte and a checksum inside the timed call (the raw\n"
             "references do the same generation and check).  Times in the table are\n"
             "microseconds.  Exit 1 also for an unrequested refusal, a payload mismatch\n"
             "or a census over its bound.",
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
