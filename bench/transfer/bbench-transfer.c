/* bbench-transfer: the bounded transfer phase (W=1: agreements, payload,
 * receipt) against references measured in the same run, their samples
 * interleaved: raw MPI_Isend/MPI_Irecv with the same compute batches (a
 * stream), a ping-pong (payload one way, receipt back), that ping-pong with
 * the phase's agreements at their places, and the agreements alone.  The
 * protocol is lib/transfer.c; the runner (runner/runner.c,
 * runner/variants.c) measures the variants, reports them and writes the
 * record; bench/transfer/transfer-ref.c holds the fixture, the references' calls
 * and the census; this file the variants, the phase's call and the options. */
#include "config.h"
#include "runner/runner.h"
#include "runner/policy.h"
#include "transfer-ref.h"
#include "private/hooks.h"

#include <stdio.h>
#include <string.h>

/* The protocol and the references, each differing from its neighbour in the
 * ratio chain in one thing (the mode of a point, in this order). */
/* V_PROTOCOL is variant 0, as bb_xfer_row_columns expects. */
enum { V_PROTOCOL, V_RAW, V_PINGPONG, V_ROUNDS, V_AGREEMENTS, V_ADMISSION, V_N };
enum { MODE_PROTOCOL = 1u << V_PROTOCOL, MODE_RAW = 1u << V_RAW,
       MODE_BOTH = MODE_PROTOCOL | MODE_RAW };
/* The references that make the phase's agreements follow its admission and
 * requests policies (one row per distinct pair asked for). */
#define HAS_ADMISSION(v) ((v) == V_ROUNDS || (v) == V_AGREEMENTS || (v) == V_ADMISSION)

enum { ROWS_MAX = BB_RUN_ROWS_MAX };

enum { API_RUN, API_TICKET };

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

static int transfer_refusal_asked(const void *state)
{
    const options_t *o = state;  /* the state's first member */
    return o->fail_compute_rank >= 0 || o->fail_consumer || o->refuse_rank >= 0
           || o->mismatch_rank >= 0;
}

/* ------------------------------------------------------------------------ */
/* Measurement */

/* The parts' names, in the order of BB_XFER_T_* (transfer-ref.h). */
static const char *const t_names[BB_XFER_T_N] = {
    "elapsed", "phase.prepare", "phase.admission", "phase.post", "phase.compute",
    "phase.progress", "communication.wait", "communication.wait.payload",
    "communication.wait.receipt", "phase.status_agreement", "phase.consumer",
    "phase.terminal_agreement"
};
/* The parts each variant times (bit i: t_names[i]). */
#define PART(i) (1u << (i))
#define PARTS_RAW (PART(BB_XFER_T_ELAPSED) | PART(BB_XFER_T_COMPUTE) \
                   | PART(BB_XFER_T_PROGRESS) | PART(BB_XFER_T_WAIT) \
                   | PART(BB_XFER_T_WAIT_PAYLOAD))
#define PARTS_AGREE (PART(BB_XFER_T_ADMISSION) | PART(BB_XFER_T_STATUS) \
                     | PART(BB_XFER_T_TERMINAL))

/* The descriptor's state: the options, then the run. */
typedef struct run_ctx {
    options_t o;              /* first: transfer_refusal_asked reads it */
    bb_run_t *run;
    int rank, size;
    bb_run_kernel_t kernel;
    bb_transfer_phase_t *phases[ROWS_MAX];  /* protocol rows, this point */
    bb_xfer_census_set_t census;            /* protocol rows */
    bb_xfer_fixture_t fx;
    /* The references, and the point being measured (its phase_id, nbytes,
     * cap and batches) for every variant. */
    bb_xfer_ref_t ref;
} run_ctx_t;

static const bb_phase_attr_t *row_attr(const run_ctx_t *ctx, const bb_row_t *row)
{
    return &ctx->o.policies[row->policy];
}

