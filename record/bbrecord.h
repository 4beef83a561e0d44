/*
 * bbrecord.h: the record library (not installed, no MPI): JSON measurement
 * records (writing, reading, the one validator), statistics of samples, and
 * the comparison of record sets.  bbench-compare links only this library.
 * Conventions are those of <bbench.h>.
 */
#ifndef BBRECORD_H
#define BBRECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "bbench/status.h"

/* ------------------------------------------------------------------------ */
/* Statistics of samples                                                    */
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

/* The default level of an interval of the median (--confidence). */
#define BB_CONFIDENCE_DEFAULT 0.95

/* A distribution-free interval of the median of n independent samples
 * (Hoefler and Belli, SC15): [x(j), x(n+1-j)] of the sorted samples
 * (1-based order statistics), j the largest whose binomial coverage
 * 1 - 2 * P(Binomial(n, 1/2) <= j - 1) is at least the level. */
typedef struct bb_interval {
    double level;     /* asked for, in (0, 1) */
    double low, high; /* in the samples' unit */
    double coverage;  /* the exact coverage of [x(j), x(n+1-j)], >= level */
    size_t j;         /* the order statistic (1-based) of low */
} bb_interval_t;

/* Local.  The order statistic j (1-based) of the interval of the median of
 * n samples at level (0 < level < 1), and its coverage (may be NULL).  0
 * when n is too small for the level (n < 6 at 0.95: even [min, max] covers
 * less), and for a level outside (0, 1). */
size_t bb_stats_ci_order(size_t n, double level, double *coverage_out);

/* Local.  The interval of the median of n finite samples at level.
 * BB_ERR_ARG for bad input (n 0, a non-finite sample, a level outside
 * (0, 1)), BB_ERR_NOMEM.  When n is too small for the level, BB_OK with j
 * 0, low and high NaN and coverage that of [min, max]. */
bb_status_t bb_stats_ci(const double *samples, size_t n, double level,
                        bb_interval_t *ci_out);

/* Local.  The conservative interval of a / b from the intervals of a and
 * b, both positive: [a.low / b.high, a.high / b.low].  0 with *out NaN
 * when either bound is not a positive finite number. */
int bb_stats_ratio_interval(const bb_interval_t *a, const bb_interval_t *b,
                            double *low_out, double *high_out);

/* Paired figures: sample k of a and of b taken in the same round (the
 * runner interleaves rows), so a_k / b_k cancels what the machine did in
 * that round. */
typedef struct bb_paired {
    size_t rounds;   /* rounds used: a_k and b_k finite, b_k > 0, not dropped */
    double median;   /* median of a_k / b_k; NaN when rounds is 0 */
    bb_interval_t ci;/* its interval; low and high NaN when rounds is too few */
    int resolved;    /* 1: the interval excludes 1.0 */
} bb_paired_t;

/* Local.  The paired ratio of n rounds; drop (may be NULL) marks rounds
 * left out (nonzero).  BB_ERR_ARG for a NULL a or b, BB_ERR_NOMEM; a ratio
 * with no usable round is BB_OK with rounds 0. */
bb_status_t bb_stats_paired(const double *a, const double *b, const unsigned char *drop,
                            size_t n, double level, bb_paired_t *paired_out);

/* A ratio a / b of two figures of one point, as every bbench table prints
 * it and every record keeps it: paired where both were sampled in the same
 * rounds (equal sample counts: the median over rounds of a_k / b_k and its
 * interval of the median, without the rounds drop marks), else the ratio of
 * the medians with the conservative interval [a.low / b.high, a.high /
 * b.low] (bb_stats_ratio_interval). */
typedef struct bb_ratio_figure {
    double of_medians;   /* a's median / b's */
    double shown;        /* the paired median, else of_medians */
    double low, high;    /* the interval the claim rests on; NaN: none */
    int paired;          /* shown is the paired median */
    bb_paired_t pair;    /* when paired */
    double level;
    int resolved;        /* the interval excludes 1.0 */
    int moved;           /* paired, and of_medians outside the paired interval */
} bb_ratio_figure_t;

