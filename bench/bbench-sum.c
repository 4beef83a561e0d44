/* bbench-sum: the bounded sum phase (admission + MPI_Iallreduce) against a
 * plain MPI_Allreduce on the same buffers, in the same run.  The protocol is
 * lib/sum.c; the runner (harness/runner.c) owns options, measurement loop
 * and record; this file holds the two kernels and the descriptor. */
#include "config.h"
#include "runner.h"
#include "policy.h"
#include "bbench-hooks.h"
#include "mpi-compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The protocol and the references, each differing from its neighbour in the
 * ratio chain in one thing (the mode of a point, in this order). */
enum { V_PROTOCOL, V_RAW, V_RAW_NB, V_RAW_FRESH, V_ADMISSION, V_RAW_PERSISTENT, V_RAW_COPY,
       V_N };
static const char *const variant_names[V_N] = {
    "protocol", "raw", "raw-nb", "raw-fresh", "admission", "raw-persistent", "raw-copy"
};
static const char *const variant_differs[V_N] = {
    "the bounded sum phase: the six-field admission, the contribution copied into the "
    "phase's buffer, the payload posted (MPI_Iallreduce, or MPI_Start of a persistent "
    "MPI_Allreduce_init), one MPI_Test, MPI_Wait",
    "MPI_Allreduce on warm buffers: no admission, no copy, blocking",
    "raw made nonblocking: MPI_Iallreduce, one MPI_Test, MPI_Wait, on warm buffers",
    "raw on fresh buffers: both allocated, filled and freed around each MPI_Allreduce "
    "(page faults, transport registration)",
    "the admission alone: the six-field agreement of the protocol, no payload",
    "raw-nb made persistent: MPI_Allreduce_init once per point (untimed), then MPI_Start, "
    "one MPI_Test, MPI_Wait, on warm buffers",
    "raw with the protocol's copy: the contribution copied into a warm send buffer before "
    "each MPI_Allreduce"
};
enum { MODE_PROTOCOL = 1u << V_PROTOCOL, MODE_RAW = 1u << V_RAW,
       MODE_BOTH = MODE_PROTOCOL | MODE_RAW };

/* -T/--type: the raw references' datatype.  The protocol sums doubles by
 * contract; a point is one size in bytes, the same for every row. */
enum { TYPE_DOUBLE, TYPE_FLOAT, TYPE_INT, TYPE_N };
static const char *const type_names[TYPE_N] = { "mpi_double", "mpi_float", "mpi_int" };
static const int64_t type_bytes[TYPE_N] = { 8, 4, 4 };

static MPI_Datatype type_mpi(int type)
{
    return type == TYPE_FLOAT ? MPI_FLOAT : type == TYPE_INT ? MPI_INT : MPI_DOUBLE;
}

/* One measured line of a point: a variant and, for the protocol and the
 * admission reference, a policy (an index into the policies measured). */
typedef struct row {
    int variant;
    int policy;
} row_t;
enum { ROWS_MAX = 2 * BB_POLICY_MAX + V_N };
enum { MISMATCH_NONE, MISMATCH_PHASE_ID, MISMATCH_EPOCH, MISMATCH_COUNT,
       MISMATCH_CAP, MISMATCH_SEQUENCE, MISMATCH_N };
static const char *const mismatch_names[] = {
    "", "phase_id", "epoch", "count", "cap", "sequence"
};

/* Per-call timed parts, in this order (parts[0] is the whole call). */
enum { T_ELAPSED, T_PREPARE, T_ADMISSION, T_POST, T_TEST, T_WAIT, T_N };
static const char *const t_names[T_N] = {
    "elapsed", "phase.prepare", "phase.admission", "phase.post", "phase.test",
    "communication.wait"
};
static const char *const elapsed_includes[] = {
    "phase.prepare", "phase.admission", "phase.post", "phase.test",
    "communication.wait", NULL
};

/* The provider: integer-valued data, so that the sum is exact. */
typedef struct provider_state {
    double *data;
    int64_t len;
    int fail;                 /* provider failure on this rank */
    double delay_s;           /* sleep inside prepare */
    int64_t prepared, released;
} provider_state_t;

/* What the calls of one point saw on this rank, beside the engine's timings. */
typedef struct point_tally {
    int64_t refused_calls, ok_calls, test_completed, wrong_values;
    int64_t local_refusals;   /* refusals this rank's own preflight caused */
    bb_refusal_t refusal;     /* the first refusal seen; rank agreed over ranks */
    int64_t tracked_peak, max_inflight;
} point_tally_t;