static bb_status_t protocol_call(bb_run_t *run, void *state, bb_row_t *row, double *t,
                                 double *cnt)
{
    run_ctx_t *ctx = state;
    const options_t *o = &ctx->o;
    bb_transfer_phase_t *phase = ctx->phases[row->index];
    bb_transfer_contract_t c = {
        .phase_id = ctx->ref.phase_id, .epoch = 1, .source = o->source,
        .destination = o->destination, .nbytes = ctx->ref.nbytes, .max_bytes = ctx->ref.cap,
        .batches = ctx->ref.batches
    };
    ctx->fx.nbytes = ctx->ref.nbytes;
    ctx->fx.expect_seq = bb_transfer_phase_sequence(phase);
    /* A local preflight refusal on a rank that prepares nothing: a cap
     * below nbytes (or a negative one) is refused before agreement. */
    if (ctx->rank == o->refuse_rank && ctx->rank != o->source)
        c.max_bytes = c.nbytes - 1;
    if (ctx->rank == o->mismatch_rank)
        bb_xfer_mismatch(phase, o->mismatch_field, ctx->size, &c, &ctx->fx);
    bb_transfer_metrics_t m;
    bb_status_t st;
    void *value = NULL;
    int64_t bad_before = ctx->fx.bad_bytes;
    double t0 = bb_time_now();
    if (o->api == API_RUN)
        st = bb_transfer_phase_run(phase, &ctx->fx.provider, &ctx->fx.consumer,
                                   &ctx->fx.compute, &c, &value, &m);
    else
        st = bb_xfer_ticket_call(phase, &ctx->fx, &c, &m);
    double elapsed = bb_time_now() - t0;
    if (st != BB_OK && st != BB_REFUSED)
        bb_run_fatal(run, "transfer phase: %s (stage %s, rank %d)",
                     bb_status_string(st), bb_stage_name(m.refusal.stage), m.refusal.rank);
    t[BB_XFER_T_ELAPSED] += elapsed;
    bb_xfer_metrics_add(&m, st, t, cnt, &row->local);
    row->local.wrong += ctx->fx.bad_bytes - bad_before;
    return BB_OK;
}

/* The references (transfer-ref.c), one variant each. */
static bb_status_t ref_call(bb_run_t *run, void *state, bb_row_t *row, double *t, double *cnt)
{
    static const bb_xfer_ref_kind_t kinds[V_N] = {
        [V_RAW] = BB_XFER_REF_STREAM, [V_PINGPONG] = BB_XFER_REF_PINGPONG,
        [V_ROUNDS] = BB_XFER_REF_ROUNDS, [V_AGREEMENTS] = BB_XFER_REF_AGREEMENTS,
        [V_ADMISSION] = BB_XFER_REF_ADMISSION
    };
    (void)run;
    bb_xfer_ref_call(&((run_ctx_t *)state)->ref, kinds[row->variant], row, t, cnt);
    return BB_OK;
}

/* The protocol and the references, each differing from its neighbour in the
 * ratio chain in one thing (the modes of a point, in this order). */
