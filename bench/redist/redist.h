/* redist.h: what bbench-redist measures beyond the runner's rows, beside
 * its program so that bbench-redist.c holds options and glue alone: the
 * bound (bound.c), a method at a point (candidate.c), the md workload
 * (md.c), the options and references.  Private (not installed); rank-0 and
 * collective rules as in runner.h.  The program's own names are bb_rd_*,
 * apart from the installed library's bb_redist_* (as bench/transfer's
 * bb_xfer_* are apart from bb_transfer_*). */
#ifndef BB_RD_H
#define BB_RD_H

#include "runner/runner.h"
#include "layout.h"
#include "scalapack.h"

/* ------------------------------------------------------------------------ */
/* Redistribution bound (bound.c)                                           */
/* ------------------------------------------------------------------------ */

/* The machine's lower bound, measured in the run. */
typedef struct bb_rd_bound {
    int p2p_ranks[2];        /* link ranks of the ping-pong */
    int64_t p2p_bytes, memcpy_bytes;
    double p2p_s;            /* one-way time of p2p_bytes: link rank a's best
                                round trip / 2 (bb_rd_probe_bound: of a
                                contiguous and a non-contiguous layout) */
    double memcpy_s;         /* best memcpy of memcpy_bytes on link rank 0 */
    double p2p_bandwidth, memcpy_bandwidth;  /* byte/s; 0 if not measured */
    double bound_s;          /* max(p2p_s, memcpy_s) (bb_rd_link_bound);
                                the probe's formula (bb_rd_probe_bound) */
    /* bb_rd_probe_bound only (0 from bb_rd_link_bound): */
    double agree_s;          /* one MPI_Allreduce of int64[18] over the link,
                                after an untimed one */
    double latency_s;        /* one-way time of 1 byte between p2p_ranks */
    double host_s;           /* every rank copies host_bytes / P at once, the
                                slowest; 0 when no host holds 2 link ranks */
    int64_t host_bytes;      /* bytes changing owner, all ranks */
    int ranks_per_host_max;  /* link ranks on the fullest host */
    int off;                 /* not measured (--no-bound): every figure 0,
                                the record's nulls say so */
} bb_rd_bound_t;

/* Collective over the link.  remote_bytes: the largest bytes into or out of
 * any rank; local_bytes: the largest local copy.  reps >= 1 timed rounds
 * after one warm-up.  A bad argument on any rank (or remote_bytes or reps
 * that differ) is BB_ERR_ARG on every rank.  Messages above 1 GiB are split
 * (no INT_MAX limit). */
bb_status_t bb_rd_link_bound(bb_redist_link_t *link, int64_t remote_bytes,
                             int64_t local_bytes, int reps,
                             bb_rd_bound_t *bound_out);

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
typedef struct bb_rd_probe bb_rd_probe_t;

/* Collective over the link.  memory_bytes: what the busiest rank must copy
 * through memory besides the network (largest local part, and the packed
 * side of a fragmented layout); host_bytes: bytes changing owner, all
 * ranks.  Arguments are agreed (BB_ERR_ARG, BB_ERR_NOMEM alike on every
 * rank).  Caller owns *probe_out (bb_rd_probe_free). */
bb_status_t bb_rd_probe_create(bb_redist_link_t *link, int64_t remote_bytes,
                               int64_t memory_bytes, int64_t host_bytes,
                               bb_rd_probe_t **probe_out);
/* Collective over the link: the probe for what a direct plan's traffic
 * says moves (bb_redist_plan_traffic): remote_bytes the most into or out
 * of one rank; memory_bytes its local part, or a side it must gather or
 * scatter when that side's mean run is shorter than 256 bytes; host_bytes
 * every byte changing owner. */
bb_status_t bb_rd_probe_for_traffic(bb_redist_link_t *link, const bb_redist_traffic_t *direct,
                                    int64_t element_bytes, bb_rd_probe_t **probe_out);
