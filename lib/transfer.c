/* transfer.c: the bounded transfer phase (W=1), its tickets and census.
 *
 * Every rank runs the same sequence for every ticket, data or not:
 * preflight agreement, posting, polls, payload completion, status
 * agreement, consumption and receipt, terminal agreement.  Every local
 * failure after admission becomes a packed status code (8*rank + stage) that
 * enters the next agreement, so no rank leaves early and no rank waits
 * forever.  MPI errors are the exception: they poison the phase, which keeps
 * its requests, buffers and communicator for the fatal path. */
#include "config.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct bb_transfer_phase {
    bb_world_t *world;            /* borrowed */
    MPI_Comm comm;                /* the duplicate this phase owns */
    int rank, size;
    int64_t sequence;             /* presented by the next begin */
    int64_t generation;           /* of the latest admitted ticket: unique
                                     in the process, never reused */
    int poisoned;
    int in_callback;              /* reentry guard */
    int live;                     /* a ticket is posted and not retired */
    bb_buffers_t buffers;         /* payload policy, fixed at creation */
    bb_agreement_t *admission;    /* the preflight agreement (admission and
                                     requests policies) */
    bb_agreement_t *status_max;   /* the status and terminal MAX agreements */

    /* The live ticket. */
    bb_transfer_contract_t contract;  /* agreed */
    bb_transfer_role_t role;
    int64_t ticket_sequence;
    unsigned char *send_buf;      /* source and same rank */
    unsigned char *recv_buf;      /* destination */
    int64_t send_cap, recv_cap;   /* their sizes in bytes */
    /* Retained only, while a begin grows a buffer: the previous one, kept
     * until the admission decides (a refusal restores it). */
    unsigned char *old_send, *old_recv;
    int64_t old_send_cap, old_recv_cap;
    int grown;                    /* bit 0 send, bit 1 recv grew this begin */
    MPI_Request payload_req, receipt_req;
    int payload_done;
    double t_begin;

    /* Counted control storage: the census's 232 bytes. */
    int64_t control[3][BB_TRANSFER_FIELDS];  /* local, MIN, MAX */
    int64_t receipt[2];                      /* [ticket sequence, code] */

    int inflight;
    int64_t tracked_live;
    bb_transfer_metrics_t cur;
    bb_transfer_phase_stats_t stats;

    double post_delay;
    int64_t corrupt_offset;
    int receipt_fault;

    bb_poison_node_t poison;
    bb_transfer_phase_t *live_prev, *live_next;
    bb_transfer_phase_t *open_next;   /* the open-phase registry */
};

/* Phases created and not yet freed.  A handle (a phase pointer, or the
 * phase a ticket names) is looked up here before it is dereferenced, so a
 * closed phase is refused (BB_ERR_STATE) instead of read after free.
 * Ticket generations come from one process-wide counter, so a ticket of a
 * closed phase never matches a later phase that reuses its address. */
static bb_transfer_phase_t *bb_transfer_open_head;
static int64_t bb_transfer_generations;

static int phase_is_open(const bb_transfer_phase_t *phase)
{
    for (const bb_transfer_phase_t *p = bb_transfer_open_head; p != NULL;
         p = p->open_next)
        if (p == phase)
            return 1;
    return 0;
}

static void open_unregister(bb_transfer_phase_t *phase)
{
    for (bb_transfer_phase_t **pp = &bb_transfer_open_head; *pp != NULL;
         pp = &(*pp)->open_next)
        if (*pp == phase) {
            *pp = phase->open_next;
            return;
        }
}

/* Phases holding a posted ticket.  Only the MPI owner thread touches it:
 * every entry point checks the owner before anything else. */
static bb_transfer_phase_t *bb_transfer_live_head;
static size_t bb_transfer_live_n;

static void live_register(bb_transfer_phase_t *phase)
{
    phase->live_prev = NULL;
    phase->live_next = bb_transfer_live_head;
    if (bb_transfer_live_head != NULL)
        bb_transfer_live_head->live_prev = phase;
    bb_transfer_live_head = phase;
    bb_transfer_live_n++;
}

static void live_unregister(bb_transfer_phase_t *phase)
{
    if (phase->live_prev != NULL)
        phase->live_prev->live_next = phase->live_next;
    else
        bb_transfer_live_head = phase->live_next;
    if (phase->live_next != NULL)
        phase->live_next->live_prev = phase->live_prev;
    phase->live_prev = phase->live_next = NULL;
    bb_transfer_live_n--;
}

size_t bb_transfer_live_count(void) { return bb_transfer_live_n; }

const char *bb_transfer_role_name(bb_transfer_role_t role)
{
    switch (role) {
    case BB_TRANSFER_ROLE_NONE: return "none";
    case BB_TRANSFER_ROLE_SOURCE: return "source";
    case BB_TRANSFER_ROLE_DESTINATION: return "destination";
    case BB_TRANSFER_ROLE_SAME_RANK: return "same-rank";
    }
    return "unknown";
}

