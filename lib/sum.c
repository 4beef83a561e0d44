/* sum.c: the bounded sum phase.
 *
 * Every rank presents six int64 fields [sequence, phase_id, epoch, count,
 * cap, refusal]; their MIN and MAX (two Allreduces, or one under the fused
 * admissions) decide admission.  Only an admitted phase posts its one
 * MPI_Iallreduce (or starts its persistent one), so a bad input on one rank
 * is a clean refusal on all ranks.  The phase performs no I/O. */
#include "config.h"
#include "internal.h"
#include "mpi-compat.h"

#include <stdlib.h>
#include <string.h>

struct bb_sum_phase {
    bb_world_t *world;        /* borrowed */
    int64_t sequence;         /* the next sequence this rank presents */
    int64_t sequence_override;
    int has_override;
    double post_delay_s;
    int active;               /* inside bb_sum_phase_run: reentry guard */
    int poisoned;
    /* Control storage: three 48-byte arrays, independent of rank count. */
    int64_t local[BB_SUM_FIELDS];
    int64_t min[BB_SUM_FIELDS];
    int64_t max[BB_SUM_FIELDS];
    bb_buffers_t buffers;     /* the payload buffer policy, fixed at creation */
    bb_requests_t requests;   /* per call, or persistent */
    int timed;                /* the metrics read the clock */
    bb_agreement_t *agreement;/* the admission, under the admission policy */
    /* Payload storage: owned by the phase during a call (fresh) or from the
     * first admitted call to destroy (retained); capacity in elements. */
    double *send;
    double *recv;
    int64_t capacity;
    /* Retained only, while a call grows the buffers: the previous ones, kept
     * until admission decides (a refusal restores them). */
    double *old_send;
    double *old_recv;
    int64_t old_capacity;
    int grown;                /* this call grew the buffers */
    int64_t tracked_live;
    MPI_Request request;      /* per call: the Iallreduce; persistent: the
                                 request made for req_send, req_recv, req_count */
    const double *req_send;
    double *req_recv;
    int64_t req_count;
    double zero_send, zero_recv;  /* count 0: addresses that outlive a call */
    bb_poison_node_t poison;  /* fatal-list link; used once if poisoned */
};

bb_status_t bb_sum_phase_create(bb_world_t *world, bb_sum_phase_t **phase_out)
{
    return bb_sum_phase_create_attr(world, NULL, phase_out);
}

bb_status_t bb_sum_phase_create_attr(bb_world_t *world, const bb_phase_attr_t *attr,
                                     bb_sum_phase_t **phase_out)
{
    return bb_sum_phase_create_checked(world, attr, phase_out, NULL);
}

bb_status_t bb_sum_phase_create_checked(bb_world_t *world, const bb_phase_attr_t *attr,
                                        bb_sum_phase_t **phase_out,
                                        bb_attr_refusal_t *refusal_out)
{
    /* The admission and the requests decide the agreement's collectives;
     * the buffers decide when a persistent payload request is made again;
     * the metrics only when the clock is read. */
    static const bb_attr_rule_t rule[BB_ATTR_COUNT] = {
        [BB_ATTR_ADMISSION] = BB_ATTR_RULE_EQUAL, [BB_ATTR_REQUESTS] = BB_ATTR_RULE_EQUAL,
        [BB_ATTR_BUFFERS] = BB_ATTR_RULE_IF_PERSISTENT, [BB_ATTR_METRICS] = BB_ATTR_RULE_VALID,
        [BB_ATTR_FIELDS] = BB_ATTR_RULE_EQUAL
    };
    if (world == NULL)
        return BB_ERR_ARG;
    if (bb_world_check_owner(world) != BB_OK)
        return BB_ERR_THREAD;
    /* Every policy's zero value is the default. */
    bb_phase_attr_t a = attr ? *attr : (bb_phase_attr_t){ 0 };
    int64_t code[BB_ATTR_COUNT];
    int valid = bb_attr_codes(&a, BB_SUM_FIELDS, code);
    /* Made before the agreement, so that a rank that cannot make its phase
     * says so there and every rank returns the same status. */
    bb_status_t local = phase_out == NULL ? BB_ERR_ARG : BB_OK;
    bb_sum_phase_t *phase = NULL;
    if (local == BB_OK && valid) {
        phase = calloc(1, sizeof *phase);
        local = phase == NULL ? BB_ERR_NOMEM
                              : bb_agreement_make(bb_world_comm(world), BB_SUM_FIELDS,
                                                  a.admission, a.requests, &phase->agreement);
    }
    bb_status_t st = bb_attr_agree(bb_world_comm(world), code, rule, local, refusal_out);
    /* BB_OK means this rank made its phase too (the test is for the
     * compiler). */
    if (st != BB_OK || phase == NULL) {
        if (phase != NULL)
            bb_agreement_destroy(phase->agreement);
        free(phase);
        return st != BB_OK ? st : BB_ERR_STATE;
    }
    phase->world = world;
    phase->buffers = a.buffers;
    phase->requests = a.requests;
    phase->timed = a.metrics == BB_METRICS_TIMED;
    phase->request = MPI_REQUEST_NULL;
    phase->tracked_live = BB_SUM_CONTROL_BYTES;
    *phase_out = phase;
    return BB_OK;
}

