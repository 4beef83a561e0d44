/* redist-bench.h: what bbench-redist measures beyond the runner's rows, in
 * the harness so that the benchmark file holds options and glue alone: the
 * md workload's point (redist-md.c).  Private (not installed); rank-0 and
 * collective rules as in runner.h. */
#ifndef BB_REDIST_BENCH_H
#define BB_REDIST_BENCH_H

#include "runner.h"
#include "redist-scalapack.h"

/* ---- a method measured at a point (redist-candidate.c) ---------------------- */

/* A call's timed parts (the runner's part names: elapsed, phase.admission,
 * phase.payload) and a plan's setup parts (setup.total, its parts). */
enum { BB_MESSAGE_ELAPSED, BB_MESSAGE_ADMISSION, BB_MESSAGE_PAYLOAD, BB_MESSAGE_PARTS };
enum { BB_SETUP_TOTAL, BB_SETUP_VALIDATE, BB_SETUP_MAP, BB_SETUP_BUILD, BB_SETUP_TRIAL,
       BB_SETUP_PARTS }; /* trial: auto's trial executions, apart from total
                            (recorded for auto alone) */

/* What the methods of one point share (borrowed, alive while they are). */
typedef struct bb_redist_point {
    bb_bench_t *bench;             /* where errors go (fatal on every rank) */
    bb_redist_link_t *link;
    MPI_Comm comm;                 /* the link's */
    const bb_map_t *dmap, *emap;   /* this rank's maps (NULL outside the code) */
    int64_t n, element_bytes;
    int command;                   /* BB_REDIST_SEND ('>') or BB_REDIST_RECEIVE */
    int64_t messages_per_plan;     /* the plan is rebuilt after K; 0: never */
    bb_rank_stat_t rank_stat;      /* how a setup is taken across ranks */
} bb_redist_point_t;

/* A method at one point: its setup samples, traffic and choice, and, while
 * it is measured, its plan and buffers. */
typedef struct bb_redist_candidate {
    const bb_redist_point_t *pt;
    bb_redist_method_t method;
    double *setup[BB_SETUP_PARTS]; /* [nsetup] seconds, one per plan */
    size_t nsetup, setup_cap;
    double first_setup[BB_SETUP_PARTS];
    bb_redist_traffic_t traffic;
    char choice[256];              /* bb_redist_plan_choice_reason */
    double median, setup_median;   /* seconds: a message's, a plan's */
    bb_redist_plan_t *plan;
    bb_redist_buffers_t b;
    int64_t k, on_plan;            /* messages made, on this plan */
    int64_t plans_rebuilt;         /* plans rebuilt while measured (--messages) */
    int64_t plans_other;           /* auto: of those, the ones whose trial chose
                                      another method than the first plan's
                                      (traffic.chosen) */
} bb_redist_candidate_t;

/* Collective.  A plan of method for the point (fatal on failure). */
bb_redist_plan_t *bb_redist_point_plan(const bb_redist_point_t *pt, bb_redist_method_t method,
                                       bb_redist_setup_t *setup_out);
/* Collective.  setup_samples plans built and freed (each setup a sample),
 * the last kept with its buffers, traffic and choice.  An auto plan runs
 * its trial as part of its setup (messages checked, timed as setup.trial),
 * so that the messages measured are its steady state. */
void bb_redist_candidate_prepare(bb_redist_candidate_t *c, const bb_redist_point_t *pt,
                                 bb_redist_method_t method, int64_t setup_samples);
/* Collective.  One message (the runner's call): its times ADDED to parts
 * [BB_MESSAGE_PARTS]; wrong data and refusals counted in tally.  Every
 * messages_per_plan messages the plan is rebuilt first, untimed (auto's
 * trial with it). */
void bb_redist_candidate_message(bb_redist_candidate_t *c, bb_tally_t *tally, double *parts);
/* Local.  After the measurement m: the median message, plan and buffers
 * freed. */
void bb_redist_candidate_release(bb_redist_candidate_t *c, const bb_measure_result_t *m);
/* Local.  Everything freed; c zeroed. */
void bb_redist_candidate_clear(bb_redist_candidate_t *c);
/* Messages after which setup + K messages cost less than root's: 0 when c
 * is root or never pays (*why says which). */
int64_t bb_redist_break_even(const bb_redist_candidate_t *c, const bb_redist_candidate_t *root,
                             const char **why);
/* 1: the bound is above c's median (the bound is wrong, not a result). */
int bb_redist_bound_failed(const bb_redist_candidate_t *c, const bb_redist_bound_t *bound);
/* A line's ratio.root (root's median / median, null without root) and
 * efficiency (bound / median, null when nothing moves or the bound fails),
 * for a method and the reference alike. */
void bb_redist_median_quantities(cJSON *q, double median, const bb_redist_candidate_t *root,
                                 const bb_redist_bound_t *bound, const char *scope);
