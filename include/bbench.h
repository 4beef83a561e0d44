/*
 * bbench.h: the installed header of libbbench, the bounded MPI runtime
 * protocols: world binding, agreement, the bounded sum phase, the bounded
 * transfer phase (tickets) and redistribution between two data layouts
 * (maps, link, plans, methods).  The protocol code has no main(), performs
 * no I/O and holds no global state apart from two registries that keep
 * objects reachable (the fatal list of poisoned objects and the transfer
 * phases with a posted ticket).  Every call takes the object it acts on.
 *
 * Build with mpicc (this header includes <mpi.h>), or with the compiler
 * flags `pkg-config --cflags --libs bbench` gives when the MPI installation
 * has a pkg-config module.
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
#include "bbench/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Local monotonic wall clock in seconds (clock_gettime CLOCK_MONOTONIC);
 * no MPI call, so usable anywhere, including before MPI_Init. */
BB_EXPORT double bb_time_now(void);
/* Resolution of bb_time_now() in seconds (clock_getres). */
BB_EXPORT double bb_time_resolution(void);
/* Sleep for the given seconds without calling MPI: 0, negative and NaN
 * return at once; a huge value (up to +inf) sleeps that long (for ever),
 * signals included (interrupted sleeps resume). */
BB_EXPORT void bb_time_sleep(double seconds);

/* ------------------------------------------------------------------------ */
/* World binding                                                            */
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
BB_EXPORT bb_status_t bb_world_bind(MPI_Comm comm, bb_world_t **world_out);
BB_EXPORT void bb_world_release(bb_world_t *world);

BB_EXPORT MPI_Comm bb_world_comm(const bb_world_t *world);
BB_EXPORT int bb_world_rank(const bb_world_t *world);
BB_EXPORT int bb_world_size(const bb_world_t *world);
BB_EXPORT int bb_world_thread_level(const bb_world_t *world);  /* MPI_THREAD_* provided */

/* Local, no MPI call: BB_OK on the owner thread, BB_ERR_THREAD elsewhere. */
BB_EXPORT bb_status_t bb_world_check_owner(const bb_world_t *world);

/* Static name of an MPI_THREAD_* level ("MPI_THREAD_FUNNELED"). */
BB_EXPORT const char *bb_thread_level_name(int level);

/* ------------------------------------------------------------------------ */
/* Agreement: fixed int64 fields, MIN then MAX                              */
/* ------------------------------------------------------------------------ */

/* Collective.  Two MPI_Allreduce calls on n MPI_INT64_T fields: MIN into
 * min_out, then MAX into max_out (n elements each, caller storage).
 * Returns the MPI error code (MPI_SUCCESS on success). */
BB_EXPORT int bb_agree_minmax(MPI_Comm comm, const int64_t *local, int n,
                              int64_t *min_out, int64_t *max_out);

/* Collective.  The same MIN and MAX vectors as bb_agree_minmax in one
 * MPI_Allreduce: MIN over the 2n values [x, ~x].  ~x = -x - 1 reverses the
 * order like a negation but is defined for every int64 (INT64_MIN, whose
 * negation overflows, included), so max = ~min(~x) exactly.  Returns the MPI
 * error code (MPI_ERR_ARG for n < 0 or no memory). */
BB_EXPORT int bb_agree_minmax_fused(MPI_Comm comm, const int64_t *local, int n,
                                    int64_t *min_out, int64_t *max_out);

/* Collective.  One MPI_Allreduce MAX on n fields. */
BB_EXPORT int bb_agree_max(MPI_Comm comm, const int64_t *local, int n, int64_t *max_out);

/* Local.  1 iff min[i] == max[i] for i in [first, first + count). */
BB_EXPORT int bb_agree_fields_equal(const int64_t *min, const int64_t *max, int first,
                                    int count);

/* ------------------------------------------------------------------------ */
/* Bounded sum phase                                                        */
/* ------------------------------------------------------------------------ */

/* Policies of a phase, chosen at creation.  Every zero value is the
 * seed's behaviour, so an attr initialized with fewer fields means it. */
typedef enum bb_buffers {
    BB_BUFFERS_FRESH = 0,  /* default: payload buffers allocated per call and
                              released on return (the result is the caller's) */
    BB_BUFFERS_RETAINED,   /* kept between calls with capacity for the largest
                              admitted cap, grown only when a larger cap is
                              admitted (a refused call keeps the old ones),
                              released at destroy; the result is lent until
                              the next call or destroy: do not free it */
    BB_BUFFERS_BORROWED    /* sum phase, free shape only: no copy; the payload
                              is posted from the provider's own array, which
                              the provider must keep unchanged (and alive)
                              until its release callback, called once at the
                              end of the call, after the payload completed
                              (or after a refusal; never after poisoning: the
                              array may still be MPI's).  The receive side
                              is retained (grown to the cap, result lent) */
} bb_buffers_t;

typedef enum bb_admission {
    BB_ADMISSION_SPEC = 0, /* default: MIN then MAX, two MPI_Allreduce */
    BB_ADMISSION_FUSED,    /* one MPI_Allreduce(MIN) over each field and its
                              complement (bb_agree_minmax_fused): the same
                              agreed vectors, so the same verdicts */
    BB_ADMISSION_FUSED_OP  /* the same 2n values as one element of a
                              contiguous type under a user-defined MIN: the
                              same bytes and verdicts as fused, reduced by
                              whatever algorithm the MPI library picks for
                              one element (a user op is never offloaded to
                              in-network reduction; a predefined one may be) */
} bb_admission_t;

typedef enum bb_requests {
    BB_REQUESTS_PER_CALL = 0, /* default: every collective is started anew
                                 (MPI_Allreduce, MPI_Iallreduce) */
    BB_REQUESTS_PERSISTENT    /* MPI-4 persistent collectives: each agreement
                                 made once (MPI_Allreduce_init) at a phase's
                                 first call and started (MPI_Start) at each;
                                 the payload request lives as long as the
                                 buffers and count it names: with fresh
                                 buffers one call, with retained ones until
                                 the buffers grow or the count changes */
} bb_requests_t;

typedef enum bb_metrics {
    BB_METRICS_TIMED = 0,  /* default: the metrics time every part of a call */
    BB_METRICS_UNTIMED     /* sum phase only: no clock is read inside a call
                              (six reads cost about 0.15 us here, a quarter of
                              an 8-byte Allreduce); every time field is -1 */
} bb_metrics_t;

/* The sum phase's shape: whether the count may change from call to call. */
typedef enum bb_shape {
    BB_SHAPE_FREE = 0,     /* default: any count up to the cap; the agreement
                              first, then the payload (two collectives) */
    BB_SHAPE_FIXED         /* every call presents the count and cap agreed at
                              creation: ONE reduction per call carries the
                              six fields (value and complement under MIN) and
                              the payload (SUM), as one element of a derived
                              datatype under a user-defined op; see
                              doc/protocol.md 2.1 and doc/sum.md */
} bb_shape_t;

typedef struct bb_phase_attr {
    bb_buffers_t buffers;
    bb_admission_t admission;
    bb_requests_t requests;
    bb_metrics_t metrics;   /* the transfer phase takes BB_METRICS_TIMED only */
    /* Sum phase only (the transfer phase and agreement objects take the
     * free shape only).  Fixed: shape_count elements in [0, 268435448]
     * (the combined element, 8*count + 56 bytes, within INT32_MAX) and
     * shape_cap in [shape_count, INT32_MAX], agreed at creation; the
     * admission policy is then unused (the fields ride in the one
     * reduction) and buffers may be fresh or retained, not borrowed. */
    bb_shape_t shape;
    int64_t shape_count;
    int64_t shape_cap;
} bb_phase_attr_t;

