/* agree.c: fixed-field agreement, shared by every phase.
 * Agreement on a field means its MIN equals its MAX over all live
 * participants; this is ordinary collective reduction, not fault-tolerant
 * consensus. */
#include "config.h"
#include "internal.h"
#include "mpi-compat.h"

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
    for (int i = 0; i < n; i++) {
        both[i] = local[i];
        both[n + i] = ~local[i];
    }
    int rc = MPI_Allreduce(both, reduced, 2 * n, MPI_INT64_T, MPI_MIN, comm);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++) {
            min_out[i] = reduced[i];
            max_out[i] = ~reduced[n + i];
        }
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

const char *bb_metrics_name(bb_metrics_t metrics)
{
    switch (metrics) {
    case BB_METRICS_TIMED: return "timed";
    case BB_METRICS_UNTIMED: return "untimed";
    }
    return "unknown";
}

/* ---- agreement objects ---------------------------------------------------- */

enum { AGREEMENT_FIELDS_MAX = 64 };

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
    /* Staging the requests are bound to: in[2n] ([x] or [x, ~x]), out[2n]
     * (MIN then MAX, or MIN of [x, ~x]), max_in[n], max_out[n]. */
    int64_t *in, *out, *max_in, *max_out;
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

bb_status_t bb_agreement_create(MPI_Comm comm, int n, const bb_phase_attr_t *attr,
                                bb_agreement_t **agreement_out)
{
    bb_admission_t admission = attr ? attr->admission : BB_ADMISSION_SPEC;
    bb_requests_t requests = attr ? attr->requests : BB_REQUESTS_PER_CALL;
    if (agreement_out == NULL || comm == MPI_COMM_NULL || n < 1
        || n > AGREEMENT_FIELDS_MAX
        || (admission != BB_ADMISSION_SPEC && admission != BB_ADMISSION_FUSED
            && admission != BB_ADMISSION_FUSED_OP)
        || (requests != BB_REQUESTS_PER_CALL && requests != BB_REQUESTS_PERSISTENT))
        return BB_ERR_ARG;
    bb_agreement_t *a = calloc(1, sizeof *a);
    int64_t *storage = calloc(6 * (size_t)n, sizeof *storage);
    if (a == NULL || storage == NULL)
        goto free_storage;
    a->comm = comm;
    a->n = n;
    a->admission = admission;
    a->requests = requests;
    a->in = storage;
    a->out = storage + 2 * n;
    a->max_in = storage + 4 * n;
    a->max_out = storage + 5 * n;
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

/* in into out as the admission reduces it: spec MIN into out[0, n) then MAX
 * into out[n, 2n); fused and fused-op MIN of [x, ~x] into out[0, 2n). */
static int minmax_reduce(bb_agreement_t *a)
{
    int n = a->n;
    MPI_Request *r = a->requests == BB_REQUESTS_PERSISTENT ? a->minmax_req : NULL;
    if (a->admission == BB_ADMISSION_SPEC) {
        reduction_t lo = { a->in, a->out, n, MPI_INT64_T, MPI_MIN };
        reduction_t hi = { a->in, a->out + n, n, MPI_INT64_T, MPI_MAX };
        int rc = reduce(a->comm, &lo, r);
        return rc == MPI_SUCCESS ? reduce(a->comm, &hi, r ? r + 1 : NULL) : rc;
    }
    reduction_t both = a->admission == BB_ADMISSION_FUSED
                           ? (reduction_t){ a->in, a->out, 2 * n, MPI_INT64_T, MPI_MIN }
                           : (reduction_t){ a->in, a->out, 1, a->pair_type, a->pair_min };
    return reduce(a->comm, &both, r);
}

int bb_agreement_minmax(bb_agreement_t *a, const int64_t *local, int64_t *min_out,
                        int64_t *max_out)
{
    if (a == NULL || local == NULL || min_out == NULL || max_out == NULL)
        return MPI_ERR_ARG;
    int n = a->n;
    int fused = a->admission != BB_ADMISSION_SPEC;
    for (int i = 0; i < n; i++) {
        a->in[i] = local[i];
        if (fused)
            a->in[n + i] = ~local[i];  /* min(~x) = ~max(x), for every int64 */
    }
    int rc = minmax_reduce(a);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++) {
        min_out[i] = a->out[i];
        max_out[i] = fused ? ~a->out[n + i] : a->out[n + i];
    }
    return MPI_SUCCESS;
}

int bb_agreement_max(bb_agreement_t *a, const int64_t *local, int64_t *max_out)
{
    if (a == NULL || local == NULL || max_out == NULL)
        return MPI_ERR_ARG;
    reduction_t x = { a->max_in, a->max_out, a->n, MPI_INT64_T, MPI_MAX };
    memcpy(a->max_in, local, (size_t)a->n * sizeof *local);
    int rc = reduce(a->comm, &x, a->requests == BB_REQUESTS_PERSISTENT ? &a->max_req : NULL);
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
    free(a->in);
    free(a);
}