/* Rank 0.  A method line's columns after its times, and its cells. */
void bb_redist_candidate_columns(bb_table_t *table, const char *rank_stat_words);
void bb_redist_candidate_cells(bb_table_t *table, const bb_redist_candidate_t *c,
                               const bb_redist_candidate_t *root, double payload_median,
                               int failed, const bb_redist_bound_t *bound);
/* Rank 0.  The setup parts of c's first plan into first; into q, beside
 * the runner's, its row's: setup, amortization, ratio to root, payload,
 * traffic (direct: the direct plan's), messages checked, the bound (probe:
 * its measurement), efficiency and wrong messages. */
void bb_redist_candidate_first(cJSON *first, const bb_redist_candidate_t *c,
                               const char *plan_scope);
void bb_redist_candidate_quantities(cJSON *q, const bb_redist_candidate_t *c,
                                    const bb_redist_candidate_t *root,
                                    const bb_redist_traffic_t *direct,
                                    const bb_redist_bound_t *bound,
                                    const bb_measure_result_t *probe, const bb_row_t *row,
                                    const char *plan_scope);

/* Rank 0.  The notes under a point's lines: why the fastest (candidate
 * best, -1 for none) is fastest, the datatypes against the hand pack,
 * auto's choice, the bound and any bound failure. */
void bb_redist_candidates_note(bb_table_t *table, const bb_redist_candidate_t *c, int n,
                               int best, const bb_redist_bound_t *bound, const char *from,
                               const char *to);

/* Local.  " METHOD ROOT/METHOD" for each candidate but root ('-' where root
 * is missing or bit i of failed_mask is set) into buf (truncated). */
void bb_redist_candidates_ratios(const bb_redist_candidate_t *c, int n, int failed_mask,
                                 char *buf, size_t len);

/* ---- ScaLAPACK's Cpdgemr2d at a point: a harness reference, not a library
 * method (redist-reference.c) -------------------------------------------------- */

typedef struct bb_redist_reference {
    const bb_redist_point_t *pt;
    bb_scalapack_redist_t *ctx;    /* NULL: not expressible at this point */
    char why[256];                 /* why not (every rank alike) */
    double setup_s;                /* grids and descriptors, rank maximum */
    const bb_map_t *sm, *rm;       /* this rank's sending and receiving maps */
    double *send, *recv;
    int64_t k;                     /* messages made */
    double median;                 /* seconds, after the measurement */
} bb_redist_reference_t;

/* Collective.  The reference for the point's layouts (from: the driver's,
 * to: the engine's); 0, with r->why, where ScaLAPACK cannot express them or
 * is not built in. */
int bb_redist_reference_prepare(bb_redist_reference_t *r, const bb_redist_point_t *pt,
                                const bb_layout_t *from, const bb_layout_t *to);
/* Collective.  One message (the runner's call): filled, Cpdgemr2d timed,
 * every received slot checked outside the timing (wrong data in tally). */
void bb_redist_reference_message(bb_redist_reference_t *r, bb_tally_t *tally,
                                 double *parts);
/* Local.  The median of m, then the context and buffers freed. */
void bb_redist_reference_release(bb_redist_reference_t *r, const bb_measure_result_t *m);
/* Rank 0.  Its cells under bb_redist_candidate_columns, and its own
 * quantities (setup, ratio to root, efficiency, wrong messages). */
void bb_redist_reference_cells(bb_table_t *table, const bb_redist_reference_t *r,
                               const bb_redist_candidate_t *root, int failed,
                               const bb_redist_bound_t *bound);
void bb_redist_reference_quantities(cJSON *q, const bb_redist_reference_t *r,
                                    const bb_redist_candidate_t *root,
                                    const bb_redist_bound_t *bound, const bb_row_t *row);

/* ---- bbench-redist's options (redist-options.c) ------------------------------- */

enum { BB_REDIST_LAYOUTS_MAX = 8 };

/* The options' keys beyond their letters (n, e, d). */
enum { BB_REDIST_OPT_DRIVER = BB_OPT_LONG, BB_REDIST_OPT_FROM, BB_REDIST_OPT_TO,
       BB_REDIST_OPT_METHODS, BB_REDIST_OPT_MESSAGES, BB_REDIST_OPT_LINK,
       BB_REDIST_OPT_RATIOS, BB_REDIST_OPT_WORKLOAD, BB_REDIST_OPT_REMAP };


typedef struct bb_redist_options {
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
} bb_redist_options_t;

void bb_redist_options_defaults(bb_redist_options_t *options);
/* One option (a bad value is bb_run_usage). */
void bb_redist_options_parse(bb_run_t *run, bb_redist_options_t *options, int key,
                             const char *value);
/* The presets and checks between options (usage errors on every rank); the
 * number of points. */
size_t bb_redist_options_validate(bb_run_t *run, bb_redist_options_t *options);

/* ---- the md workload (redist-md.c) -------------------------------------------- */

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
