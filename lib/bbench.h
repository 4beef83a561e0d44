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
/* Local.  Counted bytes the phase holds now (0 between calls). */
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

/* ------------------------------------------------------------------------ */
/* Redistribution (redist.c)                                                */
/* ------------------------------------------------------------------------ */
/* (declared with issue 5) */

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
 * includes LO and every step <= HI. */
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

/* Local.  "R:REST": a rank in [0, ranks) and a pointer into text after ':'. */
bb_status_t bb_cli_parse_rank_prefix(const char *text, int ranks, int *rank_out,
                                     const char **rest_out, char *err,
                                     size_t errlen);

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
    int cores_per_host;      /* hwloc cores of rank 0's host */
    int pus_per_host;
    int threads_per_rank;    /* OMP_NUM_THREADS if set, else 1 */
    int oversubscribed;      /* some host runs more ranks than cores */
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