/* Local.  a or b NULL (no samples): the ratio of the medians, no interval;
 * unpaired says the samples were not taken in the same rounds; drop (may
 * be NULL) marks rounds to leave out of a paired figure. */
void bb_ratio_figure(const double *a, size_t na, double a_median, const double *b, size_t nb,
                     double b_median, int unpaired, const unsigned char *drop, double level,
                     bb_ratio_figure_t *ratio_out);
/* "1.23", with '?' when not resolved and '!' when the ratio of the medians
 * lies outside the paired interval. */
void bb_ratio_figure_text(const bb_ratio_figure_t *ratio, char *buf, size_t len);
/* The claim's interval as JSON: [low, high], or null without one.  Caller
 * owns. */
cJSON *bb_ratio_figure_interval_json(const bb_ratio_figure_t *ratio);

/* Time quantisation: what an oversubscribed machine's scheduler makes of
 * samples (every figure a multiple of its slice). */
typedef struct bb_quantum {
    double step;      /* the common step in the samples' unit; 0: none found */
    size_t fitting;   /* samples within BB_QUANTUM_TOLERANCE x step of a multiple */
    size_t considered;/* samples at or above min_step */
    int multiples;    /* distinct multiples seen (>= 2 for a step) */
} bb_quantum_t;
#define BB_QUANTUM_TOLERANCE 0.05 /* of the step, either side of a multiple */
#define BB_QUANTUM_SHARE 0.9      /* samples that must fit */
#define BB_QUANTUM_MIN_STEP_S 1e-3 /* a scheduler's slice is 1 ms or more */

/* Local.  Looks for a step >= min_step such that at least BB_QUANTUM_SHARE
 * of the n samples at or above min_step lie within BB_QUANTUM_TOLERANCE x
 * step of one of its first 16 multiples, with at least two distinct
 * multiples among them (one cluster alone says nothing of a step).  The
 * largest such step wins.  BB_ERR_ARG for NULL arguments, BB_ERR_NOMEM. */
bb_status_t bb_stats_quantum(const double *samples, size_t n, double min_step,
                             bb_quantum_t *quantum_out);

/* ------------------------------------------------------------------------ */
/* Records: JSON measurement records, schema bbench.record/1      */
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

/* The level of the intervals of the median that bb_record_add_point gives
 * every summarized quantity (ci, or ci null and ci_reason when the samples
 * are too few): BB_CONFIDENCE_DEFAULT unless set.  BB_ERR_ARG outside (0, 1). */
bb_status_t bb_record_set_confidence(bb_record_t *record, double level);
double bb_record_confidence(const bb_record_t *record);
/* An interval as a record writes it: {level, low, high, coverage, order},
 * or a JSON null when it has no order statistic (j 0).  Caller owns. */
cJSON *bb_interval_json(const bb_interval_t *ci);
/* Why n samples have no interval at level (for ci_reason and tables). */
void bb_interval_reason(size_t n, double level, char *buf, size_t len);

/* Quantities: { value, unit, scope, reason }.  Units: "s", "byte",
 * "count", "ratio".  Scopes such as "call/max-rank", "call/rank". */
/* A timing: value = median, samples (all n), median, range [min, max],
 * range_confidence; includes is a NULL-terminated list of child names
 * (or NULL).  NULL on allocation failure or n == 0. */
cJSON *bb_quantity_timing(const double *samples, size_t n, const char *scope,
                          const char *const *includes);
/* The same for samples of another unit ("count": page faults per call). */
cJSON *bb_quantity_samples(const double *samples, size_t n, const char *unit,
                           const char *scope, const char *const *includes);