/* Static names of the policies ("fresh", "fused-op", "persistent"), as the
 * benchmarks' options and records spell them; "unknown" out of range. */
BB_EXPORT const char *bb_buffers_name(bb_buffers_t buffers);
BB_EXPORT const char *bb_admission_name(bb_admission_t admission);
BB_EXPORT const char *bb_requests_name(bb_requests_t requests);
BB_EXPORT const char *bb_metrics_name(bb_metrics_t metrics);
BB_EXPORT const char *bb_shape_name(bb_shape_t shape);  /* "free", "fixed" */

/* ------------------------------------------------------------------------ */
/* Policies agreed at creation                                              */
/* ------------------------------------------------------------------------ */

/* Creating a phase or an agreement object is collective: every rank
 * presents its policy codes and the creation makes one MPI_Allreduce (MIN
 * over the eight codes, its local status and their complements, 18 int64,
 * bb_agree_minmax_fused) over them,
 * the same on every rank whatever its policy, before the object exists.  A
 * policy that changes the wire (the number, order, type or op of the
 * collectives) must be the same on every rank; one that stays on a rank
 * (when the clock is read; when a per-call payload buffer is freed) may
 * differ.  The attributes, in the order a cause names them: */
typedef enum bb_attr_id {
    BB_ATTR_ADMISSION = 0, /* agreed: spec makes two reductions, fused one of
                              2n int64, fused-op one of a user type and op */
    BB_ATTR_REQUESTS,      /* agreed: persistent collectives never match
                              MPI_Allreduce or MPI_Iallreduce */
    BB_ATTR_BUFFERS,       /* sum phase under persistent requests only: it
                              decides when the payload request is made again
                              (per call fresh, on growth retained); per call,
                              and in the transfer phase (point-to-point
                              payload), it may differ */
    BB_ATTR_METRICS,       /* may differ (no MPI call depends on it); the
                              transfer phase takes timed only */
    BB_ATTR_FIELDS,        /* agreement objects: n, the reductions' length */
    BB_ATTR_SHAPE,         /* sum phase, agreed: fixed makes one combined
                              reduction per call, free two collectives; the
                              others take free only */
    BB_ATTR_SHAPE_COUNT,   /* sum phase, agreed: the fixed count (0 when free) */
    BB_ATTR_SHAPE_CAP,     /* sum phase, agreed: the fixed cap (0 when free) */
    BB_ATTR_COUNT
} bb_attr_id_t;

/* Static name of an attribute ("admission", ...); "unknown" out of range. */
BB_EXPORT const char *bb_attr_name(bb_attr_id_t attr);

#define BB_ATTR_CAUSE_BYTES 256

/* What a creation agreed, identical on every rank (caller storage). */
typedef struct bb_attr_refusal {
    /* Stage BB_STAGE_CONTRACT when the creation was refused for a
     * disagreement, BB_STAGE_NONE otherwise; rank -1 and sequence -1 always
     * (one code per rank travels, no rank is attributed; no call yet). */
    bb_refusal_t refusal;
    unsigned differ;       /* bit (1u << id) for each attribute that differs */
    bb_attr_id_t first;    /* the lowest such id; BB_ATTR_COUNT when none */
    /* The agreed codes of every attribute: the enum value (n for FIELDS),
     * -1 where a rank's value is invalid for the object; 0 for an attribute
     * the object ignores. */
    int64_t min[BB_ATTR_COUNT], max[BB_ATTR_COUNT];
    /* NUL-terminated, "" when agreed, else naming every attribute that
     * differs with its agreed extremes, e.g. "policies differ between
     * ranks: admission (spec .. fused-op)". */
    char cause[BB_ATTR_CAUSE_BYTES];
} bb_attr_refusal_t;

/* ------------------------------------------------------------------------ */
/* Agreement objects: one agreement under an admission and request policy  */
/* ------------------------------------------------------------------------ */

/* The agreement a phase makes, as an object of its own so that it can hold
 * persistent requests (bound to its own storage: the caller's arrays are
 * copied in and out) and the fused-op datatype and op.  Used by the phases
 * and by the benchmarks' admission references. */
typedef struct bb_agreement bb_agreement_t;

/* Collective over comm: one MPI_Allreduce that agrees n, the admission and
 * the requests (see "Policies agreed at creation"); besides, the datatype
 * and op of fused-op (persistent requests are made at the first
 * agreement).  n fields over comm (borrowed; it must outlive the object),
 * with attr's admission and requests (NULL: spec, per call; buffers and
 * metrics are ignored).  The same status on every rank: BB_REFUSED when n,
 * the admission or the requests differ between ranks (or are invalid on
 * some ranks only); BB_ERR_ARG when they are invalid everywhere (n outside
 * [1, 64], an unknown policy) or agreement_out is NULL on some rank;
 * BB_ERR_NOMEM or BB_ERR_MPI when making the object failed on some rank
 * (the largest status code of the ranks).  MPI_COMM_NULL is BB_ERR_ARG at
 * once (it cannot take part: the others wait); an MPI error of the
 * agreement itself is BB_ERR_MPI on that rank (abort the job). */
BB_EXPORT bb_status_t bb_agreement_create(MPI_Comm comm, int n, const bb_phase_attr_t *attr,
                                          bb_agreement_t **agreement_out);
/* Collective.  bb_agreement_create, and what was agreed into *refusal_out
 * (may be NULL; written on every return that took part in the agreement). */
BB_EXPORT bb_status_t bb_agreement_create_checked(MPI_Comm comm, int n,
                                                  const bb_phase_attr_t *attr,
                                                  bb_agreement_t **agreement_out,
                                                  bb_attr_refusal_t *refusal_out);

/* Collective.  MIN and MAX over comm of local[n] into min_out[n] and
 * max_out[n] (caller storage), as the admission policy makes them.
 * Returns the MPI error code; after an error the object may still be MPI's:
 * keep it (never destroy it). */
BB_EXPORT int bb_agreement_minmax(bb_agreement_t *agreement, const int64_t *local,
                                  int64_t *min_out, int64_t *max_out);

/* Collective.  MAX over comm of local[n] into max_out[n]: one MPI_Allreduce
 * (MAX) whatever the admission, persistent or not as the requests policy
 * says.  Returns the MPI error code; after an error keep the object. */
BB_EXPORT int bb_agreement_max(bb_agreement_t *agreement, const int64_t *local,
                               int64_t *max_out);

/* Local.  Frees an agreement and its inactive persistent requests (call it
 * before MPI_Finalize).  NULL is fine. */
BB_EXPORT void bb_agreement_destroy(bb_agreement_t *agreement);

/* Admission array layout: int64[6].  BB_SUM_REFUSAL is 1 for a local
 * refusal, else 0; under persistent requests -1 where this rank's payload
 * request names other buffers or count than the call's (the minimum -1
 * makes it anew on every rank; the maximum above 0 refuses). */
enum {
    BB_SUM_SEQUENCE = 0, BB_SUM_PHASE_ID, BB_SUM_EPOCH, BB_SUM_COUNT,
    BB_SUM_CAP, BB_SUM_REFUSAL, BB_SUM_FIELDS
};
/* Control bytes: three 48-byte arrays (local, MIN, MAX). */
#define BB_SUM_CONTROL_BYTES (3 * BB_SUM_FIELDS * 8)
/* The bytes an admission of n fields hands its collectives (its staging,
 * held from creation to destroy): spec 3n int64 (x; MIN and MAX), fused and
 * fused-op 4n ([x, ~x] in and out). */
#define BB_AGREE_STAGING_BYTES(n, admission) \
    (8 * ((admission) == BB_ADMISSION_SPEC ? 3 * (n) : 4 * (n)))