const char *bb_transfer_cause_name(bb_transfer_local_t cause)
{
    switch (cause) {
    case BB_TRANSFER_CAUSE_NONE: return "none";
    case BB_TRANSFER_CAUSE_CONTRACT: return "contract field out of range";
    case BB_TRANSFER_CAUSE_OVER_CAP: return "nbytes over the cap";
    case BB_TRANSFER_CAUSE_PROVIDER: return "provider failed";
    case BB_TRANSFER_CAUSE_LENGTH: return "provider length differs from nbytes";
    case BB_TRANSFER_CAUSE_NOMEM: return "payload allocation failed";
    case BB_TRANSFER_CAUSE_COMPUTE: return "compute failed";
    case BB_TRANSFER_CAUSE_INVALID_ERROR: return "invalid local_error";
    case BB_TRANSFER_CAUSE_CONSUMER: return "consumer failed";
    case BB_TRANSFER_CAUSE_RECEIPT: return "unexpected receipt";
    case BB_TRANSFER_CAUSE_MPI: return "MPI error";
    case BB_TRANSFER_CAUSE_ARGUMENT: return "NULL contract or ticket";
    }
    return "unknown";
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static void track(bb_transfer_phase_t *phase, int64_t delta)
{
    phase->tracked_live += delta;
    if (phase->tracked_live > phase->cur.tracked_bytes)
        phase->cur.tracked_bytes = phase->tracked_live;
}

static void request_posted(bb_transfer_phase_t *phase)
{
    phase->inflight++;
    phase->cur.requests_posted++;
    if (phase->inflight > phase->cur.max_inflight)
        phase->cur.max_inflight = phase->inflight;
}

/* Counted payload bytes the phase holds now. */
static int64_t payload_held(const bb_transfer_phase_t *phase)
{
    return phase->send_cap + phase->recv_cap + phase->old_send_cap + phase->old_recv_cap;
}

static void free_payload_all(bb_transfer_phase_t *phase)
{
    free(phase->send_buf);
    free(phase->recv_buf);
    free(phase->old_send);
    free(phase->old_recv);
    phase->send_buf = phase->recv_buf = phase->old_send = phase->old_recv = NULL;
    phase->send_cap = phase->recv_cap = phase->old_send_cap = phase->old_recv_cap = 0;
    phase->grown = 0;
}

/* A refused begin: fresh buffers go; a retained phase drops only what this
 * begin grew and keeps the previous buffers.  Between tickets the census
 * counts only retained payload (the control bytes count while a ticket is
 * live). */
static void payload_refused(bb_transfer_phase_t *phase)
{
    if (phase->buffers == BB_BUFFERS_FRESH) {
        free_payload_all(phase);
    } else {
        if (phase->grown & 1) {
            free(phase->send_buf);
            phase->send_buf = phase->old_send;
            phase->send_cap = phase->old_send_cap;
        }
        if (phase->grown & 2) {
            free(phase->recv_buf);
            phase->recv_buf = phase->old_recv;
            phase->recv_cap = phase->old_recv_cap;
        }
        phase->old_send = phase->old_recv = NULL;
        phase->old_send_cap = phase->old_recv_cap = 0;
    }
    phase->grown = 0;
    phase->tracked_live = payload_held(phase);
}

/* Admitted: a retained phase keeps what it grew and frees the old. */
static void payload_admitted(bb_transfer_phase_t *phase)
{
    int64_t old = phase->old_send_cap + phase->old_recv_cap;
    free(phase->old_send);
    free(phase->old_recv);
    phase->old_send = phase->old_recv = NULL;
    phase->old_send_cap = phase->old_recv_cap = 0;
    phase->grown = 0;
    phase->tracked_live -= old;
}

/* A retired ticket: fresh buffers go, retained ones stay. */
static void payload_retired(bb_transfer_phase_t *phase)
{
    if (phase->buffers == BB_BUFFERS_FRESH)
        free_payload_all(phase);
    phase->tracked_live = payload_held(phase);
}

/* A payload buffer of n bytes: a fresh one of n, or the retained one, grown
 * to the cap (keeping the previous until admission) when too small.
 * Returns 0, or -1 when out of memory. */
static int payload_reserve(bb_transfer_phase_t *phase, int which, unsigned char **buf,
                           int64_t *cap, unsigned char **old, int64_t *old_cap,
                           int64_t n, int64_t max_bytes)
{
    if (phase->buffers == BB_BUFFERS_RETAINED && *cap >= n)
        return 0;
    int64_t want = phase->buffers == BB_BUFFERS_RETAINED ? max_bytes : n;
    unsigned char *fresh = malloc((size_t)want);
    if (fresh == NULL)
        return -1;
    if (phase->buffers == BB_BUFFERS_RETAINED) {
        *old = *buf;
        *old_cap = *cap;
        phase->grown |= which;
    }
    *buf = fresh;
    *cap = want;
    track(phase, want);
    return 0;
}

static void record_stats(bb_transfer_phase_t *phase)
{
    if (phase->cur.first_call)
        phase->stats.first = phase->cur;
    phase->stats.latest = phase->cur;
}

/* An MPI error: poison and retain.  Nothing is freed or cancelled; the
 * phase, its requests, buffers and communicator stay reachable from the
 * fatal list (and the live registry, if posted) for the life of the
 * process. */
static bb_status_t poison(bb_transfer_phase_t *phase, bb_transfer_metrics_t *out)
{
    phase->poisoned = 1;
    bb_poison_retain(&phase->poison, BB_POISON_TRANSFER, phase);
    phase->cur.status = BB_ERR_MPI;
    phase->cur.local_cause = BB_TRANSFER_CAUSE_MPI;
    phase->cur.refusal.stage = BB_STAGE_TRANSPORT;
    phase->cur.refusal.rank = phase->rank;
    phase->cur.refusal.sequence = phase->cur.sequence;
    phase->cur.total_s = bb_time_now() - phase->t_begin;
    phase->stats.latest = phase->cur;
    if (out != NULL)
        *out = phase->cur;
    return BB_ERR_MPI;
}

/* The checks that precede any MPI call on an existing phase. */
static bb_status_t entry_check(const bb_transfer_phase_t *phase)
{
    bb_status_t st = bb_world_check_owner(phase->world);
    if (st != BB_OK)
        return st;
    if (phase->in_callback)
        return BB_ERR_REENTRY;
    if (phase->poisoned)
        return BB_ERR_POISONED;
    return BB_OK;
}

bb_status_t bb_transfer_phase_create(bb_world_t *world,
                                     bb_transfer_phase_t **phase_out)
{
    return bb_transfer_phase_create_attr(world, NULL, phase_out);
}

bb_status_t bb_transfer_phase_create_attr(bb_world_t *world, const bb_phase_attr_t *attr,
                                          bb_transfer_phase_t **phase_out)
{
    return bb_transfer_phase_create_checked(world, attr, phase_out, NULL);
}

/* The transfer phase's own parts, made on its duplicate before the policies
 * are agreed there.  BB_OK, or why this rank cannot make the phase. */
static bb_status_t phase_make(bb_transfer_phase_t *phase, const bb_phase_attr_t *a)
{
    /* Both reduce the control arrays themselves (direct): spec's admission
     * from the local array into the MIN and MAX arrays, the status
     * agreements (one field MAX, whatever the admission) from the local
     * status field into the MAX array's, so that only fused's [x, ~x] is
     * staging beyond the census's 232 bytes. */
    bb_status_t st = bb_agreement_make(phase->comm, BB_TRANSFER_FIELDS, a->admission,
                                       a->requests, BB_AGREE_MINMAX | BB_AGREE_DIRECT,
                                       &phase->admission);
    if (st == BB_OK)
        st = bb_agreement_make(phase->comm, 1, BB_ADMISSION_SPEC, a->requests,
                               BB_AGREE_MAX | BB_AGREE_DIRECT, &phase->status_max);
    return st;
}

bb_status_t bb_transfer_phase_create_checked(bb_world_t *world, const bb_phase_attr_t *attr,
                                             bb_transfer_phase_t **phase_out,
                                             bb_attr_refusal_t *refusal_out)
{
    /* The admission and the requests decide the agreements' collectives;
     * the payload and the receipt are point-to-point per ticket whatever
     * the buffers. */
    static const bb_attr_rule_t rule[BB_ATTR_COUNT] = {
        [BB_ATTR_ADMISSION] = BB_ATTR_RULE_EQUAL, [BB_ATTR_REQUESTS] = BB_ATTR_RULE_EQUAL,
        [BB_ATTR_BUFFERS] = BB_ATTR_RULE_VALID, [BB_ATTR_METRICS] = BB_ATTR_RULE_VALID,
        [BB_ATTR_FIELDS] = BB_ATTR_RULE_EQUAL
    };
    if (world == NULL)
        return BB_ERR_ARG;
    bb_status_t st = bb_world_check_owner(world);
    if (st != BB_OK)
        return st;
    /* Every policy's zero value is the default. */
    bb_phase_attr_t a = attr ? *attr : (bb_phase_attr_t){ 0 };
    int64_t code[BB_ATTR_COUNT];
    int valid = bb_attr_codes(&a, BB_TRANSFER_FIELDS, code);
    /* Its metrics are its benchmark's parts: timed only. */
    if (a.metrics != BB_METRICS_TIMED) {
        code[BB_ATTR_METRICS] = -1;
        valid = 0;
    }
    /* Borrowed buffers and the fixed shape are the sum phase's alone. */
    if (a.buffers == BB_BUFFERS_BORROWED || a.shape != BB_SHAPE_FREE) {
        code[a.shape != BB_SHAPE_FREE ? BB_ATTR_SHAPE : BB_ATTR_BUFFERS] = -1;
        valid = 0;
    }
    MPI_Comm comm = MPI_COMM_NULL;
    if (MPI_Comm_dup(bb_world_comm(world), &comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    if (MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        goto free_comm;
    /* Made before the agreement, so that a rank that cannot make its phase
     * says so there and every rank returns the same status. */
    bb_status_t local = phase_out == NULL ? BB_ERR_ARG : BB_OK;
    bb_transfer_phase_t *phase = NULL;
    if (local == BB_OK && valid) {
        phase = calloc(1, sizeof *phase);
        if (phase == NULL) {
            local = BB_ERR_NOMEM;
        } else {
            phase->comm = comm;
            local = phase_make(phase, &a);
        }
    }
    st = bb_attr_agree(comm, code, rule, local, refusal_out);
    /* BB_OK means this rank made its phase too (the test is for the
     * compiler). */
    if (st != BB_OK || phase == NULL) {
        if (phase != NULL) {
            bb_agreement_destroy(phase->admission);
            bb_agreement_destroy(phase->status_max);
            free(phase);
        }
        MPI_Comm_free(&comm);
        return st != BB_OK ? st : BB_ERR_STATE;
    }
    phase->world = world;
    phase->buffers = a.buffers;
    phase->rank = bb_world_rank(world);
    phase->size = bb_world_size(world);
    phase->corrupt_offset = -1;
    phase->payload_req = phase->receipt_req = MPI_REQUEST_NULL;
    phase->open_next = bb_transfer_open_head;
    bb_transfer_open_head = phase;
    *phase_out = phase;
    return BB_OK;

free_comm:
    MPI_Comm_free(&comm);
    return BB_ERR_MPI;
}

bb_status_t bb_transfer_phase_close(bb_transfer_phase_t *phase)
{
    if (phase == NULL)
        return BB_ERR_ARG;
    if (!phase_is_open(phase))
        return BB_ERR_STATE;  /* closed already (or never a phase) */
    bb_status_t st = entry_check(phase);
    if (st != BB_OK)
        return st;
    if (phase->live)
        return BB_ERR_STATE;
    /* Persistent requests go before the communicator they name. */
    bb_agreement_destroy(phase->admission);
    bb_agreement_destroy(phase->status_max);
    phase->admission = phase->status_max = NULL;
    if (MPI_Comm_free(&phase->comm) != MPI_SUCCESS)
        return poison(phase, NULL);
    open_unregister(phase);
    free_payload_all(phase);
    free(phase);
    return BB_OK;
}

/* Local preflight: validation, buffers, prepare and the one copy.  Returns
 * the local cause (NONE when this rank can go ahead). */
static bb_transfer_local_t preflight(bb_transfer_phase_t *phase,
                                     const bb_transfer_provider_t *provider,
                                     const bb_transfer_contract_t *c)
{
    /* The last sequence is never presented, so consuming one cannot wrap:
     * a phase that reached it refuses every later ticket. */
    if (phase->sequence == INT64_MAX)
        return BB_TRANSFER_CAUSE_CONTRACT;
    if (c->phase_id < 0 || c->epoch < 0 || c->source < 0
        || c->destination < 0 || c->nbytes < 0 || c->max_bytes < 0
        || c->batches < 0 || c->source >= phase->size
        || c->destination >= phase->size || c->nbytes > INT32_MAX
        || c->max_bytes > INT32_MAX)
        return BB_TRANSFER_CAUSE_CONTRACT;
    if (c->nbytes > c->max_bytes)
        return BB_TRANSFER_CAUSE_OVER_CAP;

    int is_src = c->source == phase->rank;
    int is_dst = c->destination == phase->rank;
    phase->role = is_src && is_dst ? BB_TRANSFER_ROLE_SAME_RANK
                  : is_src         ? BB_TRANSFER_ROLE_SOURCE
                  : is_dst         ? BB_TRANSFER_ROLE_DESTINATION
                                   : BB_TRANSFER_ROLE_NONE;
    phase->cur.role = phase->role;
    size_t n = (size_t)c->nbytes;

    if (is_dst && !is_src && n > 0
        && payload_reserve(phase, 2, &phase->recv_buf, &phase->recv_cap, &phase->old_recv,
                           &phase->old_recv_cap, c->nbytes, c->max_bytes) != 0)
        return BB_TRANSFER_CAUSE_NOMEM;
    if (!is_src)
        return BB_TRANSFER_CAUSE_NONE;

    if (n > 0
        && payload_reserve(phase, 1, &phase->send_buf, &phase->send_cap, &phase->old_send,
                           &phase->old_send_cap, c->nbytes, c->max_bytes) != 0)
        return BB_TRANSFER_CAUSE_NOMEM;
    if (provider == NULL || provider->prepare == NULL)
        return BB_TRANSFER_CAUSE_PROVIDER;
    const void *data = NULL;
    int64_t len = -1;
    phase->in_callback = 1;
    int rc = provider->prepare(provider->arg, &data, &len);
    phase->in_callback = 0;
    bb_transfer_local_t cause = BB_TRANSFER_CAUSE_NONE;
    if (rc != 0)
        cause = BB_TRANSFER_CAUSE_PROVIDER;
    else if (len != c->nbytes || (data == NULL && len > 0))
        cause = BB_TRANSFER_CAUSE_LENGTH;
    else if (n > 0)
        memcpy(phase->send_buf, data, n);
    if (data != NULL && provider->release != NULL) {
        phase->in_callback = 1;
        provider->release(provider->arg, data);
        phase->in_callback = 0;
    }
    return cause;
}

/* The metrics of a call refused as misuse, before any MPI call. */
static void metrics_misuse(bb_transfer_metrics_t *out, bb_status_t st)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    out->status = st;
    out->refusal.rank = -1;
}

static void ticket_invalid(bb_transfer_ticket_t *ticket, bb_transfer_phase_t *phase)
{
    if (ticket != NULL) {
        ticket->phase = phase;
        ticket->generation = 0;
    }
}

bb_status_t bb_transfer_phase_begin(bb_transfer_phase_t *phase,
                                    const bb_transfer_provider_t *provider,
                                    const bb_transfer_contract_t *contract,
                                    bb_transfer_ticket_t *ticket_out,
                                    bb_transfer_metrics_t *metrics_out)
{
    if (phase == NULL) {
        ticket_invalid(ticket_out, phase);
        return BB_ERR_ARG;
    }
    if (!phase_is_open(phase)) {  /* closed: never read it */
        metrics_misuse(metrics_out, BB_ERR_STATE);
        return BB_ERR_STATE;
    }
    bb_status_t st = entry_check(phase);
    if (st == BB_OK && phase->live)
        st = BB_ERR_STATE;
    if (st != BB_OK) {
        /* Misuse leaves the phase, its live ticket and the caller's handle
         * (which may be that ticket's) untouched. */
        metrics_misuse(metrics_out, st);
        return st;
    }

    ticket_invalid(ticket_out, phase);
    /* A missing contract or ticket is this rank's refusal, presented in
     * the agreement like any other, so that no rank waits. */
    const bb_transfer_contract_t none = {0, 0, 0, 0, 0, 0, 0};
    int bad_arg = contract == NULL || ticket_out == NULL;
    if (contract == NULL)
        contract = &none;
    bb_transfer_metrics_t *m = &phase->cur;
    memset(m, 0, sizeof *m);
    phase->t_begin = bb_time_now();
    m->sequence = phase->sequence;
    m->phase_id = contract->phase_id;
    m->epoch = contract->epoch;
    m->source = contract->source;
    m->destination = contract->destination;
    m->nbytes = contract->nbytes;
    m->batches = contract->batches;
    m->rank = phase->rank;
    m->ranks = phase->size;
    m->first_call = phase->stats.begun == 0;
    m->compute_s = -1.0;
    m->batches_executed = -1;
    m->completed_during_batches = -1;
    m->refusal.stage = BB_STAGE_NONE;
    m->refusal.rank = -1;
    m->refusal.sequence = phase->sequence;
    phase->stats.begun++;
    phase->role = BB_TRANSFER_ROLE_NONE;
    phase->tracked_live = payload_held(phase);  /* retained payload, or 0 */
    phase->inflight = 0;
    /* The control bytes and the agreements' staging, if any (fused's
     * [x, ~x]; BB_TRANSFER_TRACKED_CONTROL_BYTES). */
    track(phase, BB_TRANSFER_CENSUS_BYTES + bb_agreement_bytes(phase->admission)
                     + bb_agreement_bytes(phase->status_max));

    bb_transfer_local_t cause = bad_arg ? BB_TRANSFER_CAUSE_ARGUMENT
                                        : preflight(phase, provider, contract);
    m->local_cause = cause;
    double t_admit = bb_time_now();
    m->prepare_s = t_admit - phase->t_begin;

    int64_t *local = phase->control[0], *mn = phase->control[1],
            *mx = phase->control[2];
    local[BB_TRANSFER_SEQUENCE] = phase->sequence;
    local[BB_TRANSFER_PHASE_ID] = contract->phase_id;
    local[BB_TRANSFER_EPOCH] = contract->epoch;
    local[BB_TRANSFER_SOURCE] = contract->source;
    local[BB_TRANSFER_DESTINATION] = contract->destination;
    local[BB_TRANSFER_NBYTES] = contract->nbytes;
    local[BB_TRANSFER_CAP] = contract->max_bytes;
    local[BB_TRANSFER_BATCHES] = contract->batches;
    local[BB_TRANSFER_STATUS] = cause == BB_TRANSFER_CAUSE_NONE
                                    ? 0
                                    : BB_TRANSFER_CODE(phase->rank, BB_STAGE_PREFLIGHT);
    int rc = bb_agreement_minmax(phase->admission, local, mn, mx);
    if (rc != MPI_SUCCESS)
        return poison(phase, metrics_out);
    m->admission_s = bb_time_now() - t_admit;

    /* The sequence is consumed on refusal and on admission alike (but
     * never past INT64_MAX, which preflight refuses). */
    if (phase->sequence < INT64_MAX)
        phase->sequence++;
    int64_t agreed = mx[BB_TRANSFER_STATUS];
    m->code = agreed;
    if (agreed != 0 || !bb_agree_fields_equal(mn, mx, 0, BB_TRANSFER_STATUS)) {
        /* A local preflight failure wins over a simultaneous mismatch; the
         * maximum presented sequence makes the diagnostics identical. */
        if (agreed != 0) {
            m->refusal.stage = (bb_stage_t)(agreed % 8);
            m->refusal.rank = (int)(agreed / 8);
        } else {
            m->refusal.stage = BB_STAGE_CONTRACT;
            m->refusal.rank = -1;
        }
        m->refusal.sequence = mx[BB_TRANSFER_SEQUENCE];
        payload_refused(phase);
        m->status = BB_REFUSED;
        m->total_s = bb_time_now() - phase->t_begin;
        phase->stats.refused++;
        record_stats(phase);
        if (metrics_out != NULL)
            *metrics_out = *m;
        return BB_REFUSED;
    }

    payload_admitted(phase);
    phase->contract = *contract;
    phase->ticket_sequence = m->sequence;
    phase->generation = ++bb_transfer_generations;
    phase->live = 1;
    phase->stats.admitted++;
    phase->payload_done = 1;
    live_register(phase);
    if (phase->role != BB_TRANSFER_ROLE_NONE)
        m->payload_bytes = contract->nbytes;

    double t_post = bb_time_now();
    if (phase->post_delay > 0.0)
        bb_time_sleep(phase->post_delay);
    int count = (int)contract->nbytes;
    int src = (int)contract->source, dst = (int)contract->destination;
    if (phase->role == BB_TRANSFER_ROLE_SOURCE) {
        /* The receipt has its own storage and credit, posted first so that
         * the destination's receipt never waits for a data slot. */
        if (MPI_Irecv(phase->receipt, 2, MPI_INT64_T, dst, BB_TRANSFER_TAG_RECEIPT,
                      phase->comm, &phase->receipt_req) != MPI_SUCCESS)
            goto fail_post;
        request_posted(phase);
        if (MPI_Isend(phase->send_buf, count, MPI_BYTE, dst, BB_TRANSFER_TAG_PAYLOAD,
                      phase->comm, &phase->payload_req) != MPI_SUCCESS)
            goto fail_post;
        request_posted(phase);
        phase->payload_done = 0;
        m->completed_during_batches = 0;
    } else if (phase->role == BB_TRANSFER_ROLE_DESTINATION) {
        if (MPI_Irecv(phase->recv_buf, count, MPI_BYTE, src, BB_TRANSFER_TAG_PAYLOAD,
                      phase->comm, &phase->payload_req) != MPI_SUCCESS)
            goto fail_post;
        request_posted(phase);
        phase->payload_done = 0;
        m->completed_during_batches = 0;
    }
    /* Same rank: the copy made in preflight is the transfer. */
    m->post_s = bb_time_now() - t_post;
    ticket_out->phase = phase;
    ticket_out->generation = phase->generation;
    if (metrics_out != NULL)
        *metrics_out = *m;
    return BB_OK;

fail_post:
    ticket_out->generation = phase->generation;
    m->post_s = bb_time_now() - t_post;
    return poison(phase, metrics_out);
}

static bb_status_t ticket_check(const bb_transfer_ticket_t *ticket)
{
    if (ticket == NULL || ticket->phase == NULL)
        return BB_ERR_ARG;
    /* Never live (a failed begin), or its phase closed since: finished. */
    if (ticket->generation <= 0 || !phase_is_open(ticket->phase))
        return BB_ERR_STATE;
    const bb_transfer_phase_t *phase = ticket->phase;
    bb_status_t st = entry_check(phase);
    if (st != BB_OK)
        return st;
    if (!phase->live || ticket->generation != phase->generation)
        return BB_ERR_STATE;
    return BB_OK;
}

bb_status_t bb_transfer_ticket_progress(bb_transfer_ticket_t *ticket,
                                        int *complete_out)
{
    bb_status_t st = ticket_check(ticket);
    if (st != BB_OK)
        return st;
    bb_transfer_phase_t *phase = ticket->phase;
    double t = bb_time_now();
    phase->cur.polls++;
    if (!phase->payload_done) {
        int flag = 0;
        if (MPI_Test(&phase->payload_req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return poison(phase, NULL);
        if (flag) {
            phase->payload_done = 1;
            phase->inflight--;
            phase->cur.completed_during_batches = 1;
        }
    }
    phase->cur.progress_s += bb_time_now() - t;
    if (complete_out != NULL)
        *complete_out = phase->payload_done;
    return BB_OK;
}

/* Source side of the receipt: the receipt must carry this ticket's
 * generation and either the agreed compute refusal or one of the
 * destination's two consumer outcomes. */
static int receipt_valid(const bb_transfer_phase_t *phase, int64_t agreed)
{
    if (phase->receipt[0] != phase->ticket_sequence)
        return 0;
    if (agreed != 0)
        return phase->receipt[1] == agreed;
    return phase->receipt[1] == 0
           || phase->receipt[1]
                  == BB_TRANSFER_CODE(phase->contract.destination, BB_STAGE_CONSUMER);
}

bb_status_t bb_transfer_ticket_finish(bb_transfer_ticket_t *ticket,
                                      const bb_transfer_consumer_t *consumer,
                                      int local_error, void **value_out,
                                      bb_transfer_metrics_t *metrics_out)
{
    bb_status_t st = ticket_check(ticket);
    if (st != BB_OK) {
        metrics_misuse(metrics_out, st);
        return st;
    }
    bb_transfer_phase_t *phase = ticket->phase;
    bb_transfer_metrics_t *m = &phase->cur;
    int64_t *local = phase->control[0], *mx = phase->control[2];
    int64_t my_code = 0;
    if (local_error != BB_TRANSFER_LOCAL_OK) {
        my_code = BB_TRANSFER_CODE(phase->rank, BB_STAGE_COMPUTE);
        m->local_cause = local_error == BB_TRANSFER_LOCAL_FAILED
                             ? BB_TRANSFER_CAUSE_COMPUTE
                             : BB_TRANSFER_CAUSE_INVALID_ERROR;
    }

    double t = bb_time_now();
    if (!phase->payload_done) {
        if (MPI_Wait(&phase->payload_req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return poison(phase, metrics_out);
        phase->payload_done = 1;
        phase->inflight--;
    }
    m->payload_wait_s = bb_time_now() - t;

    int is_src = phase->role == BB_TRANSFER_ROLE_SOURCE
                 || phase->role == BB_TRANSFER_ROLE_SAME_RANK;
    int is_dst = phase->role == BB_TRANSFER_ROLE_DESTINATION
                 || phase->role == BB_TRANSFER_ROLE_SAME_RANK;
    unsigned char *view = phase->role == BB_TRANSFER_ROLE_SAME_RANK
                              ? phase->send_buf : phase->recv_buf;
    if (is_dst && phase->corrupt_offset >= 0
        && phase->corrupt_offset < phase->contract.nbytes)
        view[phase->corrupt_offset] ^= 1u;

    t = bb_time_now();
    local[BB_TRANSFER_STATUS] = my_code;
    if (bb_agreement_max(phase->status_max, &local[BB_TRANSFER_STATUS],
                         &mx[BB_TRANSFER_STATUS]) != MPI_SUCCESS)
        return poison(phase, metrics_out);
    int64_t agreed = mx[BB_TRANSFER_STATUS];
    m->status_agreement_s = bb_time_now() - t;

    void *value = NULL;
    int64_t terminal_local = agreed;
    if (is_dst) {
        int64_t outcome = agreed;
        if (agreed == 0) {
            t = bb_time_now();
            int rc = 1;
            if (consumer != NULL && consumer->consume != NULL) {
                phase->in_callback = 1;
                rc = consumer->consume(consumer->arg, view, phase->contract.nbytes,
                                       &value);
                phase->in_callback = 0;
            }
            m->consumer_s = bb_time_now() - t;
            if (rc != 0) {
                outcome = BB_TRANSFER_CODE(phase->rank, BB_STAGE_CONSUMER);
                m->local_cause = BB_TRANSFER_CAUSE_CONSUMER;
            }
        }
        terminal_local = max64(terminal_local, outcome);
        phase->receipt[0] = phase->ticket_sequence;
        phase->receipt[1] = outcome;
        if (phase->receipt_fault == 1)
            phase->receipt[0] += 1;
        else if (phase->receipt_fault == 2)
            phase->receipt[1] = BB_TRANSFER_CODE(phase->rank, BB_STAGE_PREFLIGHT);
        if (phase->role == BB_TRANSFER_ROLE_DESTINATION) {
            t = bb_time_now();
            if (MPI_Isend(phase->receipt, 2, MPI_INT64_T, (int)phase->contract.source,
                          BB_TRANSFER_TAG_RECEIPT, phase->comm,
                          &phase->receipt_req) != MPI_SUCCESS)
                return poison(phase, metrics_out);
            request_posted(phase);
            if (MPI_Wait(&phase->receipt_req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return poison(phase, metrics_out);
            phase->inflight--;
            m->receipt_wait_s = bb_time_now() - t;
        }
    }
    if (is_src) {
        if (phase->role == BB_TRANSFER_ROLE_SOURCE) {
            t = bb_time_now();
            if (MPI_Wait(&phase->receipt_req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return poison(phase, metrics_out);
            phase->inflight--;
            m->receipt_wait_s = bb_time_now() - t;
        }
        /* Same rank: the receipt never leaves its storage, but it is
         * validated the same way. */
        if (!receipt_valid(phase, agreed)) {
            terminal_local = max64(terminal_local,
                                   BB_TRANSFER_CODE(phase->rank, BB_STAGE_RECEIPT));
            m->local_cause = BB_TRANSFER_CAUSE_RECEIPT;
        }
    }

    t = bb_time_now();
    local[BB_TRANSFER_STATUS] = terminal_local;
    if (bb_agreement_max(phase->status_max, &local[BB_TRANSFER_STATUS],
                         &mx[BB_TRANSFER_STATUS]) != MPI_SUCCESS)
        return poison(phase, metrics_out);
    int64_t final = mx[BB_TRANSFER_STATUS];
    m->terminal_agreement_s = bb_time_now() - t;

    /* Retire: every request is complete, so the ticket's storage can go. */
    live_unregister(phase);
    payload_retired(phase);
    phase->live = 0;
    m->code = final;
    if (final == 0) {
        m->status = BB_OK;
        m->refusal.stage = BB_STAGE_NONE;
        m->refusal.rank = -1;
        m->refusal.sequence = phase->ticket_sequence;
        phase->stats.completed++;
        if (value_out != NULL)
            *value_out = value;
        else if (value != NULL && consumer->discard != NULL)
            consumer->discard(consumer->arg, value);
    } else {
        m->status = BB_REFUSED;
        m->refusal.stage = (bb_stage_t)(final % 8);
        m->refusal.rank = (int)(final / 8);
        m->refusal.sequence = phase->ticket_sequence;
        phase->stats.refused++;
        /* No partial output is ever published. */
        if (value != NULL && consumer->discard != NULL)
            consumer->discard(consumer->arg, value);
    }
    m->total_s = bb_time_now() - phase->t_begin;
    record_stats(phase);
    if (metrics_out != NULL)
        *metrics_out = *m;
    return m->status;
}

bb_status_t bb_transfer_phase_run(bb_transfer_phase_t *phase,
                                  const bb_transfer_provider_t *provider,
                                  const bb_transfer_consumer_t *consumer,
                                  const bb_transfer_compute_t *compute,
                                  const bb_transfer_contract_t *contract,
                                  void **value_out,
                                  bb_transfer_metrics_t *metrics_out)
{
    bb_transfer_ticket_t ticket;
    bb_status_t st = bb_transfer_phase_begin(phase, provider, contract, &ticket,
                                             metrics_out);
    if (st != BB_OK)
        return st;

    int failed = 0;
    int64_t executed = 0;
    double compute_s = 0.0;
    for (int64_t i = 0; i < contract->batches; i++) {
        int rc = 0;
        double t = bb_time_now();
        if (compute != NULL && compute->batch != NULL) {
            phase->in_callback = 1;
            rc = compute->batch(compute->arg, i);
            phase->in_callback = 0;
        }
        compute_s += bb_time_now() - t;
        executed++;
        if (rc != 0) {
            failed = 1;
            break;
        }
        st = bb_transfer_ticket_progress(&ticket, NULL);
        if (st != BB_OK) {
            if (metrics_out != NULL)
                *metrics_out = phase->cur;
            return st;
        }
    }
    phase->cur.compute_s = compute_s;
    phase->cur.batches_executed = executed;
    return bb_transfer_ticket_finish(&ticket, consumer,
                                     failed ? BB_TRANSFER_LOCAL_FAILED
                                            : BB_TRANSFER_LOCAL_OK,
                                     value_out, metrics_out);
}

int64_t bb_transfer_phase_sequence(const bb_transfer_phase_t *phase)
{
    return phase->sequence;
}

int64_t bb_transfer_phase_tracked_live(const bb_transfer_phase_t *phase)
{
    return phase->tracked_live;
}

int bb_transfer_phase_inflight(const bb_transfer_phase_t *phase)
{
    return phase->inflight;
}

int bb_transfer_phase_poisoned(const bb_transfer_phase_t *phase)
{
    return phase->poisoned;
}

int bb_transfer_phase_active(const bb_transfer_phase_t *phase)
{
    return phase->live;
}

void bb_transfer_phase_stats(const bb_transfer_phase_t *phase,
                             bb_transfer_phase_stats_t *stats_out)
{
    *stats_out = phase->stats;
}

void bb_transfer_phase_set_sequence(bb_transfer_phase_t *phase, int64_t sequence)
{
    phase->sequence = sequence;
}

void bb_transfer_phase_set_post_delay(bb_transfer_phase_t *phase, double seconds)
{
    phase->post_delay = seconds;
}

void bb_transfer_phase_set_corrupt_byte(bb_transfer_phase_t *phase, int64_t offset)
{
    phase->corrupt_offset = offset;
}

void bb_transfer_phase_set_receipt_fault(bb_transfer_phase_t *phase, int kind)
{
    phase->receipt_fault = kind;
}