static const bb_variant_t variants[V_N] = {
    [V_PROTOCOL] = {
        .name = "protocol",
        .differs = "the bounded transfer phase: the nine-field admission, payload copied into "
                   "the phase's buffer, Isend/Irecv with the batches and a poll after each, "
                   "status MAX agreement, consumer check, 16-byte receipt back, terminal MAX "
                   "agreement",
        .call = protocol_call,
        .parts = (1u << BB_XFER_T_N) - 1u,
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
        .ratios = { { .suffix = "_raw_ratio", .to = V_RAW },
                    { .suffix = "_rounds_ratio", .to = V_ROUNDS } },
    },
    [V_RAW] = {
        .name = "raw",
        .differs = "a stream: Isend/Irecv with the same fixture work and batches, one "
                   "MPI_Test after each, a Wait; no agreement and no receipt, so a sender may "
                   "run ahead of its receiver by what MPI buffers (not a latency)",
        .call = ref_call,
        .parts = PARTS_RAW,
        .absent = "raw mode: plain Isend/Irecv has no protocol phases",
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
    },
    [V_PINGPONG] = {
        .name = "raw-pingpong",
        .differs = "raw made a round trip: the source posts a 16-byte receipt Irecv before "
                   "its payload Isend, the destination checks the payload and sends the "
                   "receipt back",
        .call = ref_call,
        .parts = PARTS_RAW | PART(BB_XFER_T_WAIT_RECEIPT),
        .absent = "raw-pingpong reference: not part of it",
        .columns = BB_COLUMNS_MEDIAN,
        .payload = 1,
    },
    [V_ROUNDS] = {
        .name = "raw-rounds",
        .differs = "raw-pingpong with the phase's collectives at their places, made as its "
                   "admission and requests policies make them: the nine-field admission "
                   "before posting, a one-field MAX after the payload and another after the "
                   "receipt (the phase's whole control traffic, without the library)",
        .call = ref_call,
        .parts = PARTS_RAW | PART(BB_XFER_T_WAIT_RECEIPT) | PARTS_AGREE,
        .absent = "raw-rounds reference: not part of it",
        .columns = BB_COLUMNS_MEDIAN,
        .payload = 1,
    },
    [V_AGREEMENTS] = {
        .name = "agreements",
        .differs = "the phase's collectives alone, on every rank: the nine-field admission "
                   "and two one-field MAX agreements, no payload and no receipt",
        .call = ref_call,
        .parts = PART(BB_XFER_T_ELAPSED) | PARTS_AGREE,
        .absent = "agreements reference: not part of it",
        .columns = BB_COLUMNS_MEDIAN,
    },
    [V_ADMISSION] = {
        .name = "admission",
        .differs = "the admission alone: the phase's nine-field agreement, no payload",
        .call = ref_call,
        .parts = PART(BB_XFER_T_ELAPSED) | PART(BB_XFER_T_ADMISSION),
        .absent = "admission reference: not part of it",
        .columns = BB_COLUMNS_MEDIAN,
    },
};

/* ------------------------------------------------------------------------ */
/* One point: what the runner does not do */

/* 1 when policies p and q make the same agreements (admission and
 * requests; the buffers do not enter them). */
static int same_agreements(const run_ctx_t *ctx, int p, int q)
{
    const bb_phase_attr_t *a = &ctx->o.policies[p], *b = &ctx->o.policies[q];
    return a->admission == b->admission && a->requests == b->requests;
}

/* A ratio to an agreement-bearing reference compares like agreements. */
static int transfer_ratio_match(const void *state, const bb_row_t *row, const bb_row_t *ref)
{
    return !HAS_ADMISSION(ref->variant) || same_agreements(state, row->policy, ref->policy);
}

/* Collective.  The point's values; each protocol row on a new phase of its
 * policy (its first ticket is the cold call), the agreement-bearing
 * references on new agreement objects, as the phase's are. */
static int64_t transfer_point_begin(bb_run_t *run, void *state, size_t i)
{
    run_ctx_t *ctx = state;
    const options_t *o = &ctx->o;
    ctx->ref.nbytes = o->bytes.values[i / o->batches.n];
    ctx->ref.batches = o->batches.values[i % o->batches.n];
    ctx->ref.phase_id = (int64_t)i;
    ctx->ref.cap = o->max_bytes >= 0 ? o->max_bytes : ctx->ref.nbytes;
    for (int r = 0; r < bb_run_rows(run); r++) {
        const bb_row_t *row = bb_run_row(run, r);
        const bb_phase_attr_t *attr = row_attr(ctx, row);
        ctx->phases[r] = NULL;
        if (HAS_ADMISSION(row->variant))
            bb_xfer_ref_agreements_create(&ctx->ref, r, attr);
        if (row->variant != V_PROTOCOL)
            continue;
        if (bb_transfer_phase_create_attr(bb_run_world(run), attr,
                                          &ctx->phases[r]) != BB_OK)
            bb_run_fatal(run, "cannot create the transfer phase");
        if (ctx->rank == o->delay_post_rank)
            bb_transfer_phase_set_post_delay(ctx->phases[r], o->delay_post_s);
        if (o->corrupt_byte >= 0)
            bb_transfer_phase_set_corrupt_byte(ctx->phases[r], o->corrupt_byte);
    }
    return ctx->ref.nbytes;
}