int64_t bb_sum_phase_sequence(const bb_sum_phase_t *phase) { return phase->sequence; }
int64_t bb_sum_phase_tracked_live(const bb_sum_phase_t *phase) { return phase->tracked_live; }
int bb_sum_phase_poisoned(const bb_sum_phase_t *phase) { return phase->poisoned; }

void bb_sum_phase_set_sequence(bb_sum_phase_t *phase, int64_t sequence)
{
    phase->sequence_override = sequence;
    phase->has_override = 1;
}

void bb_sum_phase_set_post_delay(bb_sum_phase_t *phase, double seconds)
{
    phase->post_delay_s = seconds > 0.0 ? seconds : 0.0;
}

bb_status_t bb_sum_phase_destroy(bb_sum_phase_t *phase)
{
    if (phase == NULL)
        return BB_OK;
    if (phase->poisoned)
        return BB_ERR_POISONED;  /* stays on the fatal list, never freed */
    if (phase->active)
        return BB_ERR_STATE;
    if (phase->request != MPI_REQUEST_NULL)  /* an inactive persistent request */
        MPI_Request_free(&phase->request);
    bb_agreement_destroy(phase->agreement);
    free(phase->send);
    free(phase->recv);
    free(phase);
    return BB_OK;
}

/* Local contract check; the cause stays on this rank, only a bit travels. */
static bb_sum_local_t contract_check(const bb_sum_contract_t *c)
{
    if (c->phase_id < 0 || c->epoch < 0 || c->count < 0 || c->max_elements < 0)
        return BB_SUM_LOCAL_NEGATIVE;
    if (c->count > INT32_MAX || c->max_elements > INT32_MAX)
        return BB_SUM_LOCAL_RANGE;
    if (c->count > c->max_elements)
        return BB_SUM_LOCAL_OVER_CAP;
    return BB_SUM_LOCAL_NONE;
}

static void tracked_update(bb_sum_phase_t *phase)
{
    phase->tracked_live = BB_SUM_CONTROL_BYTES
                          + 16 * (phase->capacity + phase->old_capacity);
}

/* After a refusal, or once a fresh phase has published: a fresh phase gives
 * its buffers back; a retained one drops only what this call grew. */
static void payload_release(bb_sum_phase_t *phase)
{
    if (phase->buffers == BB_BUFFERS_FRESH || phase->grown) {
        free(phase->send);
        free(phase->recv);
        phase->send = phase->old_send;
        phase->recv = phase->old_recv;
        phase->capacity = phase->old_capacity;
        phase->old_send = phase->old_recv = NULL;
        phase->old_capacity = 0;
        phase->grown = 0;
    }
    tracked_update(phase);
}

/* Admitted: a retained phase keeps what it grew and frees the old. */
static void payload_admitted(bb_sum_phase_t *phase)
{
    free(phase->old_send);
    free(phase->old_recv);
    phase->old_send = phase->old_recv = NULL;
    phase->old_capacity = 0;
    phase->grown = 0;
    tracked_update(phase);
}

/* Buffers for count elements: fresh ones of count, or the retained ones,
 * grown to cap (keeping the previous until admission) when too small. */
static int payload_reserve(bb_sum_phase_t *phase, int64_t count, int64_t cap)
{
    if (phase->buffers == BB_BUFFERS_RETAINED && phase->capacity >= count)
        return 0;
    int64_t want = phase->buffers == BB_BUFFERS_RETAINED ? cap : count;
    double *send = malloc((size_t)want * sizeof(double));
    double *recv = malloc((size_t)want * sizeof(double));
    if (send == NULL || recv == NULL) {
        free(send);
        free(recv);
        return -1;
    }
    if (phase->buffers == BB_BUFFERS_RETAINED) {
        phase->old_send = phase->send;
        phase->old_recv = phase->recv;
        phase->old_capacity = phase->capacity;
        phase->grown = 1;
    }
    phase->send = send;
    phase->recv = recv;
    phase->capacity = want;
    tracked_update(phase);
    return 0;
}

/* Prepare and copy this rank's contribution into owned buffers.  Every
 * provider array is released exactly once, whatever happens. */