/* The sum phase's counted control bytes, in every tracked figure: the
 * arrays and the admission's staging, 288 (spec) or 336 (fused, fused-op);
 * the fixed shape has no admission of its own (BB_SUM_CONTROL_BYTES). */
#define BB_SUM_TRACKED_CONTROL_BYTES(admission) \
    (BB_SUM_CONTROL_BYTES + BB_AGREE_STAGING_BYTES(BB_SUM_FIELDS, (admission)))
/* The fixed shape's fields in its combined element, after the count
 * doubles: sequence, phase id and epoch with their complements, and the
 * complement of the refusal code (2 for a local refusal, plus 1 for a count
 * or cap other than the shape's), all int64 reduced by MIN: 56 bytes. */
#define BB_SUM_COMBINED_FIELD_BYTES (7 * 8)
/* The largest fixed shape_count: its combined element within INT32_MAX bytes. */
#define BB_SUM_SHAPE_COUNT_MAX ((INT32_MAX - BB_SUM_COMBINED_FIELD_BYTES) / 8)

typedef struct bb_sum_phase bb_sum_phase_t;

/* The provider of one rank's contribution. */
typedef struct bb_sum_provider {
    /* Local, MPI-free.  Sets *data_out to *len_out float64 values owned by
     * the provider (or NULL with length 0).  Nonzero return: provider
     * failure, a local refusal.  Must not call the phase (reentry is
     * refused). */
    int (*prepare)(void *arg, const double **data_out, int64_t *len_out);
    /* Called exactly once for every non-NULL array prepare produced, after
     * the phase copied it, on success and on refusal alike.  Borrowed
     * buffers: at the end of the call instead, after the payload completed
     * (or after the refusal), and never after an MPI error (the array stays
     * MPI's).  May be NULL. */
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
    BB_SUM_LOCAL_NOMEM,     /* payload buffers could not be allocated */
    BB_SUM_LOCAL_ARGUMENT,  /* a NULL provider, prepare, contract or
                               result_out: refused on every rank */
    BB_SUM_LOCAL_ALIAS      /* borrowed: the contribution overlaps the
                               phase's result buffer (a result it lent) */
} bb_sum_local_t;

/* Local metrics of one call (this rank only; no telemetry collective). */
typedef struct bb_sum_metrics {
    bb_status_t status;
    int64_t sequence, phase_id, epoch, count;
    int rank, ranks;
    /* Seconds; each -1 when the phase is untimed (BB_METRICS_UNTIMED). */
    double prepare_s;      /* prepare callback, copy and validation */
    double admission_s;    /* the agreement (one or two Allreduces); fixed
                              shape: the one combined reduction, payload
                              included (post, test and wait are then 0) */
    double post_s;         /* the verdict, MPI_Iallreduce or (persistent)
                              MPI_Start, with MPI_Allreduce_init when the
                              payload request is made */
    double test_s;         /* the one MPI_Test */
    double wait_s;         /* exposed MPI_Wait (0 when Test completed) */
    double total_s;        /* whole call, inclusive of all of the above */
    int test_completed;    /* 1: the Test alone completed the request */
    int64_t payload_bytes; /* 8*count contributed by this rank, 0 if refused */
    int64_t tracked_bytes; /* peak counted bytes: C + 16*count with C =
                              BB_SUM_TRACKED_CONTROL_BYTES (borrowed: C +
                              8*capacity; fixed shape: 144 + 2 or, fresh, 3
                              times 8*count + 56) */
    int max_inflight;      /* requests live at once (0 or 1) */
    int requests_posted;   /* payload requests posted by this call (fixed
                              shape: 1 whenever the reduction was made,
                              refused calls included: it carries both) */
    bb_sum_local_t local_cause;
    bb_refusal_t refusal;  /* stage NONE on success */
    const char *mpi_call;  /* BB_ERR_MPI: the MPI call that failed (static
                              string); NULL otherwise */
} bb_sum_metrics_t;

/* Collective over the world (borrowed; no communicator is duplicated): the
 * defaults, as bb_sum_phase_create_attr with NULL. */
BB_EXPORT bb_status_t bb_sum_phase_create(bb_world_t *world, bb_sum_phase_t **phase_out);

/* Collective over the world.  A phase with the policies of attr (NULL: the
 * defaults: fresh buffers, spec admission, per-call requests, timed
 * metrics), fixed for its life, after one MPI_Allreduce that agrees them
 * (see "Policies agreed at creation": admission and requests always,
 * buffers under persistent requests).  The same status on every rank:
 * BB_REFUSED when they differ between ranks (or are invalid on some ranks
 * only), and no phase; BB_ERR_ARG for a policy invalid everywhere or a NULL
 * phase_out on some rank; BB_ERR_NOMEM or BB_ERR_MPI when making the phase
 * failed on some rank.  A NULL world or a call from another thread returns
 * at once (BB_ERR_ARG, BB_ERR_THREAD: the others wait), and so does an MPI
 * error of the agreement (BB_ERR_MPI: abort the job). */
BB_EXPORT bb_status_t bb_sum_phase_create_attr(bb_world_t *world, const bb_phase_attr_t *attr,
                                               bb_sum_phase_t **phase_out);
/* Collective.  bb_sum_phase_create_attr, and what was agreed into
 * *refusal_out (may be NULL; written on every return that took part in the
 * agreement): on BB_REFUSED its cause names the attributes. */
BB_EXPORT bb_status_t bb_sum_phase_create_checked(bb_world_t *world,
                                                  const bb_phase_attr_t *attr,
                                                  bb_sum_phase_t **phase_out,
                                                  bb_attr_refusal_t *refusal_out);

/* Collective over the world.  Runs prepare, admission (MIN and MAX of the
 * six fields, as the admission and requests policies make them), and on
 * admission one MPI_Iallreduce(SUM), or one MPI_Start of the persistent
 * payload request, with one MPI_Test then MPI_Wait.  On BB_OK, *result_out is an array of count doubles: with
 * fresh buffers a new one the caller owns (bb_free; NULL when count is 0);
 * with retained or borrowed buffers the phase's own, lent until the next
 * call or destroy (do not free it).  On BB_REFUSED every rank
 * refused, nothing was posted, and the sequence is consumed.
 * Fixed shape (BB_SHAPE_FIXED): no admission before the payload; ONE
 * reduction per call (MPI_Allreduce per call; persistent: MPI_Start, one
 * MPI_Test, MPI_Wait) of one element of count doubles and the fields
 * (BB_SUM_COMBINED_FIELD_BYTES), under a user op (SUM, MIN).  A rank with a local
 * refusal, or whose count or cap is not the shape's, contributes zeros.
 * The verdict is the contract phase's, read from the reduced fields, plus
 * a contract refusal when every rank agrees on a count or cap other than
 * the shape's.  On refusal the payload DID cross the wire but the received
 * sum is discarded: *result_out stays NULL.  The fresh result (never NULL,
 * even for count 0) has 8*count + 56 bytes, the fields after the doubles;
 * bb_free it.  BB_ERR_MPI
 * poisons the phase.  *result_out is set to NULL on every return that took
 * part in the admission (BB_REFUSED, BB_ERR_MPI) and left alone otherwise.
 * A NULL provider, prepare, contract or result_out, on any subset of the
 * ranks, is a refusal on every rank (local_cause ARGUMENT on those ranks).
 * What cannot take part, and so returns at once before any MPI call while
 * the other ranks wait in the admission (the caller's bug; abort the job):
 * a NULL phase (BB_ERR_ARG), a poisoned phase (BB_ERR_POISONED), a call
 * from another thread (BB_ERR_THREAD) or from a callback (BB_ERR_REENTRY).
 * metrics_out may be NULL; it is filled on every return. */
