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

/* Collective.  The parts of a whole from one rank: local[0] is this rank's
 * whole (a time), local[1..n-1] its parts; out[0..n-1] receives the values
 * of the rank whose whole is largest (the lowest such rank on a tie: the
 * critical path), and *rank_out (may be NULL) that rank.  Unlike a maximum
 * per element, parts taken so never add up to more than their whole.  out
 * may be local.  Returns the MPI error code. */
int bb_stats_reduce_critical(MPI_Comm comm, const double *local, int n, double *out,
                             int *rank_out);

/* How a sample is taken across ranks (--rank-stat): the slowest rank's
 * whole with its own parts (the collective's critical path, the default),
 * or the mean over ranks of each (what osu_allreduce prints without -f). */
typedef enum bb_rank_stat {
    BB_RANK_STAT_MAX = 0,
    BB_RANK_STAT_MEAN
} bb_rank_stat_t;

/* Static name of a rank statistic ("max", "mean"). */
const char *bb_rank_stat_name(bb_rank_stat_t stat);

/* Collective.  As bb_stats_reduce_critical for BB_RANK_STAT_MAX; for
 * BB_RANK_STAT_MEAN out[i] is the mean over ranks of local[i] (parts so
 * taken still add up to at most their whole) and *rank_out is -1. */
int bb_stats_reduce_rank(MPI_Comm comm, bb_rank_stat_t stat, const double *local, int n,
                         double *out, int *rank_out);

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
/* Simulated runs (simulated.c): SimGrid SMPI builds, configure --with-smpi  */
/* ------------------------------------------------------------------------ */

/* 1 in an SMPI build, else 0. */
int bb_simulated(void);
/* Rank 0.  Adds runtime.simulated (null with a reason in an ordinary
 * build); in an SMPI build also replaces runtime.launcher by null. */
void bb_simulated_runtime(cJSON *runtime);
/* Every rank (topology NULL but on rank 0).  In an SMPI build: the
 * topology of the platform, without the simulating host's hwloc, cpusets
 * or oversubscription verdict; nothing in an ordinary build. */
void bb_simulated_topology(cJSON *topology, bb_topology_info_t *info);
/* Rank 0, before the record is written.  In an SMPI build the points'
 * memory.rss_* become null with a reason; nothing in an ordinary build. */
void bb_simulated_points(cJSON *record);

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
    BB_LAYOUT_BC2D,             /* "bc2d:ROWS,MB,NB[,PR,PC[,RSRC,CSRC]]": a
                                   ScaLAPACK matrix: N = ROWS x N/ROWS,
                                   column-major (g = i + j ROWS), in MB x NB
                                   blocks on a PR x PC grid (rank pr PC + pc)
                                   from process (RSRC, CSRC), each rank's
                                   elements in its local column-major order;
                                   PR x PC from P when not given */
    BB_LAYOUT_KINDS
} bb_layout_kind_t;