/* Collective.  The census of each protocol row (rank 0 gets it), then the
 * point's objects closed (every persistent request is inactive: each call
 * waited). */
static void transfer_point_end(bb_run_t *run, void *state)
{
    run_ctx_t *ctx = state;
    bb_xfer_ref_agreements_destroy(&ctx->ref, bb_run_rows(run));
    for (int r = 0; r < bb_run_rows(run); r++) {
        const bb_row_t *row = bb_run_row(run, r);
        const bb_phase_attr_t *attr = row_attr(ctx, row);
        if (ctx->phases[r] == NULL)
            continue;
        /* A retained buffer holds the largest cap presented: one more on a
         * rank that presents a larger cap. */
        int64_t bound = attr->buffers == BB_BUFFERS_RETAINED
                        ? ctx->ref.cap + (ctx->o.mismatch_field == BB_MISMATCH_CAP)
                        : ctx->ref.nbytes;
        bb_xfer_census_gather(&ctx->ref, &row->local, attr,
                              bb_transfer_phase_tracked_live(ctx->phases[r]), bound,
                              &ctx->census.row[r]);
        bb_status_t st = bb_transfer_phase_close(ctx->phases[r]);
        if (st != BB_OK)
            bb_run_fatal(run, "closing the transfer phase: %s", bb_status_string(st));
        ctx->phases[r] = NULL;
    }
}

static void transfer_parameters(bb_run_t *run, void *state, const bb_row_t *row, cJSON *p)
{
    const run_ctx_t *ctx = state;
    const options_t *o = &ctx->o;
    (void)run;
    cJSON_AddNumberToObject(p, "compute_per_batch_s", o->compute_s);
    cJSON_AddStringToObject(p, "api", o->api == API_RUN ? "run" : "ticket");
    cJSON_AddNumberToObject(p, "source", o->source);
    cJSON_AddNumberToObject(p, "destination", o->destination);
    cJSON_AddNumberToObject(p, "max_bytes", (double)ctx->ref.cap);
    /* The references have no payload buffer of the phase's: no buffers. */
    if (row->variant == V_PROTOCOL || HAS_ADMISSION(row->variant))
        bb_policy_parameters(p, row_attr(ctx, row), row->variant == V_PROTOCOL);
}

/* The counts, the census and request credit; returns the census member. */
static cJSON *transfer_quantities(bb_run_t *run, void *state, const bb_row_t *row, cJSON *q)
{
    const run_ctx_t *ctx = state;
    const bb_xfer_census_t *cs = &ctx->census.row[row->index];
    int v = row->variant;
    if (v == V_RAW)
        bb_quantities_add(q, "communication.wait.receipt",
                          bb_quantity_null("s", "call/max-rank", "raw mode: no receipt"));
    bb_xfer_count_quantities(row, variants[v].payload, q);
    return bb_xfer_census_quantities(v == V_PROTOCOL && cs->per_rank != NULL ? cs : NULL,
                                     bb_run_size(run),
                                     row_attr(ctx, row)->buffers == BB_BUFFERS_RETAINED,
                                     v == V_RAW ? "raw mode: not counted by a phase"
                                                : row->absent, q);
}

/* The table: bytes and batches, then the runner's columns; a protocol row
 * adds its agreements' part and its completion fraction. */
