/* bbench-sum: the bounded sum phase (admission + MPI_Iallreduce) against
 * references on the same buffers, in the same run.  The protocol is
 * lib/sum.c; the runner (runner/runner.c, runner/variants.c) measures the
 * variants, reports them and writes the record; this file holds the
 * variants' calls, what the sum phase records of its own, and the options. */
#include "config.h"
#include "runner/runner.h"
#include "runner/policy.h"
#include "allreduce-ref.h"
#include "private/hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The protocol and the references, each differing from its neighbour in the
 * ratio chain in one thing (the mode of a point, in this order). */
enum { V_PROTOCOL, V_RAW, V_RAW_NB, V_RAW_FRESH, V_ADMISSION, V_RAW_PERSISTENT, V_RAW_COPY,
       V_FIXED_RAW, V_RAW_USER_OP, V_N };
enum { MODE_PROTOCOL = 1u << V_PROTOCOL, MODE_RAW = 1u << V_RAW,
       MODE_BOTH = MODE_PROTOCOL | MODE_RAW };


/* Per-call timed parts, in this order (parts[0] is the whole call). */
enum { T_ELAPSED, T_PREPARE, T_ADMISSION, T_POST, T_TEST, T_WAIT, T_N };
static const char *const t_names[T_N] = {
    "elapsed", "phase.prepare", "phase.admission", "phase.post", "phase.test",
    "communication.wait"
};

typedef struct sum_state {
    /* options */
    bb_size_list_t counts;
    int64_t max_elements;     /* -1: equal to each count */
    unsigned mode;            /* bit v: variant v */
    bb_policy_choice_t choice;
    bb_phase_attr_t policies[BB_POLICY_MAX];  /* every combination asked for */
    int npolicies;
    int refuse_rank, mismatch_rank, mismatch_field;
    int delay_prepare_rank, delay_post_rank;
    double delay_prepare_s, delay_post_s;
    bb_reduce_type_t type;    /* -T: of the raw references; the protocol sums
                                 doubles by contract, at the same bytes */
    /* the run */
    bb_run_t *run;
    bb_sum_phase_t *phases[BB_POLICY_MAX];       /* one per policy measured (fixed
                                                    shape: made per point) */
    bb_agreement_t *agreements[BB_POLICY_MAX];   /* the admission references' */
    bb_allreduce_fixture_t fixture;  /* the phase's provider */
    bb_allreduce_ref_t raw;   /* the raw references' buffers */
    int64_t count, phase_id;  /* the point being measured: doubles, the protocol's */
} sum_state_t;

static int sum_refusal_asked(const void *state)
{
    const sum_state_t *s = state;
    return s->refuse_rank >= 0 || s->mismatch_rank >= 0;
}

/* ---- the variants' calls ------------------------------------------------ */

