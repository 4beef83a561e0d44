/* agree.c: fixed-field agreement, shared by every phase.
 * Agreement on a field means its MIN equals its MAX over all live
 * participants; this is ordinary collective reduction, not fault-tolerant
 * consensus. */
#include "config.h"
#include "internal.h"
#include "private/mpi-compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bb_agree_minmax(MPI_Comm comm, const int64_t *local, int n,
                    int64_t *min_out, int64_t *max_out)
{
    int rc = MPI_Allreduce(local, min_out, n, MPI_INT64_T, MPI_MIN, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Allreduce(local, max_out, n, MPI_INT64_T, MPI_MAX, comm);
}

void bb_agree_split(const int64_t *local, int n, int64_t *both)
{
    for (int i = 0; i < n; i++) {
        both[i] = local[i];
        both[n + i] = ~local[i];
    }
}

void bb_agree_join(const int64_t *reduced, int n, int64_t *min_out, int64_t *max_out)
{
    for (int i = 0; i < n; i++) {
        min_out[i] = reduced[i];
        max_out[i] = ~reduced[n + i];
    }
}

int bb_agree_minmax_fused(MPI_Comm comm, const int64_t *local, int n,
                          int64_t *min_out, int64_t *max_out)
{
    /* [x, ~x] under one MIN: ~x = -x - 1 reverses the order and, unlike -x,
     * is defined for every int64 (INT64_MIN included), so min(~x) = ~max(x)
     * exactly. */
    int64_t stack[4 * 8] = {0};  /* up to 8 fields without an allocation */
    if (n < 0)
        return MPI_ERR_ARG;
    int64_t *both = n <= 8 ? stack : malloc(4 * (size_t)n * sizeof *both);
    if (both == NULL)
        return MPI_ERR_ARG;
    int64_t *reduced = both + 2 * n;
    bb_agree_split(local, n, both);
    int rc = MPI_Allreduce(both, reduced, 2 * n, MPI_INT64_T, MPI_MIN, comm);
    if (rc == MPI_SUCCESS)
        bb_agree_join(reduced, n, min_out, max_out);
    if (both != stack)
        free(both);
    return rc;
}

int bb_agree_max(MPI_Comm comm, const int64_t *local, int n, int64_t *max_out)
{
    return MPI_Allreduce(local, max_out, n, MPI_INT64_T, MPI_MAX, comm);
}

int bb_agree_fields_equal(const int64_t *min, const int64_t *max, int first,
                          int count)
{
    for (int i = first; i < first + count; i++)
        if (min[i] != max[i])
            return 0;
    return 1;
}

/* ---- policy names ------------------------------------------------------- */

const char *bb_buffers_name(bb_buffers_t buffers)
{
    switch (buffers) {
    case BB_BUFFERS_FRESH: return "fresh";
    case BB_BUFFERS_RETAINED: return "retained";
    case BB_BUFFERS_BORROWED: return "borrowed";
    }
    return "unknown";
}

const char *bb_admission_name(bb_admission_t admission)
{
    switch (admission) {
    case BB_ADMISSION_SPEC: return "spec";
    case BB_ADMISSION_FUSED: return "fused";
    case BB_ADMISSION_FUSED_OP: return "fused-op";
    }
    return "unknown";
}

const char *bb_requests_name(bb_requests_t requests)
{
    switch (requests) {
    case BB_REQUESTS_PER_CALL: return "per-call";
    case BB_REQUESTS_PERSISTENT: return "persistent";
    }
    return "unknown";
}

const char *bb_shape_name(bb_shape_t shape)
{
    switch (shape) {
    case BB_SHAPE_FREE: return "free";
    case BB_SHAPE_FIXED: return "fixed";
    }
    return "unknown";
}

const char *bb_metrics_name(bb_metrics_t metrics)
{
    switch (metrics) {
    case BB_METRICS_TIMED: return "timed";
    case BB_METRICS_UNTIMED: return "untimed";
    }
    return "unknown";
}

/* ---- policies agreed at creation ----------------------------------------- */

const char *bb_attr_name(bb_attr_id_t attr)
{
    switch (attr) {
    case BB_ATTR_ADMISSION: return "admission";
    case BB_ATTR_REQUESTS: return "requests";
    case BB_ATTR_BUFFERS: return "buffers";
    case BB_ATTR_METRICS: return "metrics";
    case BB_ATTR_FIELDS: return "fields";
    case BB_ATTR_SHAPE: return "shape";
    case BB_ATTR_SHAPE_COUNT: return "shape count";
    case BB_ATTR_SHAPE_CAP: return "shape cap";
    case BB_ATTR_COUNT: break;
    }
    return "unknown";
}

/* The enum value, or -1 outside [0, last]. */
static int64_t attr_code(int value, int last)
{
    return value >= 0 && value <= last ? value : -1;
}

enum { AGREEMENT_FIELDS_MAX = 64 };

int bb_attr_codes(const bb_phase_attr_t *attr, int fields, int64_t code_out[BB_ATTR_COUNT])
{
    bb_phase_attr_t a = attr ? *attr : (bb_phase_attr_t){ 0 };
    code_out[BB_ATTR_ADMISSION] = attr_code((int)a.admission, BB_ADMISSION_FUSED_OP);
    code_out[BB_ATTR_REQUESTS] = attr_code((int)a.requests, BB_REQUESTS_PERSISTENT);
    code_out[BB_ATTR_BUFFERS] = attr_code((int)a.buffers, BB_BUFFERS_BORROWED);
    code_out[BB_ATTR_METRICS] = attr_code((int)a.metrics, BB_METRICS_UNTIMED);
    code_out[BB_ATTR_FIELDS] = fields >= 1 && fields <= AGREEMENT_FIELDS_MAX ? fields : -1;
    code_out[BB_ATTR_SHAPE] = attr_code((int)a.shape, BB_SHAPE_FIXED);
    /* Free: the count and cap are the call's, code 0.  Fixed: the count and
     * cap every call presents; borrowed buffers cannot be combined (the
     * fields would have to lie next to the provider's array). */
    int fixed = a.shape == BB_SHAPE_FIXED;
    /* The combined element's size (8*count + 96 bytes) is an int for
     * MPI_Type_size in the user op. */
    int count_ok = a.shape_count >= 0 && a.shape_count <= BB_SUM_SHAPE_COUNT_MAX;
    code_out[BB_ATTR_SHAPE_COUNT] = !fixed ? 0 : count_ok ? a.shape_count : -1;
    code_out[BB_ATTR_SHAPE_CAP] = !fixed ? 0
                                  : count_ok && a.shape_cap >= a.shape_count
                                            && a.shape_cap <= INT32_MAX ? a.shape_cap : -1;
    if (fixed && a.buffers == BB_BUFFERS_BORROWED)
        code_out[BB_ATTR_BUFFERS] = -1;
    int valid = 1;
    for (int i = 0; i < BB_ATTR_COUNT; i++)
        valid &= code_out[i] >= 0;
    return valid;
}

/* A code as the cause prints it: the policy's name, n, or "invalid". */
static const char *code_text(int attr, int64_t code, char *buf, size_t len)
{
    if (code < 0)
        return "invalid";
    switch ((bb_attr_id_t)attr) {
    case BB_ATTR_ADMISSION: return bb_admission_name((bb_admission_t)code);
    case BB_ATTR_REQUESTS: return bb_requests_name((bb_requests_t)code);
    case BB_ATTR_BUFFERS: return bb_buffers_name((bb_buffers_t)code);
    case BB_ATTR_METRICS: return bb_metrics_name((bb_metrics_t)code);
    case BB_ATTR_SHAPE: return bb_shape_name((bb_shape_t)code);
    case BB_ATTR_SHAPE_COUNT:
    case BB_ATTR_SHAPE_CAP:
    case BB_ATTR_FIELDS:
    case BB_ATTR_COUNT: break;
    }
    snprintf(buf, len, "%lld", (long long)code);
    return buf;
}

/* The verdict, from the agreed extremes alone, so every rank reaches the
 * same one. */
static bb_status_t attr_verdict(const int64_t *min, const int64_t *max,
                                const bb_attr_rule_t *rule, bb_attr_refusal_t *r)
{
    int persistent = min[BB_ATTR_REQUESTS] == BB_REQUESTS_PERSISTENT
                     && max[BB_ATTR_REQUESTS] == BB_REQUESTS_PERSISTENT;
    int invalid = 0;
    size_t used = 0;
    for (int i = 0; i < BB_ATTR_COUNT; i++) {
        int compared = rule[i] == BB_ATTR_RULE_EQUAL
                       || (rule[i] == BB_ATTR_RULE_IF_PERSISTENT && persistent);
        /* Invalid on some ranks only differs whatever the rule: those ranks
         * cannot make the object that the others make. */
        int differs = (min[i] < 0 && max[i] >= 0) || (compared && min[i] != max[i]);
        invalid |= max[i] < 0;
        r->min[i] = min[i];
        r->max[i] = max[i];
        if (!differs)
            continue;
        if (r->differ == 0) {
            r->first = (bb_attr_id_t)i;
            used = (size_t)snprintf(r->cause, sizeof r->cause,
                                    "policies differ between ranks:");
        }
        r->differ |= 1u << i;
        char lo[24], hi[24];
        if (used < sizeof r->cause)
            used += (size_t)snprintf(r->cause + used, sizeof r->cause - used,
                                     "%s %s (%s .. %s)", r->differ == 1u << i ? "" : ",",
                                     bb_attr_name((bb_attr_id_t)i),
                                     code_text(i, min[i], lo, sizeof lo),
                                     code_text(i, max[i], hi, sizeof hi));
    }
    if (r->differ != 0) {
        r->refusal.stage = BB_STAGE_CONTRACT;
        return BB_REFUSED;
    }
    if (max[BB_ATTR_COUNT] != BB_OK)
        return (bb_status_t)max[BB_ATTR_COUNT];
    return invalid ? BB_ERR_ARG : BB_OK;
}

bb_status_t bb_attr_agree(MPI_Comm comm, const int64_t code[BB_ATTR_COUNT],
                          const bb_attr_rule_t rule[BB_ATTR_COUNT], bb_status_t local,
                          bb_attr_refusal_t *out)
{
    /* The codes and the local status: a fixed length, so that the one
     * reduction is the same on every rank whatever its policy. */
    int64_t mine[BB_ATTR_COUNT + 1], min[BB_ATTR_COUNT + 1], max[BB_ATTR_COUNT + 1];
    memcpy(mine, code, BB_ATTR_COUNT * sizeof *code);
    mine[BB_ATTR_COUNT] = (int64_t)local;
    bb_attr_refusal_t r;
    memset(&r, 0, sizeof r);
    r.refusal.rank = -1;
    r.refusal.sequence = -1;
    r.first = BB_ATTR_COUNT;
    bb_status_t st;
    if (bb_agree_minmax_fused(comm, mine, BB_ATTR_COUNT + 1, min, max) != MPI_SUCCESS) {
        r.refusal.stage = BB_STAGE_TRANSPORT;  /* local detection, not agreed */
        MPI_Comm_rank(comm, &r.refusal.rank);
        st = BB_ERR_MPI;
    } else {
        st = attr_verdict(min, max, rule, &r);
    }
    if (out != NULL)
        *out = r;
    return st;
}

/* ---- agreement objects ---------------------------------------------------- */

struct bb_agreement {
    MPI_Comm comm;              /* borrowed */
    int n;
    bb_admission_t admission;
    bb_requests_t requests;
    MPI_Datatype pair_type;     /* fused-op: 2n contiguous int64 */
    MPI_Op pair_min;            /* fused-op: elementwise MIN over it */
    /* Persistent only: spec MIN and MAX, or fused's one request; and MAX. */
    MPI_Request minmax_req[2];
    MPI_Request max_req;
    unsigned ops;               /* BB_AGREE_*: what it serves, and how */
    /* Staging the requests are bound to, in one allocation: min/max in[n]
     * ([x], spec) or in[2n] ([x, ~x]) and out[2n] (MIN then MAX, or MIN of
     * [x, ~x]); max max_in[n], max_out[n].  NULL where the object does not
     * serve it, or reduces the caller's arrays directly (BB_AGREE_DIRECT:
     * spec min/max, and max). */
    int64_t *in, *out, *max_in, *max_out;
    int64_t *storage;           /* owns them all */
    int64_t staged;             /* int64 in storage */
    /* Direct and persistent: the caller's arrays the requests were made
     * for, at the first agreement (a later call must hand the same). */
    const int64_t *bound_local, *bound_max_local;
    int64_t *bound_min, *bound_max, *bound_max_out;
};

/* Elementwise MIN of int64 over len elements of a contiguous int64 type. */
static void pair_min_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int size = 0;
    MPI_Type_size(*type, &size);
    const int64_t *a = in;
    int64_t *b = inout;
    int64_t total = (int64_t)*len * (size / (int)sizeof(int64_t));
    for (int64_t i = 0; i < total; i++)
        if (a[i] < b[i])
            b[i] = a[i];
}

