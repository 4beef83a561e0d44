/*
 * harness.h: the harness library (not installed): what bbench's programs
 * share around the protocols: option parsing, provenance and topology, the
 * overlap figures and compute kernel, the redistribution benchmark's
 * layouts, fixture, bound and md workload, and the bench object.  Conventions are those
 * of <bbench.h>.
 */
#ifndef BB_HARNESS_H
#define BB_HARNESS_H

#include "bbench.h"
#include "bbrecord.h"
#include "cli.h"
#include "table.h"

/* ------------------------------------------------------------------------ */
/* Cross-rank statistics (reduce.c)                                         */
/* ------------------------------------------------------------------------ */

/* Collective.  Element-wise MAX of n doubles across comm (the rank maximum
 * of a block's per-call means).  Returns the MPI error code. */
int bb_stats_reduce_max(MPI_Comm comm, const double *local, int n,
                        double *max_out);

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
    int oversubscribed;      /* some machine runs more ranks than it has cores
                                or than the PUs of the union of its ranks'
                                cpusets (pinning), whichever is fewer */
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
/* Redistribution layouts (layout.c)                                        */
/* ------------------------------------------------------------------------ */

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
    BB_LAYOUT_SPATIAL_SHUFFLED, /* "spatial-shuffled[:SEED]": spatial's
                                   ownership (dims from P), each rank's
                                   elements in a seeded random local order */
    BB_LAYOUT_ROOT,             /* "root": all of [0, N) on rank 0, in order
                                   (a code that does not adopt maps) */
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
 * whose product is not ranks (checked without overflow) and for a
 * block-cyclic block outside [1, INT32_MAX].  Caller owns *indices_out
 * (bb_free). */
bb_status_t bb_layout_indices(const bb_layout_t *layout, int64_t n, int rank,
                              int ranks, int64_t **indices_out,
                              int64_t *count_out);
/* Local.  One step of the seeded 64-bit generator the layouts draw from
 * (splitmix64); the fixture's checksum uses it as a mixing hash. */
uint64_t bb_splitmix(uint64_t *state);
/* Local.  The same as a map with the given epoch (caller owns it). */
bb_status_t bb_layout_map(const bb_layout_t *layout, int64_t n, int rank,
                          int ranks, int64_t epoch, bb_map_t **map_out);

/* ------------------------------------------------------------------------ */
/* Redistribution fixture (fixture.c): data pattern and check               */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Redistribution bound (bound.c)                                           */
/* ------------------------------------------------------------------------ */

/* The machine's lower bound, measured in the run. */
typedef struct bb_redist_bound {
    int p2p_ranks[2];        /* link ranks of the ping-pong */
    int64_t p2p_bytes, memcpy_bytes;
    double p2p_s;            /* one-way time of p2p_bytes: link rank a's best
                                round trip / 2 (bb_redist_probe_bound: of a
                                contiguous and a non-contiguous layout) */
    double memcpy_s;         /* best memcpy of memcpy_bytes on link rank 0 */
    double p2p_bandwidth, memcpy_bandwidth;  /* byte/s; 0 if not measured */
    double bound_s;          /* max(p2p_s, memcpy_s) (bb_redist_link_bound);
                                the probe's formula (bb_redist_probe_bound) */
    /* bb_redist_probe_bound only (0 from bb_redist_link_bound): */
    double agree_s;          /* one MPI_Allreduce of int64[18] over the link,
                                after an untimed one */
    double latency_s;        /* one-way time of 1 byte between p2p_ranks */
    double host_s;           /* every rank copies host_bytes / P at once, the
                                slowest; 0 when no host holds 2 link ranks */
    int64_t host_bytes;      /* bytes changing owner, all ranks */
    int ranks_per_host_max;  /* link ranks on the fullest host */
} bb_redist_bound_t;

/* Collective over the link.  remote_bytes: the largest bytes into or out of
 * any rank; local_bytes: the largest local copy.  reps >= 1 timed rounds
 * after one warm-up.  A bad argument on any rank (or remote_bytes or reps
 * that differ) is BB_ERR_ARG on every rank.  Messages above 1 GiB are split
 * (no INT_MAX limit). */