typedef struct sum_state {
    /* options */
    bb_size_list_t counts;
    int64_t max_elements;     /* -1: equal to each count */
    unsigned mode;            /* bit v: variant v */
    bb_policy_choice_t choice;
    bb_phase_attr_t policies[BB_POLICY_MAX];  /* every combination asked for */
    int npolicies;
    row_t rows[ROWS_MAX];     /* what each point measures, in order */
    int nrows;
    int refuse_rank, mismatch_rank, mismatch_field;
    int delay_prepare_rank, delay_post_rank;
    double delay_prepare_s, delay_post_s;
    int type;                 /* of the raw references (TYPE_*) */
    /* the run */
    bb_run_t *run;
    bb_sum_phase_t *phases[BB_POLICY_MAX];       /* one per policy measured */
    bb_agreement_t *agreements[BB_POLICY_MAX];   /* the admission references' */
    bb_sum_phase_t *phase;    /* the one being measured */
    bb_agreement_t *agreement;
    int policy;               /* its policy */
    MPI_Request raw_request;  /* raw-persistent: made per point */
    provider_state_t provider_state;
    bb_sum_provider_t provider;
    void *raw_send, *raw_recv;  /* of type */
    void *raw_copy;           /* raw-copy's send buffer */
    int64_t count, phase_id;  /* the point being measured: doubles, the protocol's */
    int64_t raw_count;        /* the same bytes in elements of type */
    point_tally_t tally;
} sum_state_t;

static int provider_prepare(void *arg, const double **data_out, int64_t *len_out)
{
    provider_state_t *p = arg;
    bb_time_sleep(p->delay_s);
    if (p->fail)
        return 1;
    *data_out = p->data;
    *len_out = p->len;
    p->prepared++;
    return 0;
}

static void provider_release(void *arg, const double *data)
{
    provider_state_t *p = arg;
    (void)data;
    p->released++;
}

static double value_of(int64_t i, int rank) { return (double)(i % 1024 + rank); }

/* Number of values where result (count elements of type) differs from the
 * exact sum over ranks; every value is an integer below 2^24, exact in each
 * type. */
static int64_t sum_errors(const void *result, int type, int64_t count, int ranks)
{
    double rank_sum = (double)ranks * (ranks - 1) / 2.0;
    int64_t bad = 0;
    for (int64_t i = 0; i < count; i++) {
        double v = type == TYPE_FLOAT ? (double)((const float *)result)[i]
                 : type == TYPE_INT ? (double)((const int *)result)[i]
                 : ((const double *)result)[i];
        if (v != (double)ranks * (double)(i % 1024) + rank_sum)
            bad++;
    }
    return bad;
}

/* Element i of a contribution of type. */
static void fill_value(void *buf, int type, int64_t i, int rank)
{
    double v = value_of(i, rank);
    if (type == TYPE_FLOAT)
        ((float *)buf)[i] = (float)v;
    else if (type == TYPE_INT)
        ((int *)buf)[i] = (int)v;
    else
        ((double *)buf)[i] = v;
}

/* ---- the two kernels ---------------------------------------------------- */

/* One protocol call: timed, then checked outside the timing. */
static bb_status_t protocol_call(void *arg, double *t, double *counts)
{
    sum_state_t *s = arg;
    (void)counts;
    int rank = bb_run_rank(s->run);
    bb_sum_contract_t contract = {
        .phase_id = s->phase_id, .epoch = 1, .count = s->count,
        .max_elements = s->max_elements >= 0 ? s->max_elements : s->count
    };
    s->provider_state.len = s->count;
    if (rank == s->mismatch_rank) {
        switch (s->mismatch_field) {
        case MISMATCH_PHASE_ID: contract.phase_id++; break;
        case MISMATCH_EPOCH: contract.epoch++; break;
        case MISMATCH_COUNT:
            contract.count++;
            contract.max_elements++;
            s->provider_state.len = s->count + 1;
            break;
        case MISMATCH_CAP: contract.max_elements++; break;
        case MISMATCH_SEQUENCE:
            bb_sum_phase_set_sequence(s->phase, bb_sum_phase_sequence(s->phase) + 1);
            break;
        }
    }
    double *result = NULL;
    bb_sum_metrics_t m;
    double t0 = bb_time_now();
    bb_status_t st = bb_sum_phase_run(s->phase, &s->provider, &contract, &result, &m);
    double elapsed = bb_time_now() - t0;
    if (st != BB_OK && st != BB_REFUSED)
        bb_run_fatal(s->run, "sum phase: %s in %s (stage %s)", bb_status_string(st),
                     m.mpi_call ? m.mpi_call : "no MPI call", bb_stage_name(m.refusal.stage));
    t[T_ELAPSED] += elapsed;
    if (s->policies[s->policy].metrics == BB_METRICS_TIMED) {  /* else parts[1] only */
        t[T_PREPARE] += m.prepare_s;
        t[T_ADMISSION] += m.admission_s;
        t[T_POST] += m.post_s;
        t[T_TEST] += m.test_s;
        t[T_WAIT] += m.wait_s;
    }
    point_tally_t *pt = &s->tally;
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
    pt->wrong_values += sum_errors(result, TYPE_DOUBLE, s->count, bb_run_size(s->run));
    if (s->policies[s->policy].buffers == BB_BUFFERS_FRESH)
        bb_free(result);  /* retained: lent by the phase until its next call */
    return BB_OK;
}

