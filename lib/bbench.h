/*
 * bbench.h: the one public header of libbbench.
 *
 * libbbench implements bounded MPI runtime protocols (sum, transfer,
 * redistribution) and the measurement support around them (statistics, option
 * parsing, JSON records, topology).  It has no main(), performs no I/O in the
 * protocol code, and keeps no state in this header: every call takes the
 * object it acts on.
 *
 * Conventions, for everything below:
 * - Times are seconds (double), sizes are bytes (int64_t) unless a name says
 *   "count" or "elements".
 * - Outputs come last.  An output pointer is written only on BB_OK unless the
 *   comment says otherwise.
 * - "Collective" means every rank of the object's communicator must call it,
 *   in the same order.  "Local" means no MPI communication.
 * - Ownership: "caller owns" means release it with the named function
 *   (bb_free() for plain buffers); "borrowed" means do not free it.
 */
#ifndef BBENCH_H
#define BBENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status and exit codes                                                    */
/* ------------------------------------------------------------------------ */

typedef enum bb_status {
    BB_OK = 0,
    BB_REFUSED,        /* collective refusal: every rank returns it, identical
                          diagnostics, no payload published */
    BB_ERR_ARG,        /* invalid argument, found locally before any MPI call */
    BB_ERR_THREAD,     /* caller is not the thread that bound the world */
    BB_ERR_REENTRY,    /* call from inside a callback of the same object */
    BB_ERR_STATE,      /* wrong state (finished ticket, active phase, ...) */
    BB_ERR_POISONED,   /* poisoned by an earlier MPI error: abort the job */
    BB_ERR_MPI,        /* an MPI call failed now; the object is poisoned and
                          retained: abort the job */
    BB_ERR_NOMEM,      /* allocation failed */
    BB_ERR_IO,         /* file system error */
    BB_ERR_PARSE,      /* malformed text (option value, JSON) */
    BB_ERR_VALIDATION  /* a measured result was wrong (checksum, pattern) */
} bb_status_t;

/* Static string naming the status; never NULL. */
const char *bb_status_string(bb_status_t status);

/* Exit codes of every bbench executable. */
enum {
    BB_EXIT_OK = 0,       /* everything measured as asked */
    BB_EXIT_FAILURE = 1,  /* measured failure: unrequested refusal, validation */
    BB_EXIT_USAGE = 2,    /* bad command line or unusable input */
    BB_EXIT_FATAL = 3     /* fatal: MPI error, poisoned phase, internal error */
};

/* Version string of the library, e.g. "0.1.0"; static. */
const char *bb_version(void);

/* Release memory the library handed to the caller (results, lists). */
void bb_free(void *ptr);

/* Local monotonic wall clock in seconds (clock_gettime CLOCK_MONOTONIC);
 * no MPI call, so usable anywhere, including before MPI_Init. */
double bb_time_now(void);
/* Resolution of bb_time_now() in seconds (clock_getres). */
double bb_time_resolution(void);
/* Sleep for the given seconds (>= 0) without calling MPI. */
void bb_time_sleep(double seconds);

/* ------------------------------------------------------------------------ */
/* World binding (world.c)                                                  */
/* ------------------------------------------------------------------------ */

/* A bound communicator: MPI initialized, the thread that owns MPI, the
 * provided thread level.  Every phase borrows one. */
typedef struct bb_world bb_world_t;

/* Local.  Binds comm (normally MPI_COMM_WORLD; a singleton launch is a world
 * of one).  Requires MPI initialized and not finalized, the calling thread to
 * be the MPI main thread, and a provided level of at least
 * MPI_THREAD_FUNNELED.  Sets MPI_ERRORS_RETURN on comm so that phases see
 * errors.  The communicator is borrowed, never duplicated or freed.
 * Caller owns *world_out (bb_world_release). */
bb_status_t bb_world_bind(MPI_Comm comm, bb_world_t **world_out);
void bb_world_release(bb_world_t *world);

MPI_Comm bb_world_comm(const bb_world_t *world);
int bb_world_rank(const bb_world_t *world);
int bb_world_size(const bb_world_t *world);
int bb_world_thread_level(const bb_world_t *world);  /* MPI_THREAD_* provided */

/* Local, no MPI call: BB_OK on the owner thread, BB_ERR_THREAD elsewhere. */
bb_status_t bb_world_check_owner(const bb_world_t *world);

/* Static name of an MPI_THREAD_* level ("MPI_THREAD_FUNNELED"). */
const char *bb_thread_level_name(int level);

/* ------------------------------------------------------------------------ */
/* Agreement (agree.c): fixed int64 fields, MIN then MAX                     */
/* ------------------------------------------------------------------------ */

/* Collective.  Two MPI_Allreduce calls on n MPI_INT64_T fields: MIN into
 * min_out, then MAX into max_out (n elements each, caller storage).
 * Returns the MPI error code (MPI_SUCCESS on success). */
int bb_agree_minmax(MPI_Comm comm, const int64_t *local, int n,
                    int64_t *min_out, int64_t *max_out);

/* Collective.  One MPI_Allreduce MAX on n fields. */
int bb_agree_max(MPI_Comm comm, const int64_t *local, int n, int64_t *max_out);

/* Local.  1 iff min[i] == max[i] for i in [first, first + count). */
int bb_agree_fields_equal(const int64_t *min, const int64_t *max, int first,
                          int count);

/* ------------------------------------------------------------------------ */
/* Refusal provenance (shared by every phase)                               */
/* ------------------------------------------------------------------------ */

/* Stage codes 1..4 are the packed codes of the transfer status word
 * (8*rank + stage); contract and transport are never packed. */
typedef enum bb_stage {
    BB_STAGE_NONE = 0,
    BB_STAGE_PREFLIGHT = 1,
    BB_STAGE_COMPUTE = 2,
    BB_STAGE_CONSUMER = 3,
    BB_STAGE_RECEIPT = 4,
    BB_STAGE_CONTRACT = 5,   /* fields disagree, no local refusal */
    BB_STAGE_TRANSPORT = 6   /* local MPI failure: fatal, not agreed */
} bb_stage_t;

/* Static name ("preflight", ...); "none" for BB_STAGE_NONE. */
const char *bb_stage_name(bb_stage_t stage);

typedef struct bb_refusal {
    bb_stage_t stage;
    int rank;          /* -1: none (pure contract mismatch, or not carried) */
    int64_t sequence;  /* the maximum presented sequence: same on every rank */
} bb_refusal_t;

/* Local.  Number of objects (any phase kind) retained in the library's
 * fatal list after an MPI error.  They are never freed. */
size_t bb_poisoned_count(void);

/* ------------------------------------------------------------------------ */
/* Bounded sum phase (sum.c)                                                */
/* ------------------------------------------------------------------------ */

/* Admission array layout: int64[6] */
enum {
    BB_SUM_SEQUENCE = 0, BB_SUM_PHASE_ID, BB_SUM_EPOCH, BB_SUM_COUNT,
    BB_SUM_CAP, BB_SUM_REFUSAL, BB_SUM_FIELDS
};
/* Control bytes: three 48-byte arrays (local, MIN, MAX). */
#define BB_SUM_CONTROL_BYTES (3 * BB_SUM_FIELDS * 8)

typedef struct bb_sum_phase bb_sum_phase_t;

/* The provider of one rank's contribution. */
typedef struct bb_sum_provider {
    /* Local, MPI-free.  Sets *data_out to *len_out float64 values owned by
     * the provider (or NULL with length 0).  Nonzero return: provider
     * failure, a local refusal.  Must not call the phase (reentry is
     * refused). */
    int (*prepare)(void *arg, const double **data_out, int64_t *len_out);
    /* Called exactly once for every non-NULL array prepare produced, after
     * the phase copied it, on success and on refusal alike.  May be NULL. */
    void (*release)(void *arg, const double *data);
    void *arg;
} bb_sum_provider_t;

typedef struct bb_sum_contract {
    int64_t phase_id;      /* >= 0, common to all ranks */
    int64_t epoch;         /* >= 0, source state; need not increase */
    int64_t count;         /* elements, 0 <= count <= max_elements */
    int64_t max_elements;  /* cap on transport buffers, <= INT32_MAX */
} bb_sum_contract_t;