/* One protocol call: timed, then checked outside the timing. */
static bb_status_t protocol_call(bb_run_t *run, void *state, bb_row_t *row, double *t,
                                 double *counts)
{
    sum_state_t *s = state;
    bb_sum_phase_t *phase = s->phases[row->policy];
    (void)counts;
    int rank = bb_run_rank(run);
    bb_sum_contract_t contract = {
        .phase_id = s->phase_id, .epoch = 1, .count = s->count,
        .max_elements = s->max_elements >= 0 ? s->max_elements : s->count
    };
    s->fixture.len = s->count;
    if (rank == s->mismatch_rank) {
        switch (s->mismatch_field) {
        case BB_MISMATCH_PHASE_ID: contract.phase_id++; break;
        case BB_MISMATCH_EPOCH: contract.epoch++; break;
        case BB_MISMATCH_COUNT:
            contract.count++;
            contract.max_elements++;
            s->fixture.len = s->count + 1;
            break;
        case BB_MISMATCH_CAP: contract.max_elements++; break;
        case BB_MISMATCH_SEQUENCE:
            bb_sum_phase_set_sequence(phase, bb_sum_phase_sequence(phase) + 1);
            break;
        }
    }
    double *result = NULL;
    bb_sum_metrics_t m;
    double t0 = bb_time_now();
    bb_status_t st = bb_sum_phase_run(phase, &s->fixture.provider, &contract, &result, &m);
    double elapsed = bb_time_now() - t0;
    if (st != BB_OK && st != BB_REFUSED)
        bb_run_fatal(run, "sum phase: %s in %s (stage %s)", bb_status_string(st),
                     m.mpi_call ? m.mpi_call : "no MPI call", bb_stage_name(m.refusal.stage));
    t[T_ELAPSED] += elapsed;
    if (s->policies[row->policy].metrics == BB_METRICS_TIMED) {  /* else elapsed only */
        t[T_PREPARE] += m.prepare_s;
        t[T_ADMISSION] += m.admission_s;
        t[T_POST] += m.post_s;
        t[T_TEST] += m.test_s;
        t[T_WAIT] += m.wait_s;
    }
    bb_tally_t *pt = &row->local;
    if (m.tracked_bytes > pt->tracked_peak)
        pt->tracked_peak = m.tracked_bytes;
    if (m.max_inflight > pt->max_inflight)
        pt->max_inflight = m.max_inflight;
    if (st == BB_REFUSED) {
        if (pt->refused_calls++ == 0)
            pt->refusal = m.refusal;
        if (m.local_cause != BB_SUM_LOCAL_NONE)
            pt->local_refusals++;
        return BB_OK;
    }
    pt->ok_calls++;
    pt->test_completed += m.test_completed;
    pt->wrong += bb_allreduce_ref_errors(result, BB_REDUCE_DOUBLE, s->count, bb_run_size(run));
    if (s->policies[row->policy].buffers == BB_BUFFERS_FRESH)
        bb_free(result);  /* retained, borrowed: lent by the phase until its next call */
    return BB_OK;
}

/* The plain MPI_Allreduce references (bench/sum/allreduce-ref.c), checked
 * outside the timing. */
static bb_status_t raw_call(bb_run_t *run, void *state, bb_row_t *row, double *t,
                           double *counts)
{
    static const bb_allreduce_kind_t kind[V_N] = {
        [V_RAW] = BB_ALLREDUCE_RAW, [V_RAW_NB] = BB_ALLREDUCE_NB,
        [V_RAW_FRESH] = BB_ALLREDUCE_FRESH, [V_RAW_PERSISTENT] = BB_ALLREDUCE_PERSISTENT,
        [V_RAW_COPY] = BB_ALLREDUCE_COPY, [V_RAW_USER_OP] = BB_ALLREDUCE_USER_OP
    };
    sum_state_t *s = state;
    (void)counts;
    row->local.wrong += bb_allreduce_ref_call(run, &s->raw, kind[row->variant], row->label,
                                              &t[T_ELAPSED]);
    row->local.ok_calls++;
    return BB_OK;
}

/* The agreement the protocol makes, with the same six fields, under the
 * row's admission and requests policies. */
static bb_status_t admission_call(bb_run_t *run, void *state, bb_row_t *row, double *t,
                               double *counts)
{
    sum_state_t *s = state;
    (void)run;
    (void)counts;
    int64_t local[6] = { s->phase_id, 1, s->count, s->count, 0, 0 }, min[6], max[6];
    double t0 = bb_time_now();
    int rc = bb_agreement_minmax(s->agreements[row->policy], local, min, max);
    t[T_ELAPSED] += bb_time_now() - t0;
    if (rc != MPI_SUCCESS)
        bb_run_fatal(s->run, "admission reference: MPI_Allreduce failed");
    row->local.ok_calls++;
    if (!bb_agree_fields_equal(min, max, 0, 6))
        row->local.wrong++;
    return BB_OK;
}

/* The fixed-shape phase's combined reduction alone: no provider, no copy,
 * no fields, no verdict (its buffers hold the point's first call). */