bb_status_t bb_agreement_make(MPI_Comm comm, int n, bb_admission_t admission,
                              bb_requests_t requests, unsigned ops,
                              bb_agreement_t **agreement_out)
{
    int64_t in_n = admission == BB_ADMISSION_SPEC ? n : 2 * (int64_t)n;
    /* Direct: spec's MIN and MAX, and the MAX, reduce the caller's own
     * arrays, so only fused [x, ~x] needs storage of the object's. */
    int direct = (ops & BB_AGREE_DIRECT) != 0;
    int minmax_staged = (ops & BB_AGREE_MINMAX) && !(direct && admission == BB_ADMISSION_SPEC);
    int max_staged = (ops & BB_AGREE_MAX) && !direct;
    int64_t staged = (minmax_staged ? in_n + 2 * (int64_t)n : 0)
                     + (max_staged ? 2 * (int64_t)n : 0);
    bb_agreement_t *a = calloc(1, sizeof *a);
    int64_t *storage = calloc(staged > 0 ? (size_t)staged : 1, sizeof *storage);
    if (a == NULL || storage == NULL)
        goto free_storage;
    a->comm = comm;
    a->n = n;
    a->admission = admission;
    a->requests = requests;
    a->storage = storage;
    a->staged = staged;
    a->ops = ops;
    int64_t *next = storage;
    if (minmax_staged) {
        a->in = next;
        a->out = next + in_n;
        next += in_n + 2 * (int64_t)n;
    }
    if (max_staged) {
        a->max_in = next;
        a->max_out = next + n;
    }
    a->minmax_req[0] = a->minmax_req[1] = a->max_req = MPI_REQUEST_NULL;
    a->pair_type = MPI_DATATYPE_NULL;
    a->pair_min = MPI_OP_NULL;
    if (admission == BB_ADMISSION_FUSED_OP) {
        if (MPI_Type_contiguous(2 * n, MPI_INT64_T, &a->pair_type) != MPI_SUCCESS)
            goto fail_mpi;
        if (MPI_Type_commit(&a->pair_type) != MPI_SUCCESS)
            goto free_type;
        if (MPI_Op_create(pair_min_fn, 1, &a->pair_min) != MPI_SUCCESS)
            goto free_type;
    }
    *agreement_out = a;
    return BB_OK;

free_type:
    MPI_Type_free(&a->pair_type);
fail_mpi:
    free(storage);
    free(a);
    return BB_ERR_MPI;
free_storage:
    free(storage);
    free(a);
    return BB_ERR_NOMEM;
}