/* Why this rank refused locally (never sent: only the refusal bit is). */
typedef enum bb_sum_local {
    BB_SUM_LOCAL_NONE = 0,
    BB_SUM_LOCAL_PROVIDER,  /* prepare returned nonzero */
    BB_SUM_LOCAL_LENGTH,    /* prepare returned a length other than count */
    BB_SUM_LOCAL_OVER_CAP,  /* count > max_elements */
    BB_SUM_LOCAL_NEGATIVE,  /* a negative id, epoch, count or cap */
    BB_SUM_LOCAL_RANGE,     /* count or cap > INT32_MAX */
    BB_SUM_LOCAL_NOMEM      /* payload buffers could not be allocated */
} bb_sum_local_t;

/* Local metrics of one call (this rank only; no telemetry collective). */
typedef struct bb_sum_metrics {
    bb_status_t status;
    int64_t sequence, phase_id, epoch, count;
    int rank, ranks;
    double prepare_s;      /* prepare callback, copy and validation */
    double admission_s;    /* the two agreement Allreduces */
    double post_s;         /* MPI_Iallreduce call */
    double test_s;         /* the one MPI_Test */
    double wait_s;         /* exposed MPI_Wait (0 when Test completed) */
    double total_s;        /* whole call, inclusive of all of the above */
    int test_completed;    /* 1: the Test alone completed the request */
    int64_t payload_bytes; /* 8*count contributed by this rank, 0 if refused */
    int64_t tracked_bytes; /* peak counted bytes: 144 + 16*count */
    int max_inflight;      /* requests live at once (0 or 1) */
    int requests_posted;   /* payload requests posted by this call */
    bb_sum_local_t local_cause;
    bb_refusal_t refusal;  /* stage NONE on success */
} bb_sum_metrics_t;

/* Local (the world is borrowed; no communicator is duplicated). */
bb_status_t bb_sum_phase_create(bb_world_t *world, bb_sum_phase_t **phase_out);

/* Collective over the world.  Runs prepare, admission (MIN then MAX on the
 * six fields), and on admission one MPI_Iallreduce(SUM) with one MPI_Test
 * then MPI_Wait.  On BB_OK, *result_out is a new array of count doubles,
 * caller owns it (bb_free; NULL when count is 0).  On BB_REFUSED every rank
 * refused, nothing was posted, and the sequence is consumed.  BB_ERR_MPI
 * poisons the phase.  Thread and reentry misuse return before any MPI call.
 * metrics_out may be NULL; it is filled on every return. */
bb_status_t bb_sum_phase_run(bb_sum_phase_t *phase,
                             const bb_sum_provider_t *provider,
                             const bb_sum_contract_t *contract,
                             double **result_out, bb_sum_metrics_t *metrics_out);

/* Local.  The sequence the next call will present. */
int64_t bb_sum_phase_sequence(const bb_sum_phase_t *phase);
/* Local.  Counted bytes the phase holds now: the 144 control bytes
 * between calls, 144 + 16*count during one. */
int64_t bb_sum_phase_tracked_live(const bb_sum_phase_t *phase);
int bb_sum_phase_poisoned(const bb_sum_phase_t *phase);

/* Demonstration and test hooks, local.  set_sequence makes this rank present
 * another sequence (a divergence); set_post_delay sleeps this rank between
 * admission and posting the payload. */
void bb_sum_phase_set_sequence(bb_sum_phase_t *phase, int64_t sequence);
void bb_sum_phase_set_post_delay(bb_sum_phase_t *phase, double seconds);

/* Local.  Frees an idle phase.  A poisoned phase stays retained and
 * BB_ERR_POISONED is returned; a phase inside a call gives BB_ERR_STATE. */
bb_status_t bb_sum_phase_destroy(bb_sum_phase_t *phase);

/* ------------------------------------------------------------------------ */
/* Bounded transfer phase (transfer.c)                                      */
/* ------------------------------------------------------------------------ */
/* (declared with issue 3) */

/* A W=1 byte transport from one source rank to one destination rank of the
 * world, on a duplicate of the world communicator (payload tag 0, receipt
 * tag 1).  Every rank of the world takes part in every agreement, including
 * ranks that hold no data.  One ticket at a time. */

/* Agreement array layout: int64[9], reduced MIN then MAX. */
enum {
    BB_TRANSFER_SEQUENCE = 0, BB_TRANSFER_PHASE_ID, BB_TRANSFER_EPOCH,
    BB_TRANSFER_SOURCE, BB_TRANSFER_DESTINATION, BB_TRANSFER_NBYTES,
    BB_TRANSFER_CAP, BB_TRANSFER_BATCHES, BB_TRANSFER_STATUS,
    BB_TRANSFER_FIELDS
};
/* Counted control storage per rank: three 72-byte agreement arrays and the
 * 16-byte receipt [ticket sequence, status code]. */
#define BB_TRANSFER_CONTROL_BYTES (3 * BB_TRANSFER_FIELDS * 8)
#define BB_TRANSFER_RECEIPT_BYTES 16
#define BB_TRANSFER_CENSUS_BYTES \
    (BB_TRANSFER_CONTROL_BYTES + BB_TRANSFER_RECEIPT_BYTES)  /* 232 */
#define BB_TRANSFER_TAG_PAYLOAD 0
#define BB_TRANSFER_TAG_RECEIPT 1

/* Packed status word: 0 success, else 8*rank + stage (stage 1..4). */
#define BB_TRANSFER_CODE(rank, stage) (8 * (int64_t)(rank) + (int64_t)(stage))

typedef struct bb_transfer_phase bb_transfer_phase_t;

/* A ticket is a small handle in caller storage; the phase owns the ticket's
 * state (buffers, requests), so dropping the handle loses nothing.  A handle
 * is valid for exactly one begin; once finished (or from a failed begin)
 * every call on it gives BB_ERR_STATE. */
typedef struct bb_transfer_ticket {
    bb_transfer_phase_t *phase;
    int64_t generation;   /* 0: never live */
} bb_transfer_ticket_t;

/* The source's payload.  Called on the source rank only. */
typedef struct bb_transfer_provider {
    /* Local, MPI-free.  Sets *data_out to *len_out bytes owned by the
     * provider (NULL with length 0 is allowed).  Nonzero return: provider
     * failure, a local preflight refusal.  The phase copies the bytes into
     * its own buffer. */
    int (*prepare)(void *arg, const void **data_out, int64_t *len_out);
    /* Called exactly once for every non-NULL array prepare produced, right
     * after the copy (success and refusal alike).  May be NULL. */
    void (*release)(void *arg, const void *data);
    void *arg;
} bb_transfer_provider_t;

/* The destination's consumer.  Called on the destination rank only, after
 * payload completion and the status agreement, with a read-only view of the
 * nbytes received.  Nonzero return: consumer failure (a consumer refusal).
 * *value_out (may be left NULL) stays private until the terminal agreement;
 * it is handed to the caller on success and given to discard (if not NULL)
 * when the ticket is refused after all. */
typedef struct bb_transfer_consumer {
    int (*consume)(void *arg, const void *data, int64_t nbytes,
                   void **value_out);
    void (*discard)(void *arg, void *value);
    void *arg;
} bb_transfer_consumer_t;

/* One compute batch for run(): MPI-free, finite, independent of the payload.
 * Nonzero return: compute failure; no later batch of this rank runs.
 * batch NULL means empty batches (the progress polls still happen). */
typedef struct bb_transfer_compute {
    int (*batch)(void *arg, int64_t index);
    void *arg;
} bb_transfer_compute_t;

typedef struct bb_transfer_contract {
    int64_t phase_id;     /* >= 0, common to all ranks */
    int64_t epoch;        /* >= 0 */
    int64_t source;       /* world rank that prepares */
    int64_t destination;  /* world rank that consumes (may equal source) */
    int64_t nbytes;       /* 0 <= nbytes <= max_bytes */
    int64_t max_bytes;    /* cap on each payload buffer, <= INT32_MAX */
    int64_t batches;      /* >= 0: compute batches (run) or the caller's
                             declared batches (ticket API) */
} bb_transfer_contract_t;

/* finish()'s local_error: anything other than these two is invalid and is
 * turned into a compute refusal (never a rank-local error). */
enum { BB_TRANSFER_LOCAL_OK = 0, BB_TRANSFER_LOCAL_FAILED = 1 };