static bb_status_t combined_call(bb_run_t *run, void *state, bb_row_t *row, double *t,
                                 double *counts)
{
    sum_state_t *s = state;
    const double *result = NULL;
    (void)counts;
    double t0 = bb_time_now();
    int rc = bb_sum_phase_combined_raw(s->phases[row->policy], &result);
    t[T_ELAPSED] += bb_time_now() - t0;
    if (rc != MPI_SUCCESS)
        bb_run_fatal(run, "%s: the combined reduction failed", row->label);
    row->local.ok_calls++;
    if (!sum_refusal_asked(s))  /* a refused first call left zeros */
        row->local.wrong += bb_allreduce_ref_errors(result, BB_REDUCE_DOUBLE, s->count,
                                                    bb_run_size(run));
    return BB_OK;
}

/* ---- the variants --------------------------------------------------------- */

/* The protocol and the references, each differing from its neighbour in the
 * ratio chain in one thing (the modes of a point, in this order). */
static const bb_variant_t variants[V_N] = {
    [V_PROTOCOL] = {
        .name = "protocol",
        .differs = "the bounded sum phase: the six-field admission, the contribution copied "
                   "into the phase's buffer (borrowed: not copied; fixed shape: one combined "
                   "reduction instead of admission and payload), the payload posted "
                   "(MPI_Iallreduce, or MPI_Start of a persistent MPI_Allreduce_init), one "
                   "MPI_Test, MPI_Wait",
        .call = protocol_call,
        .parts = (1u << T_N) - 1u,
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
        .ratios = { { .suffix = "_ratio", .to = V_RAW, .plain = "ratio" },
                    { .suffix = "_vs_combined", .to = V_FIXED_RAW, .contains = 1 },
                    { .suffix = "_vs_free", .to = V_PROTOCOL } },
        .shown = 1u << T_ADMISSION,
    },
    [V_RAW] = {
        .name = "raw",
        .differs = "MPI_Allreduce on warm buffers: no admission, no copy, blocking",
        .call = raw_call,
        .parts = 1u,
        .absent = "raw mode: a plain MPI_Allreduce has no protocol phases",
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
    },
    [V_RAW_NB] = {
        .name = "raw-nb",
        .differs = "raw made nonblocking: MPI_Iallreduce, one MPI_Test, MPI_Wait, on warm "
                   "buffers",
        .call = raw_call,
        .parts = 1u,
        .absent = "raw-nb reference: it has no protocol phases",
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
    },
    [V_RAW_FRESH] = {
        .name = "raw-fresh",
        .differs = "raw on fresh buffers: both allocated, filled and freed around each "
                   "MPI_Allreduce (page faults, transport registration)",
        .call = raw_call,
        .parts = 1u,
        .absent = "raw-fresh reference: it has no protocol phases",
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
    },
    [V_ADMISSION] = {
        .name = "admission",
        .differs = "the admission alone: the six-field agreement of the protocol, no payload",
        .call = admission_call,
        .parts = 1u,
        .absent = "admission reference: it has no protocol phases and no payload",
        .columns = BB_COLUMNS_TIMES,
    },
    [V_RAW_PERSISTENT] = {
        .name = "raw-persistent",
        .differs = "raw-nb made persistent: MPI_Allreduce_init once per point (untimed), then "
                   "MPI_Start, one MPI_Test, MPI_Wait, on warm buffers",
        .call = raw_call,
        .parts = 1u,
        .absent = "raw-persistent reference: it has no protocol phases",
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
    },
    [V_RAW_COPY] = {
        .name = "raw-copy",
        .differs = "raw with the protocol's copy: the contribution copied into a warm send "
                   "buffer before each MPI_Allreduce",
        .call = raw_call,
        .parts = 1u,
        .absent = "raw-copy reference: it has no protocol phases",
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
    },
    [V_FIXED_RAW] = {
        .name = "fixed-raw",
        .differs = "the fixed-shape phase's one combined reduction alone (the payload, the "
                   "six fields and their complements under its user op) on its warm buffers: "
                   "no copy, no verdict",
        .call = combined_call,
        .parts = 1u,
        .absent = "fixed-raw reference: it has no protocol phases",
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
    },
    [V_RAW_USER_OP] = {
        .name = "raw-user-op",
        .differs = "raw under a user-defined SUM (MPI_Op_create) instead of the built-in "
                   "MPI_SUM: the price of the fixed shape's user op alone",
        .call = raw_call,
        .parts = 1u,
        .absent = "raw-user-op reference: it has no protocol phases",
        .columns = BB_COLUMNS_TIMES,
        .payload = 1,
    },
};

