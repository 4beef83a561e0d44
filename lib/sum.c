/* sum.c: the bounded sum phase.
 *
 * Every rank presents six int64 fields [sequence, phase_id, epoch, count,
 * cap, refusal]; their MIN and MAX (two Allreduces, or one under the fused
 * admissions) decide admission.  Only an admitted phase posts its one
 * MPI_Iallreduce (or starts its persistent one), so a bad input on one rank
 * is a clean refusal on all ranks.
 *
 * The fixed shape (count and cap agreed at creation) needs no admission
 * before the payload: every rank always reduces the same combined element
 * [count doubles | sequence, phase id, epoch, their complements, the
 * complement of the refusal code] under one user op (SUM over the doubles,
 * MIN over the int64), a rank that cannot contribute sends zeros, and the
 * verdict is read from the reduced fields afterwards; a refused result is
 * never published.  The phase performs no I/O. */
#include "config.h"
#include "internal.h"
#include "private/mpi-compat.h"

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
    int64_t code;             /* fixed shape: the largest refusal code */
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
    /* Borrowed buffers: the provider's array posted this call, released at
     * its end (never after poisoning). */
    const double *lent;
    bb_sum_provider_t lent_by;
    /* Fixed shape: send and recv hold COMBINED_BYTES(shape_count) from
     * creation on; fresh buffers make a spare recv per call, which replaces
     * the one handed to the caller. */
    bb_shape_t shape;
    int64_t shape_count, shape_cap;
    double *spare;
    int shaped;               /* this call's count and cap are the shape's */
    int remake;               /* agreed: make the persistent payload request anew */
    MPI_Datatype combined_type;
    MPI_Op combined_op;
    bb_poison_node_t poison;  /* fatal-list link; used once if poisoned */
    /* The last successful call's record (bb_sum_phase_metrics): refusals
     * and MPI errors never replace it. */
    bb_sum_metrics_t last_ok;
    int has_ok;
};

/* The combined element of the fixed shape: count doubles, then int64
 * fields reduced by MIN (min(~x) = ~max(x)): the sequence, phase id and
 * epoch and their complements (equal everywhere, and the largest sequence),
 * and the complement of the refusal code, whose maximum says the stage.  A
 * count or cap is checked against the shape on each rank, so neither rides
 * along: 56 bytes of fields keep an 8-byte call's element at 64 bytes,
 * where MPICH's shared-memory reduction stays as fast as for one double
 * (104 bytes cost 1.37 times one double at -n 2; doc/sum.md). */
enum { CF_SEQUENCE, CF_PHASE_ID, CF_EPOCH, CF_KEYS, CF_NOT_CODE = 2 * CF_KEYS,
       COMBINED_FIELDS };
enum { CODE_CONTRACT = 1, CODE_PREFLIGHT = 2 };
#define COMBINED_BYTES(count) (8 * (int64_t)(count) + 8 * COMBINED_FIELDS)

/* The user op: SUM over the doubles, MIN over the fields, for len elements
 * of the combined type (its size says the count). */
static void combined_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int size = 0;
    MPI_Type_size(*type, &size);
    int64_t count = ((int64_t)size - 8 * COMBINED_FIELDS) / 8;
    char *a = in, *b = inout;
    for (int e = 0; e < *len; e++, a += size, b += size) {
        const double *x = (const double *)a;
        double *y = (double *)b;
        for (int64_t i = 0; i < count; i++)
            y[i] += x[i];
        const int64_t *fx = (const int64_t *)(x + count);
        int64_t *fy = (int64_t *)(y + count);
        for (int i = 0; i < COMBINED_FIELDS; i++)
            if (fx[i] < fy[i])
                fy[i] = fx[i];
    }
}

/* Fixed shape, at creation: the combined type and op, and both buffers. */
static bb_status_t fixed_make(bb_sum_phase_t *phase)
{
    int64_t count = phase->shape_count;
    int blocks[2] = { (int)count, COMBINED_FIELDS };
    MPI_Aint displ[2] = { 0, (MPI_Aint)(8 * count) };
    MPI_Datatype types[2] = { MPI_DOUBLE, MPI_INT64_T };
    phase->send = calloc(1, (size_t)COMBINED_BYTES(count));
    phase->recv = calloc(1, (size_t)COMBINED_BYTES(count));
    if (phase->send == NULL || phase->recv == NULL)
        return BB_ERR_NOMEM;
    phase->capacity = count;
    if (MPI_Type_create_struct(2, blocks, displ, types, &phase->combined_type) != MPI_SUCCESS)
        return BB_ERR_MPI;
    if (MPI_Type_commit(&phase->combined_type) != MPI_SUCCESS
        || MPI_Op_create(combined_fn, 1, &phase->combined_op) != MPI_SUCCESS)
        return BB_ERR_MPI;
    return BB_OK;
}