static bb_sum_local_t contribution_prepare(bb_sum_phase_t *phase,
                                           const bb_sum_provider_t *provider,
                                           const bb_sum_contract_t *contract)
{
    const double *data = NULL;
    int64_t len = 0, count = contract->count;
    bb_sum_local_t cause = BB_SUM_LOCAL_NONE;

    if (provider->prepare(provider->arg, &data, &len) != 0)
        cause = BB_SUM_LOCAL_PROVIDER;
    else if (len != count || (count > 0 && data == NULL))
        cause = BB_SUM_LOCAL_LENGTH;
    if (cause == BB_SUM_LOCAL_NONE && count > 0) {
        if (payload_reserve(phase, count, contract->max_elements) != 0)
            cause = BB_SUM_LOCAL_NOMEM;
        else
            memcpy(phase->send, data, (size_t)count * sizeof(double));
    }
    if (data != NULL && provider->release != NULL)
        provider->release(provider->arg, data);
    return cause;
}

/* Post the payload of count elements: MPI_Iallreduce, or start the
 * persistent request, made anew when the buffers or the count it names
 * changed.  NULL, or the MPI call that failed. */
static const char *payload_post(bb_sum_phase_t *phase, MPI_Comm comm, int64_t count)
{
    const double *send = phase->send ? phase->send : &phase->zero_send;
    double *recv = phase->recv ? phase->recv : &phase->zero_recv;
    if (phase->requests == BB_REQUESTS_PER_CALL)
        return MPI_Iallreduce(send, recv, (int)count, MPI_DOUBLE, MPI_SUM, comm,
                              &phase->request) == MPI_SUCCESS ? NULL : "MPI_Iallreduce";
    if (phase->request != MPI_REQUEST_NULL
        && (phase->req_send != send || phase->req_recv != recv || phase->req_count != count)
        && MPI_Request_free(&phase->request) != MPI_SUCCESS)
        return "MPI_Request_free";
    if (phase->request == MPI_REQUEST_NULL) {
        if (bb_mpi_allreduce_init(send, recv, (int)count, MPI_DOUBLE, MPI_SUM, comm,
                                  MPI_INFO_NULL, &phase->request) != MPI_SUCCESS)
            return "MPI_Allreduce_init";
        phase->req_send = send;
        phase->req_recv = recv;
        phase->req_count = count;
    }
    return MPI_Start(&phase->request) == MPI_SUCCESS ? NULL : "MPI_Start";
}

/* An MPI error during admission, posting or progress: keep everything the
 * MPI library may still touch reachable forever and refuse all later use. */
static void phase_poison(bb_sum_phase_t *phase, bb_sum_metrics_t *m, const char *call)
{
    m->mpi_call = call;
    phase->poisoned = 1;
    bb_poison_retain(&phase->poison, BB_POISON_SUM, phase);
    m->status = BB_ERR_MPI;
    m->refusal.stage = BB_STAGE_TRANSPORT;  /* local detection, not agreed */
    m->refusal.rank = m->rank;
}

/* The clock, or 0 in an untimed phase (whose time fields become -1). */
static double clock_read(const bb_sum_phase_t *phase)
{
    return phase != NULL && phase->timed ? bb_time_now() : 0.0;
}