bb_status_t bb_redist_link_bound(bb_redist_link_t *link, int64_t remote_bytes,
                                 int64_t local_bytes, int reps,
                                 bb_redist_bound_t *bound_out);

/* The bound as a variant of the measurement engine, so that it is measured
 * interleaved with the methods (bb_measure_run_set).  One call times, in
 * parts (seconds, rank maxima after the engine's reduction): */
enum {
    BB_PROBE_TOTAL = 0,  /* the whole call */
    BB_PROBE_AGREE,      /* MPI_Allreduce of int64[18] MAX over the link,
                            after an untimed one */
    BB_PROBE_LATENCY,    /* 1-byte round trip / 2 on p2p_ranks[0], after an
                            untimed one (0 on the other ranks) */
    BB_PROBE_P2P,        /* the same for remote_bytes in 1 GiB pieces: the
                            faster of one contiguous block and a
                            non-contiguous datatype of the same bytes */
    BB_PROBE_MEMORY,     /* memcpy of memory_bytes on link rank 0 */
    BB_PROBE_HOST,       /* every rank copies host_bytes / P at once */
    BB_PROBE_PARTS
};
typedef struct bb_redist_probe bb_redist_probe_t;

/* Collective over the link.  memory_bytes: what the busiest rank must copy
 * through memory besides the network (largest local part, and the packed
 * side of a fragmented layout); host_bytes: bytes changing owner, all
 * ranks.  Arguments are agreed (BB_ERR_ARG, BB_ERR_NOMEM alike on every
 * rank).  Caller owns *probe_out (bb_redist_probe_free). */
bb_status_t bb_redist_probe_create(bb_redist_link_t *link, int64_t remote_bytes,
                                   int64_t memory_bytes, int64_t host_bytes,
                                   bb_redist_probe_t **probe_out);
/* Collective over the link: the probe for what a direct plan's traffic
 * says moves (bb_redist_plan_traffic): remote_bytes the most into or out
 * of one rank; memory_bytes its local part, or a side it must gather or
 * scatter when that side's mean run is shorter than 256 bytes; host_bytes
 * every byte changing owner. */
bb_status_t bb_redist_probe_for_traffic(bb_redist_link_t *link, const bb_redist_traffic_t *direct,
                                        int64_t element_bytes, bb_redist_probe_t **probe_out);
/* Local. */
void bb_redist_probe_free(bb_redist_probe_t *probe);
/* The engine's call (bb_measure_call_fn); arg is the probe. */
bb_status_t bb_redist_probe_call(void *arg, double *parts, double *counts);
/* Local.  The bound from the probe's samples: each part's best sample (the
 * least disturbed burst), bound = agree + latency (the recv_dist flag) +
 * max(latency, p2p, memory, host): the admission, the flag, then the data
 * step's busiest resource. */
void bb_redist_probe_bound(const bb_redist_probe_t *probe, const double *const parts[],
                           size_t samples, bb_redist_bound_t *bound_out);

/* ------------------------------------------------------------------------ */
/* Overlap (overlap.c): figures of merit and the compute kernel             */
/* ------------------------------------------------------------------------ */

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

/* Initializes MPI (MPI_Init_thread requesting MPI_THREAD_FUNNELED, or
 * MPI_THREAD_MULTIPLE when MPIR_CVAR_ASYNC_PROGRESS=1 asks for a progress
 * thread), binds MPI_COMM_WORLD and creates the record for benchmark
 * ("sum", ...).  name is the program name used in messages ("bbench-sum").
 * Failure here is fatal:
 * message on stderr and exit 3. */
bb_bench_t *bb_bench_init(int *argc, char ***argv, const char *name,
                          const char *benchmark);

/* Finalizes MPI after draining the traffic that MPI_Finalize could wait on
 * forever across hosts (finalize.c; see README, "Shutdown across hosts").
 * Collective over MPI_COMM_WORLD, like MPI_Finalize; does nothing when MPI
 * is not initialized or already finalized.  Returns MPI_Finalize's code. */