/* ---- one point: what the runner does not write ------------------------- */

static int64_t sum_point_begin(bb_run_t *run, void *state, size_t i)
{
    sum_state_t *s = state;
    s->count = s->counts.values[i];
    s->phase_id = (int64_t)i;
    bb_allreduce_ref_point(run, &s->raw, 8 * s->count, (s->mode & (1u << V_RAW_PERSISTENT)) != 0);
    /* A fixed-shape phase is made for the point's count (collective,
     * untimed) and called once, so that fixed-raw reduces a contribution. */
    int64_t cap = s->max_elements > s->count ? s->max_elements : s->count;
    for (int p = 0; p < s->npolicies; p++) {
        bb_phase_attr_t a = s->policies[p];
        if (a.shape != BB_SHAPE_FIXED)
            continue;
        a.shape_count = s->count;
        a.shape_cap = cap;
        bb_sum_contract_t k = { s->phase_id, 1, s->count, cap };
        double *r = NULL;
        s->fixture.len = s->count;
        if (bb_sum_phase_destroy(s->phases[p]) != BB_OK
            || bb_sum_phase_create_attr(bb_run_world(run), &a, &s->phases[p])
                   != BB_OK
            || bb_sum_phase_run(s->phases[p], &s->fixture.provider, &k, &r, NULL) == BB_ERR_MPI)
            bb_run_fatal(run, "cannot make the fixed-shape phase of count %lld",
                         (long long)s->count);
        if (a.buffers == BB_BUFFERS_FRESH)
            bb_free(r);
        if (bb_run_rank(run) == s->delay_post_rank)
            bb_sum_phase_set_post_delay(s->phases[p], s->delay_post_s);
    }
    return 8 * s->count;
}

/* A ratio's reference: raw for every protocol row; a fixed-shape row's
 * combined reduction alone (its own phase), and the free-shape phase of
 * the same buffers, requests and metrics (the two-collective design). */
static int sum_ratio_match(const void *state, const bb_row_t *row, const bb_row_t *ref)
{
    const sum_state_t *s = state;
    const bb_phase_attr_t *a = &s->policies[row->policy], *b = &s->policies[ref->policy];
    if (ref->variant == V_FIXED_RAW)
        return a->shape == BB_SHAPE_FIXED && row->policy == ref->policy;
    if (ref->variant == V_PROTOCOL)
        return a->shape == BB_SHAPE_FIXED && b->shape == BB_SHAPE_FREE
               && a->buffers == b->buffers && a->requests == b->requests
               && a->metrics == b->metrics;
    return 1;
}

static void sum_point_end(bb_run_t *run, void *state)
{
    (void)run;
    bb_allreduce_ref_point_end(&((sum_state_t *)state)->raw);
}

/* The row's datatype: the raw references' -T, doubles for the protocol and
 * the admission (whose count is the protocol's). */
static bb_reduce_type_t row_type(const sum_state_t *s, const bb_row_t *row)
{
    return row->variant == V_PROTOCOL || row->variant == V_ADMISSION
                   || row->variant == V_FIXED_RAW ? BB_REDUCE_DOUBLE : s->type;
}

static void sum_parameters(bb_run_t *run, void *state, const bb_row_t *row, cJSON *p)
{
    const sum_state_t *s = state;
    bb_reduce_type_t type = row_type(s, row);
    (void)run;
    cJSON_AddNumberToObject(p, "count", (double)(8 * s->count / bb_reduce_type_bytes(type)));
    cJSON_AddNumberToObject(p, "max_elements",
                            (double)(s->max_elements >= 0 ? s->max_elements : s->count));
    cJSON_AddNumberToObject(p, "element_bytes", (double)bb_reduce_type_bytes(type));
    cJSON_AddStringToObject(p, "type", bb_reduce_type_name(type));
    /* The shape once a run measures the fixed one (first: plots then keep
     * it, and the admission, as what tells series apart). */
    if ((s->choice.shape & 2u) && (row->variant == V_PROTOCOL || row->variant == V_FIXED_RAW))
        cJSON_AddStringToObject(p, "shape", bb_shape_name(s->policies[row->policy].shape));
    if (row->variant == V_PROTOCOL || row->variant == V_ADMISSION
        || row->variant == V_FIXED_RAW)
        bb_policy_parameters(p, &s->policies[row->policy], row->variant != V_ADMISSION);
}

