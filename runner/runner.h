/*
 * runner.h: a benchmark is a descriptor; main() is one call to bb_run_main.
 *
 * The runner owns what every benchmark shares: MPI start-up, the option
 * vocabulary (the shared options below plus the descriptor's own, one
 * getopt_long table, --help generated from it), the output check before any
 * measurement, the limit on points, provenance capture, the point loop with
 * i/N progress and an estimate of the time left, the run summary and the
 * final, atomic record write.  A benchmark of variants (the descriptor's
 * variants table) leaves measuring and reporting to the runner too
 * (variants.c); the descriptor owns its calls, its options and what it
 * records beyond the standard quantities.
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
 * same thing in every program that has it (doc/options.md, "Options every
 * benchmark shares", lists the shared ones).
 */
#ifndef BB_RUNNER_H
#define BB_RUNNER_H

/* A benchmark reaches the runtime (MPI's lifetime, provenance, the record
 * file) only through the functions below, never runtime/ itself
 * (tests/tools/layers.sh). */
#include "bbench.h"
#include "record/bbrecord.h"
#include "common/cli.h"
#include "kernel.h"
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

/* ---- variants: what a benchmark measures at each point ------------------ */

enum { BB_RUN_ROWS_MAX = 48, BB_RUN_PARTS_MAX = 16, BB_RUN_COUNTS_MAX = 4, BB_RUN_RATIOS_MAX = 3 };

typedef struct bb_row bb_row_t;

/* One call of a row's variant, as bb_measure_call_fn: it ADDS the seconds of
 * each timed part to parts[] (parts[0] the whole call) and its counts to
 * counts[]; what it saw beyond times goes to row->local. */
typedef bb_status_t (*bb_variant_call_fn)(bb_run_t *run, void *state, bb_row_t *row,
                                          double *parts, double *counts);

/* A ratio column of a row: its median over the median of the first row of
 * variant `to` that the descriptor's ratio_match accepts (any when NULL). */
typedef struct bb_ratio {
    const char *suffix;   /* NULL ends the list; the column is label + suffix */
    int to;               /* the reference variant */
    const char *plain;    /* the column's name when the row's label is the
                             variant's name alone; NULL: label + suffix */
    int contains;         /* 1: the row's call contains the reference's (a
                             paired interval wholly below 1 is implausible) */
} bb_ratio_t;

/* How a row's elapsed time shows in the table. */
typedef enum bb_columns {
    BB_COLUMNS_TIMES = 0,  /* median, min, max (bb_table_time_columns) */
    BB_COLUMNS_MEDIAN,     /* the median alone */
    BB_COLUMNS_MEDIAN_FULL /* the median alone; -f: the full time columns */
} bb_columns_t;

/* A variant: the protocol, or a reference that differs from its neighbour
 * in one thing.  The runner writes its table columns, its ratios, the
 * record's timed parts (with includes), first call, payload, RSS and the
 * unobservable nulls, and run.modes from name and differs. */
typedef struct bb_variant {
    const char *name;      /* --mode, parameters.mode, run.modes, labels */
    const char *differs;   /* what it differs in: run.modes, the legend */
    bb_variant_call_fn call;
    /* bit i: part_names[i] is timed (bit 0, elapsed, always).  A part
     * includes the timed parts named under it ("a.b" is in "a"); elapsed
     * includes those under no other. */
    unsigned parts;
    const char *absent;    /* why a part or quantity it lacks is null */
    bb_columns_t columns;
    int payload;           /* 1: it moves the point's payload */
    bb_ratio_t ratios[BB_RUN_RATIOS_MAX];  /* ended by a NULL suffix or the end */
    /* Bit i: part i as a column of its own after the row's times,
     * "<label>_<the part name's last component>" (the median of the part
     * in the median sample of the whole); '-' where the row does not time
     * it. */
    unsigned shown;
} bb_variant_t;

/* What a row's calls saw at one point, beside the engine's times.  The
 * calls fill row->local; after the measurement the runner agrees row->agreed
 * (MAX over ranks, the refusing rank the lowest whose own preflight refused
 * when any did). */