bb_status_t bb_sum_phase_run(bb_sum_phase_t *phase,
                             const bb_sum_provider_t *provider,
                             const bb_sum_contract_t *contract,
                             double **result_out, bb_sum_metrics_t *metrics_out)
{
    bb_sum_metrics_t m;
    memset(&m, 0, sizeof m);
    m.refusal.rank = -1;
    double t_start = clock_read(phase);

    /* Misuse that leaves no safe way to reach the admission is answered
     * locally, before any MPI call.  A bad argument is not: that rank
     * presents a refusal bit instead, so no other rank waits. */
    if (phase == NULL)
        m.status = BB_ERR_ARG;
    else if (phase->poisoned)
        m.status = BB_ERR_POISONED;
    else if (bb_world_check_owner(phase->world) != BB_OK)
        m.status = BB_ERR_THREAD;
    else if (phase->active)
        m.status = BB_ERR_REENTRY;
    if (m.status != BB_OK) {
        if (metrics_out != NULL)
            *metrics_out = m;
        return m.status;
    }

    MPI_Comm comm = bb_world_comm(phase->world);
    phase->active = 1;
    if (result_out != NULL)
        *result_out = NULL;  /* documented: NULL unless published */
    m.rank = bb_world_rank(phase->world);
    m.ranks = bb_world_size(phase->world);
    m.sequence = phase->has_override ? phase->sequence_override : phase->sequence;
    phase->has_override = 0;
    int bad_arg = provider == NULL || provider->prepare == NULL
                  || contract == NULL || result_out == NULL;
    const bb_sum_contract_t none = {0, 0, 0, 0};
    if (contract == NULL)
        contract = &none;
    m.phase_id = contract->phase_id;
    m.epoch = contract->epoch;
    m.count = contract->count;

    /* 1. Local preflight; a failure becomes a refusal bit, not an early
     * return, so that every rank still reaches admission. */
    m.local_cause = bad_arg ? BB_SUM_LOCAL_ARGUMENT : contract_check(contract);
    if (m.local_cause == BB_SUM_LOCAL_NONE)
        m.local_cause = contribution_prepare(phase, provider, contract);
    double t_prepared = clock_read(phase);
    m.prepare_s = t_prepared - t_start;
    m.tracked_bytes = phase->tracked_live;

    /* 2. Admission: MIN and MAX over the six fields. */
    phase->local[BB_SUM_SEQUENCE] = m.sequence;
    phase->local[BB_SUM_PHASE_ID] = contract->phase_id;
    phase->local[BB_SUM_EPOCH] = contract->epoch;
    phase->local[BB_SUM_COUNT] = contract->count;
    phase->local[BB_SUM_CAP] = contract->max_elements;
    phase->local[BB_SUM_REFUSAL] = m.local_cause != BB_SUM_LOCAL_NONE;
    int rc = bb_agreement_minmax(phase->agreement, phase->local, phase->min, phase->max);
    double t_admitted = clock_read(phase);
    m.admission_s = t_admitted - t_prepared;
    if (rc != MPI_SUCCESS) {
        phase_poison(phase, &m, "MPI_Allreduce (admission)");
        goto out_metrics;
    }
    /* The sequence is consumed whether or not the phase is admitted. */
    phase->sequence++;
    if (!bb_agree_fields_equal(phase->min, phase->max, 0, BB_SUM_REFUSAL)
        || phase->max[BB_SUM_REFUSAL] != 0) {
        payload_release(phase);
        m.status = BB_REFUSED;
        m.refusal.stage = phase->max[BB_SUM_REFUSAL] != 0 ? BB_STAGE_PREFLIGHT
                                                           : BB_STAGE_CONTRACT;
        m.refusal.rank = -1;  /* one bit per rank: no rank is attributed */
        m.refusal.sequence = phase->max[BB_SUM_SEQUENCE];
        goto out_inactive;
    }

    /* 3. Payload: one Iallreduce (or a start of the persistent request),
     * one Test, Wait if incomplete.  No callback runs while the request is
     * live. */
    double t_post = t_admitted;  /* one clock read less without a delay */
    if (phase->post_delay_s > 0.0) {
        bb_time_sleep(phase->post_delay_s);
        t_post = clock_read(phase);
    }
    const char *call = payload_post(phase, comm, contract->count);
    double t_posted = clock_read(phase);
    m.post_s = t_posted - t_post;
    if (call != NULL) {
        phase_poison(phase, &m, call);
        goto out_metrics;
    }
    m.requests_posted = 1;
    m.max_inflight = 1;
    int done = 0;
    rc = MPI_Test(&phase->request, &done, MPI_STATUS_IGNORE);
    double t_tested = clock_read(phase);
    m.test_s = t_tested - t_posted;
    call = "MPI_Test";
    if (rc == MPI_SUCCESS && !done) {
        call = "MPI_Wait";
        rc = MPI_Wait(&phase->request, MPI_STATUS_IGNORE);
    }
    m.wait_s = clock_read(phase) - t_tested;
    if (rc != MPI_SUCCESS) {
        phase_poison(phase, &m, call);
        goto out_metrics;
    }
    m.test_completed = done;

    /* 4. Publish only now: the receive buffer becomes the caller's (fresh),
     * or is lent to the caller until the next call (retained). */
    *result_out = phase->recv;
    if (phase->buffers == BB_BUFFERS_FRESH) {
        /* A persistent request lives as long as the buffers it names. */
        if (phase->request != MPI_REQUEST_NULL
            && MPI_Request_free(&phase->request) != MPI_SUCCESS) {
            *result_out = NULL;
            phase_poison(phase, &m, "MPI_Request_free");
            goto out_metrics;
        }
        phase->recv = NULL;
        payload_release(phase);
    } else {
        payload_admitted(phase);
    }
    m.payload_bytes = 8 * contract->count;
    m.status = BB_OK;

out_inactive:
    phase->active = 0;
out_metrics:
    m.total_s = clock_read(phase) - t_start;
    if (!phase->timed)
        m.prepare_s = m.admission_s = m.post_s = m.test_s = m.wait_s = m.total_s = -1.0;
    if (metrics_out != NULL)
        *metrics_out = m;
    return m.status;
}