/* A measured exact value. */
cJSON *bb_quantity_value(double value, const char *unit, const char *scope);
/* Not measured: value null and the reason. */
cJSON *bb_quantity_null(const char *unit, const char *scope, const char *reason);
/* Set q's "includes" to the NULL-terminated names (nothing for NULL or an
 * empty list); returns q. */
cJSON *bb_quantity_includes(cJSON *q, const char *const *includes);
/* Add quantity q (ownership taken) under name to the object quantities. */
void bb_quantities_add(cJSON *quantities, const char *name, cJSON *q);
/* Add the quantities a microbenchmark cannot observe, as null with their
 * reasons: network.bytes (call/rank; payload bytes are not wire bytes),
 * memory.mpi_internal (run/rank) and time.full_run (run/max-rank: the time of
 * a complete scientific run, which the adapter's record has a place for). */
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

/* What a file that is not a regular one is ("FIFO", "directory", ...), for
 * messages. */
const char *bb_file_kind(mode_t mode);

/* Local.  The offset of the first byte of text[0, len) that is not part of
 * valid UTF-8, or len when all of it is valid. */
size_t bb_utf8_invalid_at(const char *text, size_t len);

/* Local.  A copy of JSON text (as cJSON_Print makes it) in which every byte
 * that is not part of valid UTF-8, which can only stand inside a string
 * there, is replaced by the escape \ufffd.  Caller frees (free); NULL when
 * out of memory. */
char *bb_json_text_utf8(const char *text);

/* ------------------------------------------------------------------------ */
/* Comparison: record sets, regressions, contract changes       */
/* ------------------------------------------------------------------------ */
/* Local, MPI-free: usable without MPI. */

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
/* The i-th JSON file of a directory that was skipped because it is not a
 * record ("FILE: schema: ..."), or NULL past the last.  Borrowed.  Only
 * JSON that names no schema, or one that is not a record's (a saved
 * bbench.compare/1 report), is skipped: a record of another version
 * ("bbench.record/2") is unusable input. */
const char *bb_record_set_skipped(const bb_record_set_t *set, size_t i);

/* Local.  May the report be written to path (what names it in messages,
 * "--details")?  Never over an input: not a file of base or cand (by
 * identity: a hard link counts), nor anywhere inside a directory given as
 * base or cand; and only to a regular file or a new path, looked at with
 * lstat, never opened (a FIFO would block).  With fd >= 0 the open file is
 * checked instead (fstat), so that a swap after the first look is caught;
 * path NULL and fd 1 checks standard output, which may also be a terminal
 * or a pipe.  BB_ERR_ARG (err says why) or BB_ERR_IO. */
bb_status_t bb_compare_check_output(const bb_record_set_t *base,
                                    const bb_record_set_t *cand, const char *what,
                                    const char *path, int fd, char *err,
                                    size_t errlen);

/* The regression rule, applied to every timing (unit "s" with a median and
 * a range) of every matched point; the one statement of it, printed by
 * --help and in every report (doc/tools.md quotes it).  The
 * interval of the median is the record's ci, or computed from the samples
 * at BB_CONFIDENCE_DEFAULT for a record from before intervals. */
#define BB_COMPARE_RULE                                                       \
    "A timing regressed when the candidate median exceeds the base median "  \
    "by more than the tolerance t (cand median > base median x (1 + t)) and " \
    "the shift is significant: with 5 samples or more on each side, a "      \
    "two-sided Mann-Whitney U test gives p < 0.05, whether or not the "       \
    "ranges overlap; with fewer on either side, the ranges are disjoint "     \
    "(cand min > base max).  Where both sides have an interval of the "      \
    "median (ci; 6 samples or more at 95%), the intervals must also be "     \
    "apart (cand ci.low > base ci.high); where either side has none, the "   \
    "timing is judged without them and counted unresolved.  An improvement " \
    "is the same with base and candidate swapped.  Anything else is within " \
    "noise, with the reason."