/* Why this rank failed locally (never sent: only the packed code is). */
typedef enum bb_transfer_local {
    BB_TRANSFER_CAUSE_NONE = 0,
    BB_TRANSFER_CAUSE_CONTRACT,    /* negative or out-of-range field */
    BB_TRANSFER_CAUSE_OVER_CAP,    /* nbytes > max_bytes */
    BB_TRANSFER_CAUSE_PROVIDER,    /* prepare returned nonzero */
    BB_TRANSFER_CAUSE_LENGTH,      /* prepare's length is not nbytes */
    BB_TRANSFER_CAUSE_NOMEM,       /* payload buffer allocation failed */
    BB_TRANSFER_CAUSE_COMPUTE,     /* a compute batch or local_error failed */
    BB_TRANSFER_CAUSE_INVALID_ERROR, /* local_error was not 0 or 1 */
    BB_TRANSFER_CAUSE_CONSUMER,    /* consume failed or was missing */
    BB_TRANSFER_CAUSE_RECEIPT,     /* source: unexpected receipt */
    BB_TRANSFER_CAUSE_MPI          /* an MPI call failed here (fatal) */
} bb_transfer_local_t;

/* This rank's part in a ticket. */
typedef enum bb_transfer_role {
    BB_TRANSFER_ROLE_NONE = 0,    /* no data: agreements only */
    BB_TRANSFER_ROLE_SOURCE,
    BB_TRANSFER_ROLE_DESTINATION,
    BB_TRANSFER_ROLE_SAME_RANK    /* source == destination: one local copy */
} bb_transfer_role_t;

/* Local metrics of one ticket (this rank only; no telemetry collective).
 * Times are seconds.  A negative time or count means "not measured by the
 * phase" (the ticket API leaves compute to the caller). */
typedef struct bb_transfer_metrics {
    bb_status_t status;       /* BB_OK, BB_REFUSED, BB_ERR_MPI, ... */
    int64_t sequence;         /* the sequence this rank presented */
    int64_t phase_id, epoch, source, destination, nbytes, batches;
    int rank, ranks;
    bb_transfer_role_t role;
    int first_call;           /* 1: the phase's first ticket */
    double prepare_s;         /* validation, allocation, prepare and copy */
    double admission_s;       /* the MIN and MAX preflight Allreduces */
    double post_s;            /* posting (plus any test post delay) */
    double compute_s;         /* run(): sum of batch callbacks; ticket: -1 */
    double progress_s;        /* cumulative progress polls */
    double payload_wait_s;    /* completing the payload request(s) */
    double status_agreement_s;/* the status MAX agreement */
    double consumer_s;        /* the consume callback (destination) */
    double receipt_wait_s;    /* sending or receiving the receipt */
    double terminal_agreement_s; /* the terminal MAX agreement */
    double total_s;           /* begin through finish, inclusive of all */
    int64_t batches_executed; /* run(): batch callbacks run; ticket: -1 */
    int64_t polls;            /* progress polls (MPI_Test or none) */
    int completed_during_batches; /* 1: a poll saw the local payload
                                     complete; 0: not; -1: this rank posts
                                     no payload request */
    int64_t payload_bytes;    /* bytes this rank sent or received (nbytes
                                 on data ranks once admitted, else 0) */
    int64_t tracked_bytes;    /* peak counted bytes: 232 + owned payload */
    int max_inflight;         /* peak live requests (<= 2 src, <= 1 dst) */
    int requests_posted;      /* point-to-point requests posted */
    int64_t code;             /* the agreed status word (0: success) */
    bb_transfer_local_t local_cause;
    bb_refusal_t refusal;     /* stage NONE on success; TRANSPORT (this
                                 rank, local) on an MPI error */
} bb_transfer_metrics_t;

/* Collective over the world: duplicates its communicator once
 * (MPI_ERRORS_RETURN on the duplicate).  Failure is a setup failure.
 * Caller owns *phase_out (bb_transfer_phase_close). */
bb_status_t bb_transfer_phase_create(bb_world_t *world,
                                     bb_transfer_phase_t **phase_out);

/* Collective.  Frees the duplicate and the phase.  Refused locally, before
 * any MPI call, while a ticket is live (BB_ERR_STATE) or the phase is
 * poisoned (BB_ERR_POISONED; the phase stays retained). */
bb_status_t bb_transfer_phase_close(bb_transfer_phase_t *phase);

/* Collective.  Preflight (prepare on the source, validation and buffers on
 * data ranks), the nine-field MIN/MAX agreement, then posting: source
 * receipt Irecv + payload Isend, destination payload Irecv, same rank one
 * local copy, other ranks nothing.  BB_OK: *ticket_out is live.
 * BB_REFUSED: preflight or contract refusal on every rank, nothing posted,
 * sequence consumed.  BB_ERR_MPI: poisoned.  Thread, reentry and state
 * misuse (a live ticket, a poisoned phase) return before any MPI call and
 * leave *ticket_out untouched; on every other return *ticket_out is written
 * (a ticket every call rejects unless BB_OK).  metrics_out (may be NULL) is
 * written on every return. */
bb_status_t bb_transfer_phase_begin(bb_transfer_phase_t *phase,
                                    const bb_transfer_provider_t *provider,
                                    const bb_transfer_contract_t *contract,
                                    bb_transfer_ticket_t *ticket_out,
                                    bb_transfer_metrics_t *metrics_out);

/* Local.  One poll: MPI_Test on this rank's payload request (none on
 * inactive and same-rank ranks).  *complete_out (may be NULL) is 1 once the
 * local payload is complete.  BB_ERR_STATE for a finished ticket. */
bb_status_t bb_transfer_ticket_progress(bb_transfer_ticket_t *ticket,
                                        int *complete_out);

/* Collective.  Completes the payload, status MAX agreement (compute failure
 * anywhere skips consumption everywhere), destination consumes or records
 * refusal and sends the receipt, source validates it, terminal MAX
 * agreement; then publishes or refuses and retires the ticket.
 * local_error: BB_TRANSFER_LOCAL_OK or _FAILED (compute failed here).
 * BB_OK: on the destination *value_out is the consumer's value (caller
 * owns it); elsewhere NULL.  BB_REFUSED: compute, consumer or receipt
 * refusal, identical on every rank.  value_out and metrics_out may be
 * NULL; metrics are written on every return. */
bb_status_t bb_transfer_ticket_finish(bb_transfer_ticket_t *ticket,
                                      const bb_transfer_consumer_t *consumer,
                                      int local_error, void **value_out,
                                      bb_transfer_metrics_t *metrics_out);

/* Collective.  begin, then contract->batches compute batches with one
 * progress poll after each successful batch, then finish. */
bb_status_t bb_transfer_phase_run(bb_transfer_phase_t *phase,
                                  const bb_transfer_provider_t *provider,
                                  const bb_transfer_consumer_t *consumer,
                                  const bb_transfer_compute_t *compute,
                                  const bb_transfer_contract_t *contract,
                                  void **value_out,
                                  bb_transfer_metrics_t *metrics_out);

/* Local accessors.  tracked_live: counted bytes held now (232 + owned
 * payload while a ticket is live, 0 between tickets); inflight: requests
 * live now. */
int64_t bb_transfer_phase_sequence(const bb_transfer_phase_t *phase);
int64_t bb_transfer_phase_tracked_live(const bb_transfer_phase_t *phase);
int bb_transfer_phase_inflight(const bb_transfer_phase_t *phase);
int bb_transfer_phase_poisoned(const bb_transfer_phase_t *phase);
int bb_transfer_phase_active(const bb_transfer_phase_t *phase);
/* Tickets begun on this phase, and their outcomes. */
typedef struct bb_transfer_phase_stats {
    int64_t begun, admitted, completed, refused;
    bb_transfer_metrics_t first;   /* the first ticket (cold call) */
    bb_transfer_metrics_t latest;  /* the latest finished or refused one */
} bb_transfer_phase_stats_t;
void bb_transfer_phase_stats(const bb_transfer_phase_t *phase,
                             bb_transfer_phase_stats_t *stats_out);
/* Local.  Phases (this process) that hold a posted ticket: the module-level
 * registry that keeps them reachable until they retire.  Poisoned phases
 * never retire. */
size_t bb_transfer_live_count(void);

/* Demonstration and test hooks, local, on this rank only.
 * set_sequence: present another sequence next (a divergence).
 * set_post_delay: sleep between admission and posting.
 * set_corrupt_byte: on the destination, flip one bit of payload byte
 *   offset (if < nbytes) after completion, before consumption, on every
 *   later ticket; -1 turns it off.
 * set_receipt_fault: the destination sends a wrong receipt on every later
 *   ticket: 1 a wrong generation (sequence), 2 a wrong status code;
 *   0 turns it off. */
void bb_transfer_phase_set_sequence(bb_transfer_phase_t *phase,
                                    int64_t sequence);