/* Local. */
void bb_rd_probe_free(bb_rd_probe_t *probe);
/* The engine's call (bb_measure_call_fn); arg is the probe. */
bb_status_t bb_rd_probe_call(void *arg, double *parts, double *counts);
/* Local.  The bound from the probe's samples: each part's best sample (the
 * least disturbed burst), bound = agree + latency (the recv_dist flag) +
 * max(latency, p2p, memory, host): the admission, the flag, then the data
 * step's busiest resource. */
void bb_rd_probe_bound(const bb_rd_probe_t *probe, const double *const parts[],
                       size_t samples, bb_rd_bound_t *bound_out);

/* How the bound is derived, in the record's words (run.bound_note). */
#define BB_REDIST_BOUND_NOTE "bound = max(latency, p2p, memory, host), " \
    "each the best sample of a probe measured interleaved with the methods (an eager " \
    "method carries its handshake in its exchange; agree = MPI_Allreduce of int64[18] " \
    "over the link, what a method that agrees apart pays on top, is reported beside, " \
    "not added); latency = one-way time of 1 byte; p2p = " \
    "one-way time of the largest bytes into or out of any rank; memory = memcpy of the " \
    "largest local part or fragmented side; host = every rank copying its share of the " \
    "bytes changing owner at once (only when a host holds 2 or more link ranks); " \
    "efficiency = bound / elapsed, null where the bound is above it (a bound failure)"
/* Why the bound's figures are null under --no-bound. */
#define BB_REDIST_BOUND_OFF "not measured (--no-bound: no probe ran)"
/* Rank 0.  The bound's quantities (bound.*; bound.probe from the probe's
 * whole-call samples) into q, under scope where they are per call; nulls
 * saying why when bound->off (probe_total may then be NULL). */
void bb_rd_bound_quantities(cJSON *q, const bb_rd_bound_t *bound,
                            const double *probe_total, size_t samples, const char *scope);
/* Rank 0.  The bound's note under a point's lines: its parts, in us. */
void bb_rd_bound_note(bb_table_t *table, const bb_rd_bound_t *bound);
/* Rank 0.  A plan's traffic as redist.* and memory.* quantities into q;
 * direct is the direct plan's (what changes owner). */
void bb_rd_traffic_quantities(cJSON *q, const bb_redist_traffic_t *direct,
                              const bb_redist_traffic_t *plan, const char *scope);

/* ------------------------------------------------------------------------ */
/* Redistribution md workload (md.c)                                 */
/* ------------------------------------------------------------------------ */

/* A plan's maps and one send and one receive array for them. */
typedef struct bb_rd_buffers {
    const bb_map_t *sm, *rm;
    double *send, *recv;
} bb_rd_buffers_t;
/* Local.  Buffers for plan's maps, of element_bytes per element; out of
 * memory is fatal (run). */
void bb_rd_buffers_get(bb_run_t *run, bb_redist_plan_t *plan, int64_t element_bytes,
                       bb_rd_buffers_t *buffers);
void bb_rd_buffers_free(bb_rd_buffers_t *buffers);

/* One MD step's parts, in this order (the measurement engine's parts). */
enum { BB_MD_STEP, BB_MD_COORDS, BB_MD_FORCES, BB_MD_ENERGY, BB_MD_REMAP, BB_MD_PARTS };
/* Static.  A part's name in the record ("elapsed", "phase.coords", ...). */
const char *bb_md_part_name(int part);