static void tracked_update(bb_sum_phase_t *phase);

/* Frees what a phase holds (not the phase): requests, type, op, buffers. */
static void phase_free_parts(bb_sum_phase_t *phase)
{
    if (phase->request != MPI_REQUEST_NULL)  /* an inactive persistent request */
        MPI_Request_free(&phase->request);
    if (phase->combined_op != MPI_OP_NULL)
        MPI_Op_free(&phase->combined_op);
    if (phase->combined_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&phase->combined_type);
    bb_agreement_destroy(phase->agreement);
    free(phase->send);
    free(phase->recv);
    free(phase->spare);
}

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
        [BB_ATTR_FIELDS] = BB_ATTR_RULE_EQUAL, [BB_ATTR_SHAPE] = BB_ATTR_RULE_EQUAL,
        [BB_ATTR_SHAPE_COUNT] = BB_ATTR_RULE_EQUAL, [BB_ATTR_SHAPE_CAP] = BB_ATTR_RULE_EQUAL
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
        if (phase == NULL) {
            local = BB_ERR_NOMEM;
        } else {
            phase->request = MPI_REQUEST_NULL;
            phase->combined_type = MPI_DATATYPE_NULL;
            phase->combined_op = MPI_OP_NULL;
            phase->shape = a.shape;
            phase->shape_count = a.shape_count;
            phase->shape_cap = a.shape_cap;
            /* The fixed shape makes no agreement of its own: its fields
             * ride in the combined reduction. */
            local = a.shape == BB_SHAPE_FIXED
                        ? fixed_make(phase)
                        : bb_agreement_make(bb_world_comm(world), BB_SUM_FIELDS,
                                            a.admission, a.requests,
                                            BB_AGREE_MINMAX | BB_AGREE_DIRECT,
                                            &phase->agreement);
        }
    }
    bb_status_t st = bb_attr_agree(bb_world_comm(world), code, rule, local, refusal_out);
    /* BB_OK means this rank made its phase too (the test is for the
     * compiler). */
    if (st != BB_OK || phase == NULL) {
        if (phase != NULL)
            phase_free_parts(phase);
        free(phase);
        return st != BB_OK ? st : BB_ERR_STATE;
    }
    phase->world = world;
    phase->buffers = a.buffers;
    phase->requests = a.requests;
    phase->timed = a.metrics == BB_METRICS_TIMED;
    tracked_update(phase);
    *phase_out = phase;
    return BB_OK;
}

int64_t bb_sum_phase_sequence(const bb_sum_phase_t *phase) { return phase->sequence; }

bb_status_t bb_sum_phase_metrics(const bb_sum_phase_t *phase, bb_sum_metrics_t *metrics_out)
{
    if (phase == NULL || metrics_out == NULL)
        return BB_ERR_ARG;
    if (!phase->has_ok)
        return BB_ERR_STATE;
    *metrics_out = phase->last_ok;
    return BB_OK;
}
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
    phase_free_parts(phase);
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
    if (phase->shape == BB_SHAPE_FIXED) {  /* send, recv and a fresh call's spare */
        phase->tracked_live = BB_SUM_CONTROL_BYTES
                              + (2 + (phase->spare != NULL)) * COMBINED_BYTES(phase->shape_count);
        return;
    }
    /* Borrowed: the receive side only; the send side is the provider's.  The
     * admission's staging, if any (fused's [x, ~x]; spec reduces the three
     * arrays themselves), counts with the three arrays. */
    int64_t per = phase->buffers == BB_BUFFERS_BORROWED ? 8 : 16;
    phase->tracked_live = BB_SUM_CONTROL_BYTES + bb_agreement_bytes(phase->agreement)
                          + per * (phase->capacity + phase->old_capacity);
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
    int keeps = phase->buffers != BB_BUFFERS_FRESH;  /* retained, or borrowed's recv */
    if (keeps && phase->capacity >= count)
        return 0;
    int64_t want = keeps ? cap : count;
    /* Borrowed: the send side is the provider's array. */
    double *send = phase->buffers == BB_BUFFERS_BORROWED
                       ? NULL : malloc((size_t)want * sizeof(double));
    double *recv = malloc((size_t)want * sizeof(double));
    if ((send == NULL && phase->buffers != BB_BUFFERS_BORROWED) || recv == NULL) {
        free(send);
        free(recv);
        return -1;
    }
    if (keeps) {
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

/* The borrowed array goes back to its provider: once, at the end of a call
 * that did not poison the phase. */
static void lent_release(bb_sum_phase_t *phase)
{
    if (phase->lent != NULL && phase->lent_by.release != NULL)
        phase->lent_by.release(phase->lent_by.arg, phase->lent);
    phase->lent = NULL;
}

/* Whether count doubles at a and at b share a byte (compared as addresses:
 * the two need not be parts of one object). */
static int ranges_overlap(const double *a, const double *b, int64_t count)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b, n = (uintptr_t)count * sizeof(double);
    return x < y + n && y < x + n;
}