typedef struct bb_tally {
    int64_t refused_calls;
    bb_refusal_t refusal;     /* the first refusal seen */
    int64_t local_refusals;   /* refusals this rank's own preflight caused */
    int64_t wrong;            /* result or payload check failures */
    int64_t tracked_peak, max_inflight, payload_bytes;
    int64_t p2p;              /* this rank posted a point-to-point request */
    int64_t ok_calls, test_completed;  /* this rank's; not agreed */
    int64_t rss_peak;         /* the runner's: RSS high-water mark */
} bb_tally_t;

/* One measured line of a point: a variant under one of the benchmark's
 * policies (declared with bb_run_add_row). */
struct bb_row {
    int index;                /* in the point's rows, from 0 */
    int variant;
    int policy;               /* the benchmark's index; 0 when it has none */
    char label[64];           /* column heads and messages */
    char legend[512];         /* the time columns' legend */
    unsigned parts;           /* the variant's, or fewer (an untimed phase) */
    const char *absent;       /* why the parts left out are null */
    /* Set by point_begin (a table of one line per row only): the row is not
     * measured at this point, and why (borrowed until point_end); its line
     * says so and it has no record point.  Cleared before each point. */
    const char *off;
    bb_tally_t local, agreed;
    bb_measure_result_t m;    /* the point's samples, identical on every rank */
    void *data;               /* the benchmark's, per row */
};

/* A table of one line per row: its label and time columns, the status
 * column's legend, a row's status cell and the lines after a point's rows. */
typedef struct bb_long_table {
    const char *label_column, *label_legend;
    int label_width;
    /* A second text column after the label; NULL: none. */
    const char *tag_column, *tag_legend;
    int tag_width;
    const char *(*row_tag)(bb_run_t *run, void *state, const bb_row_t *row);
    const char *time_column, *time_legend;
    const char *status_legend;
    /* Rank 0.  A row's status cell; NULL: the runner's (ok, refused:...,
     * payload-mismatch).  May be NULL. */
    const char *(*row_status)(bb_run_t *run, void *state, const bb_row_t *row);
    /* Rank 0.  The figure in seconds a hidden row stands for (its line: the
     * key, its variant's name, the figure as the time column's median, ok);
     * NULL: hidden rows have no line. */
    double (*hidden_figure)(bb_run_t *run, void *state, const bb_row_t *row);
    /* Rank 0.  Lines and notes after the point's rows.  May be NULL. */
    void (*point_lines)(bb_run_t *run, void *state);
} bb_long_table_t;

/* A column of the point's key, the leading cells of every line: the runner
 * writes its head, its cells (from the descriptor's key_value) and, where
 * param is set, the record parameter of the same value. */
typedef enum bb_key_kind { BB_KEY_INTEGER = 0, BB_KEY_TEXT, BB_KEY_NUMBER } bb_key_kind_t;

typedef struct bb_key {
    const char *column;   /* the head; NULL ends a table */
    const char *unit;     /* NULL: none */
    const char *legend;
    int width;
    bb_key_kind_t kind;   /* BB_KEY_NUMBER: one decimal */
    const char *param;    /* the parameter's name; NULL: the table's alone */
} bb_key_t;