bb_status_t bb_agreement_create_checked(MPI_Comm comm, int n, const bb_phase_attr_t *attr,
                                        bb_agreement_t **agreement_out,
                                        bb_attr_refusal_t *refusal_out)
{
    if (comm == MPI_COMM_NULL)
        return BB_ERR_ARG;  /* cannot take part */
    /* Buffers and metrics are the phases' business: not compared here. */
    static const bb_attr_rule_t rule[BB_ATTR_COUNT] = {
        [BB_ATTR_ADMISSION] = BB_ATTR_RULE_EQUAL, [BB_ATTR_REQUESTS] = BB_ATTR_RULE_EQUAL,
        [BB_ATTR_FIELDS] = BB_ATTR_RULE_EQUAL
    };
    bb_phase_attr_t policy = attr ? *attr : (bb_phase_attr_t){ 0 };
    policy.buffers = BB_BUFFERS_FRESH;  /* ignored: code 0 on every rank */
    policy.metrics = BB_METRICS_TIMED;
    int64_t code[BB_ATTR_COUNT];
    int valid = bb_attr_codes(&policy, n, code);
    if (policy.shape != BB_SHAPE_FREE) {  /* the sum phase's alone */
        code[BB_ATTR_SHAPE] = -1;
        valid = 0;
    }
    /* Made before the agreement, so that a rank that cannot make it says so
     * in the agreement and every rank returns the same status. */
    bb_agreement_t *a = NULL;
    bb_status_t local = agreement_out == NULL ? BB_ERR_ARG : BB_OK;
    if (local == BB_OK && valid)
        local = bb_agreement_make(comm, n, (bb_admission_t)code[BB_ATTR_ADMISSION],
                                  (bb_requests_t)code[BB_ATTR_REQUESTS],
                                  BB_AGREE_MINMAX | BB_AGREE_MAX, &a);
    bb_status_t st = bb_attr_agree(comm, code, rule, local, refusal_out);
    if (st != BB_OK) {
        bb_agreement_destroy(a);
        return st;
    }
    *agreement_out = a;
    return BB_OK;
}