typedef struct bb_layout {
    bb_layout_kind_t kind;
    int64_t block;   /* block-cyclic */
    int dims[3];     /* spatial; 0: chosen from the rank count */
    uint64_t seed;   /* block-irregular, random */
    int64_t rows, mb, nb;    /* bc2d: matrix rows, block rows and columns */
    int pr, pc, rsrc, csrc;  /* bc2d: grid (0: from the rank count), source */
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
/* Local.  Whether layout can lay out n elements on ranks ranks: BB_OK, or
 * BB_ERR_ARG with err saying why (spatial dims whose product is not ranks;
 * bc2d: N not a multiple of ROWS, a grid that is not ranks, a source
 * outside the grid). */
bb_status_t bb_layout_check(const bb_layout_t *layout, int64_t n, int ranks, char *err,
                            size_t errlen);
/* Local.  A bc2d layout's grid on ranks ranks: as given, else the most
 * square PR x PC = ranks with PR <= PC. */
void bb_layout_grid(const bb_layout_t *layout, int ranks, int *pr_out, int *pc_out);
/* Local.  One step of the seeded 64-bit generator the layouts draw from
 * (splitmix64); the fixture's checksum uses it as a mixing hash. */
uint64_t bb_splitmix(uint64_t *state);
/* Local.  The same as a map with the given epoch (caller owns it); std,
 * std-ceil, cyclic, block-cyclic:B, root and bc2d carry their regular descriptor
 * (bb_map_shape), the others are indices only. */
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

/* How the bound is derived, in the record's words (run.bound_note). */
#define BB_REDIST_BOUND_NOTE "bound = agree + latency + max(latency, p2p, memory, host), " \
    "each the best sample of a probe measured interleaved with the methods: agree = " \
    "MPI_Allreduce of int64[18] over the link; latency = one-way time of 1 byte; p2p = " \
    "one-way time of the largest bytes into or out of any rank; memory = memcpy of the " \
    "largest local part or fragmented side; host = every rank copying its share of the " \
    "bytes changing owner at once (only when a host holds 2 or more link ranks); " \
    "efficiency = bound / elapsed, null where the bound is above it (a bound failure)"
/* Rank 0.  The bound's quantities (bound.*; bound.probe from the probe's
 * whole-call samples) into q, under scope where they are per call. */
void bb_redist_bound_quantities(cJSON *q, const bb_redist_bound_t *bound,
                                const double *probe_total, size_t samples, const char *scope);
/* Rank 0.  The bound's note under a point's lines: its parts, in us. */
void bb_redist_bound_note(bb_table_t *table, const bb_redist_bound_t *bound);
/* Rank 0.  A plan's traffic as redist.* and memory.* quantities into q;
 * direct is the direct plan's (what changes owner). */
void bb_redist_traffic_quantities(cJSON *q, const bb_redist_traffic_t *direct,
                                  const bb_redist_traffic_t *plan, const char *scope);

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

/* The figures of one overlap point, each per sample, from the point's
 * per-sample times in seconds (samples values each). */
enum { BB_OVERLAP_RANK_COMM, BB_OVERLAP_RANK_UNPOLLED, BB_OVERLAP_RANK_UNPOLLED_COMPUTE,
       BB_OVERLAP_RANK_N };
typedef struct bb_overlap_times {
    int64_t samples;
    int compute_none;  /* no compute asked for: the figures that need it are
                          undefined, not a quotient of timer noise */
    /* Rank maxima (bbench's figures). */
    const double *comm, *compute, *immediate, *polled, *polled_compute, *unpolled;
    /* Every rank's own per-call means, [ranks][BB_OVERLAP_RANK_N][samples]:
     * their means are OSU's inputs, the rank with the largest t_unpolled
     * gives IMB's (its t_ovrl). */
    int ranks;
    const double *per_rank;
    /* The polled calls: reps a sample, completed[s] of them seen complete
     * on every rank during the batches (none ran without batches). */
    int64_t reps, batches;
    const int64_t *completed;
} bb_overlap_times_t;

/* The figures, in the record's order. */
enum { BB_OVERLAP_F_OVERLAP, BB_OVERLAP_F_UNPOLLED, BB_OVERLAP_F_OSU, BB_OVERLAP_F_IMB,
       BB_OVERLAP_F_IMB_CODE, BB_OVERLAP_F_SPEEDUP, BB_OVERLAP_F_SLOWDOWN, BB_OVERLAP_F_N };

typedef struct bb_overlap_set {
    int64_t samples, reps;
    bb_overlap_figure_t *f[BB_OVERLAP_F_N];  /* [samples] each */
    /* Of overlap and overlap.unpolled: how far the figure could move within
     * the sample ranges of its times, (range(t_comm) + range(t_overlapped))
     * / min(median t_comm, median t_compute); above 1 the ranges alone allow
     * any value in [0, 1].  NAN when undefined. */
    double uncertainty[2];
    bb_overlap_figure_t done;  /* completed_during_batches over the samples */
    int64_t done_calls;
    double *done_samples;      /* [samples] */
} bb_overlap_set_t;

/* Local.  Every figure of every sample; BB_ERR_NOMEM or BB_ERR_ARG (set
 * zeroed).  The caller frees with bb_overlap_set_free. */
bb_status_t bb_overlap_set_compute(const bb_overlap_times_t *times, bb_overlap_set_t *set_out);
void bb_overlap_set_free(bb_overlap_set_t *set);
/* Local.  Every figure and completed_during_batches as a ratio quantity of
 * q under its record name ("overlap", "overlap.osu", ...) with formula,
 * inputs and note; null with null_reason when that is not NULL (nothing
 * measured), else null with the first undefined sample's reason. */
void bb_overlap_set_quantities(const bb_overlap_set_t *set, const char *null_reason, cJSON *q);
/* Rank 0.  The figures' table columns (medians over the samples, - where
 * undefined), and a point's cells (all - when !measured). */
void bb_overlap_set_columns(bb_table_t *table);
/* The formulas by figure name (the record's "formulas"), caller owns. */
cJSON *bb_overlap_formulas(void);
void bb_overlap_set_cells(bb_table_t *table, const bb_overlap_set_t *set, int measured);

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
 * A bad BB_FINALIZE_TIMEOUT on any rank is a usage error (exit 2, every
 * rank).  Failure here is fatal: message on stderr and exit 3. */
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

/* Local.  BB_FINALIZE_TIMEOUT in seconds: unset or empty, the default (5);
 * a number in [0, 3600] (0: no guard); anything else BB_ERR_PARSE with err
 * saying so.  bb_bench_init refuses a bad value on every rank (exit 2). */
bb_status_t bb_finalize_timeout(double *limit_out, char *err, size_t errlen);

/* Local.  The finalize guard's state for the record: {"active": true,
 * "timeout_s"} when bb_finalize will put the relay in, else {"active":
 * false, "reason"} (no PMI_FD: not Hydra's PMI-1; BB_FINALIZE_TIMEOUT=0). */
cJSON *bb_finalize_guard_json(void);

/* ------------------------------------------------------------------------ */
/* The launcher (launcher.c): what the record says about how ranks started  */
/* ------------------------------------------------------------------------ */

/* What replaces a value that may be secret. */
#define BB_REDACTED "<redacted>"

/* Local.  1 when a name (len bytes) contains KEY, TOKEN, SECRET, PASSWORD,
 * PASSWD, CREDENTIAL or AUTH, in any case. */
int bb_name_is_secret(const char *name, size_t len);

/* Local.  A launcher's command line argv[0..argc) as a JSON array, values
 * redacted (the values of -genv/-env NAME VALUE, -x NAME=VALUE, srun
 * --export=..., every NAME=VALUE argument, options and MCA parameters with
 * secret-looking names) and cut with markers when long (each argument to
 * 4096 bytes, the whole to 65536, the end kept).  *capture_out: a new
 * object saying so (the rule, counts of redacted values, arguments and
 * bytes cut).  NULL (and *capture_out NULL) when out of memory. */
cJSON *bb_launcher_command_json(const char *const *argv, size_t argc,
                                cJSON **capture_out);

/* Local.  The variables of env (NAME=VALUE strings, NULL-terminated) of the
 * launcher families PMI_, PMIX_, OMPI_, HYDRA_, SLURM_ and MPI_LOCAL, secret
 * names' values redacted; *capture_out a new object naming the families,
 * the rule and the count redacted. */
cJSON *bb_launcher_env_json(const char *const *env, cJSON **capture_out);

/* Local, MPI-free.  Whether this process, alone in its MPI_COMM_WORLD
 * (world_size 1), was started as one of several by a launcher of another
 * MPI, or by srun without the plugin its MPI needs: each such process runs
 * as a singleton and measures nothing of what was asked.  env holds
 * NAME=VALUE strings (NULL-terminated); the launcher's own count is read
 * from OMPI_COMM_WORLD_SIZE (Open MPI's launchers), PMI_SIZE (PMI-1 ones,
 * MPICH's Hydra), else SLURM_STEP_NUM_TASKS (a Slurm step, not the batch
 * script's).  Returns 1 and says what to do in msg (and *leader_out 1 on the
 * process the launcher numbers 0), else 0.  mpi_library: "mpich",
 * "openmpi" or "other", the MPI this program is built with. */
int bb_launcher_singleton_check(const char *const *env, int world_size,
                                const char *mpi_library, char *msg, size_t len,
                                int *leader_out);

/* Local, MPI-free.  Whether Open MPI's TCP BTL can carry this job's
 * messages, so that its progress thread (btl_tcp_progress_thread) could
 * move them outside MPI calls: not under another pml than ob1, nor with tcp
 * excluded, nor on one host where shared memory is allowed.  pml and btl:
 * OMPI_MCA_pml and OMPI_MCA_btl (NULL: unset).  why: the reason, either
 * way. */
int bb_ompi_tcp_carries(int hosts, const char *pml, const char *btl, char *why, size_t len);

/* Rank 0.  runtime.launcher: the nearest parent process that is a launcher
 * (its command line via bb_launcher_command_json, or null with a reason),
 * its variables, the binding the ranks have (from topology's per_rank
 * cpusets, not from the launcher's defaults) and the finalize guard. */
cJSON *bb_launcher_json(const cJSON *topology);

/* ------------------------------------------------------------------------ */
/* Progress (progress.c): how this run's MPI library moves data             */
/* ------------------------------------------------------------------------ */

/* The library that runs, from MPI_Get_library_version. */
typedef enum bb_mpi_library {
    BB_MPI_MPICH = 0,
    BB_MPI_OPEN_MPI,
    BB_MPI_OTHER
} bb_mpi_library_t;

typedef struct bb_progress {
    bb_mpi_library_t library;
    int threads[2];          /* threads per process now, min and max over ranks;
                                -1 unknown */
    int threads_before[2];   /* the same before MPI_Init; -1 unknown */
} bb_progress_t;

/* Local.  Threads of this process now (/proc/self/status), or -1. */
int bb_process_threads(void);

/* Collective.  The library and the threads of every rank. */
bb_status_t bb_progress_observe(bb_bench_t *bench, bb_progress_t *out);

/* Rank 0.  One line for the table: the library and its progress setting
 * (MPIR_CVAR_ASYNC_PROGRESS under MPICH, btl_tcp_progress_thread under Open
 * MPI), thread level, ranks per core, threads per process. */
void bb_progress_note(bb_bench_t *bench, const bb_progress_t *p, char *buf, size_t len);

/* Rank 0.  The record's "progress" member: the library, its progress
 * setting and an explanation that holds for it (for another library: that
 * none is known), thread levels, ranks per core and the observed threads. */
cJSON *bb_progress_json(bb_bench_t *bench, const bb_progress_t *p);

/* Local.  Add name: value to o, or name: null and name_reason: reason when
 * value is NULL or empty. */
void bb_json_add_or_null(cJSON *o, const char *name, const char *value,
                         const char *reason);

bb_world_t *bb_bench_world(bb_bench_t *bench);
int bb_bench_rank(const bb_bench_t *bench);
int bb_bench_size(const bb_bench_t *bench);
MPI_Comm bb_bench_comm(const bb_bench_t *bench);
bb_record_t *bb_bench_record(bb_bench_t *bench);
const bb_topology_info_t *bb_bench_topology(const bb_bench_t *bench);
/* The thread level asked of MPI_Init_thread, and this process's threads
 * just before it (-1 unknown). */
int bb_bench_thread_requested(const bb_bench_t *bench);
int bb_bench_threads_before_init(const bb_bench_t *bench);

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

/* Local.  quiet != 0 (-q): the header lines that would go to stderr (csv
 * and json formats) are not printed; errors still are. */
void bb_bench_set_quiet(bb_bench_t *bench, int quiet);

/* Collective.  Capture provenance and topology into the record and print
 * the header lines on rank 0 (ranks, hosts, cores, oversubscription). */
void bb_bench_capture(bb_bench_t *bench);

/* Local.  stdout's table (not owned; NULL: none): the header lines and
 * "record written" become its notes in table and json format, and go to
 * stderr in csv format, so that stdout holds the table alone. */
void bb_bench_set_table(bb_bench_t *bench, bb_table_t *table);

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