typedef struct bb_key_value {
    int64_t integer;
    double number;
    const char *text;     /* borrowed until the next key_value */
    int missing;          /* '-' in the table; no parameter */
} bb_key_value_t;

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
    /* A progress label for point i ("count 64K").  May be NULL. */
    void (*label)(const void *state, size_t i, char *buf, size_t len);
    /* Collective.  Measures point i, records it and prints its row (rank 0).
     * Returns an exit code: BB_EXIT_OK or BB_EXIT_FAILURE. */
    int (*point)(bb_run_t *run, void *state, size_t i);
    /* Collective, after the last point: final checks and the record's run
     * section.  Returns an exit code.  May be NULL. */
    int (*finish)(bb_run_t *run, void *state);
    /* Local: frees what state holds.  May be NULL. */
    void (*teardown)(void *state);

    /* A benchmark of variants leaves point NULL and declares these; the
     * runner measures every row of a point through one path (interleaved,
     * reps shared as share says), agrees the tallies and reports. */
    const bb_variant_t *variants;
    int nvariants;
    const char *const *part_names;  /* [nparts], [0] "elapsed" */
    int nparts, ncounts;
    /* Collective, before the point's measurement: the point's values and
     * per-point objects.  Returns the payload bytes per call and rank.  May
     * be NULL (no payload). */
    int64_t (*point_begin)(bb_run_t *run, void *state, size_t i);
    /* Collective, after it (tallies local, samples reduced): a census,
     * closing per-point objects.  May be NULL. */
    void (*point_end)(bb_run_t *run, void *state);
    /* 1 when a ratio of row may use reference row ref.  May be NULL. */
    int (*ratio_match)(const void *state, const bb_row_t *row, const bb_row_t *ref);
    /* 1 when the options ask for refusals (none is then an error). */
    int (*refusal_asked)(const void *state);
    /* The point's key columns (a table ended by a NULL column) and, rank 0,
     * key k's value at the current point. */
    const bb_key_t *keys;
    void (*key_value)(bb_run_t *run, void *state, int k, bb_key_value_t *out);
    /* Rank 0.  A row's own columns after its times, and their cells.  May
     * be NULL. */
    void (*row_columns)(bb_run_t *run, void *state, const bb_row_t *row);
    void (*row_cells)(bb_run_t *run, void *state, const bb_row_t *row);
    /* Rank 0.  A row's parameters beyond the keys' (the runner adds those
     * and mode).  May be NULL. */
    void (*parameters)(bb_run_t *run, void *state, const bb_row_t *row, cJSON *params);
    /* Rank 0.  What is the benchmark's own in a row's quantities (it may
     * replace a standard one); may return a census member for the point. */
    cJSON *(*quantities)(bb_run_t *run, void *state, const bb_row_t *row, cJSON *q);
    /* Collective, after every row is reported: the point's own checks.
     * Returns an exit code.  May be NULL. */
    int (*point_check)(bb_run_t *run, void *state);

    /* Optional, for rows that together make one figure (bbench-overlap). */
    /* 1: a point is one record point, not one per row: a row's whole call
     * is recorded under its variant's name (part_names[0] unused), its
     * timed parts under theirs; payload and RSS once; parameters and
     * quantities are called with row NULL, and no mode is added. */
    int merged;
    /* Bit v: variant v's rows are measured alone, before the others, each
     * with its own reps (point_ready may size the others from them). */
    unsigned alone;
    /* Bit v: variant v's rows lead the others' interleaved set, the first
     * of them choosing the reps all share under BB_SHARE_FIRST (0: the
     * first row leads). */
    unsigned lead;
    /* Collective, between the rows measured alone and the rest.  May be
     * NULL. */
    void (*point_ready)(bb_run_t *run, void *state);
    /* Collective, after each block of a row's calls, outside the timing
     * (bb_measure_block_fn: sample is the block's sample, -1 for none):
     * where per-call facts are reduced over ranks.  May be NULL. */
    bb_status_t (*block_end)(bb_run_t *run, void *state, bb_row_t *row, int64_t calls,
                             int64_t sample);
    /* Rank 0.  The point's own columns after the rows' and their ratios,
     * before the status, and their cells.  May be NULL. */
    void (*point_columns)(bb_run_t *run, void *state);
    void (*point_cells)(bb_run_t *run, void *state);

    /* Optional, for a table of one line per row (bbench-redist). */
    /* The line of a row (long): the key cells, the row's label under
     * label_column, its times under time_column, its own cells
     * (row_columns is called once, with row NULL), then its status. */
    const bb_long_table_t *long_table;
    /* How the point's set shares reps; 0: BB_SHARE_FIT (one figure unless the
     * rows' costs differ by more than BB_SHARE_FIT_SPREAD times). */
    bb_share_t share;
    /* Bit v: variant v's rows are measured in the point's set but neither
     * shown nor recorded by the runner (a reference the benchmark derives
     * its own figure from); their calls may time hidden_nparts parts. */
    unsigned hidden;
    int hidden_nparts;
    /* Rank 0.  A row's own first-call figures (beside the runner's).  May be
     * NULL. */
    void (*first_call)(bb_run_t *run, void *state, const bb_row_t *row, cJSON *first);
    /* Rank 0.  After a row's record point is added: what stands beside its
     * quantities.  May be NULL. */
    void (*point_added)(bb_run_t *run, void *state, const bb_row_t *row, cJSON *point);
    /* The parameters' key for the variant's name; NULL: "mode". */
    const char *mode_key;
    /* 1: it lends no provider arrays; the run section does not count them. */
    int no_provider;
    /* The one option (its long name, "role") whose value may differ between
     * the programs of an MPMD launch (mpiexec -n 2 P --role driver : -n 2 P
     * --role engine).  Every other argument, and whether this option is
     * given, are agreed over the world before parsing: a difference is exit
     * 2 on every rank, rank 0 naming both argument lists.  NULL: no
     * agreement (no collective). */
    const char *code_option;
} bb_bench_desc_t;