bb_status_t bb_agreement_create(MPI_Comm comm, int n, const bb_phase_attr_t *attr,
                                bb_agreement_t **agreement_out)
{
    return bb_agreement_create_checked(comm, n, attr, agreement_out, NULL);
}

/* One MPI_Allreduce: per call (persistent NULL), or through the persistent
 * request *persistent, made at its first use and started at each. */
typedef struct reduction {
    const void *send;
    void *recv;
    int count;
    MPI_Datatype type;
    MPI_Op op;
} reduction_t;

static int reduce(MPI_Comm comm, const reduction_t *x, MPI_Request *persistent)
{
    if (persistent == NULL)
        return MPI_Allreduce(x->send, x->recv, x->count, x->type, x->op, comm);
    int rc = MPI_SUCCESS;
    if (*persistent == MPI_REQUEST_NULL)
        rc = bb_mpi_allreduce_init(x->send, x->recv, x->count, x->type, x->op, comm,
                                   MPI_INFO_NULL, persistent);
    if (rc == MPI_SUCCESS)
        rc = MPI_Start(persistent);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(persistent, MPI_STATUS_IGNORE);
    return rc;
}

/* x into lo and hi as the admission reduces it: spec MIN into lo[0, n) and
 * MAX into hi[0, n) (x, lo, hi: the staging, or the caller's arrays when
 * direct); fused and fused-op MIN of the staged [x, ~x] into out[0, 2n). */