/* The phase's census and request credit; the references have none. */
static cJSON *sum_quantities(bb_run_t *run, void *state, const bb_row_t *row, cJSON *q)
{
    const sum_state_t *s = state;
    const char *scope = "call/max-rank";
    const bb_tally_t *pt = &row->agreed;
    (void)run;
    if (row->variant != V_PROTOCOL) {
        bb_allreduce_ref_quantities(q, variants[row->variant].name, row->variant == V_RAW);
        return NULL;
    }
    bb_quantities_add(q, "communication.max_inflight",
                      bb_quantity_value((double)pt->max_inflight, "count", scope));
    bb_quantities_add(q, "memory.tracked_live",
                      bb_quantity_value((double)pt->tracked_peak, "byte", scope));
    bb_quantities_add(q, "memory.tracked_between_calls",
                      bb_quantity_value((double)bb_sum_phase_tracked_live(
                                            s->phases[row->policy]), "byte", "call/rank"));
    bb_quantities_add(q, "phase.test_completed",
                      pt->refused_calls > 0
                          ? bb_quantity_null("ratio", "run/rank", "refused: no payload request")
                          : bb_quantity_value((double)pt->test_completed
                                                  / (double)pt->ok_calls, "ratio", "run/rank"));
    return NULL;
}

/* The table: count and size, then the runner's columns. */
static const bb_key_t sum_keys[] = {
    {"count", NULL, "elements of mpi_double per rank (the protocol's count)", 8,
     BB_KEY_INTEGER, NULL},
    {"size", "B", "bytes per rank and call (count x 8)", 8, BB_KEY_INTEGER, NULL},
    {NULL, NULL, NULL, 0, 0, NULL}
};

static void sum_key_value(bb_run_t *run, void *state, int k, bb_key_value_t *out)
{
    const sum_state_t *s = state;
    (void)run;
    out->integer = k == 0 ? s->count : 8 * s->count;
}

/* ---- the descriptor ------------------------------------------------------- */

enum { OPT_MAX = BB_OPT_LONG, OPT_MODE, OPT_REFUSE, OPT_DPREP, OPT_DPOST };

static const bb_option_t sum_options[] = {
    {"count", 'c', "LIST", "mpi_double elements per rank: 1,8,64 or 1:1M[:x4|:+N]\n"
                           "(suffixes K=2^10, M=2^20; default 1:64K:x8,\n"
                           "--full-sweep 1:1M:x4); or -m in bytes"},
    {"type", 'T', "TYPE", "the raw references' datatype: mpi_double (the\n"
                          "default), mpi_float or mpi_int, at the same bytes"},
    {"max-elements", OPT_MAX, "N", "the cap presented (default: each count)"},
    {"mode", OPT_MODE, "LIST", "what to measure, a comma list of protocol, raw,\n"
                               "raw-nb, raw-fresh, admission, raw-persistent,\n"
                               "raw-copy, fixed-raw (with --shape fixed),\n"
                               "raw-user-op; both (= protocol,raw, the\n"
                               "default) or all"},
    BB_POLICY_OPTIONS("call"),
    BB_POLICY_METRICS_OPTION,
    BB_POLICY_SHAPE_OPTION,
    {"refuse-rank", OPT_REFUSE, "R", "provider failure on rank R (a refusal demo)"},
    BB_MISMATCH_OPTION("phase_id, epoch,\ncount, cap or sequence"),
    {"delay-prepare", OPT_DPREP, "R:SECONDS", "rank R sleeps in prepare"},
    {"delay-post", OPT_DPOST, "R:SECONDS", "rank R sleeps before posting the payload"},
    {NULL, 0, NULL, NULL}
};