/* After a warm-buffer reference's call, outside its timing: an MPI error
 * ends the run; the sum in raw_recv is checked. */
static bb_status_t raw_checked(sum_state_t *s, int rc, const char *call)
{
    if (rc != MPI_SUCCESS)
        bb_run_fatal(s->run, "%s failed", call);
    s->tally.ok_calls++;
    s->tally.wrong_values += sum_errors(s->raw_recv, s->type, s->raw_count,
                                        bb_run_size(s->run));
    return BB_OK;
}

static bb_status_t raw_call(void *arg, double *t, double *counts)
{
    sum_state_t *s = arg;
    (void)counts;
    double t0 = bb_time_now();
    int rc = MPI_Allreduce(s->raw_send, s->raw_recv, (int)s->raw_count, type_mpi(s->type),
                           MPI_SUM, bb_run_comm(s->run));
    t[T_ELAPSED] += bb_time_now() - t0;
    return raw_checked(s, rc, "MPI_Allreduce");
}

static bb_status_t raw_nb_call(void *arg, double *t, double *counts)
{
    sum_state_t *s = arg;
    (void)counts;
    MPI_Request req;
    int done = 0;
    double t0 = bb_time_now();
    int rc = MPI_Iallreduce(s->raw_send, s->raw_recv, (int)s->raw_count, type_mpi(s->type),
                            MPI_SUM, bb_run_comm(s->run), &req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !done)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    t[T_ELAPSED] += bb_time_now() - t0;
    return raw_checked(s, rc, "MPI_Iallreduce (raw-nb)");
}

static bb_status_t raw_persistent_call(void *arg, double *t, double *counts)
{
    sum_state_t *s = arg;
    (void)counts;
    int done = 0;
    double t0 = bb_time_now();
    int rc = MPI_Start(&s->raw_request);
    if (rc == MPI_SUCCESS)
        rc = MPI_Test(&s->raw_request, &done, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !done)
        rc = MPI_Wait(&s->raw_request, MPI_STATUS_IGNORE);
    t[T_ELAPSED] += bb_time_now() - t0;
    return raw_checked(s, rc, "MPI_Start (raw-persistent)");
}

static bb_status_t raw_copy_call(void *arg, double *t, double *counts)
{
    sum_state_t *s = arg;
    (void)counts;
    size_t bytes = (size_t)s->raw_count * (size_t)type_bytes[s->type];
    double t0 = bb_time_now();
    memcpy(s->raw_copy, s->raw_send, bytes);
    int rc = MPI_Allreduce(s->raw_copy, s->raw_recv, (int)s->raw_count, type_mpi(s->type),
                           MPI_SUM, bb_run_comm(s->run));
    t[T_ELAPSED] += bb_time_now() - t0;
    return raw_checked(s, rc, "MPI_Allreduce (raw-copy)");
}

/* Fresh buffers per call, as the protocol's own; the fill is the copy the
 * protocol makes of the contribution. */
static bb_status_t raw_fresh_call(void *arg, double *t, double *counts)
{
    sum_state_t *s = arg;
    (void)counts;
    size_t bytes = (size_t)(s->raw_count > 0 ? s->raw_count : 1)
                   * (size_t)type_bytes[s->type];
    double t0 = bb_time_now();
    void *send = malloc(bytes), *recv = malloc(bytes);
    if (send == NULL || recv == NULL)
        bb_run_fatal(s->run, "raw-fresh: cannot allocate %zu bytes", bytes);
    memcpy(send, s->raw_send, bytes);
    int rc = MPI_Allreduce(send, recv, (int)s->raw_count, type_mpi(s->type), MPI_SUM,
                           bb_run_comm(s->run));
    double t1 = bb_time_now();
    if (rc != MPI_SUCCESS)
        bb_run_fatal(s->run, "MPI_Allreduce (raw-fresh) failed");
    s->tally.wrong_values += sum_errors(recv, s->type, s->raw_count, bb_run_size(s->run));
    double t2 = bb_time_now();
    free(send);
    free(recv);
    t[T_ELAPSED] += (t1 - t0) + (bb_time_now() - t2);
    s->tally.ok_calls++;
    return BB_OK;
}

/* The agreement the protocol makes, with the same six fields, under the
 * row's admission and requests policies. */
static bb_status_t admission_call(void *arg, double *t, double *counts)
{
    sum_state_t *s = arg;
    (void)counts;
    int64_t local[6] = { s->phase_id, 1, s->count, s->count, 0, 0 }, min[6], max[6];
    double t0 = bb_time_now();
    int rc = bb_agreement_minmax(s->agreement, local, min, max);
    t[T_ELAPSED] += bb_time_now() - t0;
    if (rc != MPI_SUCCESS)
        bb_run_fatal(s->run, "admission reference: MPI_Allreduce failed");
    s->tally.ok_calls++;
    if (!bb_agree_fields_equal(min, max, 0, 6))
        s->tally.wrong_values++;
    return BB_OK;
}