static int minmax_reduce(bb_agreement_t *a, const int64_t *x, int64_t *lo, int64_t *hi)
{
    int n = a->n;
    MPI_Request *r = a->requests == BB_REQUESTS_PERSISTENT ? a->minmax_req : NULL;
    if (a->admission == BB_ADMISSION_SPEC) {
        reduction_t mn = { x, lo, n, MPI_INT64_T, MPI_MIN };
        reduction_t mx = { x, hi, n, MPI_INT64_T, MPI_MAX };
        int rc = reduce(a->comm, &mn, r);
        return rc == MPI_SUCCESS ? reduce(a->comm, &mx, r ? r + 1 : NULL) : rc;
    }
    reduction_t both = a->admission == BB_ADMISSION_FUSED
                           ? (reduction_t){ a->in, a->out, 2 * n, MPI_INT64_T, MPI_MIN }
                           : (reduction_t){ a->in, a->out, 1, a->pair_type, a->pair_min };
    return reduce(a->comm, &both, r);
}

/* Direct and persistent: the first call's arrays are the ones the requests
 * are made for; 0 when a later call hands others (a caller's bug: the
 * requests would read and write the first ones). */
static int direct_bind(const int64_t **bound, const int64_t *local, int64_t **bound_a,
                       int64_t *a_out, int64_t **bound_b, int64_t *b_out)
{
    if (*bound == NULL) {
        *bound = local;
        *bound_a = a_out;
        if (bound_b != NULL)
            *bound_b = b_out;
        return 1;
    }
    return *bound == local && *bound_a == a_out && (bound_b == NULL || *bound_b == b_out);
}