static void sum_defaults(void *state)
{
    sum_state_t *s = state;
    s->max_elements = -1;
    s->mode = MODE_BOTH;
    bb_policy_defaults(&s->choice);
    s->choice.sum = 1;
    s->refuse_rank = s->mismatch_rank = s->delay_prepare_rank = s->delay_post_rank = -1;
}

static void sum_parse(bb_run_t *run, void *state, int key, const char *value)
{
    sum_state_t *s = state;
    if (bb_policy_parse(run, key, value, &s->choice))
        return;
    switch (key) {
    case 'c': bb_run_parse_size_list(run, "count", value, 0, INT32_MAX, &s->counts); break;
    case 'T': s->type = bb_reduce_type_parse(run, "type", value); break;
    case OPT_MAX: s->max_elements = bb_run_parse_size(run, "max-elements", value, 0,
                                                      INT32_MAX);
        break;
    case OPT_MODE:
        s->mode = bb_run_parse_modes(run, value, MODE_BOTH);
#ifndef BB_HAVE_PERSISTENT_COLLECTIVES
        if (s->mode & (1u << V_RAW_PERSISTENT))
            bb_run_usage(run, "--mode raw-persistent: this MPI has no persistent collectives "
                              "(neither MPI_Allreduce_init nor MPIX_Allreduce_init)");
#endif
        break;
    case OPT_REFUSE: s->refuse_rank = bb_run_parse_rank(run, "refuse-rank", value); break;
    case BB_OPT_MISMATCH:
        s->mismatch_field = bb_mismatch_parse(run, value, BB_MISMATCH_BIT(PHASE_ID)
            | BB_MISMATCH_BIT(EPOCH) | BB_MISMATCH_BIT(COUNT) | BB_MISMATCH_BIT(CAP)
            | BB_MISMATCH_BIT(SEQUENCE), &s->mismatch_rank);
        break;
    case OPT_DPREP:
        bb_run_parse_rank_seconds(run, "delay-prepare", value, 3600.0,
                                  &s->delay_prepare_rank, &s->delay_prepare_s);
        break;
    case OPT_DPOST:
        bb_run_parse_rank_seconds(run, "delay-post", value, 3600.0, &s->delay_post_rank,
                                  &s->delay_post_s);
        break;
    }
}

/* Variant v under policy p: the protocol's and the admission's labels and
 * legends name their policy, the references' their datatype. */
static void sum_add_row(bb_run_t *run, const sum_state_t *s, int v, int p)
{
    bb_phase_attr_t attr = s->policies[p], described = attr;
    char label[64], legend[512];
    if (v == V_ADMISSION) {  /* an agreement alone: no buffers, no phase */
        attr.buffers = BB_BUFFERS_FRESH;
        attr.metrics = BB_METRICS_TIMED;
    }
    if (v == V_FIXED_RAW) {  /* its name says the shape; no clock inside */
        attr.shape = BB_SHAPE_FREE;
        attr.metrics = BB_METRICS_TIMED;
    }
    if (v == V_PROTOCOL || v == V_ADMISSION || v == V_FIXED_RAW) {
        bb_policy_label(variants[v].name, &attr, label, sizeof label);
        bb_policy_legend(variants[v].differs, &described, v != V_ADMISSION, legend,
                         sizeof legend);
    } else {
        snprintf(label, sizeof label, "%s", variants[v].name);
        snprintf(legend, sizeof legend, "%s%s%s", variants[v].differs,
                 s->type != BB_REDUCE_DOUBLE ? "; of " : "",
                 s->type != BB_REDUCE_DOUBLE ? bb_reduce_type_name(s->type) : "");
    }
    bb_row_t *row = bb_run_add_row(run, v, p, label, legend);
    if (v == V_PROTOCOL && attr.metrics != BB_METRICS_TIMED) {
        row->parts = 1u;
        row->absent = "untimed phase (--metrics untimed): no clock read inside the call";
    }
}

