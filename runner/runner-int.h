/* runner-int.h: the runner's context, shared by runner.c (options, the
 * point loop, the record's run section) and variants.c (the rows of a
 * point: measurement, agreement, table and record).  Not for benchmarks. */
#ifndef BB_RUNNER_INT_H
#define BB_RUNNER_INT_H

#ifdef BB_INSIDE_BENCHMARK
/* The runner's own context: a benchmark reaches it through runner.h. */
#error "runner-int.h is the runner's own: a benchmark includes runner/runner.h"
#endif

#include "runner.h"
#include "runtime/bench.h"

/* The runtime's bench object of the run (the runner's own: benchmarks go
 * through bb_run_*). */
bb_bench_t *bb_run_bench(bb_run_t *run);

/* --malloc: the allocator as the C library sets it, or glibc's trim and
 * mmap thresholds fixed (allocator.c). */
typedef enum bb_malloc { BB_MALLOC_DEFAULT = 0, BB_MALLOC_NO_TRIM, BB_MALLOC_COUNT } bb_malloc_t;
const char *bb_malloc_name(bb_malloc_t policy);
/* Local.  Applies the policy; -1 with why when the library cannot. */
int bb_malloc_apply(bb_malloc_t policy, char *why, size_t len);
/* The record's allocator section: library, version, policy, thresholds and
 * the MALLOC_* / GLIBC_TUNABLES variables in effect. */
cJSON *bb_malloc_json(bb_malloc_t policy);
/* Whether the allocator is other than the library's default (the policy,
 * or a variable of the environment). */
int bb_malloc_tuned(bb_malloc_t policy);

struct bb_run {
    const bb_bench_desc_t *desc;
    bb_bench_desc_t workload; /* the program's, measuring as bb_run_use asked */
    bb_bench_t *bench;
    bb_measure_settings_t settings;
    const char *output;
    int quiet;
    int full;               /* -f: the full set of time columns */
    bb_format_t format;
    bb_table_t *table;      /* stdout's table, from setup until the run ends */
    /* -m/--message-size: the text and its ends (-1: open), parsed at once. */
    const char *message_size;
    int64_t message_min, message_max;
    int full_sweep;         /* --full-sweep: the benchmark's long default lists */
    bb_malloc_t malloc_policy; /* --malloc */
    char message_note[256]; /* what -m became, a table note */
    /* Over every measurement of the run, for the record's run section. */
    int64_t measurements, reps_min, reps_max, calls, primers;
    int64_t windows_missed;
    int64_t calls_overrun, calls_excluded, window_retries;
    int64_t warm_blocks, unsteady;  /* warm-up until steady, over the run */
    double window_max_s, offset_spread_max_s, offset_error_max_s;
    int64_t samples_min, samples_max;  /* rounds taken (the stopping rule) */
    int64_t until_unmet;    /* measurements whose rule was not met */
    /* Rank 0: every canary of the run, and what they cost. */
    double *canary_values;
    size_t canary_n, canary_cap;
    double canary_cost_s;
    int64_t canary_rounds, canary_marked;
    double start_s;         /* when the first point began */
    int64_t implausible;    /* rank 0: ratio cells flagged implausible */
    /* The rows of every point (benchmarks of variants). */
    bb_row_t rows[BB_RUN_ROWS_MAX];
    int nrows;
    int64_t payload_bytes;  /* the current point's, per call and rank */
    int64_t point_index;    /* the current point, from 0 */
    /* The one provider count. */
    int64_t lent, returned;
};

/* Collective.  The table's columns after the benchmark's key columns. */
void bb_variants_columns(bb_run_t *run, void *state);
/* Collective.  Point i of a benchmark of variants; returns an exit code. */
int bb_variants_point(bb_run_t *run, void *state, size_t i);
/* Rank 0.  run.modes: every variant a row measures. */
void bb_variants_modes(bb_run_t *run);

/* options.c: the measurement settings a run starts from (the descriptor's
 * defaults), and the parse of argv into the run (usage errors and --help
 * end the process on every rank). */
bb_measure_settings_t bb_run_default_settings(const bb_bench_desc_t *d);
void bb_run_parse_options(bb_run_t *run, void *state, int argc, char **argv);

#endif