void bb_transfer_phase_set_post_delay(bb_transfer_phase_t *phase,
                                      double seconds);
void bb_transfer_phase_set_corrupt_byte(bb_transfer_phase_t *phase,
                                        int64_t offset);
void bb_transfer_phase_set_receipt_fault(bb_transfer_phase_t *phase, int kind);

/* Static name of a role ("source", "destination", "same-rank", "none") and
 * of a local cause ("provider", ...). */
const char *bb_transfer_role_name(bb_transfer_role_t role);
const char *bb_transfer_cause_name(bb_transfer_local_t cause);

/* ------------------------------------------------------------------------ */
/* Redistribution (redist.c)                                                */
/* ------------------------------------------------------------------------ */
/* (declared with issue 5)
 *
 * The MDI model of DESIGN 2.3: a driver code on link ranks [0, Pd) and an
 * engine code on [Pd, P), each with its own intra-communicator; data laid
 * out by maps; commands '>' (driver to engine) and '<' (engine to driver).
 * Element sizes are 8, 16 or 24 bytes (1..3 float64 components); N and
 * every rank's count are at most INT32_MAX. */

/* The standardized distribution: rank r of ranks owns N/ranks + (r < N%ranks)
 * elements from r*(N/ranks) + min(r, N%ranks).  Local. */
void bb_std_block(int64_t n, int rank, int ranks, int64_t *first_out,
                  int64_t *count_out);
/* Local.  The rank owning global index g (0 <= g < n) in it. */
int bb_std_owner(int64_t n, int ranks, int64_t g);

/* A map: one rank's global indices in its local storage order, for an
 * array of N elements, with an epoch (>= 0) that increases when it changes. */
typedef struct bb_map bb_map_t;

/* Local.  Copies count indices (which may be invalid: validation is
 * collective).  BB_ERR_ARG for negative or > INT32_MAX n or count, negative
 * epoch.  Caller owns *map_out (bb_map_free). */
bb_status_t bb_map_create(int64_t n, const int64_t *indices, int64_t count,
                          int64_t epoch, bb_map_t **map_out);
void bb_map_free(bb_map_t *map);
int64_t bb_map_elements(const bb_map_t *map);  /* N */
int64_t bb_map_count(const bb_map_t *map);     /* this rank's elements */
int64_t bb_map_epoch(const bb_map_t *map);
const int64_t *bb_map_indices(const bb_map_t *map);  /* borrowed */

/* Why a set of maps was refused; identical on every rank. */
typedef struct bb_map_fault {
    int64_t out_of_range;  /* indices outside [0, N), all ranks */
    int64_t duplicates;    /* extra copies of an index */
    int64_t gaps;          /* indices in [0, N) that no rank holds */
    int n_mismatch;        /* ranks disagree on N */
    int epoch_mismatch;    /* ranks disagree on the epoch */
    int missing;           /* some rank passed no map (NULL) */
    int resources;         /* some rank could not allocate or count overflow */
} bb_map_fault_t;

/* Collective over comm.  BB_OK iff the maps of all ranks partition [0, N)
 * with one N and one epoch; otherwise BB_REFUSED on every rank with the
 * same *fault_out.  map may be NULL (refused as missing, no hang).
 * BB_ERR_MPI on an MPI error.  O(count + N/P) memory per rank. */
bb_status_t bb_map_validate(MPI_Comm comm, const bb_map_t *map,
                            bb_map_fault_t *fault_out);

/* Layout generators, deterministic from (N, ranks, seed). */
typedef enum bb_layout_kind {
    BB_LAYOUT_STD = 0,          /* "std": the standardized distribution */
    BB_LAYOUT_STD_CEIL,         /* "std-ceil": blocks of ceil(N/P) */
    BB_LAYOUT_BLOCK_IRREGULAR,  /* "block-irregular[:SEED]": blocks of
                                   weights 1..8 drawn from SEED (default 1) */
    BB_LAYOUT_BLOCK_REVERSE,    /* "block-reverse": rank r holds the std block
                                   of rank P-1-r */
    BB_LAYOUT_CYCLIC,           /* "cyclic": g % P */
    BB_LAYOUT_BLOCK_CYCLIC,     /* "block-cyclic:B": blocks of B, round robin */
    BB_LAYOUT_SPATIAL,          /* "spatial[:PX,PY,PZ]": atoms on an L*L*nz
                                   lattice (x fastest), owned by subdomain;
                                   dims from P when not given */
    BB_LAYOUT_RANDOM,           /* "random[:SEED]": a seeded permutation of
                                   [0, N) cut into std blocks */
    BB_LAYOUT_KINDS
} bb_layout_kind_t;

typedef struct bb_layout {
    bb_layout_kind_t kind;
    int64_t block;   /* block-cyclic */
    int dims[3];     /* spatial; 0: chosen from the rank count */
    uint64_t seed;   /* block-irregular, random */
} bb_layout_t;

/* Local.  Parse a layout name as above; BB_ERR_PARSE with err saying why. */
bb_status_t bb_layout_parse(const char *text, bb_layout_t *layout_out,
                            char *err, size_t errlen);
/* Local.  The canonical text of a layout ("random:1"). */
void bb_layout_format(const bb_layout_t *layout, char *buf, size_t len);
/* Local.  The indices rank of ranks holds.  BB_ERR_ARG for spatial dims
 * whose product is not ranks.  Caller owns *indices_out (bb_free). */
bb_status_t bb_layout_indices(const bb_layout_t *layout, int64_t n, int rank,
                              int ranks, int64_t **indices_out,
                              int64_t *count_out);
/* Local.  The same as a map with the given epoch (caller owns it). */
bb_status_t bb_layout_map(const bb_layout_t *layout, int64_t n, int rank,
                          int ranks, int64_t epoch, bb_map_t **map_out);

/* The link between the two codes. */
typedef enum bb_redist_mode {
    BB_REDIST_MODE_MDI = 0,  /* driver [0, Pd), engine [Pd, P): two codes */
    BB_REDIST_MODE_INTRA     /* one code of all P ranks; "driver" and
                                "engine" are two layouts of its own */
} bb_redist_mode_t;

typedef struct bb_redist_link bb_redist_link_t;

/* Collective over the world.  Duplicates the world once (the inter-code
 * channel) and splits it into the codes' intra-communicators, all with
 * MPI_ERRORS_RETURN.  BB_ERR_ARG (before any MPI call, alike on every rank)
 * for MDI with driver_ranks outside [1, P-1].  Caller owns *link_out
 * (bb_redist_link_destroy, collective; BB_ERR_STATE while plans live). */
bb_status_t bb_redist_link_create(bb_world_t *world, bb_redist_mode_t mode,
                                  int driver_ranks, bb_redist_link_t **link_out);
bb_status_t bb_redist_link_destroy(bb_redist_link_t *link);
MPI_Comm bb_redist_link_comm(const bb_redist_link_t *link);       /* borrowed */
MPI_Comm bb_redist_link_code_comm(const bb_redist_link_t *link);  /* borrowed */
int bb_redist_link_is_driver(const bb_redist_link_t *link);
int bb_redist_link_is_engine(const bb_redist_link_t *link);
/* This rank's index and the size of the driver (engine = 0) or engine code. */
int bb_redist_link_code_rank(const bb_redist_link_t *link, int engine);
int bb_redist_link_code_size(const bb_redist_link_t *link, int engine);

/* Methods, all moving the same data. */
typedef enum bb_redist_method {
    BB_REDIST_ROOT = 0,      /* "root": reduce to the root, one root-to-root
                                message, broadcast (MDI today; O(N) per rank) */
    BB_REDIST_ROOT_GATHERV,  /* "root-gatherv": gatherv, message, scatterv */
    BB_REDIST_TWO_STEP,      /* "two-step": to the receiving code's std
                                distribution, then a second MPI_Alltoallw
                                inside the receiving code */
    BB_REDIST_DIRECT,        /* "direct": one MPI_Alltoallw, both maps known */
    BB_REDIST_PACK,          /* "pack": pack, MPI_Alltoallv, unpack */
    BB_REDIST_SPARSE,        /* "sparse": Isend/Irecv to nonzero peers, the
                                local part copied without MPI */
    BB_REDIST_METHODS
} bb_redist_method_t;

const char *bb_redist_method_name(bb_redist_method_t method);  /* static */
bb_status_t bb_redist_method_parse(const char *text,
                                   bb_redist_method_t *method_out);

/* Commands (the first character of MDI command names). */
enum { BB_REDIST_SEND = '>', BB_REDIST_RECEIVE = '<' };