static const bb_measure_call_fn variant_calls[V_N] = {
    protocol_call, raw_call, raw_nb_call, raw_fresh_call, admission_call, raw_persistent_call,
    raw_copy_call
};

/* ---- one point ------------------------------------------------------------ */

/* What one variant measured at one point, identical on every rank. */
typedef struct point_result {
    bb_measure_result_t m;
    point_tally_t tally;      /* counters agreed with MAX over ranks */
    int64_t tracked_between, rss_peak;
} point_result_t;

/* The row's name in column heads: the protocol's and the admission's with
 * their policy, or the reference's name. */
static void row_label(const sum_state_t *s, const row_t *row, char *buf, size_t len)
{
    bb_phase_attr_t attr = s->policies[row->policy];
    if (row->variant == V_ADMISSION) {  /* an agreement alone: no buffers, no phase */
        attr.buffers = BB_BUFFERS_FRESH;
        attr.metrics = BB_METRICS_TIMED;
    }
    if (row->variant == V_PROTOCOL || row->variant == V_ADMISSION)
        bb_policy_label(variant_names[row->variant], &attr, buf, len);
    else
        snprintf(buf, len, "%s", variant_names[row->variant]);
}

/* The timed parts of a row: the protocol's when its phase is timed, else
 * the elapsed time alone. */
static int row_parts(const sum_state_t *s, const row_t *row)
{
    return row->variant == V_PROTOCOL
                   && s->policies[row->policy].metrics == BB_METRICS_TIMED ? T_N : 1;
}

static void measure_row(sum_state_t *s, const row_t *row, point_result_t *pr)
{
    int variant = row->variant;
    char label[64];
    s->phase = s->phases[row->policy];
    s->agreement = s->agreements[row->policy];
    s->policy = row->policy;
    memset(&s->tally, 0, sizeof s->tally);
    s->tally.refusal.rank = -1;
    /* Made outside the timing, once per point: the count changes. */
    if (variant == V_RAW_PERSISTENT
        && bb_mpi_allreduce_init(s->raw_send, s->raw_recv, (int)s->raw_count, type_mpi(s->type),
                                 MPI_SUM, bb_run_comm(s->run), MPI_INFO_NULL, &s->raw_request)
               != MPI_SUCCESS)
        bb_run_fatal(s->run, "MPI_Allreduce_init (raw-persistent) failed");
    bb_measure_variant_t v = { .nparts = row_parts(s, row), .ncounts = 0,
                               .call = variant_calls[variant], .arg = s };
    row_label(s, row, label, sizeof label);
    bb_run_measure(s->run, label, &v, &pr->m);
    if (variant == V_RAW_PERSISTENT)
        MPI_Request_free(&s->raw_request);
    pr->tally = s->tally;
    /* Counters and deterministic figures, agreed across ranks. */
    /* The refusing rank: the phase carries one refusal bit per rank and no
     * rank, so each rank says whether its own preflight refused; the lowest
     * such rank is named (size - rank, so that MAX finds it). */
    int size = bb_run_size(s->run);
    int64_t local[6] = { s->tally.wrong_values, s->tally.refused_calls,
                         s->tally.tracked_peak, s->tally.max_inflight,
                         bb_rss_peak_bytes(),
                         s->tally.local_refusals > 0 ? size - bb_run_rank(s->run) : 0 };
    int64_t max[6];
    if (bb_agree_max(bb_run_comm(s->run), local, 6, max) != MPI_SUCCESS)
        bb_run_fatal(s->run, "MPI_Allreduce of counters failed");
    if (max[5] > 0)
        pr->tally.refusal.rank = (int)(size - max[5]);
    pr->tally.wrong_values = max[0];
    pr->tally.refused_calls = max[1];
    pr->tally.tracked_peak = max[2];
    pr->tally.max_inflight = max[3];
    pr->rss_peak = max[4];
    pr->tracked_between = s->phase ? bb_sum_phase_tracked_live(s->phase) : 0;
}

/* The row's datatype: the raw references' -T, doubles for the protocol and
 * the admission (whose count is the protocol's). */
static int row_type(const sum_state_t *s, const row_t *row)
{
    return row->variant == V_PROTOCOL || row->variant == V_ADMISSION ? TYPE_DOUBLE : s->type;
}

/* Elements of the row's type at the point being measured. */
static int64_t row_count(const sum_state_t *s, const row_t *row)
{
    return row_type(s, row) == TYPE_DOUBLE ? s->count : s->raw_count;
}

static cJSON *parameters_new(const sum_state_t *s, const row_t *row)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "count", (double)row_count(s, row));
    cJSON_AddNumberToObject(p, "max_elements",
                            (double)(s->max_elements >= 0 ? s->max_elements : s->count));
    cJSON_AddStringToObject(p, "mode", variant_names[row->variant]);
    cJSON_AddNumberToObject(p, "element_bytes", (double)type_bytes[row_type(s, row)]);
    cJSON_AddStringToObject(p, "type", type_names[row_type(s, row)]);
    if (row->variant == V_PROTOCOL || row->variant == V_ADMISSION)
        bb_policy_parameters(p, &s->policies[row->policy], row->variant == V_PROTOCOL);
    return p;
}