BB_EXPORT bb_status_t bb_sum_phase_run(bb_sum_phase_t *phase,
                                       const bb_sum_provider_t *provider,
                                       const bb_sum_contract_t *contract,
                                       double **result_out,
                                       bb_sum_metrics_t *metrics_out);

/* Local.  The sequence the next call will present. */
BB_EXPORT int64_t bb_sum_phase_sequence(const bb_sum_phase_t *phase);
/* Local.  Counted bytes the phase holds now, with C its control bytes
 * (BB_SUM_TRACKED_CONTROL_BYTES of its admission): fresh, C between calls
 * and C + 16*count during one; retained, C + 16*capacity between calls
 * (plus the grown buffers during a call that grows them); borrowed, C +
 * 8*capacity (the receive side only).  Fixed shape: the
 * combined send and receive buffers from creation on, 144 + 2*(8*count +
 * 56), and during a fresh call the spare receive buffer that replaces the
 * one handed out, 8*count + 56 more. */
BB_EXPORT int64_t bb_sum_phase_tracked_live(const bb_sum_phase_t *phase);
BB_EXPORT int bb_sum_phase_poisoned(const bb_sum_phase_t *phase);


/* Local.  Frees an idle phase and its inactive persistent requests (so,
 * before MPI_Finalize).  A poisoned phase stays retained and
 * BB_ERR_POISONED is returned; a phase inside a call gives BB_ERR_STATE. */
BB_EXPORT bb_status_t bb_sum_phase_destroy(bb_sum_phase_t *phase);

/* ------------------------------------------------------------------------ */
/* Bounded transfer phase                                                   */
/* ------------------------------------------------------------------------ */

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
/* The counted control bytes while a ticket is live: the census bytes, the
 * admission's staging and the status MAX's (one field: 16 bytes), 464
 * (spec) or 536 (fused, fused-op). */
#define BB_TRANSFER_TRACKED_CONTROL_BYTES(admission) \
    (BB_TRANSFER_CENSUS_BYTES + BB_AGREE_STAGING_BYTES(BB_TRANSFER_FIELDS, (admission)) + 16)
#define BB_TRANSFER_TAG_PAYLOAD 0
#define BB_TRANSFER_TAG_RECEIPT 1

/* Packed status word: 0 success, else 8*rank + stage (stage 1..4). */
#define BB_TRANSFER_CODE(rank, stage) (8 * (int64_t)(rank) + (int64_t)(stage))

typedef struct bb_transfer_phase bb_transfer_phase_t;

/* A ticket is a small handle in caller storage; the phase owns the ticket's
 * state (buffers, requests), so dropping the handle loses nothing.  A handle
 * is valid for exactly one begin; once finished (or from a failed begin)
 * every call on it gives BB_ERR_STATE, also after its phase was closed:
 * the library keeps a registry of open phases and looks a ticket's phase up
 * there before touching it, and generations are unique in the process, so a
 * later phase at the same address never accepts an old ticket.  A ticket
 * with phase NULL gives BB_ERR_ARG. */
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
    BB_TRANSFER_CAUSE_MPI,         /* an MPI call failed here (fatal) */
    BB_TRANSFER_CAUSE_ARGUMENT     /* begin: a NULL contract or ticket_out */
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
    double admission_s;       /* the preflight agreement: MIN and MAX
                                 Allreduces (spec) or the one fused MIN */
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
    int64_t tracked_bytes;    /* peak counted bytes: the control bytes
                                 (BB_TRANSFER_TRACKED_CONTROL_BYTES) + owned
                                 payload (retained: its capacity, plus the
                                 old buffer while a begin grows it) */
    int max_inflight;         /* peak live requests (<= 2 src, <= 1 dst) */
    int requests_posted;      /* point-to-point requests posted */
    int64_t code;             /* the agreed status word (0: success) */
    bb_transfer_local_t local_cause;
    bb_refusal_t refusal;     /* stage NONE on success; TRANSPORT (this
                                 rank, local) on an MPI error */
} bb_transfer_metrics_t;

/* Collective over the world: duplicates its communicator once
 * (MPI_ERRORS_RETURN on the duplicate) and agrees the default policies
 * there (bb_transfer_phase_create_attr with NULL).  Failure is a setup
 * failure.  Caller owns *phase_out (bb_transfer_phase_close). */
BB_EXPORT bb_status_t bb_transfer_phase_create(bb_world_t *world,
                                               bb_transfer_phase_t **phase_out);

/* Collective, as bb_transfer_phase_create, with the policies of attr (NULL:
 * the defaults, fresh buffers, spec admission, per-call requests), fixed for
 * the phase's life, agreed on the duplicate by one MPI_Allreduce (see
 * "Policies agreed at creation": admission and requests; buffers may
 * differ).  fresh: each data rank allocates its payload buffer of nbytes in
 * preflight and frees it when the ticket is refused or retired.  retained:
 * the buffer is kept between tickets with capacity for the largest admitted
 * max_bytes, grown (to max_bytes) only when a larger ticket is begun; a
 * refused begin frees what it grew and keeps the previous buffer; freed at
 * close (a poisoned phase keeps everything).  fused and fused-op: the
 * nine-field admission is one MPI_Allreduce, with the same agreed vectors
 * and so the same verdicts as spec.  persistent: the admission and the two
 * one-field MAX agreements are persistent requests made at the first ticket
 * (payload and receipt stay per ticket).  The same status on every rank:
 * BB_REFUSED when the admission or requests differ between ranks, or a
 * policy (untimed metrics included) is invalid on some ranks only, and no
 * phase; BB_ERR_ARG for a policy invalid everywhere or a NULL phase_out on
 * some rank; BB_ERR_NOMEM or BB_ERR_MPI when making the phase failed on
 * some rank.  A NULL world, a call from another thread and an MPI error of
 * the duplication or of the agreement return at once (the others wait). */
BB_EXPORT bb_status_t bb_transfer_phase_create_attr(bb_world_t *world,
                                                    const bb_phase_attr_t *attr,
                                                    bb_transfer_phase_t **phase_out);
/* Collective.  bb_transfer_phase_create_attr, and what was agreed into
 * *refusal_out (may be NULL; written on every return that took part in the
 * agreement): on BB_REFUSED its cause names the attributes. */
BB_EXPORT bb_status_t bb_transfer_phase_create_checked(bb_world_t *world,
                                                       const bb_phase_attr_t *attr,
                                                       bb_transfer_phase_t **phase_out,
                                                       bb_attr_refusal_t *refusal_out);

/* Collective.  Frees the duplicate and the phase.  Refused locally, before
 * any MPI call, while a ticket is live (BB_ERR_STATE) or the phase is
 * poisoned (BB_ERR_POISONED; the phase stays retained).  Closing a closed
 * phase gives BB_ERR_STATE (the handle is looked up, not read) unless a
 * newer phase was given the same address meanwhile: then that one is
 * closed, so do not keep closed handles.  Passing a closed phase to any
 * other function (begin excepted: BB_ERR_STATE) is undefined. */
BB_EXPORT bb_status_t bb_transfer_phase_close(bb_transfer_phase_t *phase);