/* The recv_dist flag that prefaces every message. */
enum {
    BB_RECV_DIST_ROOT = 0,  /* not distributed: root methods */
    BB_RECV_DIST_DATA = 1,  /* distributed, the receiver holds what it needs */
    BB_RECV_DIST_MAP = 2    /* distributed, the sender's map comes first */
};

/* Admission array: int64[9], MIN then MAX over the link. */
enum {
    BB_REDIST_SEQUENCE = 0, BB_REDIST_COMMAND, BB_REDIST_N,
    BB_REDIST_ELEMENT_BYTES, BB_REDIST_DRIVER_EPOCH, BB_REDIST_ENGINE_EPOCH,
    BB_REDIST_CAP, BB_REDIST_RECV_DIST, BB_REDIST_REFUSAL, BB_REDIST_FIELDS
};

typedef struct bb_redist_plan bb_redist_plan_t;

/* Setup cost, this rank (seconds), and why maps were refused. */
typedef struct bb_redist_setup {
    double validate_s;      /* collective map validation */
    double map_transfer_s;  /* epochs and the map rendezvous across codes */
    double plan_build_s;    /* code-internal parts, datatypes, buffers */
    double total_s;         /* inclusive of the above */
    bb_map_fault_t driver_fault, engine_fault;
    int n_mismatch;         /* the codes disagree on N */
    int stale_epoch;        /* set_engine_map: the epoch did not increase */
} bb_redist_setup_t;

/* Collective over the link.  Validates the maps (driver ranks pass
 * driver_map, engine ranks engine_map; in intra mode every rank passes both;
 * the other argument is ignored) and builds the plan for method, command and
 * element_bytes.  Invalid maps: BB_REFUSED on every rank, the faults in
 * *setup_out.  BB_ERR_ARG alike on every rank for a bad method, command or
 * element size, or a root method with N * components > INT_MAX.  The maps
 * are copied.  Caller owns *plan_out (bb_redist_plan_destroy). */
bb_status_t bb_redist_plan_create(bb_redist_link_t *link,
                                  bb_redist_method_t method, int command,
                                  int64_t element_bytes,
                                  const bb_map_t *driver_map,
                                  const bb_map_t *engine_map,
                                  bb_redist_plan_t **plan_out,
                                  bb_redist_setup_t *setup_out);

/* Collective over the engine code only (MDI_Set_Map on an engine: nothing
 * is sent to the driver).  Validates map (its epoch must exceed the current
 * one, else BB_REFUSED with stale_epoch) and repairs the engine-internal
 * parts.  Until bb_redist_plan_update_maps, a '>' of direct, pack or sparse
 * is received in the layout the driver knows and converted inside the engine
 * (two steps); a '<' of direct, pack, sparse or two-step carries the map
 * (recv_dist = MAP) and rebuilds the plan in that message. */
bb_status_t bb_redist_plan_set_engine_map(bb_redist_plan_t *plan,
                                          const bb_map_t *map,
                                          bb_redist_setup_t *setup_out);
/* Collective over the link (MDI_Update_Maps): the driver learns the current
 * engine map; '>' goes in one step again. */
bb_status_t bb_redist_plan_update_maps(bb_redist_plan_t *plan,
                                       bb_redist_setup_t *setup_out);

/* One message's contract: every rank presents it in the admission. */
typedef struct bb_redist_contract {
    int command;            /* BB_REDIST_SEND or BB_REDIST_RECEIVE */
    int64_t n;              /* elements */
    int64_t element_bytes;
    int64_t cap;            /* largest N this rank accepts */
} bb_redist_contract_t;

typedef enum bb_redist_local {
    BB_REDIST_LOCAL_NONE = 0,
    BB_REDIST_LOCAL_COMMAND,        /* not the plan's command */
    BB_REDIST_LOCAL_ELEMENTS,       /* not the plan's N */
    BB_REDIST_LOCAL_ELEMENT_BYTES,  /* not the plan's element size */
    BB_REDIST_LOCAL_OVER_CAP,       /* N > cap, or a negative cap */
    BB_REDIST_LOCAL_BUFFER          /* NULL buffer for a nonzero count */
} bb_redist_local_t;

/* One message, this rank. */
typedef struct bb_redist_metrics {
    bb_status_t status;
    int64_t sequence;       /* the sequence this message presented */
    int steps;              /* MPI exchanges in sequence: 1 or 2 */
    int64_t recv_dist;      /* the agreed flag */
    int map_sent;           /* the map came with this '<' reply */
    double admission_s;     /* recv_dist flag and the MIN/MAX agreement */
    double map_s;           /* plan rebuild when the map came (setup) */
    double payload_s;       /* the data movement */
    double total_s;         /* inclusive of all of the above */
    bb_redist_local_t local_cause;
    bb_refusal_t refusal;   /* stage NONE unless refused */
} bb_redist_metrics_t;

/* Collective over the link.  Sends the recv_dist flag (sending code's root
 * to receiving code's root, broadcast in the receiving code), admits the
 * message with bb_agree_minmax on the nine fields (command, N, element
 * size, driver epoch and cap must agree, the refusal field be 0 everywhere;
 * the engine epoch may differ: that selects the fallback), then moves the
 * data.  send: the sender's elements in its map order (count * element_bytes
 * bytes, senders only); recv: the receiver's (receivers only).  BB_REFUSED
 * on every rank with the same refusal (preflight: the highest refusing
 * rank; contract: fields differ); nothing is moved and the sequence is
 * consumed.  BB_ERR_MPI poisons the plan (retained; abort the job).
 * metrics_out may be NULL; it is filled on every return. */
bb_status_t bb_redist_plan_execute(bb_redist_plan_t *plan,
                                   const bb_redist_contract_t *contract,
                                   const void *send, void *recv,
                                   bb_redist_metrics_t *metrics_out);

/* Local accessors.  The maps are the plan's copies (borrowed), NULL where
 * this rank does not send or receive. */
int64_t bb_redist_plan_sequence(const bb_redist_plan_t *plan);
int64_t bb_redist_plan_engine_epoch_known(const bb_redist_plan_t *plan);
int bb_redist_plan_poisoned(const bb_redist_plan_t *plan);
int bb_redist_plan_is_sender(const bb_redist_plan_t *plan);
int bb_redist_plan_is_receiver(const bb_redist_plan_t *plan);
const bb_map_t *bb_redist_plan_send_map(const bb_redist_plan_t *plan);
const bb_map_t *bb_redist_plan_recv_map(const bb_redist_plan_t *plan);

/* Local.  Frees an idle plan; BB_ERR_POISONED keeps a poisoned one. */
bb_status_t bb_redist_plan_destroy(bb_redist_plan_t *plan);

/* What one message of a plan moves, over all ranks (bytes as the method's
 * MPI calls name them, remote peers only unless "self"). */
typedef struct bb_redist_traffic {
    int64_t payload_bytes;   /* N * element_bytes */
    int64_t moved_bytes;     /* sum over ranks of bytes sent to other ranks,
                                all steps; for direct: bytes changing owner */
    int64_t max_in_bytes, max_out_bytes;  /* largest of any rank */
    int64_t max_self_bytes;  /* largest local copy of any rank */
    double mean_peers;       /* remote peers per rank, sent to or received from */
    int64_t max_peers;
    double mean_run_elements; /* elements per contiguous run of the slot
                                 datatypes; < 0 where there are none (root) */
    int steps;
} bb_redist_traffic_t;

/* Collective over the link. */
bb_status_t bb_redist_plan_traffic(bb_redist_plan_t *plan,
                                   bb_redist_traffic_t *traffic_out);

/* Checking (outside any timed region).  Element g, component c carries
 * (double)((g*3 + c)*4 + (k & 3)) at repetition k. */
#define BB_REDIST_SENTINEL (-1.0)
/* Local.  buf: count(map) * element_bytes bytes. */
void bb_redist_fill(const bb_map_t *map, int64_t element_bytes, int64_t k,
                    double *buf);
void bb_redist_fill_sentinel(int64_t count, int64_t element_bytes, double *buf);

typedef struct bb_redist_check {
    int64_t bad_slots;        /* all ranks */
    int64_t slots;            /* checked values, all ranks */
    int checksum_ok;          /* hash sum and slot count match [0, N) exactly */
    int64_t first_bad_index;  /* lowest global index of a bad slot, or -1 */
} bb_redist_check_t;

