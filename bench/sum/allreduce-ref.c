/* allreduce-ref.c: the plain MPI_Allreduce references (allreduce-ref.h). */
#include "config.h"
#include "allreduce-ref.h"
#include "private/mpi-compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[BB_REDUCE_TYPES] = { "mpi_double", "mpi_float",
                                                         "mpi_int" };

const char *bb_reduce_type_name(bb_reduce_type_t type) { return type_names[type]; }
int64_t bb_reduce_type_bytes(bb_reduce_type_t type) { return type == BB_REDUCE_DOUBLE ? 8 : 4; }

static MPI_Datatype type_mpi(bb_reduce_type_t type)
{
    return type == BB_REDUCE_FLOAT ? MPI_FLOAT : type == BB_REDUCE_INT ? MPI_INT : MPI_DOUBLE;
}

bb_reduce_type_t bb_reduce_type_parse(bb_run_t *run, const char *opt, const char *value)
{
    static const bb_reduce_type_t types[] = {BB_REDUCE_DOUBLE, BB_REDUCE_FLOAT, BB_REDUCE_INT};
    return types[bb_run_parse_one(run, opt, value, type_names, BB_REDUCE_TYPES)];
}

/* The user-defined SUM: the built-in's arithmetic, as a user function. */
static void user_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int n = *len;
    if (*type == MPI_FLOAT)
        for (int i = 0; i < n; i++)
            ((float *)inout)[i] += ((const float *)in)[i];
    else if (*type == MPI_INT)
        for (int i = 0; i < n; i++)
            ((int *)inout)[i] += ((const int *)in)[i];
    else
        for (int i = 0; i < n; i++)
            ((double *)inout)[i] += ((const double *)in)[i];
}

double bb_allreduce_ref_value(int64_t i, int rank) { return (double)(i % 1024 + rank); }

int64_t bb_allreduce_ref_errors(const void *result, bb_reduce_type_t type, int64_t count,
                                int ranks)
{
    double rank_sum = (double)ranks * (ranks - 1) / 2.0;
    int64_t bad = 0;
    for (int64_t i = 0; i < count; i++) {
        double v = type == BB_REDUCE_FLOAT ? (double)((const float *)result)[i]
                 : type == BB_REDUCE_INT ? (double)((const int *)result)[i]
                 : ((const double *)result)[i];
        if (v != (double)ranks * (double)(i % 1024) + rank_sum)
            bad++;
    }
    return bad;
}