/* Collective.  Preflight (prepare on the source, validation and buffers on
 * data ranks), the nine-field MIN/MAX agreement, then posting: source
 * receipt Irecv + payload Isend, destination payload Irecv, same rank one
 * local copy, other ranks nothing.  BB_OK: *ticket_out is live.
 * BB_REFUSED: preflight or contract refusal on every rank, nothing posted,
 * sequence consumed.  BB_ERR_MPI: poisoned.  Thread, reentry and state
 * misuse (a live ticket, a poisoned phase, a closed phase: BB_ERR_STATE)
 * return before any MPI call and leave *ticket_out untouched; on every other
 * return *ticket_out is written (a ticket every call rejects unless BB_OK).
 * A NULL contract or ticket_out (on any subset of ranks) and a phase whose
 * sequence reached INT64_MAX (never consumed past it: the phase is spent)
 * are preflight refusals of those ranks, BB_REFUSED everywhere; a NULL
 * provider on the source too.  A NULL phase is BB_ERR_ARG at once, and it,
 * like thread, reentry and state misuse, leaves the other ranks waiting.
 * metrics_out (may be NULL) is written on every return. */
BB_EXPORT bb_status_t bb_transfer_phase_begin(bb_transfer_phase_t *phase,
                                              const bb_transfer_provider_t *provider,
                                              const bb_transfer_contract_t *contract,
                                              bb_transfer_ticket_t *ticket_out,
                                              bb_transfer_metrics_t *metrics_out);

/* Local.  One poll: MPI_Test on this rank's payload request (none on
 * inactive and same-rank ranks).  *complete_out (may be NULL) is 1 once the
 * local payload is complete, written on BB_OK only.  BB_ERR_STATE for a
 * finished ticket, or one of a closed phase. */
BB_EXPORT bb_status_t bb_transfer_ticket_progress(bb_transfer_ticket_t *ticket,
                                                  int *complete_out);

/* Collective.  Completes the payload, status MAX agreement (compute failure
 * anywhere skips consumption everywhere), destination consumes or records
 * refusal and sends the receipt, source validates it, terminal MAX
 * agreement; then publishes or refuses and retires the ticket.
 * local_error: BB_TRANSFER_LOCAL_OK or _FAILED (compute failed here).
 * BB_OK: on the destination *value_out is the consumer's value (caller
 * owns it); elsewhere NULL.  BB_REFUSED: compute, consumer or receipt
 * refusal, identical on every rank.  *value_out is written on BB_OK only
 * (a finished ticket, BB_ERR_STATE, leaves it alone).  value_out and
 * metrics_out may be NULL; metrics are written on every return.  A finished
 * or stale ticket on one rank cannot take part: the others wait. */
BB_EXPORT bb_status_t bb_transfer_ticket_finish(bb_transfer_ticket_t *ticket,
                                                const bb_transfer_consumer_t *consumer,
                                                int local_error, void **value_out,
                                                bb_transfer_metrics_t *metrics_out);

/* Collective.  begin, then contract->batches compute batches with one
 * progress poll after each successful batch, then finish.  *value_out is
 * written on BB_OK only, as finish does. */
BB_EXPORT bb_status_t bb_transfer_phase_run(bb_transfer_phase_t *phase,
                                            const bb_transfer_provider_t *provider,
                                            const bb_transfer_consumer_t *consumer,
                                            const bb_transfer_compute_t *compute,
                                            const bb_transfer_contract_t *contract,
                                            void **value_out,
                                            bb_transfer_metrics_t *metrics_out);

/* Local accessors.  tracked_live: counted bytes held now (the control
 * bytes, BB_TRANSFER_TRACKED_CONTROL_BYTES, + owned payload while a ticket
 * is live; between tickets 0 with fresh buffers, the
 * retained payload capacity with retained ones); inflight: requests live
 * now. */
BB_EXPORT int64_t bb_transfer_phase_sequence(const bb_transfer_phase_t *phase);
BB_EXPORT int64_t bb_transfer_phase_tracked_live(const bb_transfer_phase_t *phase);
BB_EXPORT int bb_transfer_phase_inflight(const bb_transfer_phase_t *phase);
BB_EXPORT int bb_transfer_phase_poisoned(const bb_transfer_phase_t *phase);
BB_EXPORT int bb_transfer_phase_active(const bb_transfer_phase_t *phase);
/* Tickets begun on this phase, and their outcomes. */
typedef struct bb_transfer_phase_stats {
    int64_t begun, admitted, completed, refused;
    bb_transfer_metrics_t first;   /* the first ticket (cold call) */
    bb_transfer_metrics_t latest;  /* the latest finished or refused one */
} bb_transfer_phase_stats_t;
BB_EXPORT void bb_transfer_phase_stats(const bb_transfer_phase_t *phase,
                                       bb_transfer_phase_stats_t *stats_out);

/* Static name of a role ("source", "destination", "same-rank", "none") and
 * of a local cause ("provider", ...). */
BB_EXPORT const char *bb_transfer_role_name(bb_transfer_role_t role);
BB_EXPORT const char *bb_transfer_cause_name(bb_transfer_local_t cause);

/* ------------------------------------------------------------------------ */
/* Redistribution                                                           */
/* ------------------------------------------------------------------------ */
/* The MDI (MolSSI Driver Interface) model: a driver code on link ranks
 * [0, Pd) and an engine code on [Pd, P), each with its own
 * intra-communicator; data laid out by maps; commands '>' (driver to engine) and '<' (engine to driver).
 * Element sizes are 8, 16 or 24 bytes (1..3 float64 components); N and
 * every rank's count are at most INT32_MAX. */

/* The standardized distribution: rank r of ranks owns N/ranks + (r < N%ranks)
 * elements from r*(N/ranks) + min(r, N%ranks).  Local.  ranks < 1: nothing
 * (0 and 0); bb_std_owner gives -1 for it and for g outside [0, n). */
BB_EXPORT void bb_std_block(int64_t n, int rank, int ranks, int64_t *first_out,
                            int64_t *count_out);
/* Local.  The rank owning global index g (0 <= g < n) in it. */
BB_EXPORT int bb_std_owner(int64_t n, int ranks, int64_t g);

/* A map: one rank's global indices in its local storage order, for an
 * array of N elements, with an epoch (>= 0) that increases when it changes. */
typedef struct bb_map bb_map_t;

/* Local.  Copies count indices (which may be invalid: validation is
 * collective).  BB_ERR_ARG for negative or > INT32_MAX n or count, negative
 * epoch.  Caller owns *map_out (bb_map_free). */
BB_EXPORT bb_status_t bb_map_create(int64_t n, const int64_t *indices, int64_t count,
                                    int64_t epoch, bb_map_t **map_out);
/* Regular maps: a map made by one of the two constructors below carries
 * its descriptor, so that a plan between two regular maps is computed from
 * the descriptors (runs and counts per peer, no exchange of indices) once
 * every rank of both codes agrees on them; any other map takes the
 * per-element path.  Indices are materialized all the same (the root
 * methods and bb_map_indices read them).  Local; caller owns *map_out
 * (bb_map_free). */
typedef enum bb_map_shape {
    BB_MAP_SHAPE_NONE = 0,      /* indices only (bb_map_create) */
    BB_MAP_SHAPE_BLOCK_CYCLIC,  /* blocks of `block` elements dealt round-robin */
    BB_MAP_SHAPE_STD,           /* the standardized distribution (bb_std_block) */
    BB_MAP_SHAPE_BLOCK_CYCLIC_2D /* a 2D block-cyclic matrix (bb_map_grid_t) */
} bb_map_shape_t;
/* Rank `rank` of `size` holds the blocks [k*block, (k+1)*block) (the last
 * one cut at n) for k = rank, rank + size, ..., in increasing order: block
 * = ceil(n/size) is one block per rank (std-ceil), 1 is cyclic, >= n all on
 * rank 0.  n in [0, INT32_MAX] elements, block in [1, INT32_MAX] elements,
 * 0 <= rank < size, epoch >= 0; else BB_ERR_ARG.  The rank and size are
 * the map's code's (checked against it when a plan is created). */