static const bb_key_t transfer_keys[] = {
    {"bytes", "B", "payload bytes", 8, BB_KEY_INTEGER, "bytes"},
    {"batches", NULL, "compute batches per call, a poll after each", 7, BB_KEY_INTEGER,
     "batches"},
    {NULL, NULL, NULL, 0, 0, NULL}
};

static void transfer_key_value(bb_run_t *run, void *state, int k, bb_key_value_t *out)
{
    const run_ctx_t *ctx = state;
    (void)run;
    out->integer = k == 0 ? ctx->ref.nbytes : ctx->ref.batches;
}

/* Every rank: a census over its bound fails the run. */
static int transfer_point_check(bb_run_t *run, void *state)
{
    run_ctx_t *ctx = state;
    return bb_xfer_census_check(run, ctx->ref.nbytes, &ctx->census);
}

/* ------------------------------------------------------------------------ */
/* The descriptor */

enum { OPT_BATCHES = BB_OPT_LONG, OPT_COMPUTE, OPT_SOURCE, OPT_DEST, OPT_MAX, OPT_API,
       OPT_MODE, OPT_FAIL_COMPUTE,
       OPT_FAIL_CONSUMER, OPT_REFUSE, OPT_DPOST, OPT_CORRUPT };

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
    BB_MISMATCH_OPTION("phase_id, epoch,\nsource, destination, nbytes, cap, batches\n"
                       "or sequence"),
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
    case OPT_MODE: o->mode = bb_run_parse_modes(run, value, MODE_BOTH); break;
    case OPT_FAIL_COMPUTE:
        if (bb_cli_parse_rank_prefix(value, bb_run_size(run), &o->fail_compute_rank, &rest,
                                     err, sizeof err) != BB_OK)
            bb_run_usage(run, "--fail-compute: %s", err);
        o->fail_compute_batch = bb_run_parse_size(run, "fail-compute", rest, 0, INT64_MAX);
        break;
    case OPT_FAIL_CONSUMER: o->fail_consumer = 1; break;
    case OPT_REFUSE: o->refuse_rank = bb_run_parse_rank(run, "refuse-rank", value); break;
    case BB_OPT_MISMATCH:
        o->mismatch_field = bb_mismatch_parse(run, value, BB_MISMATCH_BIT(PHASE_ID)
            | BB_MISMATCH_BIT(EPOCH) | BB_MISMATCH_BIT(SOURCE) | BB_MISMATCH_BIT(DESTINATION)
            | BB_MISMATCH_BIT(NBYTES) | BB_MISMATCH_BIT(CAP) | BB_MISMATCH_BIT(BATCHES)
            | BB_MISMATCH_BIT(SEQUENCE), &o->mismatch_rank);
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

/* Variant v under policy p: the protocol's and the agreement-bearing
 * references' labels say what their policy changes
 * ("protocol-retained-fused", "raw-rounds-fused-op-persistent"). */