void bb_allreduce_ref_setup(bb_run_t *run, bb_allreduce_ref_t *ref, bb_reduce_type_t type,
                            int64_t max_bytes)
{
    int64_t n = max_bytes / bb_reduce_type_bytes(type) + 1;
    size_t bytes = (size_t)n * (size_t)bb_reduce_type_bytes(type);
    ref->type = type;
    ref->persistent = MPI_REQUEST_NULL;
    ref->send = malloc(bytes);
    ref->recv = malloc(bytes);
    ref->copy = malloc(bytes);
    if (ref->send == NULL || ref->recv == NULL || ref->copy == NULL)
        bb_run_fatal(run, "cannot allocate %lld bytes", (long long)max_bytes);
    if (MPI_Op_create(user_sum_fn, 1, &ref->user_sum) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Op_create failed");
    int rank = bb_run_rank(run);
    for (int64_t i = 0; i < n; i++) {
        double v = bb_allreduce_ref_value(i, rank);
        if (type == BB_REDUCE_FLOAT)
            ((float *)ref->send)[i] = (float)v;
        else if (type == BB_REDUCE_INT)
            ((int *)ref->send)[i] = (int)v;
        else
            ((double *)ref->send)[i] = v;
    }
}

void bb_allreduce_ref_point(bb_run_t *run, bb_allreduce_ref_t *ref, int64_t bytes,
                            int persistent)
{
    ref->count = bytes / bb_reduce_type_bytes(ref->type);
    if (persistent
        && bb_mpi_allreduce_init(ref->send, ref->recv, (int)ref->count, type_mpi(ref->type),
                                 MPI_SUM, bb_run_comm(run), MPI_INFO_NULL, &ref->persistent)
               != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce_init (raw-persistent) failed");
}

void bb_allreduce_ref_point_end(bb_allreduce_ref_t *ref)
{
    if (ref->persistent != MPI_REQUEST_NULL)
        MPI_Request_free(&ref->persistent);
}

void bb_allreduce_ref_free(bb_allreduce_ref_t *ref)
{
    if (ref->user_sum != MPI_OP_NULL && ref->send != NULL)
        MPI_Op_free(&ref->user_sum);
    free(ref->send);
    free(ref->recv);
    free(ref->copy);
}

/* Fresh buffers per call, as a phase's own; the fill is the copy a phase
 * makes of its contribution.  The check is outside the time. */
static int64_t fresh_call(bb_run_t *run, bb_allreduce_ref_t *ref, double *elapsed)
{
    size_t bytes = (size_t)(ref->count > 0 ? ref->count : 1)
                   * (size_t)bb_reduce_type_bytes(ref->type);
    double t0 = bb_time_now();
    void *send = malloc(bytes), *recv = malloc(bytes);
    if (send == NULL || recv == NULL)
        bb_run_fatal(run, "raw-fresh: cannot allocate %zu bytes", bytes);
    memcpy(send, ref->send, bytes);
    int rc = MPI_Allreduce(send, recv, (int)ref->count, type_mpi(ref->type), MPI_SUM,
                           bb_run_comm(run));
    double t1 = bb_time_now();
    if (rc != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce (raw-fresh) failed");
    int64_t wrong = bb_allreduce_ref_errors(recv, ref->type, ref->count, bb_run_size(run));
    double t2 = bb_time_now();
    free(send);
    free(recv);
    *elapsed += (t1 - t0) + (bb_time_now() - t2);
    return wrong;
}

int64_t bb_allreduce_ref_call(bb_run_t *run, bb_allreduce_ref_t *ref, bb_allreduce_kind_t kind,
                              const char *label, double *elapsed)
{
    if (kind == BB_ALLREDUCE_FRESH)
        return fresh_call(run, ref, elapsed);
    int n = (int)ref->count, done = 0, rc;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request *r = kind == BB_ALLREDUCE_PERSISTENT ? &ref->persistent : &req;
    const void *send = kind == BB_ALLREDUCE_COPY ? ref->copy : ref->send;
    MPI_Comm comm = bb_run_comm(run);
    double t0 = bb_time_now();
    if (kind == BB_ALLREDUCE_COPY)
        memcpy(ref->copy, ref->send, (size_t)n * (size_t)bb_reduce_type_bytes(ref->type));
    if (kind == BB_ALLREDUCE_RAW || kind == BB_ALLREDUCE_COPY || kind == BB_ALLREDUCE_USER_OP)
        done = (rc = MPI_Allreduce(send, ref->recv, n, type_mpi(ref->type),
                                   kind == BB_ALLREDUCE_USER_OP ? ref->user_sum : MPI_SUM,
                                   comm)) == MPI_SUCCESS;
    else if (kind == BB_ALLREDUCE_NB)
        rc = MPI_Iallreduce(send, ref->recv, n, type_mpi(ref->type), MPI_SUM, comm, r);
    else
        rc = MPI_Start(r);
    if (rc == MPI_SUCCESS && !done)
        rc = MPI_Test(r, &done, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !done)
        rc = MPI_Wait(r, MPI_STATUS_IGNORE);
    *elapsed += bb_time_now() - t0;
    if (rc != MPI_SUCCESS)
        bb_run_fatal(run, "%s: an MPI call failed", label);
    return bb_allreduce_ref_errors(ref->recv, ref->type, ref->count, bb_run_size(run));
}

void bb_allreduce_ref_quantities(cJSON *q, const char *name, int blocking)
{
    const char *scope = "call/max-rank";
    char why[160];
    if (blocking)
        snprintf(why, sizeof why, "raw mode: blocking call, requests are internal to MPI");
    else
        snprintf(why, sizeof why, "%s reference: no request counted by a phase", name);
    bb_quantities_add(q, "communication.max_inflight", bb_quantity_null("count", scope, why));
    snprintf(why, sizeof why, "%s%s: buffers are the benchmark's, not counted by a phase",
             name, blocking ? " mode" : " reference");
    bb_quantities_add(q, "memory.tracked_live", bb_quantity_null("byte", scope, why));
}

static int bb_allreduce_fixture_prepare(void *arg, const double **data_out, int64_t *len_out)
{
    bb_allreduce_fixture_t *f = arg;
    bb_time_sleep(f->delay_s);
    if (f->fail)
        return 1;
    *data_out = f->data;
    *len_out = f->len;
    bb_run_lent(f->run);
    return 0;
}

static void bb_allreduce_fixture_release(void *arg, const double *data)
{
    bb_allreduce_fixture_t *f = arg;
    (void)data;
    bb_run_returned(f->run);
}

void bb_allreduce_fixture_setup(bb_run_t *run, bb_allreduce_fixture_t *f, int64_t max_count,
                                int fail, double delay_s)
{
    int rank = bb_run_rank(run);
    *f = (bb_allreduce_fixture_t){ .fail = fail, .delay_s = delay_s, .run = run };
    f->data = malloc((size_t)(max_count + 1) * sizeof(double));
    if (f->data == NULL)
        bb_run_fatal(run, "cannot allocate %lld elements", (long long)max_count);
    for (int64_t i = 0; i <= max_count; i++)
        f->data[i] = bb_allreduce_ref_value(i, rank);
    f->provider = (bb_sum_provider_t){ bb_allreduce_fixture_prepare,
                                       bb_allreduce_fixture_release, f };
}

void bb_allreduce_fixture_free(bb_allreduce_fixture_t *f)
{
    free(f->data);
    f->data = NULL;
}