/* From validate, before any row is added: measure with workload's variants,
 * parts, keys, table and callbacks from here on (a program of two
 * workloads: bbench-redist --workload md).  The program's own fields
 * (program to teardown, options and settings) stay the program's. */
void bb_run_use(bb_run_t *run, const bb_bench_desc_t *workload);

/* The whole program: returns main()'s exit code (every rank the same). */
int bb_run_main(const bb_bench_desc_t *desc, int argc, char **argv);

/* The world of the protocols' objects (bb_sum_phase_create_attr, ...). */
bb_world_t *bb_run_world(bb_run_t *run);
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
/* How a sample is taken across ranks, in a legend's words: "rank maximum"
 * or, with --rank-stat mean, "rank mean" (static). */
const char *bb_run_rank_stat_words(const bb_run_t *run);
/* Where a part's figure comes from, in a legend's words: "the same calls on
 * the same rank, the one with the slowest whole" or, with --rank-stat mean,
 * "the same calls, the mean over ranks" (static). */
const char *bb_run_parts_words(const bb_run_t *run);
/* Rank 0.  Under --timing window, the quantity window.calls_excluded of a
 * measurement: the calls left out of its samples (flagged late or overrun
 * on some rank), in all and per sample; NULL under other timings. */
cJSON *bb_run_excluded_quantity(const bb_run_t *run, const bb_measure_result_t *m);

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

/* Collective.  The bytes of the input file PATH (an option's value, named
 * OPT in messages), read by rank 0 alone and sent to every rank, so that
 * ranks on hosts without a shared folder use rank 0's copy and no rank
 * reads another file: returns a NUL-terminated copy of at most max_bytes
 * (the caller frees it), its length in *len_out.  A file rank 0 cannot
 * read, or one longer than max_bytes, is a usage error on every rank (exit
 * 2), said once, naming rank 0. */
char *bb_run_read_input(bb_run_t *run, const char *opt, const char *path, size_t max_bytes,
                        size_t *len_out);

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
                        bb_share_t share, bb_measure_result_t *results_out);

/* --mode: a comma list of the descriptor's variant names, "all", or
 * "both" (the set given). */
unsigned bb_run_parse_modes(bb_run_t *run, const char *value, unsigned both);

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
/* Exactly one of names[0..n-1]: its index. */
int bb_run_parse_one(bb_run_t *run, const char *opt, const char *value,
                     const char *const *names, int n);
/* "R:NAME": a rank in [0, size) and one of names[first..n-1]; returns the
 * name's index. */
int bb_run_parse_rank_choice(bb_run_t *run, const char *opt, const char *value,
                             const char *const *names, int first, int n, int *rank_out);
/* A comma list of names from names[0..n-1] (n <= 31), or "all": the set as a
 * bit mask (bit i for names[i]). */
unsigned bb_run_parse_choices(bb_run_t *run, const char *opt, const char *value,
                              const char *const *names, int n);

/* Local, from validate.  Appends a row to every point: variant under the
 * benchmark's policy, its label and legend.  Returns the row. */
bb_row_t *bb_run_add_row(bb_run_t *run, int variant, int policy, const char *label,
                         const char *legend);