static void record_point(const sum_state_t *s, const row_t *row, const point_result_t *pr)
{
    int variant = row->variant;
    const char *scope = "call/max-rank";
    int protocol = variant == V_PROTOCOL;
    char not_protocol[160], not_counted[160], blocking[160];
    if (variant == V_RAW) {
        snprintf(not_protocol, sizeof not_protocol,
                 "raw mode: a plain MPI_Allreduce has no protocol phases");
        snprintf(not_counted, sizeof not_counted,
                 "raw mode: buffers are the benchmark's, not counted by a phase");
        snprintf(blocking, sizeof blocking,
                 "raw mode: blocking call, requests are internal to MPI");
    } else {
        snprintf(not_protocol, sizeof not_protocol,
                 "%s reference: it has no protocol phases", variant_names[variant]);
        snprintf(not_counted, sizeof not_counted,
                 "%s reference: buffers are the benchmark's, not counted by a phase",
                 variant_names[variant]);
        snprintf(blocking, sizeof blocking,
                 "%s reference: no request counted by a phase", variant_names[variant]);
    }
    const point_tally_t *pt = &pr->tally;
    size_t n = (size_t)pr->m.samples;
    int refused = pt->refused_calls > 0;
    cJSON *q = cJSON_CreateObject();
    cJSON *first = cJSON_CreateObject();
    for (int i = 0; i < pr->m.nparts; i++) {
        bb_quantities_add(q, t_names[i],
                          bb_quantity_timing(bb_measure_part(&pr->m, i), n, scope,
                                             i == T_ELAPSED && pr->m.nparts == T_N
                                                 ? elapsed_includes : NULL));
        bb_quantities_add(first, t_names[i], bb_quantity_value(pr->m.first[i], "s", scope));
    }
    if (!protocol)
        for (int i = 1; i < T_N; i++)
            bb_quantities_add(q, t_names[i], bb_quantity_null("s", scope, not_protocol));
    else if (pr->m.nparts == 1)
        for (int i = 1; i < T_N; i++)
            bb_quantities_add(q, t_names[i],
                              bb_quantity_null("s", scope, "untimed phase (--metrics "
                                               "untimed): no clock read inside the call"));
    if (refused)
        bb_quantities_add(q, "communication.payload",
                          bb_quantity_null("byte", "call/rank",
                                           "refused: no payload was posted"));
    else if (variant == V_ADMISSION)
        bb_quantities_add(q, "communication.payload",
                          bb_quantity_null("byte", "call/rank",
                                           "admission reference: no payload"));
    else
        bb_quantities_add(q, "communication.payload",
                          bb_quantity_value(8.0 * (double)s->count, "byte", "call/rank"));
    if (protocol) {
        bb_quantities_add(q, "communication.max_inflight",
                          bb_quantity_value((double)pt->max_inflight, "count", scope));
        bb_quantities_add(q, "memory.tracked_live",
                          bb_quantity_value((double)pt->tracked_peak, "byte", scope));
        bb_quantities_add(q, "memory.tracked_between_calls",
                          bb_quantity_value((double)pr->tracked_between, "byte",
                                            "call/rank"));
        bb_quantities_add(q, "phase.test_completed",
                          refused ? bb_quantity_null("ratio", "run/rank",
                                                     "refused: no payload request")
                                  : bb_quantity_value((double)pt->test_completed
                                                          / (double)pt->ok_calls,
                                                      "ratio", "run/rank"));
    } else {
        bb_quantities_add(q, "communication.max_inflight",
                          bb_quantity_null("count", scope, blocking));
        bb_quantities_add(q, "memory.tracked_live", bb_quantity_null("byte", scope, not_counted));
    }
    bb_quantities_add(q, "memory.rss_peak",
                      bb_quantity_value((double)pr->rss_peak, "byte", "run/max-rank"));
    bb_quantities_add_unobservable(q);
    bb_record_add_point(bb_bench_record(bb_run_bench(s->run)),
                        parameters_new(s, row),
                        refused ? "refused" : "ok", refused ? &pt->refusal : NULL,
                        first, q);
}

static double median_of(const point_result_t *pr, int part)
{
    return bb_stats_median(bb_measure_part(&pr->m, part), (size_t)pr->m.samples);
}

/* The table: count and size, per row its time columns (and the protocol's
 * admission part), a ratio per protocol row when raw is measured, status. */