BB_EXPORT bb_status_t bb_map_create_block_cyclic(int64_t n, int64_t block, int rank,
                                                 int size, int64_t epoch,
                                                 bb_map_t **map_out);
/* The standardized distribution's block of rank of size (bb_std_block), in
 * increasing order; arguments as above. */
BB_EXPORT bb_status_t bb_map_create_std(int64_t n, int rank, int size, int64_t epoch,
                                        bb_map_t **map_out);
/* A ScaLAPACK matrix: element g of the N = rows x cols elements is row
 * g % rows, column g / rows (column-major), in mb x nb blocks on a pr x pc
 * process grid whose process (row, column) is rank row * pc + column (BLACS's
 * row-major numbering), block (0, 0) on process (rsrc, csrc).  A rank holds
 * its rows and columns in ScaLAPACK's local column-major order, which is
 * increasing global index. */
typedef struct bb_map_grid {
    int64_t rows, cols;  /* elements; rows >= 1, cols >= 0, rows * cols <= INT32_MAX */
    int64_t mb, nb;      /* elements per block, in [1, INT32_MAX] */
    int pr, pc;          /* the grid, pr * pc ranks */
    int rsrc, csrc;      /* 0 <= rsrc < pr, 0 <= csrc < pc */
} bb_map_grid_t;
/* Rank `rank` (< pr * pc) of grid's matrix; BB_ERR_ARG for a grid outside
 * the ranges above or a negative epoch.  The rank and pr * pc are the map's
 * code's (checked when a plan is created). */
BB_EXPORT bb_status_t bb_map_create_block_cyclic_2d(const bb_map_grid_t *grid, int rank,
                                                    int64_t epoch, bb_map_t **map_out);
/* Local.  1 and *grid_out for a map of bb_map_create_block_cyclic_2d, else
 * 0. */
BB_EXPORT int bb_map_grid(const bb_map_t *map, bb_map_grid_t *grid_out);
/* Local.  The map's descriptor (NONE for a NULL map or one made from
 * indices); the outputs, each may be NULL, are written for a regular map
 * (block 0 for STD and BLOCK_CYCLIC_2D: bb_map_grid has its blocks). */
BB_EXPORT bb_map_shape_t bb_map_shape(const bb_map_t *map, int64_t *block_out,
                                      int *rank_out, int *size_out);
BB_EXPORT void bb_map_free(bb_map_t *map);
BB_EXPORT int64_t bb_map_elements(const bb_map_t *map);  /* N */
BB_EXPORT int64_t bb_map_count(const bb_map_t *map);     /* this rank's elements */
BB_EXPORT int64_t bb_map_epoch(const bb_map_t *map);
BB_EXPORT const int64_t *bb_map_indices(const bb_map_t *map);  /* borrowed */

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
BB_EXPORT bb_status_t bb_map_validate(MPI_Comm comm, const bb_map_t *map,
                                      bb_map_fault_t *fault_out);

/* The link between the two codes. */
typedef enum bb_redist_mode {
    BB_REDIST_MODE_MDI = 0,  /* driver [0, Pd), engine [Pd, P): two codes */
    BB_REDIST_MODE_INTRA     /* one code of all P ranks; "driver" and
                                "engine" are two layouts of its own */
} bb_redist_mode_t;

typedef struct bb_redist_link bb_redist_link_t;

/* Collective over the world.  Duplicates the world once (the inter-code
 * channel) and splits it into the codes' intra-communicators, all with
 * MPI_ERRORS_RETURN.  BB_ERR_ARG (alike on every rank, after one agreement)
 * for MDI with driver_ranks outside [1, P-1], a bad mode or a NULL link_out
 * on any rank, or a mode or driver_ranks that differs between ranks (one
 * agreement on a duplicate decides; a NULL world or a call from another
 * thread returns at once, leaving the others waiting).  Caller owns *link_out
 * (bb_redist_link_destroy, collective; BB_ERR_STATE while plans live). */
BB_EXPORT bb_status_t bb_redist_link_create(bb_world_t *world, bb_redist_mode_t mode,
                                            int driver_ranks,
                                            bb_redist_link_t **link_out);
/* Collective over the link (frees its communicators); BB_OK for NULL;
 * BB_ERR_STATE, the link kept, while plans of it live. */
BB_EXPORT bb_status_t bb_redist_link_destroy(bb_redist_link_t *link);
/* Local accessors.  The channel (both codes, the driver's ranks first) and
 * this rank's code, both borrowed: the caller may communicate on them (the
 * examples send MDI's command names on the channel) between the library's
 * calls, never free them. */
BB_EXPORT MPI_Comm bb_redist_link_comm(const bb_redist_link_t *link);       /* borrowed */
BB_EXPORT MPI_Comm bb_redist_link_code_comm(const bb_redist_link_t *link);  /* borrowed */
BB_EXPORT int bb_redist_link_is_driver(const bb_redist_link_t *link);
BB_EXPORT int bb_redist_link_is_engine(const bb_redist_link_t *link);
/* Local.  This rank's index and the size of the driver (engine = 0) or
 * engine code. */
BB_EXPORT int bb_redist_link_code_rank(const bb_redist_link_t *link, int engine);
BB_EXPORT int bb_redist_link_code_size(const bb_redist_link_t *link, int engine);
/* Two codes launched as two programs (MPMD: `mpiexec -n 2 ./driver : -n 4
 * ./engine`, MDI's MPI method, or srun --multi-prog): each rank names its
 * code, from the launch or explicitly. */
typedef enum bb_redist_role {
    BB_REDIST_ROLE_LAUNCH = 0,  /* from the launch: MPI_APPNUM on MPI_COMM_WORLD,
                                   0 = driver, 1 = engine */
    BB_REDIST_ROLE_DRIVER,
    BB_REDIST_ROLE_ENGINE
} bb_redist_role_t;

/* Why codes were refused (bb_redist_link_create_codes_checked): ranks
 * counted over the world, identical on every rank. */
typedef struct bb_redist_codes_fault {
    int no_driver, no_engine;  /* 1 when that code has no rank */
    int mixed;         /* ranks that named their code while others took it
                          from the launch (counted: the naming ones) */
    int no_appnum;     /* LAUNCH ranks without MPI_APPNUM (an MPI without
                          the attribute; a single-program launch sets 0
                          everywhere instead: no engine) */
    int bad_appnum;    /* LAUNCH ranks whose MPI_APPNUM is not 0 or 1 */
} bb_redist_codes_fault_t;

/* Collective over the world.  Every rank names its code (role); drivers and
 * engines may sit anywhere in the world (MPMD order): the link's channel
 * (bb_redist_link_comm) orders the driver ranks first, each code in world
 * order, so that a link made here behaves as one of bb_redist_link_create
 * with driver_ranks = the driver count.  mode must be BB_REDIST_MODE_MDI.
 * One MPI_Allgather decides, so the verdict is the same on every rank:
 * BB_ERR_ARG for a mode other than MDI, a role outside the enum, a NULL
 * link_out or a mode that differs on any rank; BB_REFUSED when a code has
 * no rank, when LAUNCH and explicit roles are mixed, or when a LAUNCH rank
 * has no MPI_APPNUM or one other than 0 or 1 (nothing is created; never a
 * hang).  A NULL world or a call from another thread returns at once and
 * leaves the others waiting.  Caller owns *link_out
 * (bb_redist_link_destroy). */
BB_EXPORT bb_status_t bb_redist_link_create_codes(bb_world_t *world, bb_redist_mode_t mode, bb_redist_role_t role, bb_redist_link_t **link_out);
/* The same, and the refusal's counts in *fault_out (may be NULL; written on
 * BB_OK and BB_REFUSED, zero on BB_OK). */