int64_t bb_agreement_bytes(const bb_agreement_t *a)
{
    return a == NULL ? 0 : 8 * a->staged;
}

int bb_agreement_minmax(bb_agreement_t *a, const int64_t *local, int64_t *min_out,
                        int64_t *max_out)
{
    if (a == NULL || local == NULL || min_out == NULL || max_out == NULL
        || !(a->ops & BB_AGREE_MINMAX))
        return MPI_ERR_ARG;
    int n = a->n;
    int fused = a->admission != BB_ADMISSION_SPEC;
    if (a->in == NULL) {  /* direct spec: the caller's arrays, no copies */
        if (a->requests == BB_REQUESTS_PERSISTENT
            && !direct_bind(&a->bound_local, local, &a->bound_min, min_out, &a->bound_max,
                            max_out))
            return MPI_ERR_ARG;
        return minmax_reduce(a, local, min_out, max_out);
    }
    if (fused)
        bb_agree_split(local, n, a->in);
    else
        memcpy(a->in, local, (size_t)n * sizeof *local);
    int rc = minmax_reduce(a, a->in, a->out, a->out + n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (fused) {
        bb_agree_join(a->out, n, min_out, max_out);
    } else {
        memcpy(min_out, a->out, (size_t)n * sizeof *min_out);
        memcpy(max_out, a->out + n, (size_t)n * sizeof *max_out);
    }
    return MPI_SUCCESS;
}

int bb_agreement_max(bb_agreement_t *a, const int64_t *local, int64_t *max_out)
{
    if (a == NULL || local == NULL || max_out == NULL || !(a->ops & BB_AGREE_MAX))
        return MPI_ERR_ARG;
    MPI_Request *r = a->requests == BB_REQUESTS_PERSISTENT ? &a->max_req : NULL;
    if (a->max_in == NULL) {  /* direct: the caller's arrays, no copies */
        if (r != NULL
            && !direct_bind(&a->bound_max_local, local, &a->bound_max_out, max_out, NULL, NULL))
            return MPI_ERR_ARG;
        reduction_t x = { local, max_out, a->n, MPI_INT64_T, MPI_MAX };
        return reduce(a->comm, &x, r);
    }
    reduction_t x = { a->max_in, a->max_out, a->n, MPI_INT64_T, MPI_MAX };
    memcpy(a->max_in, local, (size_t)a->n * sizeof *local);
    int rc = reduce(a->comm, &x, r);
    if (rc == MPI_SUCCESS)
        memcpy(max_out, a->max_out, (size_t)a->n * sizeof *max_out);
    return rc;
}

void bb_agreement_destroy(bb_agreement_t *a)
{
    if (a == NULL)
        return;
    for (int i = 0; i < 2; i++)
        if (a->minmax_req[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&a->minmax_req[i]);
    if (a->max_req != MPI_REQUEST_NULL)
        MPI_Request_free(&a->max_req);
    if (a->pair_min != MPI_OP_NULL)
        MPI_Op_free(&a->pair_min);
    if (a->pair_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&a->pair_type);
    free(a->storage);
    free(a);
}