static void table_header(const sum_state_t *s)
{
    bb_table_t *t = bb_run_table(s->run);
    int full = bb_run_full(s->run);
    char name[96], label[64], legend[512], policy[128];
    bb_table_note(t, "times: microseconds per call over %lld samples; a sample is the "
                  "mean over a block of calls, the maximum over ranks",
                  (long long)bb_run_settings(s->run)->samples);
    if (s->type != TYPE_DOUBLE)
        bb_table_note(t, "-T %s: the raw references reduce %s, bytes / %lld elements; the "
                      "protocol sums mpi_double by contract, so it is measured at the same "
                      "bytes (count = bytes / 8)", type_names[s->type], type_names[s->type],
                      (long long)type_bytes[s->type]);
    bb_table_column(t, "count", NULL, "elements of mpi_double per rank (the protocol's "
                    "count)", 8);
    bb_table_column(t, "size", "B", "bytes per rank and call (count x 8)", 8);
    for (int r = 0; r < s->nrows; r++) {
        const row_t *row = &s->rows[r];
        row_label(s, row, label, sizeof label);
        bb_policy_describe(&s->policies[row->policy], policy, sizeof policy);
        if (row->variant == V_PROTOCOL)
            snprintf(legend, sizeof legend, "%s (%s)", variant_differs[V_PROTOCOL], policy);
        else if (row->variant == V_ADMISSION)
            snprintf(legend, sizeof legend, "%s (%s)", variant_differs[V_ADMISSION],
                     strchr(policy, ',') + 2);
        else
            snprintf(legend, sizeof legend, "%s%s%s", variant_differs[row->variant],
                     row->variant != V_ADMISSION && s->type != TYPE_DOUBLE ? "; of " : "",
                     row->variant != V_ADMISSION && s->type != TYPE_DOUBLE
                         ? type_names[s->type] : "");
        bb_table_time_columns(t, label, legend, full);
        if (row->variant == V_PROTOCOL) {
            snprintf(name, sizeof name, "%s_admission", label);
            snprintf(legend, sizeof legend, "median of the admission part of %s_us; part "
                     "and whole are medians taken separately, each a rank maximum", label);
            bb_table_column(t, name, "us", legend, 10);
        }
    }
    for (int r = 0; r < s->nrows && (s->mode & MODE_RAW); r++)
        if (s->rows[r].variant == V_PROTOCOL) {
            row_label(s, &s->rows[r], label, sizeof label);
            snprintf(name, sizeof name, "%s_ratio", label);
            snprintf(legend, sizeof legend, "%s_us / raw_us (medians; - on a refused row)",
                     label);
            bb_table_column(t, strcmp(label, "protocol") == 0 ? "ratio" : name, NULL, legend,
                            6);
        }
    bb_table_column(t, "status", NULL, "ok, or refused:STAGE:seqN:rankR (the stage, the "
                    "sequence and the lowest rank whose own preflight refused; a contract "
                    "refusal, fields that differ between ranks, names no rank)", 6);
}

static void table_row(const sum_state_t *s, const point_result_t *pr)
{
    bb_table_t *t = bb_run_table(s->run);
    int full = bb_run_full(s->run);
    int raw = -1;
    bb_table_integer(t, s->count);
    bb_table_integer(t, 8 * s->count);
    for (int r = 0; r < s->nrows; r++) {
        int v = s->rows[r].variant;
        if (v == V_RAW)
            raw = r;
        bb_table_time_cells(t, bb_measure_part(&pr[r].m, T_ELAPSED), (size_t)pr[r].m.samples,
                            pr[r].m.reps, full);
        if (v == V_PROTOCOL && pr[r].m.nparts == T_N)
            bb_table_number(t, median_of(&pr[r], T_ADMISSION) * 1e6, 2);
        else if (v == V_PROTOCOL)
            bb_table_missing(t);
    }
    for (int r = 0; r < s->nrows && raw >= 0; r++)
        if (s->rows[r].variant == V_PROTOCOL) {
            if (pr[r].tally.refused_calls > 0)
                bb_table_missing(t);
            else
                bb_table_number(t, median_of(&pr[r], T_ELAPSED)
                                       / median_of(&pr[raw], T_ELAPSED), 2);
        }
    const point_tally_t *pt = &pr[0].tally;
    if (s->rows[0].variant == V_PROTOCOL && pt->refused_calls > 0) {
        char status[96];
        bb_run_format_refusal(&pt->refusal, status, sizeof status);
        bb_table_text(t, status);
    } else {
        bb_table_text(t, "ok");
    }
    bb_table_row_end(t);
}

