/*
 * runner.h: a benchmark is a descriptor; main() is one call to bb_run_main.
 *
 * The runner owns what every benchmark shares: MPI start-up, the option
 * vocabulary (the shared options below plus the descriptor's own, one
 * getopt_long table, --help generated from it), the output check before any
 * measurement, the limit on points, provenance capture, the point loop with
 * i/N progress and an estimate of the time left, the run summary and the
 * final, atomic record write.  The descriptor owns its kernels, its points
 * and its table rows.
 *
 * Shared options (the same letters in every program):
 *   -s, --samples N     samples per point, an integer in [3, 100000]
 *   -r, --reps N        calls per sample, an integer >= 1 (default: budget)
 *       --budget S      seconds per sample when --reps is not given
 *   -i, --iterations N  the same as --reps (OSU's letter)
 *   -w, --warmup N      calls after the first, before sampling
 *   -x, --warmup-calls N  the same as --warmup (OSU's letter)
 *   -f, --full          min, max, mean, median and calls per time
 *   -m, --message-size MIN:MAX  sizes in bytes (bb_run_message_sizes)
 *       --full-sweep    the benchmark's long default lists
 *   -o, --output FILE   the JSON record
 *       --format F      stdout as table, csv or json (bb_run_table)
 *   -q, --quiet         nothing on stderr but errors and warnings
 *   -h, --help / -V, --version
 * A benchmark's own options are long-only unless their letter means the
 * same thing in every program that has it (doc/options.md lists them).
 */
#ifndef BB_RUNNER_H
#define BB_RUNNER_H

#include "harness.h"
#include "measure.h"
#include "table.h"

/* The most points one run may measure: the product of the swept lists. */
enum { BB_RUN_POINTS_MAX = 4096 };

/* Option codes of long-only options start here; letters are short options. */
enum { BB_OPT_LONG = 256 };

typedef struct bb_option {
    const char *name;  /* long name, without "--"; NULL ends a table */
    int key;           /* a letter (also the short option) or >= BB_OPT_LONG */
    const char *arg;   /* the value's placeholder for --help; NULL: no value */
    const char *help;  /* for --help; '\n' continues on an indented line */
} bb_option_t;

/* The runner's context, passed to every descriptor callback. */
typedef struct bb_run bb_run_t;

typedef struct bb_bench_desc {
    const char *program;        /* "bbench-sum": messages and --version */
    const char *benchmark;      /* "sum": the record's benchmark */
    const char *summary;        /* --help: what it measures (after Usage) */
    const char *notes;          /* --help: after the options; may be NULL */
    const bb_option_t *options; /* the benchmark's own options */
    size_t state_size;          /* the runner allocates and zeroes the state */
    /* The benchmark's defaults of the shared measurement options; NULL: 3
     * samples, reps fitted to a 0.05 s budget, 2 warm-up calls, block timing. */
    const bb_measure_settings_t *settings;
    /* Defaults into state, before parsing.  May be NULL. */
    void (*defaults)(void *state);
    /* One of the benchmark's options; a bad value is bb_run_usage. */
    void (*parse)(bb_run_t *run, void *state, int key, const char *value);
    /* After parsing, before any measurement: checks between options and the
     * number of points (each a call of point). */
    size_t (*validate)(bb_run_t *run, void *state);
    /* Collective, after the header lines: buffers, calibrations, the table
     * header.  May be NULL. */
    void (*setup)(bb_run_t *run, void *state);
    /* A progress label for point i ("count 64K"). */
    void (*label)(const void *state, size_t i, char *buf, size_t len);
    /* Collective.  Measures point i, records it and prints its row (rank 0).
     * Returns an exit code: BB_EXIT_OK or BB_EXIT_FAILURE. */
    int (*point)(bb_run_t *run, void *state, size_t i);
    /* Collective, after the last point: final checks and the record's run
     * section.  Returns an exit code.  May be NULL. */
    int (*finish)(bb_run_t *run, void *state);
    /* Local: frees what state holds.  May be NULL. */
    void (*teardown)(void *state);
} bb_bench_desc_t;

/* The whole program: returns main()'s exit code (every rank the same). */
int bb_run_main(const bb_bench_desc_t *desc, int argc, char **argv);

bb_bench_t *bb_run_bench(bb_run_t *run);
MPI_Comm bb_run_comm(const bb_run_t *run);
int bb_run_rank(const bb_run_t *run);
int bb_run_size(const bb_run_t *run);
const bb_measure_settings_t *bb_run_settings(const bb_run_t *run);
/* stdout's table (--format): a benchmark prints its rows through it and
 * nothing else on stdout.  Valid from setup to finish. */
bb_table_t *bb_run_table(bb_run_t *run);
/* Local.  The status cell of a refusal, the same in every table:
 * refused:STAGE:seqS, then :rankR where a rank is known. */
void bb_run_format_refusal(const bb_refusal_t *refusal, char *buf, size_t len);
/* -f/--full: the full time columns (bb_table_time_columns). */
int bb_run_full(const bb_run_t *run);
/* --full-sweep: the benchmark uses its long default lists (minutes) instead
 * of the quick ones (seconds). */
int bb_run_full_sweep(const bb_run_t *run);