/* Collective over comm (normally the link).  Ranks that received pass the
 * map they received into (others NULL).  Checks every slot against the
 * value function and a global checksum over [0, N) that catches duplicates
 * and gaps.  BB_OK or BB_ERR_VALIDATION on every rank; BB_ERR_MPI. */
bb_status_t bb_redist_check(MPI_Comm comm, const bb_map_t *map, int64_t n,
                            int64_t element_bytes, int64_t k, const double *buf,
                            bb_redist_check_t *check_out);

/* The machine's lower bound, measured in the run. */
typedef struct bb_redist_bound {
    int p2p_ranks[2];        /* link ranks of the ping-pong */
    int64_t p2p_bytes, memcpy_bytes;
    double p2p_s;            /* one-way time of p2p_bytes: best RTT / 2 */
    double memcpy_s;         /* best memcpy of memcpy_bytes on link rank 0 */
    double p2p_bandwidth, memcpy_bandwidth;  /* byte/s; 0 if not measured */
    double bound_s;          /* max(p2p_s, memcpy_s) */
} bb_redist_bound_t;

/* Collective over the link.  remote_bytes: the largest bytes into or out of
 * any rank; local_bytes: the largest local copy.  reps >= 1 timed rounds
 * after one warm-up. */
bb_status_t bb_redist_link_bound(bb_redist_link_t *link, int64_t remote_bytes,
                                 int64_t local_bytes, int reps,
                                 bb_redist_bound_t *bound_out);

/* ------------------------------------------------------------------------ */
/* Statistics (stats.c)                                                     */
/* ------------------------------------------------------------------------ */

typedef struct bb_summary {
    size_t n;
    double median;   /* mean of the two middle values for even n */
    double min, max; /* the range [min, max] of all samples */
} bb_summary_t;

/* Local.  Summarize n >= 1 finite samples (the input is not modified).
 * BB_ERR_ARG for n == 0 or a non-finite sample. */
bb_status_t bb_stats_summarize(const double *samples, size_t n,
                               bb_summary_t *summary_out);

/* Local.  The median of n samples (bb_stats_summarize), or NaN when they
 * cannot be summarized (n == 0, a non-finite sample, no memory). */
double bb_stats_median(const double *samples, size_t n);

/* Local.  The range of a summary for tables: "[min, max]", each times scale
 * (1e6 for microseconds) with decimals digits after the point. */
void bb_stats_format_range(const bb_summary_t *summary, double scale, int decimals,
                           char *buf, size_t len);

/* Local.  Confidence (0..1) that the median lies within [min, max] of n
 * independent samples: 1 - 2 * 0.5^n (0.75 for n = 3). */
double bb_stats_range_confidence(size_t n);

/* Collective.  Element-wise MAX of n doubles across comm (the rank maximum
 * of a block's per-call means).  Returns the MPI error code. */
int bb_stats_reduce_max(MPI_Comm comm, const double *local, int n,
                        double *max_out);

/* ------------------------------------------------------------------------ */
/* Option parsing (cli.c): sizes, lists, ranges                             */
/* ------------------------------------------------------------------------ */

/* Sizes: a nonnegative integer with an optional binary suffix, K/Ki = 2^10,
 * M/Mi = 2^20, G/Gi = 2^30 (case-insensitive), or an exact decimal exponent
 * such as 1e6.  Lists: comma-separated items, each a size or a range
 * LO:HI[:STEP] where STEP is xF (multiply, default x2) or +D (add); a range
 * includes LO and every step <= HI.  A multiplying range from 0 goes 0, 1,
 * F, F^2, ...  A value must be whole (1.5K = 1536; 1.5 and 1e-3 are
 * refused).  At most 4096 values per list. */
typedef struct bb_size_list {
    int64_t *values;  /* caller owns (bb_size_list_clear) */
    size_t n;
} bb_size_list_t;

/* Local.  On failure, err (errlen bytes) says why; BB_ERR_PARSE. */
bb_status_t bb_cli_parse_size(const char *text, int64_t min, int64_t max,
                              int64_t *value_out, char *err, size_t errlen);
bb_status_t bb_cli_parse_size_list(const char *text, int64_t min, int64_t max,
                                   bb_size_list_t *list_out, char *err,
                                   size_t errlen);
void bb_size_list_clear(bb_size_list_t *list);

/* Local.  A finite double in [min, max] (strtod, whole string). */
bb_status_t bb_cli_parse_double(const char *text, double min, double max,
                                double *value_out, char *err, size_t errlen);

/* Local.  "R:REST": a rank in [0, ranks) and a pointer into text after ':'
 * (REST must not be empty).  A bare "R" is accepted with *rest_out "". */
bb_status_t bb_cli_parse_rank_prefix(const char *text, int ranks, int *rank_out,
                                     const char **rest_out, char *err,
                                     size_t errlen);

/* Local.  "R:SECONDS": a rank in [0, ranks) (bb_cli_parse_rank_prefix) and
 * a finite number of seconds in [0, max_s] (bb_cli_parse_double).  Both
 * outputs are written only on BB_OK; err says why not. */
bb_status_t bb_cli_parse_rank_seconds(const char *text, int ranks, double max_s,
                                      int *rank_out, double *seconds_out,
                                      char *err, size_t errlen);