static int sum_point(bb_run_t *run, void *state, size_t i)
{
    sum_state_t *s = state;
    point_result_t pr[ROWS_MAX];
    int code = BB_EXIT_OK;
    memset(pr, 0, sizeof pr);
    s->count = s->counts.values[i];
    s->raw_count = s->count * 8 / type_bytes[s->type];
    s->phase_id = (int64_t)i;
    for (int r = 0; r < s->nrows; r++)
        measure_row(s, &s->rows[r], &pr[r]);
    if (bb_run_rank(run) == 0) {
        table_row(s, pr);
        for (int r = 0; r < s->nrows; r++)
            record_point(s, &s->rows[r], &pr[r]);
    }
    int asked_refusal = s->refuse_rank >= 0 || s->mismatch_rank >= 0;
    int64_t wrong = 0;
    for (int r = 0; r < s->nrows; r++) {
        if (s->rows[r].variant == V_PROTOCOL && pr[r].tally.refused_calls > 0
            && !asked_refusal) {
            bb_run_note(run, "error: count %lld refused (%s) without a refusal being asked "
                        "for", (long long)s->count, bb_stage_name(pr[r].tally.refusal.stage));
            code = BB_EXIT_FAILURE;
        }
        wrong += pr[r].tally.wrong_values;
        bb_measure_result_clear(&pr[r].m);
    }
    if (wrong > 0) {
        bb_run_note(run, "error: count %lld: %lld wrong sum values", (long long)s->count,
                    (long long)wrong);
        code = BB_EXIT_FAILURE;
    }
    return code;
}

/* ---- the descriptor ------------------------------------------------------- */

enum { OPT_MAX = BB_OPT_LONG, OPT_MODE, OPT_REFUSE, OPT_MISMATCH, OPT_DPREP, OPT_DPOST };

static const bb_option_t sum_options[] = {
    {"count", 'c', "LIST", "mpi_double elements per rank: 1,8,64 or 1:1M[:x4|:+N]\n"
                           "(suffixes K=2^10, M=2^20; default 1:64K:x8,\n"
                           "--full-sweep 1:1M:x4); or -m in bytes"},
    {"type", 'T', "TYPE", "the raw references' datatype: mpi_double (the\n"
                          "default), mpi_float or mpi_int, at the same bytes"},
    {"max-elements", OPT_MAX, "N", "the cap presented (default: each count)"},
    {"mode", OPT_MODE, "LIST", "what to measure, a comma list of protocol, raw,\n"
                               "raw-nb, raw-fresh, admission, raw-persistent,\n"
                               "raw-copy; both (= protocol,raw, the default)\n"
                               "or all"},
    BB_POLICY_OPTIONS("call"),
    BB_POLICY_METRICS_OPTION,
    {"refuse-rank", OPT_REFUSE, "R", "provider failure on rank R (a refusal demo)"},
    {"mismatch-rank", OPT_MISMATCH, "R:FIELD", "rank R presents another phase_id, epoch,\n"
                                               "count, cap or sequence"},
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
    s->refuse_rank = s->mismatch_rank = s->delay_prepare_rank = s->delay_post_rank = -1;
}