/* What the variants of one md point share (borrowed, alive while they are). */
typedef struct bb_md_point {
    bb_run_t *run;                 /* where errors go (fatal on every rank) */
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
    bb_rd_buffers_t b[3];
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



/* ---- a method measured at a point (candidate.c) ---------------------- */

/* A call's timed parts (the runner's part names: elapsed, phase.admission,
 * phase.payload) and a plan's setup parts (setup.total, its parts). */
enum { BB_MESSAGE_ELAPSED, BB_MESSAGE_ADMISSION, BB_MESSAGE_PAYLOAD, BB_MESSAGE_PARTS };
enum { BB_SETUP_TOTAL, BB_SETUP_VALIDATE, BB_SETUP_MAP, BB_SETUP_BUILD, BB_SETUP_TRIAL,
       BB_SETUP_PARTS }; /* trial: auto's trial executions, apart from total
                            (recorded for auto alone) */

/* What the methods of one point share (borrowed, alive while they are). */
typedef struct bb_rd_point {
    bb_run_t *run;                 /* where errors go (fatal on every rank) */
    bb_redist_link_t *link;
    MPI_Comm comm;                 /* the link's */
    const bb_map_t *dmap, *emap;   /* this rank's maps (NULL outside the code) */
    int64_t n, element_bytes;
    int command;                   /* BB_REDIST_SEND ('>') or BB_REDIST_RECEIVE */
    int64_t messages_per_plan;     /* the plan is rebuilt after K; 0: never */
    bb_rank_stat_t rank_stat;      /* how a setup is taken across ranks */
    double confidence;             /* the level of the ratios' intervals (-c) */
} bb_rd_point_t;

/* A method at one point: its setup samples, traffic and choice, and, while
 * it is measured, its plan and buffers. */
typedef struct bb_rd_candidate {
    const bb_rd_point_t *pt;
    bb_redist_method_t method;
    double *setup[BB_SETUP_PARTS]; /* [nsetup] seconds, one per plan */
    size_t nsetup, setup_cap;
    double first_setup[BB_SETUP_PARTS];
    bb_redist_traffic_t traffic;
    char choice[256];              /* bb_redist_plan_choice_reason */
    double median, setup_median;   /* seconds: a message's, a plan's */
    const double *samples;         /* [nsamples] its messages' elapsed samples, sample
                                      k taken in round k of the point's interleaved
                                      set (the runner's: alive until the point's
                                      records are written) */
    size_t nsamples;
    const double *canary;          /* [nsamples + 1] the set's canaries, as long */
    bb_redist_plan_t *plan;
    bb_rd_buffers_t b;
    int64_t k, on_plan;            /* messages made, on this plan */
    int64_t plans_rebuilt;         /* plans rebuilt while measured (--messages) */
    int64_t plans_other;           /* auto: of those, the ones whose trial chose
                                      another method than the first plan's
                                      (traffic.chosen) */
} bb_rd_candidate_t;

/* Local.  The ratio a / b of two figures of the point (bb_ratio_figure),
 * paired over the point's rounds without those its canaries leave out
 * (bb_measure_round_mask; canary the set's [na + 1], NULL for none). */
void bb_rd_ratio(const double *a, size_t na, double a_median, const double *b, size_t nb,
                 double b_median, const double *canary, double level,
                 bb_ratio_figure_t *r);
/* The ratio as a record quantity ("ratio", scope): value the ratio of the
 * medians (as before); paired, samples the per-round ratios a_k / b_k of
 * the rounds the figure used (their median is the paired median, the
 * record adds their ci) and rounds; always interval [low, high] or null,
 * interval_from, level, resolved and moved. */
cJSON *bb_rd_ratio_quantity(const bb_ratio_figure_t *r, const double *a, const double *b,
                            size_t n, const double *canary, const char *scope);
/* What the marks mean, for legends (the level and the rounds an interval
 * needs: bb_rd_ratio_marks). */
#define BB_REDIST_RATIO_MARKS "paired over the point's rounds (the median of the " \
    "per-round ratios); '?': its interval holds 1.0 or there is none (too few rounds), " \
    "'!': the ratio of the medians lies outside it"
/* The same with the level and the fewest rounds that have an interval,
 * into buf. */
void bb_rd_ratio_marks(double level, char *buf, size_t len);

/* Collective.  A plan of method for the point (fatal on failure). */
bb_redist_plan_t *bb_rd_point_plan(const bb_rd_point_t *pt, bb_redist_method_t method,
                                   bb_redist_setup_t *setup_out);
/* Collective.  setup_samples plans built and freed (each setup a sample),
 * the last kept with its buffers, traffic and choice.  An auto plan runs
 * its trial as part of its setup (messages checked, timed as setup.trial),
 * so that the messages measured are its steady state. */
void bb_rd_candidate_prepare(bb_rd_candidate_t *c, const bb_rd_point_t *pt,
                             bb_redist_method_t method, int64_t setup_samples);
/* Collective.  One message (the runner's call): its times ADDED to parts
 * [BB_MESSAGE_PARTS]; wrong data and refusals counted in tally.  Every
 * messages_per_plan messages the plan is rebuilt first, untimed (auto's
 * trial with it). */
void bb_rd_candidate_message(bb_rd_candidate_t *c, bb_tally_t *tally, double *parts);
/* Local.  After the measurement m: the median message, plan and buffers
 * freed. */
void bb_rd_candidate_release(bb_rd_candidate_t *c, const bb_measure_result_t *m);
/* Local.  Everything freed; c zeroed. */
void bb_rd_candidate_clear(bb_rd_candidate_t *c);
/* Messages after which setup + K messages cost less than root's: 0 when c
 * is root or never pays (*why says which). */
int64_t bb_rd_break_even(const bb_rd_candidate_t *c, const bb_rd_candidate_t *root,
                         const char **why);
/* 1: the bound is above c's median (the bound is wrong, not a result). */
int bb_rd_bound_failed(const bb_rd_candidate_t *c, const bb_rd_bound_t *bound);
/* A line's ratio.root (root's median / median, null without root; beside
 * it the paired figure from samples [nsamples] and root's, which are root
 * itself for root: then exactly 1, bb_rd_ratio_quantity) and
 * efficiency (bound / median, null when nothing moves or the bound fails),
 * for a method and the reference alike. */
void bb_rd_median_quantities(cJSON *q, double median, const double *samples,
                             size_t nsamples, const bb_rd_candidate_t *root,
                             const bb_rd_bound_t *bound, const char *scope);
/* Rank 0.  A method line's columns after its times, and its cells. */
void bb_rd_candidate_columns(bb_table_t *table, const char *rank_stat_words);
void bb_rd_candidate_cells(bb_table_t *table, const bb_rd_candidate_t *c,
                           const bb_rd_candidate_t *root, double payload_median,
                           double handshake_median, int failed,
                           const bb_rd_bound_t *bound);
/* Rank 0.  The setup parts of c's first plan into first; into q, beside
 * the runner's, its row's: setup, amortization, ratio to root, payload,
 * traffic (direct: the direct plan's), messages checked, the bound (probe:
 * its measurement), efficiency and wrong messages. */
void bb_rd_candidate_first(cJSON *first, const bb_rd_candidate_t *c,
                           const char *plan_scope);
void bb_rd_candidate_quantities(cJSON *q, const bb_rd_candidate_t *c,
                                const bb_rd_candidate_t *root,
                                const bb_redist_traffic_t *direct,
                                const bb_rd_bound_t *bound,
                                const bb_measure_result_t *probe, const bb_row_t *row,
                                const char *plan_scope);

/* Rank 0.  The notes under a point's lines: why the fastest (candidate
 * best, -1 for none) is fastest, the datatypes against the hand pack,
 * auto's choice, the bound and any bound failure. */
void bb_rd_candidates_note(bb_table_t *table, const bb_rd_candidate_t *c, int n,
                           int best, const bb_rd_bound_t *bound, const char *from,
                           const char *to);

/* Local.  " METHOD ROOT/METHOD" for each candidate but root ('-' where root
 * is missing or bit i of failed_mask is set) into buf (truncated): the
 * paired figure with its marks (bb_ratio_text). */
void bb_rd_candidates_ratios(const bb_rd_candidate_t *c, int n, int failed_mask,
                             char *buf, size_t len);

/* ---- ScaLAPACK's Cpdgemr2d at a point: bbench-redist.s reference, not a library
 * method (reference.c) -------------------------------------------------- */

typedef struct bb_rd_reference {
    const bb_rd_point_t *pt;
    bb_scalapack_redist_t *ctx;    /* NULL: not expressible at this point */
    char why[256];                 /* why not (every rank alike) */
    double setup_s;                /* grids and descriptors, rank maximum */
    const bb_map_t *sm, *rm;       /* this rank's sending and receiving maps */
    double *send, *recv;           /* ScaLAPACK's local arrays */
    /* A submatrix side: its local array is the whole matrix's, staged from
     * and to the dense buffer (the map's elements) at slots (outside the
     * timing); NULL slots: the array is the dense buffer. */
    double *sdense, *rdense;
    int64_t *sslots, *rslots;
    int64_t rfull;                 /* elements of recv */
    int staged;                    /* either side a submatrix (alike on all ranks) */
    int64_t k;                     /* messages made */
    double median;                 /* seconds, after the measurement */
    const double *samples;         /* [nsamples] as a candidate's */
    const double *canary;          /* [nsamples + 1] as a candidate's */
    size_t nsamples;
} bb_rd_reference_t;

/* Collective.  The reference for the point's layouts (from: the driver's,
 * to: the engine's); 0, with r->why, where ScaLAPACK cannot express them or
 * is not built in. */
int bb_rd_reference_prepare(bb_rd_reference_t *r, const bb_rd_point_t *pt,
                            const bb_layout_t *from, const bb_layout_t *to);
/* Collective.  One message (the runner's call): filled, Cpdgemr2d timed,
 * every received slot checked outside the timing (wrong data in tally). */
void bb_rd_reference_message(bb_rd_reference_t *r, bb_tally_t *tally,
                             double *parts);
/* Local.  The median of m, then the context and buffers freed. */
void bb_rd_reference_release(bb_rd_reference_t *r, const bb_measure_result_t *m);
/* Rank 0.  Its cells under bb_rd_candidate_columns, and its own
 * quantities (setup, ratio to root, efficiency, wrong messages). */
void bb_rd_reference_cells(bb_table_t *table, const bb_rd_reference_t *r,
                           const bb_rd_candidate_t *root, int failed,
                           const bb_rd_bound_t *bound);
void bb_rd_reference_quantities(cJSON *q, const bb_rd_reference_t *r,
                                const bb_rd_candidate_t *root,
                                const bb_rd_bound_t *bound, const bb_row_t *row);

/* ---- bbench-redist's options (options.c) ------------------------------- */

enum { BB_REDIST_LAYOUTS_MAX = 8 };

/* The options' keys beyond their letters (n, e, d). */
enum { BB_REDIST_OPT_DRIVER = BB_OPT_LONG, BB_REDIST_OPT_FROM, BB_REDIST_OPT_TO,
       BB_REDIST_OPT_METHODS, BB_REDIST_OPT_MESSAGES, BB_REDIST_OPT_LINK,
       BB_REDIST_OPT_RATIOS, BB_REDIST_OPT_WORKLOAD, BB_REDIST_OPT_REMAP,
       BB_REDIST_OPT_CASES, BB_REDIST_OPT_NO_BOUND, BB_REDIST_OPT_ROLE };

/* One case of a --cases file (ScaLAPACK's GEMR2D.dat line): a whole
 * matrix moved from one bc2d layout to another, '>' on the intra link. */
typedef struct bb_rd_case {
    int line;                  /* in the file, from 1 */
    int64_t n;                 /* m x n, or its trapezoid's count */
    bb_layout_t from, to;
    char from_name[96], to_name[96];
} bb_rd_case_t;


typedef struct bb_rd_options {
    bb_size_list_t elements;
    int64_t element_bytes;
    int driver_ranks;          /* -1: P/2 */
    const char *from[BB_REDIST_LAYOUTS_MAX], *to[BB_REDIST_LAYOUTS_MAX];
    bb_layout_t from_layout[BB_REDIST_LAYOUTS_MAX], to_layout[BB_REDIST_LAYOUTS_MAX];
    int nfrom, nto;
    int directions[2], ndirections;
    int direction_given, methods_given;
    bb_redist_method_t methods[BB_REDIST_METHODS];
    int nmethods;
    int scalapack;             /* ScaLAPACK's Cpdgemr2d as a reference line */
    int64_t messages;          /* messages per plan; 0: one plan for the point */
    bb_redist_mode_t mode;     /* --link */
    int full_sweep, ratios;
    int md;                    /* --workload md */
    int64_t remap_every;       /* --remap K:f; 0: no remap */
    double remap_fraction;
    int link_given, layouts_given;
    const char *cases_file;    /* --cases FILE: the points are its cases */
    bb_rd_case_t *cases;   /* those that fit the launch (owned) */
    size_t ncases;
    char **skipped;            /* why each other case was skipped (owned) */
    size_t nskipped;
    int no_bound;              /* --no-bound: no probe, no bound row */
    /* --role: this rank's code in an MPMD launch (DRIVER or ENGINE; LAUNCH
     * when not given); role_bad: a value that is neither, said only once
     * every rank knows (validate), so that all leave together */
    bb_redist_role_t role;
    int role_given, role_bad;
    /* validate, --link mdi: how the codes were found ("split": the world
     * split at driver_ranks; "role": --role; "appnum": a launch of two
     * programs, MPI_APPNUM 0 the driver) and whether the driver is world
     * ranks [0, driver_ranks) */
    const char *codes_found_by;
    int drivers_first;
} bb_rd_options_t;

void bb_rd_options_defaults(bb_rd_options_t *options);
/* One option (a bad value is bb_run_usage). */
void bb_rd_options_parse(bb_run_t *run, bb_rd_options_t *options, int key,
                         const char *value);
/* The presets and checks between options (usage errors on every rank); the
 * number of points. */
size_t bb_rd_options_validate(bb_run_t *run, bb_rd_options_t *options);
/* The cases and skip messages freed. */
void bb_rd_options_clear(bb_rd_options_t *options);

/* ---- the md workload (md.c) -------------------------------------------- */

/* Local.  <ENERGY's maps: element 0 on each code's rank
 * 0 (NULL outside the code). */
bb_status_t bb_md_energy_maps(bb_redist_link_t *link, bb_map_t **driver_out,
                              bb_map_t **engine_out);

/* The md workload's state: the first member of the program's state, so that
 * the workload's callbacks see the program's state as this. */
typedef struct bb_md_run {
    /* The current point; the program sets bench, link, comm, the energy maps
     * and the remap at setup, point_maps the rest at each point. */
    bb_md_point_t pt;
    /* Collective: point i's n, maps and engine layout into pt, and the
     * layouts' names into from and to (borrowed). */
    void (*point_maps)(bb_run_t *run, void *state, size_t i);
    const char *from, *to;
    bb_md_variant_t v[BB_RUN_ROWS_MAX];  /* row r's, while a point is measured */
} bb_md_run_t;

/* Local, from validate (md->pt.remap_every set): the md workload
 * (bb_run_use) and its rows: every method under each way to remap and,
 * with mdi (two codes), the replicated baseline. */
void bb_md_use(bb_run_t *run, bb_md_run_t *md, const bb_redist_method_t *methods,
               int nmethods, int mdi);
/* Rank 0.  The md table's notes. */
void bb_md_notes(bb_run_t *run, int64_t remap_every, double remap_fraction);

#endif