/* Human size for tables: "64K", "1M", "8". Writes at most len bytes. */
void bb_cli_format_size(int64_t value, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Records (record.c): JSON measurement records, schema bbench.record/1      */
/* ------------------------------------------------------------------------ */

#define BB_RECORD_SCHEMA "bbench.record/1"
#define BB_RECORD_VOCABULARY "mpp-01"

typedef struct bb_record bb_record_t;

/* Local.  A new record with schema, vocabulary, benchmark, created_utc,
 * command (argv copied) and source provenance.  Caller owns *record_out. */
bb_status_t bb_record_create(const char *benchmark, int argc,
                             char *const argv[], bb_record_t **record_out);
void bb_record_free(bb_record_t *record);

/* The record's document (borrowed; add members to it with cJSON). */
cJSON *bb_record_json(bb_record_t *record);

/* Set a top-level member ("runtime", "topology", ...); takes ownership of
 * item, replacing any member of that name. */
bb_status_t bb_record_set(bb_record_t *record, const char *name, cJSON *item);

/* Append one point.  Takes ownership of parameters, quantities and
 * first_call (either may be NULL: written as {} and null).  status is "ok"
 * or "refused"; refusal NULL (written as null) or the agreed refusal. */
bb_status_t bb_record_add_point(bb_record_t *record, cJSON *parameters,
                                const char *status, const bb_refusal_t *refusal,
                                cJSON *first_call, cJSON *quantities);

/* Quantities: { value, unit, scope, reason }.  Units: "s", "byte",
 * "count", "ratio".  Scopes such as "call/max-rank", "call/rank". */
/* A timing: value = median, samples (all n), median, range [min, max],
 * range_confidence; includes is a NULL-terminated list of child names
 * (or NULL).  NULL on allocation failure or n == 0. */
cJSON *bb_quantity_timing(const double *samples, size_t n, const char *scope,
                          const char *const *includes);
/* A measured exact value. */
cJSON *bb_quantity_value(double value, const char *unit, const char *scope);
/* Not measured: value null and the reason. */
cJSON *bb_quantity_null(const char *unit, const char *scope, const char *reason);
/* Add quantity q (ownership taken) under name to the object quantities. */
void bb_quantities_add(cJSON *quantities, const char *name, cJSON *q);
/* Add the two quantities no MPI program can observe, as null with their
 * reasons: network.bytes (call/rank; payload bytes are not wire bytes) and
 * memory.mpi_internal (run/rank). */
void bb_quantities_add_unobservable(cJSON *quantities);

/* Local.  Atomic write: a temporary file in the same directory, fsync,
 * rename.  On failure no file at path is created or changed. */
bb_status_t bb_record_write(const bb_record_t *record, const char *path,
                            char *err, size_t errlen);

/* Local.  Can a record be written at path?  Creates and removes a
 * temporary file in its directory; err says why not. */
bb_status_t bb_record_check_path(const char *path, char *err, size_t errlen);

/* Local.  Parse text (len bytes, need not be NUL-terminated) as a record of
 * schema bbench.record/1 and check its shape (schema, benchmark, points
 * with parameters and quantities).  Caller owns *doc_out (cJSON_Delete).
 * On failure err names the place ("points[3].quantities: not an object"). */
bb_status_t bb_record_parse(const char *text, size_t len, cJSON **doc_out,
                            char *err, size_t errlen);
/* Local.  bb_record_parse on the contents of a file; err names the file. */
bb_status_t bb_record_read(const char *path, cJSON **doc_out, char *err,
                           size_t errlen);

/* ------------------------------------------------------------------------ */
/* Provenance and topology (topo.c)                                         */
/* ------------------------------------------------------------------------ */

typedef struct bb_topology_info {
    int ranks;
    int hosts;
    int max_ranks_per_host;
    int cores_per_host;      /* hwloc cores of rank 0's host, -1 unknown */
    int pus_per_host;        /* -1 unknown */
    int threads_per_rank;    /* OMP_NUM_THREADS if set, else 1 */
    int oversubscribed;      /* some machine runs more ranks than cores */
    /* Hosts that share one kernel (same boot id: containers, network
     * namespaces) share its cores: oversubscription is judged per machine. */
    int machines;
    int max_ranks_per_machine;
} bb_topology_info_t;

/* Collective over the world.  Builds the "runtime" and "topology" members
 * (MPI standard and library, thread levels, timer, environment; hwloc
 * machine summary and per-rank host, cpuset and binding).  On rank 0,
 * *runtime_out and *topology_out are new cJSON objects (caller owns); on
 * other ranks they are set to NULL.  info_out is filled on every rank. */
bb_status_t bb_provenance_capture(bb_world_t *world, int thread_requested,
                                  cJSON **runtime_out, cJSON **topology_out,
                                  bb_topology_info_t *info_out);

/* Local.  RSS high-water mark of this process in bytes (getrusage), or -1. */
int64_t bb_rss_peak_bytes(void);
/* Local.  Current RSS in bytes (/proc/self/statm), or -1. */
int64_t bb_rss_current_bytes(void);

/* ------------------------------------------------------------------------ */
/* Comparison (compare.c): record sets, regressions, contract changes       */
/* ------------------------------------------------------------------------ */
/* (declared with issue 6)  Local, MPI-free: usable without MPI_Init. */

/* The records of one file, or of every *.json file in one directory (not
 * recursive, in name order), each read with bb_record_read. */
typedef struct bb_record_set bb_record_set_t;

/* Local.  Loads path and checks what comparison needs beyond the record
 * shape (topology.ranks, quantity units, timing medians and ranges).
 * BB_ERR_IO (missing path, empty directory) or BB_ERR_PARSE; err names the
 * file and the place in it.  Caller owns *set_out (bb_record_set_free). */
bb_status_t bb_record_set_load(const char *path, bb_record_set_t **set_out,
                               char *err, size_t errlen);
void bb_record_set_free(bb_record_set_t *set);
size_t bb_record_set_records(const bb_record_set_t *set);
size_t bb_record_set_points(const bb_record_set_t *set);

/* The rule, applied to every timing (unit "s" with a median and a range)
 * of every matched point, with t = tolerance:
 *   regression:  cand.median > base.median * (1 + t) and cand.min > base.max
 *   improvement: base.median > cand.median * (1 + t) and base.min > cand.max
 * Deterministic quantities (unit byte or count without samples, except rss,
 * or marked "deterministic": true) and the point status must be equal;
 * a difference is a contract change. */
#define BB_COMPARE_DEFAULT_TOLERANCE 0.10

typedef struct bb_compare_summary {
    size_t matched;            /* point pairs */
    size_t unmatched_base;     /* points only in the base */
    size_t unmatched_candidate;
    size_t regressions;        /* timings regressed */
    size_t improvements;       /* timings improved */
    size_t contract_changes;   /* deterministic or status differences */
    size_t warnings;           /* distinct provenance differences */
} bb_compare_summary_t;

typedef struct bb_compare_options {
    double tolerance;                      /* t of the rule, >= 0 */
    const char *const *ignore_parameters;  /* names left out of matching
                                              (e.g. a budget-chosen "reps") */
    size_t n_ignore;
} bb_compare_options_t;

/* Local.  Matches points by benchmark, parameters (member order ignored)
 * and topology.ranks, and judges them.  *report_out is a new cJSON object
 * (schema "bbench.compare/1"; caller owns, cJSON_Delete) holding every pair,
 * timing, contract change, unmatched point and warning.  BB_ERR_PARSE when a
 * point appears twice in one set (err names both places). */
bb_status_t bb_compare_sets(const bb_record_set_t *base,
                            const bb_record_set_t *cand,
                            const bb_compare_options_t *options,
                            cJSON **report_out,
                            bb_compare_summary_t *summary_out, char *err,
                            size_t errlen);

/* Exit code for a summary: 2 nothing matched, 1 a contract change, or a
 * regression unless report_only, else 0. */
int bb_compare_exit_code(const bb_compare_summary_t *summary, int report_only);

typedef enum bb_compare_format {
    BB_COMPARE_TABLE = 0,  /* aligned text */
    BB_COMPARE_MARKDOWN,   /* GitHub tables */
    BB_COMPARE_JSON        /* the report itself */
} bb_compare_format_t;

/* Local.  The report as text; all_timings 0 lists only "elapsed" and the
 * timings that moved.  Caller owns the string (bb_free); NULL on
 * allocation failure. */
char *bb_compare_render(const cJSON *report, bb_compare_format_t format,
                        int all_timings);

/* Local.  Tab-separated values for plotting: a header line, then one line
 * per point: file, point index, benchmark, ranks, status, every parameter
 * seen in the set (first-seen order; "-" where a point lacks it), and for
 * each named quantity NAME, NAME.min, NAME.max (median and range of a
 * timing, the value and NaN NaN otherwise, NaN when absent or null).
 * Caller owns *tsv_out (bb_free). */
bb_status_t bb_record_set_extract(const bb_record_set_t *set,
                                  const char *const *quantities, size_t nq,
                                  char **tsv_out, char *err, size_t errlen);

/* ------------------------------------------------------------------------ */
/* Overlap (overlap.c): figures of merit and the compute kernel             */
/* ------------------------------------------------------------------------ */
/* (declared with issue 4) */

/* The formulas, as stored in records and printed by --help.  All inputs are
 * seconds; every figure is a ratio (1 = 100 %). */
#define BB_OVERLAP_FORMULA \
    "max(0, min(1, (t_comm + t_compute - t_polled) / min(t_comm, t_compute)))"
#define BB_OVERLAP_OSU_FORMULA \
    "max(0, 1 - (t_total - t_compute_in) / t_pure)"
#define BB_OVERLAP_IMB_FORMULA \
    "max(0, min(1, (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu)))"
#define BB_OVERLAP_IMB_CODE_FORMULA \
    "max(0, min(1, (t_pure + t_cpu - t_ovrl) / max(t_pure, t_cpu)))"
#define BB_OVERLAP_SPEEDUP_FORMULA "t_immediate / t_polled"
#define BB_OVERLAP_SLOWDOWN_FORMULA "t_compute_in_polled / t_compute"

/* A derived figure: a value, or undefined with a static reason. */
typedef struct bb_overlap_figure {
    int defined;        /* 1: value holds the figure; 0: see reason */
    double value;       /* 0 when undefined (never report it as such) */
    double raw;         /* the value before clamping (0 when undefined) */
    int clamped;        /* 1: raw lay outside the figure's bounds */
    const char *reason; /* static; NULL when defined */
} bb_overlap_figure_t;

/* Local, pure.  Every function returns BB_ERR_ARG (figure untouched) for a
 * NULL output, a negative or non-finite time, or an impossible count; a
 * zero denominator is not an error but an undefined figure. */

/* bbench's headline: BB_OVERLAP_FORMULA with t_overlapped = t_polled.
 * 1: the shorter of communication and compute was hidden entirely; 0: the
 * overlapped run took as long as both run one after the other (or longer).
 * Undefined when min(t_comm, t_compute) == 0. */
bb_status_t bb_overlap_ratio(double t_comm, double t_compute,
                             double t_overlapped, bb_overlap_figure_t *out);

/* OSU-style (osu_iallreduce): 1 - (t_total - t_compute_in) / t_pure,
 * bounded below by 0 only, as OSU does (it can exceed 1 when t_total <
 * t_compute_in).  Undefined when t_pure == 0. */
bb_status_t bb_overlap_osu(double t_total, double t_compute_in, double t_pure,
                           bb_overlap_figure_t *out);

/* IMB-NBC style.  BB_OVERLAP_IMB_DOC is the formula of the IMB user guide
 * (denominator min(t_pure, t_cpu)); BB_OVERLAP_IMB_CODE the one IMB's
 * source computes for IMB-NBC (denominator max(t_pure, t_cpu)).  Clamped to
 * [0, 1].  Undefined when the denominator is 0. */
typedef enum bb_overlap_imb_variant {
    BB_OVERLAP_IMB_DOC = 0,
    BB_OVERLAP_IMB_CODE = 1
} bb_overlap_imb_variant_t;
bb_status_t bb_overlap_imb(double t_pure, double t_cpu, double t_ovrl,
                           bb_overlap_imb_variant_t variant,
                           bb_overlap_figure_t *out);

/* t_immediate / t_polled (> 1: overlapping paid off).  Undefined when
 * t_polled == 0. */
bb_status_t bb_overlap_speedup(double t_immediate, double t_polled,
                               bb_overlap_figure_t *out);

/* Compute slowdown under communication: compute time measured inside the
 * polled run over compute alone.  Undefined when t_compute == 0. */
bb_status_t bb_overlap_slowdown(double t_compute_inside, double t_compute,
                                bb_overlap_figure_t *out);

/* Fraction of samples in which the payload completed during the batches:
 * completed / samples, 0 <= completed <= samples.  Undefined for 0 samples. */
bb_status_t bb_overlap_fraction(int64_t completed, int64_t samples,
                                bb_overlap_figure_t *out);

/* The compute kernel every overlap measurement uses: an MPI-free,
 * cache-resident floating-point loop, independent of any payload.  Its rate
 * is calibrated once per process. */
typedef struct bb_compute {
    double iters_per_s;      /* calibrated rate (fastest of the trials) */
    double slowest_iters_per_s; /* slowest trial: the calibration's spread */
    int trials;
    double trial_s;          /* minimum duration of one trial */
    double calibration_s;    /* wall time the calibration took */
} bb_compute_t;

/* Local, MPI-free.  Runs trials >= 1 trials of at least trial_s > 0 seconds
 * each and keeps the fastest rate. */
bb_status_t bb_compute_calibrate(int trials, double trial_s,
                                 bb_compute_t *compute_out);

/* Local.  Iterations that take about seconds (>= 0) at the calibrated rate;
 * 0 for 0 seconds. */
int64_t bb_compute_iterations(const bb_compute_t *compute, double seconds);

/* Local, MPI-free.  Runs the kernel for iterations and returns a value that
 * depends on every iteration (accumulate it somewhere the compiler cannot
 * discard, so the work is not optimized away). */
double bb_compute_run(int64_t iterations);

/* ------------------------------------------------------------------------ */
/* Benchmark harness (harness.c): what every executable shares              */
/* ------------------------------------------------------------------------ */

/* One executable's run: MPI, the world, the record, the output path.
 * Only rank 0 prints; the harness prints nothing on other ranks. */
typedef struct bb_bench bb_bench_t;

/* Initializes MPI (MPI_Init_thread, MPI_THREAD_FUNNELED requested), binds
 * MPI_COMM_WORLD and creates the record for benchmark ("sum", ...).  name is
 * the program name used in messages ("bbench-sum").  Failure here is fatal:
 * message on stderr and exit 3. */
bb_bench_t *bb_bench_init(int *argc, char ***argv, const char *name,
                          const char *benchmark);

/* Finalizes MPI after draining the traffic that MPI_Finalize could wait on
 * forever across hosts (finalize.c; see README, "Shutdown across hosts").
 * Collective over MPI_COMM_WORLD, like MPI_Finalize; does nothing when MPI
 * is not initialized or already finalized.  Returns MPI_Finalize's code. */
int bb_finalize(void);

bb_world_t *bb_bench_world(bb_bench_t *bench);
int bb_bench_rank(const bb_bench_t *bench);
int bb_bench_size(const bb_bench_t *bench);
MPI_Comm bb_bench_comm(const bb_bench_t *bench);
bb_record_t *bb_bench_record(bb_bench_t *bench);
const bb_topology_info_t *bb_bench_topology(const bb_bench_t *bench);

/* Usage error: rank 0 prints "NAME: message" and "Try 'NAME --help'." on
 * stderr; every rank finalizes MPI and exits 2.  Call it on every rank
 * (each rank parses the same argv, so each finds the same error). */
void bb_bench_usage(bb_bench_t *bench, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Rank 0 prints text to stdout, every rank finalizes and exits 0 (--help,
 * --version). */
void bb_bench_exit_text(bb_bench_t *bench, const char *text)
    __attribute__((noreturn));

/* Fatal error (MPI error, poisoned phase): this rank prints the message on
 * stderr and calls MPI_Abort(MPI_COMM_WORLD, 3).  No record is written. */
void bb_bench_fatal(bb_bench_t *bench, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* The options every measuring executable shares, parsed the same way:
 *   -s, --samples N     samples per point, in [3, 100000]
 *   -r, --reps N        calls per sample, in [1, reps_max]; 0: from the budget
 *   --budget SECONDS    time per sample when --reps is not given, [1e-6, 3600]
 *   -w, --warmup N      calls after the first, before sampling, [0, 1000000]
 *   -o, --output FILE   the JSON record
 *   -h, --help / -V, --version */
typedef struct bb_bench_common {
    int64_t samples;
    int64_t reps;        /* 0: from budget_s */
    int64_t reps_max;    /* the largest --reps accepted */
    double budget_s;
    int64_t warmup;
    const char *output;  /* NULL: no record file */
} bb_bench_common_t;

/* Local.  The defaults: 3 samples, reps from a budget of 0.05 s, reps_max
 * INT32_MAX, warmup 2, no output.  A program changes what differs after. */
void bb_bench_common_defaults(bb_bench_common_t *common_out);

/* getopt_long pieces for the shared options: append BB_BENCH_COMMON_SHORTOPTS
 * to the program's short options (after its leading ':') and put
 * BB_BENCH_COMMON_LONGOPTS (needs <getopt.h>) before the terminating entry
 * of its struct option array.  Program-specific long-only codes must stay
 * below BB_BENCH_OPT_BUDGET. */
enum { BB_BENCH_OPT_BUDGET = 0x4000 };
#define BB_BENCH_COMMON_SHORTOPTS "s:r:w:o:hV"
#define BB_BENCH_COMMON_LONGOPTS                                  \
    {"samples", required_argument, NULL, 's'},                    \
    {"reps", required_argument, NULL, 'r'},                       \
    {"budget", required_argument, NULL, BB_BENCH_OPT_BUDGET},     \
    {"warmup", required_argument, NULL, 'w'},                     \
    {"output", required_argument, NULL, 'o'},                     \
    {"help", no_argument, NULL, 'h'},                             \
    {"version", no_argument, NULL, 'V'}

/* Handles opt, one getopt_long result (value its optarg, argv the vector
 * given to getopt_long): a shared option is stored in *common and 1 is
 * returned; getopt's ':' (missing value) and '?' (unknown option) are usage
 * errors (bb_bench_usage); --help prints usage_text and --version
 * "NAME (PACKAGE) VERSION" (bb_bench_exit_text).  Any other opt: 0, nothing
 * done.  A bad value is a usage error naming the option. */
int bb_bench_parse_common(bb_bench_t *bench, int opt, const char *value,
                          char **argv, const char *usage_text,
                          bb_bench_common_t *common);

/* After the getopt_long loop: an operand left in argv (at optind) is a
 * usage error ("unexpected argument"). */
void bb_bench_parse_end(bb_bench_t *bench, int argc, char **argv);

/* Collective.  Remember path (may be NULL: no record file) and have rank 0
 * check, before any measurement, that a record can be written there; every
 * rank learns the answer and a bad path is a usage error (exit 2). */
void bb_bench_set_output(bb_bench_t *bench, const char *path);

/* Collective.  Capture provenance and topology into the record and print
 * the header lines on rank 0 (ranks, hosts, cores, oversubscription). */
void bb_bench_capture(bb_bench_t *bench);

/* Collective.  The number of repetitions per sample that fits budget_s,
 * from the rank maximum of one call's time; identical on every rank,
 * clamped to [1, max_reps]. */
int64_t bb_bench_reps_for_budget(bb_bench_t *bench, double call_s,
                                 double budget_s, int64_t max_reps);

/* Rank 0 prints a progress line on stderr (long sweeps). */
void bb_bench_progress(bb_bench_t *bench, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Collective.  Writes the record (rank 0, atomically, if an output path was
 * set), frees everything, finalizes MPI and returns exit_code for main().
 * A write failure turns the exit code into 1 with a message. */
int bb_bench_finish(bb_bench_t *bench, int exit_code);

#ifdef __cplusplus
}
#endif
#endif /* BBENCH_H */