static void sum_parse(bb_run_t *run, void *state, int key, const char *value)
{
    sum_state_t *s = state;
    if (bb_policy_parse(run, key, value, &s->choice))
        return;
    switch (key) {
    case 'c': bb_run_parse_size_list(run, "count", value, 0, INT32_MAX, &s->counts); break;
    case 'T': {
        unsigned t = bb_run_parse_choices(run, "type", value, type_names, TYPE_N);
        if (t != 1u && t != 2u && t != 4u)
            bb_run_usage(run, "--type: one of mpi_double, mpi_float or mpi_int");
        s->type = t == 1u ? TYPE_DOUBLE : t == 2u ? TYPE_FLOAT : TYPE_INT;
        break;
    }
    case OPT_MAX: s->max_elements = bb_run_parse_size(run, "max-elements", value, 0,
                                                      INT32_MAX);
        break;
    case OPT_MODE:
        s->mode = strcmp(value, "both") == 0
                      ? MODE_BOTH
                      : bb_run_parse_choices(run, "mode", value, variant_names, V_N);
#ifndef BB_HAVE_PERSISTENT_COLLECTIVES
        if (s->mode & (1u << V_RAW_PERSISTENT))
            bb_run_usage(run, "--mode raw-persistent: this MPI has no persistent collectives "
                              "(neither MPI_Allreduce_init nor MPIX_Allreduce_init)");
#endif
        break;
    case OPT_REFUSE: s->refuse_rank = bb_run_parse_rank(run, "refuse-rank", value); break;
    case OPT_MISMATCH:
        s->mismatch_field = bb_run_parse_rank_choice(run, "mismatch-rank", value,
                                                     mismatch_names, 1, MISMATCH_N,
                                                     &s->mismatch_rank);
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
    for (size_t i = 0; i < s->counts.n && s->type != TYPE_DOUBLE; i++)
        if (s->counts.values[i] > INT32_MAX / 2)
            bb_run_usage(run, "--count: %lld doubles are more than INT32_MAX elements of %s",
                         (long long)s->counts.values[i], type_names[s->type]);
    /* The rows of every point: the protocol under each policy asked for,
     * then the references in their order, the admission once per admission
     * and requests policy. */
    s->npolicies = bb_policy_list(&s->choice, s->policies);
    s->nrows = 0;
    if (s->mode & MODE_PROTOCOL)
        for (int p = 0; p < s->npolicies; p++)
            s->rows[s->nrows++] = (row_t){ V_PROTOCOL, p };
    for (int v = V_RAW; v < V_N; v++) {
        if (!(s->mode & (1u << v)))
            continue;
        if (v != V_ADMISSION) {
            s->rows[s->nrows++] = (row_t){ v, 0 };
            continue;
        }
        for (int p = 0; p < s->npolicies; p++) {
            int seen = 0;
            for (int q = 0; q < p; q++)  /* buffers and metrics do not apply */
                seen |= s->policies[q].admission == s->policies[p].admission
                        && s->policies[q].requests == s->policies[p].requests;
            if (!seen)
                s->rows[s->nrows++] = (row_t){ V_ADMISSION, p };
        }
    }
    if (!(s->mode & MODE_PROTOCOL) && (s->choice.buffers != 1u || s->choice.metrics != 1u))
        bb_run_usage(run, "--buffers and --metrics choose the protocol's phase: --mode must "
                     "include protocol");
    if (!(s->mode & (MODE_PROTOCOL | 1u << V_ADMISSION)) && bb_policy_given(&s->choice))
        bb_run_usage(run, "--admission and --requests choose the agreement: --mode must "
                     "include protocol or admission");
    if (s->max_elements >= 0 && s->mismatch_field != MISMATCH_CAP && s->refuse_rank < 0)
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
    int64_t max_raw = max_count * 8 / type_bytes[s->type];
    s->provider_state.data = malloc((size_t)(max_count + 1) * sizeof(double));
    s->raw_send = malloc((size_t)(max_raw + 1) * (size_t)type_bytes[s->type]);
    s->raw_recv = malloc((size_t)(max_raw + 1) * (size_t)type_bytes[s->type]);
    s->raw_copy = malloc((size_t)(max_raw + 1) * (size_t)type_bytes[s->type]);
    if (!s->provider_state.data || !s->raw_send || !s->raw_recv || !s->raw_copy)
        bb_run_fatal(run, "cannot allocate %lld elements", (long long)max_count);
    for (int64_t i = 0; i <= max_count; i++)
        s->provider_state.data[i] = value_of(i, rank);
    for (int64_t i = 0; i <= max_raw; i++)
        fill_value(s->raw_send, s->type, i, rank);
    s->provider_state.fail = rank == s->refuse_rank;
    s->provider_state.delay_s = rank == s->delay_prepare_rank ? s->delay_prepare_s : 0.0;
    s->provider = (bb_sum_provider_t){ provider_prepare, provider_release, &s->provider_state };
    /* One phase and one agreement per policy (the references use policy
     * 0's phase for the tracked-bytes figure only). */
    for (int p = 0; p < s->npolicies; p++) {
        if (bb_sum_phase_create_attr(bb_bench_world(bb_run_bench(run)), &s->policies[p],
                                     &s->phases[p]) != BB_OK
            || bb_agreement_create(bb_run_comm(run), BB_SUM_FIELDS, &s->policies[p],
                                   &s->agreements[p]) != BB_OK)
            bb_run_fatal(run, "cannot create the sum phase");
        if (rank == s->delay_post_rank)
            bb_sum_phase_set_post_delay(s->phases[p], s->delay_post_s);
    }
    table_header(s);
}

static void sum_label(const void *state, size_t i, char *buf, size_t len)
{
    const sum_state_t *s = state;
    char size[32];
    bb_cli_format_size(s->counts.values[i], size, sizeof size);
    snprintf(buf, len, "count %s", size);
}

static int sum_finish(bb_run_t *run, void *state)
{
    sum_state_t *s = state;
    int code = bb_run_check_released(run, "provider arrays", s->provider_state.prepared,
                                     s->provider_state.released);
    if (bb_run_rank(run) == 0) {
        cJSON *summary = cJSON_CreateObject();
        cJSON_AddNumberToObject(summary, "provider_arrays_prepared",
                                (double)s->provider_state.prepared);
        cJSON_AddNumberToObject(summary, "provider_arrays_released",
                                (double)s->provider_state.released);
        cJSON *refs = cJSON_CreateObject();
        for (int v = 0; v < V_N; v++)
            if (s->mode & (1u << v))
                cJSON_AddStringToObject(refs, variant_names[v], variant_differs[v]);
        cJSON_AddItemToObject(summary, "modes", refs);
        bb_record_set(bb_bench_record(bb_run_bench(run)), "run", summary);
    }
    return code;
}

static void sum_teardown(void *state)
{
    sum_state_t *s = state;
    for (int p = 0; p < s->npolicies; p++) {
        bb_sum_phase_destroy(s->phases[p]);
        bb_agreement_destroy(s->agreements[p]);
    }
    free(s->provider_state.data);
    free(s->raw_send);
    free(s->raw_copy);
    free(s->raw_recv);
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
    .point = sum_point,
    .finish = sum_finish,
    .teardown = sum_teardown,
};

int main(int argc, char **argv) { return bb_run_main(&sum_bench, argc, argv); }