static void transfer_add_row(bb_run_t *run, const run_ctx_t *ctx, int v, int p)
{
    bb_phase_attr_t attr = ctx->o.policies[p];
    char label[64], legend[320];
    if (v != V_PROTOCOL && !HAS_ADMISSION(v)) {
        bb_run_add_row(run, v, p, NULL, NULL);
        return;
    }
    if (v != V_PROTOCOL)
        attr.buffers = BB_BUFFERS_FRESH;  /* no payload buffer of the phase's */
    bb_policy_label(variants[v].name, &attr, label, sizeof label);
    bb_policy_legend(variants[v].differs, &attr, v == V_PROTOCOL, legend, sizeof legend);
    bb_run_add_row(run, v, p, label, legend);
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
    for (int v = V_PROTOCOL; v < V_N; v++) {
        int per_policy = v == V_PROTOCOL || HAS_ADMISSION(v);
        for (int p = 0; (o->mode & (1u << v)) && p < (per_policy ? o->npolicies : 1); p++) {
            int seen = 0;
            for (int q = 0; q < p && v != V_PROTOCOL && !seen; q++)
                seen = same_agreements(ctx, p, q);
            if (!seen)
                transfer_add_row(run, ctx, v, p);
        }
    }
    return o->bytes.n * o->batches.n;
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
    int me = ctx->rank;
    bb_xfer_fixture_setup(run, &ctx->fx, max_bytes, 0);
    ctx->fx.refuse = me == o->refuse_rank;
    ctx->fx.fail_consumer = o->fail_consumer;
    ctx->fx.fail_batch = me == o->fail_compute_rank ? o->fail_compute_batch : -1;
    ctx->ref = (bb_xfer_ref_t){ .rank = me, .source = o->source,
                                .destination = o->destination,
                                .corrupt_byte = o->corrupt_byte, .fx = &ctx->fx };
    bb_xfer_ref_setup(run, &ctx->ref, max_bytes);
    bb_run_kernel_calibrate(run, o->compute_s, &ctx->kernel);
    ctx->fx.iterations = ctx->kernel.iterations;
    bb_run_kernel_record(run, &ctx->kernel);

    bb_table_t *t = bb_run_table(run);
    bb_table_note(t, "source %d, destination %d, api %s", o->source, o->destination,
                  o->api == API_RUN ? "run" : "ticket");
    unsigned suffixes = 0;  /* what each label suffix in use means, once */
    for (int r = 0; r < bb_run_rows(run); r++) {
        const bb_row_t *row = bb_run_row(run, r);
        if (row->variant == V_PROTOCOL || HAS_ADMISSION(row->variant))
            suffixes |= bb_xfer_policy_suffixes(row_attr(ctx, row), row->variant == V_PROTOCOL);
    }
    bb_xfer_policy_notes(t, suffixes);
}

static void transfer_label(const void *state, size_t i, char *buf, size_t len)
{
    const options_t *o = &((const run_ctx_t *)state)->o;
    snprintf(buf, len, "%lld bytes, %lld batches",
             (long long)o->bytes.values[i / o->batches.n],
             (long long)o->batches.values[i % o->batches.n]);
}

/* Rank 0 notes the census and describes the fixture in the run section. */
static int transfer_finish(bb_run_t *run, void *state)
{
    run_ctx_t *ctx = state;
    cJSON *section = bb_run_section(run);
    if (section == NULL)
        return BB_EXIT_OK;
    bb_xfer_census_note(run, &ctx->census, ctx->o.source, ctx->o.destination);
    cJSON_AddStringToObject(section, "fixture", BB_PAYLOAD_DESCRIPTION "; the consumer "
                            "checks every word and a position-weighted checksum inside the "
                            "call; the raw references do the same generation and check");
    return BB_EXIT_OK;
}

static void transfer_teardown(void *state)
{
    run_ctx_t *ctx = state;
    bb_xfer_fixture_free(&ctx->fx);
    bb_xfer_ref_free(&ctx->ref);
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
    .finish = transfer_finish,
    .teardown = transfer_teardown,
    .variants = variants,
    .nvariants = V_N,
    .part_names = t_names,
    .nparts = BB_XFER_T_N,
    .ncounts = BB_XFER_C_N,
    .point_begin = transfer_point_begin,
    .point_end = transfer_point_end,
    .ratio_match = transfer_ratio_match,
    .refusal_asked = transfer_refusal_asked,
    .keys = transfer_keys,
    .key_value = transfer_key_value,
    .row_columns = bb_xfer_row_columns,
    .row_cells = bb_xfer_row_cells,
    .parameters = transfer_parameters,
    .quantities = transfer_quantities,
    .point_check = transfer_point_check,
};

int main(int argc, char **argv) { return bb_run_main(&transfer_bench, argc, argv); }