/* -m/--message-size, OSU's: MIN:MAX in bytes, the sizes MIN, 2 MIN, 4 MIN,
 * ... up to MAX (from 0: 0, 1, 2, 4, ...); "MIN:" and ":MAX" take the open
 * end from default_min / default_max (bytes: the ends of the benchmark's
 * default list); one size alone is that size.  Called from validate by
 * every benchmark with sizes: returns 0, list untouched, when -m was not
 * given; else fills list_inout with sizes in elements of element_bytes
 * (bytes / element_bytes rounded down; a nonzero size under one element is
 * dropped), adds a table note saying so, and returns 1.  -m together with
 * the benchmark's own list (list_inout not empty, named list_opt) or a range
 * left empty is a usage error; -m given to a program that never calls this
 * is one too. */
int bb_run_message_sizes(bb_run_t *run, const char *list_opt, int64_t element_bytes,
                         int64_t default_min, int64_t default_max,
                         bb_size_list_t *list_inout);
int bb_run_message_size_given(const bb_run_t *run);

/* A usage error found on every rank (each parses the same argv): rank 0
 * prints the message, every rank exits 2. */
void bb_run_usage(bb_run_t *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* A fatal error on this rank (MPI error, poisoned phase): exit 3 through
 * MPI_Abort, no record. */
void bb_run_fatal(bb_run_t *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Rank 0 prints a line on stderr (errors, notes); shown even with --quiet. */
void bb_run_note(bb_run_t *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Collective.  bb_measure_run with the run's settings; an engine failure is
 * fatal, naming what. */
void bb_run_measure(bb_run_t *run, const char *what, const bb_measure_variant_t *variant,
                    bb_measure_result_t *result_out);
/* Collective.  bb_measure_run_set (the variants' samples interleaved) with
 * the run's settings, counted in the run summary like bb_run_measure. */
void bb_run_measure_set(bb_run_t *run, const char *what,
                        const bb_measure_variant_t *variants, int nvariants,
                        int share_reps, bb_measure_result_t *results_out);

/* Option helpers: a bad value is a usage error naming opt. */
/* A size or list of sizes in [min, max] (bb_cli_parse_size[_list]). */
int64_t bb_run_parse_size(bb_run_t *run, const char *opt, const char *value,
                          int64_t min, int64_t max);
void bb_run_parse_size_list(bb_run_t *run, const char *opt, const char *value,
                            int64_t min, int64_t max, bb_size_list_t *list_out);
double bb_run_parse_seconds(bb_run_t *run, const char *opt, const char *value,
                            double min, double max);
/* A rank in [0, size), alone. */
int bb_run_parse_rank(bb_run_t *run, const char *opt, const char *value);
/* "R:SECONDS", seconds in [0, max_s]. */
void bb_run_parse_rank_seconds(bb_run_t *run, const char *opt, const char *value,
                               double max_s, int *rank_out, double *seconds_out);
/* "R:NAME": a rank in [0, size) and one of names[first..n-1]; returns the
 * name's index. */
int bb_run_parse_rank_choice(bb_run_t *run, const char *opt, const char *value,
                             const char *const *names, int first, int n, int *rank_out);
/* A comma list of names from names[0..n-1] (n <= 31), or "all": the set as a
 * bit mask (bit i for names[i]). */
unsigned bb_run_parse_choices(bb_run_t *run, const char *opt, const char *value,
                              const char *const *names, int n);

/* Collective.  Objects a provider lent and got back: every rank's prepared
 * and released counts are agreed (MAX of the difference); not exactly once
 * is a measured failure, said on stderr.  Returns the exit code. */
int bb_run_check_released(bb_run_t *run, const char *what, int64_t prepared,
                          int64_t released);

/* The compute kernel of every benchmark that computes between polls: an
 * MPI-free, cache-resident floating-point loop (bb_compute_run).  One
 * policy: every rank calibrates (fastest of BB_KERNEL_TRIALS trials of
 * BB_KERNEL_TRIAL_S), and the slowest rank's rate sets the iterations, so
 * that no rank's batch is short. */
enum { BB_KERNEL_TRIALS = 10 };
#define BB_KERNEL_TRIAL_S 0.002
#define BB_KERNEL_DESCRIPTION "MPI-free cache-resident floating-point loop; " \
    "iterations from the slowest rank's calibrated rate"

typedef struct bb_run_kernel {
    bb_compute_t local;        /* this rank's calibration */
    double slowest_rate;       /* iterations per second, minimum over ranks */
    double fastest_rate;       /* maximum over ranks */
    double batch_s;            /* the batch duration asked for */
    int64_t iterations;        /* per batch, at slowest_rate */
    double batch_measured_s;   /* one batch measured after calibration: the
                                  mean of 100, rank maximum */
    double sink;               /* keeps the check's work observable */
} bb_run_kernel_t;

/* Collective.  Calibrates the kernel for batches of batch_s seconds. */
void bb_run_kernel_calibrate(bb_run_t *run, double batch_s, bb_run_kernel_t *kernel_out);

/* Local.  Iterations that take about seconds at the agreed (slowest) rate. */
int64_t bb_run_kernel_iterations(const bb_run_kernel_t *kernel, double seconds);

#endif