BB_EXPORT bb_status_t bb_redist_link_create_codes_checked(bb_world_t *world, bb_redist_mode_t mode, bb_redist_role_t role, bb_redist_link_t **link_out, bb_redist_codes_fault_t *fault_out);
/* Local.  How the link found its codes: "split" (bb_redist_link_create, at
 * driver_ranks), "appnum" (the launch's MPI_APPNUM) or "role" (each rank
 * named its code); static, never NULL. */
BB_EXPORT const char *bb_redist_link_found_by(const bb_redist_link_t *link);
/* Local, no MPI.  Parses MDI's option string as MDI codes take it
 * ("-role DRIVER|ENGINE -name NAME -method MPI", in any order, words
 * separated by blanks): *role_out DRIVER or ENGINE, and the name, truncated
 * to name_size - 1 bytes, into name_out when it is not NULL.  BB_ERR_PARSE
 * for a missing or unknown -role, a missing -name or -method, a -method
 * other than MPI
 * (TCP, LINK: not one world), an option without its value or an unknown
 * option; BB_ERR_ARG for NULL text or role_out. */
BB_EXPORT bb_status_t bb_redist_role_parse_mdi(const char *text, bb_redist_role_t *role_out, char *name_out, size_t name_size);
/* Local.  0 on every link, kept for the ABI: auto no longer uses a run
 * length threshold timed at link creation (load skewed it) but a trial on
 * each plan's own first executions (BB_REDIST_AUTO). */
BB_EXPORT double bb_redist_link_auto_threshold(const bb_redist_link_t *link);

/* Methods, all moving the same data. */
typedef enum bb_redist_method {
    BB_REDIST_ROOT = 0,      /* "root": reduce to the root, one root-to-root
                                message, broadcast (MDI today; O(N) per rank) */
    BB_REDIST_ROOT_GATHERV,  /* "root-gatherv": gatherv, message, scatterv */
    BB_REDIST_TWO_STEP,      /* "two-step": to the receiving code's std
                                distribution, then a second MPI_Alltoallw
                                inside the receiving code */
    BB_REDIST_DIRECT,        /* "direct": one MPI_Alltoallw, both maps known */
    BB_REDIST_PACK,          /* "pack": a hand loop of memcpy over the
                                contiguous runs, MPI_Alltoallv, unpack */
    BB_REDIST_SPARSE,        /* "sparse": Isend/Irecv to nonzero peers, the
                                local part copied without MPI */
    BB_REDIST_PACK_MPI,      /* "pack-mpi": MPI_Pack/MPI_Unpack through the
                                slot datatypes, MPI_Alltoallv of MPI_PACKED
                                (the MPI datatype cost itself; at most
                                INT_MAX packed bytes per rank) */
    BB_REDIST_OVERLAP,       /* "overlap": pack's hand loop and sparse's
                                Isend/Irecv overlapped: every receive
                                posted first, each peer's runs packed and
                                sent at once, the local part copied run by
                                run while messages fly, each message
                                unpacked as it completes (MPI_Waitany) */
    BB_REDIST_AUTO,          /* "auto": a trial on the plan's own first
                                successful executions (refusals do not
                                count), every one moving the data: round
                                1, 12 executions, direct, pack, sparse and
                                overlap in turn, 3 each; at its end one
                                MPI_Allreduce MAX of every rank's payload
                                times over the link (so every rank holds
                                the same numbers); when two or more
                                medians are within 25 % of the least,
                                round 2 runs those 4 more times each in
                                turn (8-16 executions, one more MAX); the
                                least median of each candidate's runs
                                wins (a tie: the first of that list), and
                                the plan keeps only what the winner
                                executes from.  These four run
                                from one exchange plan holding runs and
                                datatypes together; pack-mpi (MPI packing
                                the datatypes direct hands to MPI, plus a
                                staging), two-step (two exchanges) and the
                                root methods (O(N) per rank) are not
                                candidates.  An MPI error in the
                                agreement poisons the plan. */
    BB_REDIST_METHODS
} bb_redist_method_t;

BB_EXPORT const char *bb_redist_method_name(bb_redist_method_t method);  /* static */
BB_EXPORT bb_status_t bb_redist_method_parse(const char *text,
                                             bb_redist_method_t *method_out);

/* Commands (the first character of MDI command names). */
enum { BB_REDIST_SEND = '>', BB_REDIST_RECEIVE = '<' };
/* The command bb_redist_plan_update_maps presents in the handshake (never a
 * message's: an execute that names it is refused, local_cause COMMAND). */
enum { BB_REDIST_UPDATE = 'U' };
/* The command bb_redist_plan_set_driver_map presents (">MAP"), likewise. */
enum { BB_REDIST_MAP = 'M' };

/* The recv_dist flag that prefaces every message. */
enum {
    BB_RECV_DIST_ROOT = 0,  /* not distributed: root methods */
    BB_RECV_DIST_DATA = 1,  /* distributed, the receiver holds what it needs */
    BB_RECV_DIST_MAP = 2    /* distributed, the sender's map comes first */
};

/* Admission array: int64[9], its MIN and MAX over the link in one
 * Allreduce, or for an eager message in a local MIN over every rank's copy
 * carried by the exchange (the handshake of bb_redist_plan_execute). */
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
 * *setup_out; maps refused only for resources (some rank could not
 * allocate) give BB_ERR_NOMEM on every rank instead.  BB_ERR_ARG alike on
 * every rank for a bad method, command or element size or a NULL plan_out
 * on any rank, for a method, command or element size that differs between
 * ranks (one agreement decides), or pack-mpi with more than INT_MAX packed
 * bytes on a rank.  The root methods move their whole array in pieces of
 * 2^30 doubles, so N * components may exceed INT_MAX.  A NULL link or a call from another thread returns at once and
 * leaves the other ranks waiting.  The maps are copied.  Caller owns
 * *plan_out (bb_redist_plan_destroy). */
BB_EXPORT bb_status_t bb_redist_plan_create(bb_redist_link_t *link,
                                            bb_redist_method_t method, int command,
                                            int64_t element_bytes,
                                            const bb_map_t *driver_map,
                                            const bb_map_t *engine_map,
                                            bb_redist_plan_t **plan_out,
                                            bb_redist_setup_t *setup_out);

/* Collective over the engine code only (MDI_Set_Map on an engine: nothing
 * is sent to the driver).  Validates map (its epoch must exceed the current
 * one, else BB_REFUSED with stale_epoch) and repairs the engine-internal
 * parts.  Until bb_redist_plan_update_maps, a '>' of direct, pack, sparse,
 * pack-mpi, overlap or auto is received in the layout the driver knows and
 * converted inside the engine (two steps); a '<' of those or two-step carries
 * the map (recv_dist = MAP) and rebuilds the plan in that message. */
BB_EXPORT bb_status_t bb_redist_plan_set_engine_map(bb_redist_plan_t *plan,
                                                    const bb_map_t *map,
                                                    bb_redist_setup_t *setup_out);
/* Collective over the link (MDI_Update_Maps): the driver learns the current
 * engine map; '>' goes in one step again.  Its handshake is a message's
 * (bb_redist_plan_execute: the same agreement, or the same eager exchange
 * with nothing published) presenting the command BB_REDIST_UPDATE, and it
 * consumes a sequence number: when one code calls it while the other
 * executes a message of the plan, both meet in that collective and both
 * return BB_REFUSED (stage CONTRACT, nothing published, the maps as they
 * were); a code that makes no call of the plan at all cannot be told from
 * a slow one, and the other code waits.  BB_OK on both codes: the cross
 * part rebuilt; map_transfer_s in *setup_out (may be NULL).  A NULL plan,
 * another thread or a poisoned plan return at once (the others wait);
 * BB_ERR_MPI poisons the plan. */