static size_t sum_validate(bb_run_t *run, void *state)
{
    sum_state_t *s = state;
    s->run = run;
    /* The quick default list (seconds at -n 2), or the long one. */
    const char *counts = bb_run_full_sweep(run) ? "1:1M:x4" : "1:64K:x8";
    if (bb_run_full_sweep(run) && s->counts.n > 0)
        bb_run_usage(run, "--full-sweep chooses the default counts: not with --count");
    bb_run_message_sizes(run, "count", 8, 8, bb_run_full_sweep(run) ? 8 << 20 : 8 << 16,
                         &s->counts);
    if (s->counts.n == 0)
        bb_run_parse_size_list(run, "count", counts, 0, INT32_MAX, &s->counts);
    for (size_t i = 0; i < s->counts.n && s->type != BB_REDUCE_DOUBLE; i++)
        if (s->counts.values[i] > INT32_MAX / 2)
            bb_run_usage(run, "--count: %lld doubles are more than INT32_MAX elements of %s",
                         (long long)s->counts.values[i], bb_reduce_type_name(s->type));
    /* The rows of every point: the protocol under each policy asked for,
     * then the references in their order, the admission once per admission
     * and requests policy (buffers and metrics do not apply). */
    /* The fixed shape copies every contribution into its combined element:
     * it has no borrowed buffers, and its element must fit an int of bytes.
     * Both are the options' fault, found before anything is allocated. */
    if ((s->choice.shape & 2u) && s->choice.buffers == 1u << BB_BUFFERS_BORROWED)
        bb_run_usage(run, "--shape fixed --buffers borrowed: the fixed shape copies each "
                     "contribution into its combined buffer, so it lends none; use "
                     "--buffers fresh or retained with it, or --shape free");
    for (size_t i = 0; (s->choice.shape & 2u) && i < s->counts.n; i++)
        if (s->counts.values[i] > BB_SUM_SHAPE_COUNT_MAX)
            bb_run_usage(run, "--count %lld with --shape fixed: the combined element "
                         "(8 x count + %d bytes) must fit INT32_MAX bytes, so count <= %d",
                         (long long)s->counts.values[i], BB_SUM_COMBINED_FIELD_BYTES,
                         BB_SUM_SHAPE_COUNT_MAX);
    s->npolicies = bb_policy_list(&s->choice, s->policies);
    for (int v = V_PROTOCOL; v < V_N; v++) {
        int per_policy = v == V_PROTOCOL || v == V_ADMISSION || v == V_FIXED_RAW;
        for (int p = 0; (s->mode & (1u << v)) && p < (per_policy ? s->npolicies : 1); p++) {
            /* The admission: free-shape policies; the combined reduction:
             * fixed-shape ones, once per buffers and requests. */
            const bb_phase_attr_t *a = &s->policies[p];
            int seen = (v == V_ADMISSION) == (a->shape == BB_SHAPE_FIXED)
                       && (v == V_ADMISSION || v == V_FIXED_RAW);
            for (int q = 0; q < p && (v == V_ADMISSION || v == V_FIXED_RAW); q++)
                seen |= s->policies[q].shape == a->shape
                        && s->policies[q].requests == a->requests
                        && (v == V_ADMISSION ? s->policies[q].admission == a->admission
                                             : s->policies[q].buffers == a->buffers);
            if (!seen)
                sum_add_row(run, s, v, p);
        }
    }
    if (!(s->mode & (MODE_PROTOCOL | 1u << V_FIXED_RAW))
        && (s->choice.buffers != 1u || s->choice.metrics != 1u || s->choice.shape != 1u))
        bb_run_usage(run, "--buffers, --metrics and --shape choose the protocol's phase: "
                     "--mode must include protocol or fixed-raw");
    if (s->mode == 1u << V_FIXED_RAW && !(s->choice.shape & 2u))
        bb_run_usage(run, "--mode fixed-raw: the fixed shape's reference needs --shape fixed");
    if (!(s->mode & (MODE_PROTOCOL | 1u << V_ADMISSION)) && bb_policy_given(&s->choice))
        bb_run_usage(run, "--admission and --requests choose the agreement: --mode must "
                     "include protocol or admission");
    if (s->max_elements >= 0 && s->mismatch_field != BB_MISMATCH_CAP && s->refuse_rank < 0)
        for (size_t i = 0; i < s->counts.n; i++)
            if (s->counts.values[i] > s->max_elements)
                bb_run_note(run, "note: count %lld exceeds --max-elements %lld: that point "
                            "will be refused", (long long)s->counts.values[i],
                            (long long)s->max_elements);
    return s->counts.n;
}