/* Prepare this rank's contribution: copied into owned buffers (fresh,
 * retained), or lent to the phase until the call ends (borrowed).  Every
 * provider array is released exactly once, except by a poisoned call. */
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
        else if (phase->buffers != BB_BUFFERS_BORROWED)
            memcpy(phase->send, data, (size_t)count * sizeof(double));
        else if (ranges_overlap(data, phase->recv, count))
            /* MPI_Iallreduce would reject it on this rank alone, after
             * the others have posted: a local refusal before admission. */
            cause = BB_SUM_LOCAL_ALIAS;
    }
    if (data != NULL && phase->buffers == BB_BUFFERS_BORROWED) {
        phase->lent = data;
        phase->lent_by = *provider;
    } else if (data != NULL && provider->release != NULL) {
        provider->release(provider->arg, data);
    }
    return cause;
}

/* Fixed shape: the contribution copied into the combined send buffer, or
 * zeros when this rank cannot give it (a local refusal, or a count or cap
 * other than the shape's); fresh buffers also make this call's spare recv
 * (without it this rank refuses, but still reduces in its current one). */
static bb_sum_local_t fixed_prepare(bb_sum_phase_t *phase, const bb_sum_provider_t *provider,
                                    const bb_sum_contract_t *contract, bb_sum_local_t cause)
{
    int64_t count = phase->shape_count;
    const double *data = NULL;
    int64_t len = 0;
    if (cause == BB_SUM_LOCAL_NONE) {
        if (provider->prepare(provider->arg, &data, &len) != 0)
            cause = BB_SUM_LOCAL_PROVIDER;
        else if (len != contract->count || (len > 0 && data == NULL))
            cause = BB_SUM_LOCAL_LENGTH;
    }
    if (cause == BB_SUM_LOCAL_NONE && phase->buffers == BB_BUFFERS_FRESH) {
        phase->spare = malloc((size_t)COMBINED_BYTES(count));
        if (phase->spare == NULL)
            cause = BB_SUM_LOCAL_NOMEM;
        tracked_update(phase);
    }
    int shaped = contract->count == count && contract->max_elements == phase->shape_cap;
    phase->shaped = shaped;
    if (cause == BB_SUM_LOCAL_NONE && shaped)
        memcpy(phase->send, data, (size_t)count * sizeof(double));
    else
        memset(phase->send, 0, (size_t)count * sizeof(double));
    if (data != NULL && provider->release != NULL)
        provider->release(provider->arg, data);
    return cause;
}

/* The send and receive buffers this call's payload names. */
static const double *payload_send(const bb_sum_phase_t *phase, int64_t count)
{
    return phase->lent && count > 0 ? phase->lent
           : phase->send            ? phase->send
                                    : &phase->zero_send;
}

static double *payload_recv(bb_sum_phase_t *phase)
{
    return phase->recv ? phase->recv : &phase->zero_recv;
}

/* Whether this rank's persistent payload request names other buffers or
 * another count than this call's.  Only a rank can tell (a borrowed array
 * is its provider's choice), but MPI_Allreduce_init is collective: the rank
 * says so in the admission and every rank makes the request anew. */
static int payload_stale(bb_sum_phase_t *phase, int64_t count)
{
    return phase->requests == BB_REQUESTS_PERSISTENT && phase->request != MPI_REQUEST_NULL
           && (phase->req_send != payload_send(phase, count)
               || phase->req_recv != payload_recv(phase) || phase->req_count != count);
}

/* Post the payload of count elements: MPI_Iallreduce, or start the
 * persistent request, made anew where the admission agreed it (a request
 * is absent on every rank alike: before the first call, and after a fresh
 * call published).  NULL, or the MPI call that failed. */