/* Quantities the base declares "deterministic": true (a contract; an older
 * record without the member: bytes and counts without samples outside a
 * run scope), the declarations ("deterministic", "scope") of quantities in
 * both, the record's vocabulary and the point status must be equal; a
 * difference is a contract change. */
#define BB_COMPARE_DEFAULT_TOLERANCE 0.10
/* Records whose canaries' main modes (run.canary.mode_values) differ by more
 * than this factor are not judged against each other (the runner's
 * switch factor). */
#define BB_COMPARE_CANARY_FACTOR 1.5

typedef struct bb_compare_summary {
    size_t matched;            /* point pairs */
    size_t unmatched_base;     /* points only in the base */
    size_t unmatched_candidate;
    size_t regressions;        /* timings regressed */
    size_t improvements;       /* timings improved */
    size_t within_noise;       /* timings neither (ranges overlap, p too
                                  large, intervals of the median overlap,
                                  or under tolerance) */
    size_t unresolved;         /* judged timings (also counted above) without
                                  an interval of the median on a side: too
                                  few samples, the rule without intervals */
    size_t unmeasured;         /* timings null on one side */
    size_t withheld;           /* timings not judged: measured under two MPI
                                  libraries (MPICH against Open MPI) */
    size_t contract_changes;   /* deterministic or status differences */
    size_t warnings;           /* distinct provenance differences */
    size_t skipped;            /* JSON files of a directory that are not records */
    size_t lost_failing;       /* unmatched base points that fail: all of
                                  them unless report_only or allow_missing */
} bb_compare_summary_t;

typedef struct bb_compare_options {
    double tolerance;                      /* t of the rule, >= 0 */
    const char *const *ignore_parameters;  /* names left out of matching
                                              (e.g. a budget-chosen "reps") */
    size_t n_ignore;
    int report_only;     /* --report: timings and lost points never fail */
    int allow_missing;   /* --allow-missing: base points the candidate
                            lacks are listed, not failed */
    int time_oversubscribed;  /* --time-oversubscribed: judge the timings of
                                 a pair whose record says oversubscribed
                                 (withheld otherwise: time-sharing) */
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

/* Exit code for a summary: 2 nothing matched; 1 a contract change, lost
 * points that fail (lost_failing), or a regression unless report_only;
 * else 0. */
int bb_compare_exit_code(const bb_compare_summary_t *summary, int report_only);

typedef enum bb_compare_format {
    BB_COMPARE_TABLE = 0,  /* aligned text */
    BB_COMPARE_MARKDOWN,   /* GitHub tables */
    BB_COMPARE_JSON        /* the report itself */
} bb_compare_format_t;

/* Local.  The report as text: the summary first (counts, revisions, hosts),
 * then only what changed (machine-speed checks, provenance differences,
 * contract changes, regressions and improvements one line per point, at
 * most 10, unmatched points grouped by benchmark and rank count);
 * all_timings adds every moved timing, every timing of every pair and every
 * unmatched point.  Caller owns the string (free); NULL on allocation
 * failure. */
char *bb_compare_render(const cJSON *report, bb_compare_format_t format,
                        int all_timings);

/* Local.  Tab-separated values for plotting: a header line, then one line
 * per point: file, point index, benchmark, ranks, status, every parameter
 * seen in the set (first-seen order; "-" where a point lacks it), and for
 * each named quantity NAME, NAME.min, NAME.max (median and range of a
 * timing, the value and NaN NaN otherwise, NaN when absent or null).
 * Caller owns *tsv_out (free). */
bb_status_t bb_record_set_extract(const bb_record_set_t *set,
                                  const char *const *quantities, size_t nq,
                                  char **tsv_out, char *err, size_t errlen);

/* Local.  Add name: value to o, or name: null and name_reason: reason when
 * value is NULL or empty. */
void bb_json_add_or_null(cJSON *o, const char *name, const char *value,
                         const char *reason);

#endif /* BBRECORD_H */