static void sum_setup(bb_run_t *run, void *state)
{
    sum_state_t *s = state;
    int rank = bb_run_rank(run);
    int64_t max_count = 0;
    for (size_t i = 0; i < s->counts.n; i++)
        if (s->counts.values[i] > max_count)
            max_count = s->counts.values[i];
    /* Raw buffers hold the same bytes in elements of the type. */
    bb_allreduce_ref_setup(run, &s->raw, s->type, 8 * max_count);
    bb_allreduce_fixture_setup(run, &s->fixture, max_count, rank == s->refuse_rank,
                               rank == s->delay_prepare_rank ? s->delay_prepare_s : 0.0);
    /* One phase and one agreement per policy (the references use policy
     * 0's phase for the tracked-bytes figure only). */
    for (int p = 0; p < s->npolicies; p++) {
        if (s->policies[p].shape == BB_SHAPE_FIXED)  /* made per point */
            continue;
        if (bb_sum_phase_create_attr(bb_run_world(run), &s->policies[p],
                                     &s->phases[p]) != BB_OK
            || bb_agreement_create(bb_run_comm(run), BB_SUM_FIELDS, &s->policies[p],
                                   &s->agreements[p]) != BB_OK)
            bb_run_fatal(run, "cannot create the sum phase");
        if (rank == s->delay_post_rank)
            bb_sum_phase_set_post_delay(s->phases[p], s->delay_post_s);
    }
    if (s->type != BB_REDUCE_DOUBLE)
        bb_table_note(bb_run_table(run), "-T %s: the raw references reduce %s, bytes / %lld "
                      "elements; the protocol sums mpi_double by contract, so it is measured "
                      "at the same bytes (count = bytes / 8)", bb_reduce_type_name(s->type),
                      bb_reduce_type_name(s->type), (long long)bb_reduce_type_bytes(s->type));
}

static void sum_label(const void *state, size_t i, char *buf, size_t len)
{
    const sum_state_t *s = state;
    char size[32];
    bb_cli_format_size(s->counts.values[i], size, sizeof size);
    snprintf(buf, len, "count %s", size);
}

static void sum_teardown(void *state)
{
    sum_state_t *s = state;
    for (int p = 0; p < s->npolicies; p++) {
        bb_sum_phase_destroy(s->phases[p]);
        bb_agreement_destroy(s->agreements[p]);
    }
    bb_allreduce_fixture_free(&s->fixture);
    bb_allreduce_ref_free(&s->raw);
    bb_size_list_clear(&s->counts);
}

static const bb_bench_desc_t sum_bench = {
    .program = "bbench-sum",
    .benchmark = "sum",
    .summary = "Measure the bounded sum phase (six-field MIN/MAX admission, then one\n"
               "MPI_Iallreduce with one MPI_Test and MPI_Wait) against a plain\n"
               "MPI_Allreduce on the same buffers.  Launch with mpiexec -n P.",
    .notes = "Times in the table are microseconds.  The default counts take seconds;\n"
             "--full-sweep measures 1:1M:x4 (several times longer).  Exit 1\n"
             "also for a refusal that was not asked for or a wrong sum.",
    .options = sum_options,
    .state_size = sizeof(sum_state_t),
    .defaults = sum_defaults,
    .parse = sum_parse,
    .validate = sum_validate,
    .setup = sum_setup,
    .label = sum_label,
    .teardown = sum_teardown,
    .variants = variants,
    .nvariants = V_N,
    .part_names = t_names,
    .nparts = T_N,
    .point_begin = sum_point_begin,
    .point_end = sum_point_end,
    .ratio_match = sum_ratio_match,
    .refusal_asked = sum_refusal_asked,
    .keys = sum_keys,
    .key_value = sum_key_value,
    .parameters = sum_parameters,
    .quantities = sum_quantities,
};

int main(int argc, char **argv) { return bb_run_main(&sum_bench, argc, argv); }