int bb_finalize(void);

/* The exit code a rank leaves with if bb_finalize's watchdog has to end a
 * stuck MPI_Finalize; set it just before bb_finalize. */
void bb_finalize_expect_exit(int code);

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

/* Local.  stdout's table (not owned; NULL: none): the header lines and
 * "record written" become its notes in table and json format, and go to
 * stderr in csv format, so that stdout holds the table alone. */
void bb_bench_set_table(bb_bench_t *bench, bb_table_t *table);

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

/* ------------------------------------------------------------------------ */
/* Redistribution md workload (redist-md.c)                                 */
/* ------------------------------------------------------------------------ */

/* A plan's maps and one send and one receive array for them. */
typedef struct bb_redist_buffers {
    const bb_map_t *sm, *rm;
    double *send, *recv;
} bb_redist_buffers_t;
/* Local.  Buffers for plan's maps, of element_bytes per element; out of
 * memory is fatal (bench). */
void bb_redist_buffers_get(bb_bench_t *bench, bb_redist_plan_t *plan, int64_t element_bytes,
                           bb_redist_buffers_t *buffers);
void bb_redist_buffers_free(bb_redist_buffers_t *buffers);

/* One MD step's parts, in this order (the measurement engine's parts). */
enum { BB_MD_STEP, BB_MD_COORDS, BB_MD_FORCES, BB_MD_ENERGY, BB_MD_REMAP, BB_MD_PARTS };
/* Static.  A part's name in the record ("elapsed", "phase.coords", ...). */
const char *bb_md_part_name(int part);

/* What the variants of one md point share (borrowed, alive while they are). */
typedef struct bb_md_point {
    bb_bench_t *bench;             /* where errors go (fatal on every rank) */
    bb_redist_link_t *link;
    MPI_Comm comm;                 /* the link's */
    int64_t n;
    const bb_map_t *dmap, *emap;   /* this rank's maps (NULL outside the code) */
    const bb_map_t *dmap1, *emap1; /* <ENERGY: element 0 on each code's rank 0 */
    const bb_layout_t *to;         /* the engine's layout (whose owners remap) */
    int64_t remap_every;           /* the engine remaps every K steps; 0: never */
    double remap_fraction;         /* of its elements changing owner then */
} bb_md_point_t;

/* One variant: a method's three plans (>COORDS, <FORCES, <ENERGY) with its
 * way to remap, or the replicated baseline. */
typedef struct bb_md_variant {
    const bb_md_point_t *pt;
    bb_redist_method_t method;
    int rebuild;                 /* remap by a full rebuild, else map update */
    bb_redist_plan_t *plan[3];
    bb_redist_buffers_t b[3];
    bb_map_t *emap;              /* this variant's engine map now (engine ranks) */
    int32_t *owner;              /* engine ranks: every element's engine rank */
    int64_t step, remaps, wrong, refused;
    double setup_s;              /* the three plans' setup, rank maximum */
    /* the replicated baseline (LAMMPS fix mdi/qm): N x 3 doubles on every rank */
    int replicated;
    double *full, *part, *expect, *mine;
    bb_map_t *all;               /* [0, N) in order: what a replicated rank holds */
} bb_md_variant_t;

/* Collective over the link: a method's variant, its plans created (setup
 * timed); failures are fatal. */
void bb_md_variant_init(const bb_md_point_t *point, bb_md_variant_t *variant,
                        bb_redist_method_t method, int rebuild);
/* Local: the replicated baseline's variant (two codes only). */
void bb_md_replicated_init(const bb_md_point_t *point, bb_md_variant_t *variant);
void bb_md_variant_free(bb_md_variant_t *variant);
/* The engine's calls (bb_measure_call_fn), arg a variant: one step, its
 * parts BB_MD_*, every message checked outside its timing (wrong data
 * counted in the variant and reported once). */
bb_status_t bb_md_step_call(void *arg, double *t, double *counts);
bb_status_t bb_md_replicated_call(void *arg, double *t, double *counts);

#endif /* BB_HARNESS_H */