int bb_run_rows(const bb_run_t *run);
bb_row_t *bb_run_row(bb_run_t *run, int r);
/* Part p of a row at the current point in the median sample of its whole
 * (part 0: the whole's median; bb_measure_part_at_median). */
double bb_row_median(const bb_row_t *row, int p);

/* Rank 0: the record's run section (created at first use); NULL elsewhere. */
cJSON *bb_run_section(bb_run_t *run);
/* Rank 0: sets the record's top-level member name (a benchmark's own, such
 * as "formulas"), taking item; elsewhere item is freed. */
void bb_run_record_set(bb_run_t *run, const char *name, cJSON *item);

/* Collective.  How this run's MPI library moves data: the library and its
 * progress setting and every rank's threads, observed now; a note in the
 * table and the record's "progress" member say so.  An MPI failure is
 * fatal. */
void bb_run_observe_progress(bb_run_t *run);

/* Local.  The one provider count: an array lent, an array given back.  The
 * runner checks at the end that every one came back exactly once (a
 * measured failure otherwise) and records both counts in the run section. */
void bb_run_lent(bb_run_t *run);
void bb_run_returned(bb_run_t *run);

/* Collective.  Objects a provider lent and got back: every rank's prepared
 * and released counts are agreed (MAX of the difference); not exactly once
 * is a measured failure, said on stderr.  Returns the exit code. */
int bb_run_check_released(bb_run_t *run, const char *what, int64_t prepared,
                          int64_t released);

/* The payload fixture: byte i of sequence s is byte i % 8 (least
 * significant first) of the 64-bit word mix(s) + (i / 8) x
 * 0x9E3779B97F4A7C15.  Local, MPI-free. */
#define BB_PAYLOAD_DESCRIPTION "payload byte i of sequence s is byte i%8 (least " \
    "significant first) of the 64-bit word mix(s) + (i/8) * 0x9E3779B97F4A7C15"
unsigned char bb_payload_byte(int64_t seq, int64_t i);
void bb_payload_fill(unsigned char *buf, int64_t n, int64_t seq);
/* Bytes that differ from the pattern, plus 1 when only a position-weighted
 * checksum of the whole differs: nonzero is a mismatch. */
int64_t bb_payload_check(const unsigned char *buf, int64_t n, int64_t seq);
/* Local.  A new array of n bytes with every page touched, so that no
 * first-touch fault lands in a measured call; NULL when out of memory. */
unsigned char *bb_payload_alloc_touched(int64_t n);

/* The payload fixture of every transfer phase a benchmark drives
 * (bb_payload_fill): a provider that presents the ticket's sequence, a
 * consumer that checks every byte, compute batches; or, sampled, the
 * payload of sequence 0 written once at setup and three bytes of it checked
 * (first, middle, last: a wrong transfer still fails, at no cost in the
 * call), for a benchmark that times computation around the phase. */

typedef struct bb_xfer_fixture {
    bb_run_t *run;            /* counts what the provider lends */
    int refuse;               /* this rank's provider refuses */
    int fail_consumer;        /* the consumer fails */
    int sampled;              /* sequence 0 written once, three bytes checked */
    int64_t fail_batch;       /* this rank's compute batch that fails; -1: none */
    unsigned char *src;       /* the provider's array */
    int64_t nbytes;
    int64_t expect_seq;       /* the sequence the destination presented */
    int64_t bad_bytes;        /* consumer check failures, this rank */
    int64_t iterations;       /* compute kernel iterations per batch */
    volatile double sink;     /* the kernel's results: the work stays */
    bb_transfer_provider_t provider;  /* the phase's callbacks, on this fixture */
    bb_transfer_consumer_t consumer;
    bb_transfer_compute_t compute;
} bb_xfer_fixture_t;

/* Local: the provider's array of max_bytes, every page touched (sampled:
 * written with sequence 0) (a failure is bb_run_fatal), and the callbacks.
 * fx must not move afterwards. */
void bb_xfer_fixture_setup(bb_run_t *run, bb_xfer_fixture_t *fx, int64_t max_bytes,
                           int sampled);
void bb_xfer_fixture_free(bb_xfer_fixture_t *fx);


#endif