static const char *payload_post(bb_sum_phase_t *phase, MPI_Comm comm, int64_t count)
{
    const double *send = payload_send(phase, count);
    double *recv = payload_recv(phase);
    if (phase->requests == BB_REQUESTS_PER_CALL)
        return MPI_Iallreduce(send, recv, (int)count, MPI_DOUBLE, MPI_SUM, comm,
                              &phase->request) == MPI_SUCCESS ? NULL : "MPI_Iallreduce";
    if (phase->request != MPI_REQUEST_NULL && phase->remake
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

/* Fixed shape: the one combined reduction, blocking per call, or the
 * persistent request started, tested once and waited for.  The request is
 * made when absent, which is on every rank alike: its buffers change only
 * where a fresh call publishes its recv, and that frees it on every rank (a
 * rank-local remake would leave the others waiting).  NULL, or the MPI call
 * that failed. */
static const char *fixed_reduce(bb_sum_phase_t *phase, MPI_Comm comm)
{
    if (phase->requests == BB_REQUESTS_PER_CALL)
        return MPI_Allreduce(phase->send, phase->recv, 1, phase->combined_type,
                             phase->combined_op, comm) == MPI_SUCCESS ? NULL : "MPI_Allreduce";
    if (phase->request == MPI_REQUEST_NULL) {
        if (bb_mpi_allreduce_init(phase->send, phase->recv, 1, phase->combined_type,
                                  phase->combined_op, comm, MPI_INFO_NULL, &phase->request)
            != MPI_SUCCESS)
            return "MPI_Allreduce_init";
    }
    int done = 0;
    if (MPI_Start(&phase->request) != MPI_SUCCESS)
        return "MPI_Start";
    if (MPI_Test(&phase->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return "MPI_Test";
    return done || MPI_Wait(&phase->request, MPI_STATUS_IGNORE) == MPI_SUCCESS ? NULL
                                                                               : "MPI_Wait";
}

int bb_sum_phase_combined_raw(bb_sum_phase_t *phase, const double **result_out)
{
    if (phase == NULL || phase->shape != BB_SHAPE_FIXED || phase->poisoned || phase->active)
        return MPI_ERR_ARG;
    if (fixed_reduce(phase, bb_world_comm(phase->world)) != NULL) {
        phase->poisoned = 1;  /* kept reachable, as a failed call's */
        bb_poison_retain(&phase->poison, BB_POISON_SUM, phase);
        return MPI_ERR_OTHER;
    }
    *result_out = phase->recv;
    return MPI_SUCCESS;
}

/* The agreed verdict from the MIN and MAX of the six fields, the same on
 * every rank.  The fixed shape carries the sequence, phase id and epoch and
 * the largest refusal code instead: a count or cap other than its own on
 * any rank is a contract refusal (the call's contract is not the phase's),
 * as the six fields' disagreement, or a shared count other than the
 * shape's, would be. */
static void sum_verdict(const bb_sum_phase_t *phase, bb_sum_metrics_t *m)
{
    const int64_t *min = phase->min, *max = phase->max;
    int fixed = phase->shape == BB_SHAPE_FIXED;
    int preflight = fixed ? (phase->code & CODE_PREFLIGHT) != 0 : max[BB_SUM_REFUSAL] > 0;
    if (!preflight
        && (fixed ? bb_agree_fields_equal(min, max, 0, CF_KEYS) && phase->code == 0
                  : bb_agree_fields_equal(min, max, 0, BB_SUM_REFUSAL)))
        return;
    m->status = BB_REFUSED;
    m->refusal.stage = preflight ? BB_STAGE_PREFLIGHT : BB_STAGE_CONTRACT;
    m->refusal.rank = -1;  /* one bit per rank: no rank is attributed */
    m->refusal.sequence = max[BB_SUM_SEQUENCE];
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
    int fixed = phase->shape == BB_SHAPE_FIXED;
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
    if (fixed)
        m.local_cause = fixed_prepare(phase, provider, contract, m.local_cause);
    else if (m.local_cause == BB_SUM_LOCAL_NONE)
        m.local_cause = contribution_prepare(phase, provider, contract);
    double t_prepared = clock_read(phase);
    m.prepare_s = t_prepared - t_start;
    m.tracked_bytes = phase->tracked_live;

    /* 2. Admission: MIN and MAX over the six fields; in the fixed shape,
     * the one reduction that also carries the payload. */
    phase->local[BB_SUM_SEQUENCE] = m.sequence;
    phase->local[BB_SUM_PHASE_ID] = contract->phase_id;
    phase->local[BB_SUM_EPOCH] = contract->epoch;
    phase->local[BB_SUM_COUNT] = contract->count;
    phase->local[BB_SUM_CAP] = contract->max_elements;
    /* 1 refuses; -1 (persistent requests only) asks every rank to make the
     * payload request anew, and the maximum still admits. */
    phase->local[BB_SUM_REFUSAL] = m.local_cause != BB_SUM_LOCAL_NONE ? 1
                                   : !fixed && payload_stale(phase, contract->count) ? -1 : 0;
    const char *call = "MPI_Allreduce (admission)";
    int rc = MPI_SUCCESS;
    if (fixed) {
        int64_t *f = (int64_t *)(phase->send + phase->shape_count);
        const int64_t *g = (const int64_t *)(phase->recv + phase->shape_count);
        for (int i = 0; i < CF_KEYS; i++) {  /* CF_* follow BB_SUM_* */
            f[i] = phase->local[i];
            f[CF_KEYS + i] = ~phase->local[i];  /* min(~x) = ~max(x) */
        }
        f[CF_NOT_CODE] = ~(int64_t)((phase->local[BB_SUM_REFUSAL] ? CODE_PREFLIGHT : 0)
                                    | (phase->shaped ? 0 : CODE_CONTRACT));
        call = fixed_reduce(phase, comm);
        rc = call == NULL ? MPI_SUCCESS : MPI_ERR_OTHER;
        for (int i = 0; i < CF_KEYS && call == NULL; i++) {
            phase->min[i] = g[i];
            phase->max[i] = ~g[CF_KEYS + i];
        }
        phase->code = call == NULL ? ~g[CF_NOT_CODE] : 0;
        m.requests_posted = 1;  /* the one reduction, refused or not */
        m.max_inflight = 1;
    } else {
        rc = bb_agreement_minmax(phase->agreement, phase->local, phase->min, phase->max);
    }
    double t_admitted = clock_read(phase);
    m.admission_s = t_admitted - t_prepared;
    if (rc != MPI_SUCCESS) {
        phase_poison(phase, &m, call);
        goto out_metrics;
    }
    /* The sequence is consumed whether or not the phase is admitted. */
    phase->sequence++;
    sum_verdict(phase, &m);
    phase->remake = !fixed && phase->min[BB_SUM_REFUSAL] < 0;
    if (m.status == BB_REFUSED) {
        if (fixed) {  /* the received sum is discarded, never published */
            free(phase->spare);
            phase->spare = NULL;
            tracked_update(phase);
        } else {
            payload_release(phase);
        }
        goto out_inactive;
    }
    if (fixed)
        goto publish;

    /* 3. Payload: one Iallreduce (or a start of the persistent request),
     * one Test, Wait if incomplete.  No callback runs while the request is
     * live. */
    double t_post = t_admitted;  /* one clock read less without a delay */
    if (phase->post_delay_s > 0.0) {
        bb_time_sleep(phase->post_delay_s);
        t_post = clock_read(phase);
    }
    call = payload_post(phase, comm, contract->count);
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

publish:
    /* 4. Publish only now: the receive buffer becomes the caller's (fresh),
     * or is lent to the caller until the next call (retained, borrowed). */
    *result_out = phase->recv;
    if (phase->buffers == BB_BUFFERS_FRESH) {
        /* A persistent request lives as long as the buffers it names. */
        if (phase->request != MPI_REQUEST_NULL
            && MPI_Request_free(&phase->request) != MPI_SUCCESS) {
            *result_out = NULL;
            phase_poison(phase, &m, "MPI_Request_free");
            goto out_metrics;
        }
        if (fixed) {  /* the spare made in prepare replaces the recv handed out */
            phase->recv = phase->spare;
            phase->spare = NULL;
            tracked_update(phase);
        } else {
            phase->recv = NULL;
            payload_release(phase);
        }
    } else if (!fixed) {
        payload_admitted(phase);
    }
    m.payload_bytes = 8 * contract->count;
    m.status = BB_OK;

out_inactive:
    lent_release(phase);  /* borrowed: after completion or refusal, once */
    phase->active = 0;
out_metrics:
    m.total_s = clock_read(phase) - t_start;
    if (!phase->timed)
        m.prepare_s = m.admission_s = m.post_s = m.test_s = m.wait_s = m.total_s = -1.0;
    if (m.status == BB_OK) {
        phase->last_ok = m;
        phase->has_ok = 1;
    }
    if (metrics_out != NULL)
        *metrics_out = m;
    return m.status;
}