BB_EXPORT bb_status_t bb_redist_plan_update_maps(bb_redist_plan_t *plan,
                                                 bb_redist_setup_t *setup_out);

/* Collective over the link (a later MDI_Set_Map on the driver: the ">MAP"
 * of a changed driver map; the first one is bb_redist_plan_create).  Driver
 * ranks pass their new map (copied), engine ranks NULL (ignored).  The map
 * is validated over the driver code, then the message handshake presenting
 * BB_REDIST_MAP meets the engine, so that an engine executing a message
 * meanwhile is refused alike (stage CONTRACT).  BB_REFUSED on every rank of
 * both codes, the plan unchanged and the same *setup_out everywhere, for a
 * map the driver code refuses (driver_fault), another N (n_mismatch) or an
 * epoch that does not increase (stale_epoch); admitted, the new map
 * replaces the plan's and the cross part and both codes' own parts are
 * rebuilt (the driver learns the engine's current map too).  Consumes a
 * sequence number.  setup_out may be NULL.  A NULL plan, another thread, a
 * reentrant call or a poisoned plan return at once (the others wait);
 * BB_ERR_MPI poisons the plan. */
BB_EXPORT bb_status_t bb_redist_plan_set_driver_map(bb_redist_plan_t *plan, const bb_map_t *map, bb_redist_setup_t *setup_out);

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
    BB_REDIST_LOCAL_BUFFER,         /* NULL buffer for a nonzero count */
    BB_REDIST_LOCAL_CONTRACT,       /* a NULL contract */
    BB_REDIST_LOCAL_MAP             /* set_driver_map: the driver refused
                                       its new map (faults in the setup) */
} bb_redist_local_t;

/* One message, this rank. */
typedef struct bb_redist_metrics {
    bb_status_t status;
    int64_t sequence;       /* the sequence this message presented */
    int steps;              /* MPI exchanges in sequence: 1 or 2 */
    int64_t recv_dist;      /* the agreed flag */
    int map_sent;           /* the map came with this '<' reply */
    int eager;              /* the handshake rode in the payload's exchange,
                               posted before the verdict (pack, pack-mpi,
                               overlap where the verdict cannot change the
                               path): no collective of its own; published
                               only once admitted */
    double admission_s;     /* the handshake: the recv_dist flag and the
                               MIN/MAX agreement, one Allreduce; eager:
                               local, the headers staged and their MIN
                               taken (their bytes travel in payload_s) */
    double map_s;           /* plan rebuild when the map came (setup) */
    double payload_s;       /* the data movement */
    double total_s;         /* inclusive of all of the above */
    bb_redist_local_t local_cause;
    bb_refusal_t refusal;   /* stage NONE unless refused */
} bb_redist_metrics_t;

/* Collective over the link.  The handshake: one MIN Allreduce over the link
 * of the nine fields and their complements (bb_agree_minmax_fused's MIN and
 * MAX), the recv_dist flag among them (presented by the sending code's ranks
 * only); for an eager message (metrics eager) no collective: every rank
 * sends the same 144 bytes to every rank inside the payload's exchange and
 * takes their MIN locally, the same inputs and so the same verdict.  It
 * admits the message (command, N, element size, driver epoch, cap
 * and the senders' flag must agree, the refusal field be 0 everywhere;
 * the engine epoch may differ: that selects the fallback), then moves the
 * data.  send: the sender's elements in its map order (count * element_bytes
 * bytes, senders only); recv: the receiver's (receivers only).  BB_REFUSED
 * on every rank with the same refusal (preflight: the highest refusing
 * rank; contract: fields differ); nothing is moved and the sequence is
 * consumed.  BB_ERR_MPI poisons the plan (retained; abort the job).  A
 * NULL contract on any rank is a preflight refusal (local_cause CONTRACT);
 * a NULL plan, another thread, a reentrant call or a poisoned plan return
 * at once and leave the other ranks waiting.
 * metrics_out may be NULL; it is filled on every return. */
BB_EXPORT bb_status_t bb_redist_plan_execute(bb_redist_plan_t *plan,
                                             const bb_redist_contract_t *contract,
                                             const void *send, void *recv,
                                             bb_redist_metrics_t *metrics_out);

/* Local accessors.  The maps are the plan's copies (borrowed), NULL where
 * this rank does not send or receive. */
BB_EXPORT int64_t bb_redist_plan_sequence(const bb_redist_plan_t *plan);
BB_EXPORT int64_t bb_redist_plan_engine_epoch_known(const bb_redist_plan_t *plan);
BB_EXPORT int bb_redist_plan_poisoned(const bb_redist_plan_t *plan);
BB_EXPORT int bb_redist_plan_is_sender(const bb_redist_plan_t *plan);
BB_EXPORT int bb_redist_plan_is_receiver(const bb_redist_plan_t *plan);
BB_EXPORT const bb_map_t *bb_redist_plan_send_map(const bb_redist_plan_t *plan);
BB_EXPORT const bb_map_t *bb_redist_plan_recv_map(const bb_redist_plan_t *plan);

/* Local.  What the plan runs and why: its method; for auto during its
 * trial the candidate the next execution runs ("auto: trial k of 12 runs
 * ...", in round 2 "of 20" to "of 28"), after it the winner with the 4
 * agreed medians (us) and how many runs each had.  The reason
 * is a string in the plan's storage (valid until destroy), identical on
 * every rank.  Auto re-runs its trial whenever the cross part is rebuilt
 * (bb_redist_plan_update_maps, a '<' that carries the map).  trial_left:
 * the executions left in auto's trial as known now (round 1's until its
 * end, then round 2's; 0: decided, or not auto). */
BB_EXPORT bb_redist_method_t bb_redist_plan_chosen(const bb_redist_plan_t *plan);
BB_EXPORT const char *bb_redist_plan_choice_reason(const bb_redist_plan_t *plan);
BB_EXPORT int bb_redist_plan_trial_left(const bb_redist_plan_t *plan);

/* Local.  Frees an idle plan; BB_ERR_POISONED keeps a poisoned one. */
BB_EXPORT bb_status_t bb_redist_plan_destroy(bb_redist_plan_t *plan);

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
    double mean_run_elements; /* deprecated: both sides together; use the
                                 two below */
    double send_mean_run_elements, recv_mean_run_elements;
                             /* per side, over all ranks: elements per
                                contiguous run of the local slots a message
                                reads (send) or writes (recv); < 0 where the
                                side has none (the root methods, N = 0) */
    int64_t send_runs_max, recv_runs_max;  /* contiguous runs on the busiest
                                rank, per side (0 for the root methods) */
    int64_t plan_bytes_max;  /* bytes the plan holds between messages (map
                                copies, slot and run lists, the arrays given
                                to MPI_Type_indexed, staging buffers), max over
                                ranks, counted by the library (MPI's own
                                datatype storage is not counted) */
    int64_t message_bytes_max; /* temporary bytes one execute allocates, max
                                over ranks (0: every method stages in the
                                plan's buffers; MPI's internal buffers are not
                                counted) */
    bb_redist_method_t chosen; /* what the plan runs: auto's choice (during
                                its trial the next candidate, and the
                                counts are those of the plan holding every
                                candidate's parts), else the method itself */
    int steps;
} bb_redist_traffic_t;

/* Collective over the link.  A NULL traffic_out still takes part and
 * returns BB_ERR_ARG on that rank; a NULL plan, another thread or a
 * poisoned plan return at once (the others wait). */
BB_EXPORT bb_status_t bb_redist_plan_traffic(bb_redist_plan_t *plan,
                                             bb_redist_traffic_t *traffic_out);

#ifdef __cplusplus
}
#endif
#endif /* BBENCH_H */
