/* compare.h: the parts of bbench-compare's comparison (the files of compare/), one
 * file a job: text (strings, canonical JSON), load (record sets), match
 * (points, labels), judge (one pair), statistics (Mann-Whitney), report
 * (the comparison), table and render (text, Markdown, JSON), extract (plot
 * data).  Private to the record library: the API is bbrecord.h. */
#ifndef BB_COMPARE_H
#define BB_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "record/bbrecord.h"

/* text.c: a growable string, canonical JSON, text helpers */

typedef struct bb_buf {
    char *s;
    size_t len, cap;
    int failed;  /* an allocation failed: the text is incomplete */
} bb_buf_t;
void bb_buf_add(bb_buf_t *b, const char *text, size_t n);
void bb_buf_puts(bb_buf_t *b, const char *text);
void bb_buf_printf(bb_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *bb_buf_take(bb_buf_t *b);
char *bb_strdup(const char *s);
int bb_has_control(const char *s);
int bb_utf8_cut(const char *s, size_t max);
void bb_canon_number(bb_buf_t *b, double v);
void bb_canon_string(bb_buf_t *b, const char *s);
void bb_canon(bb_buf_t *b, const cJSON *item);
char *bb_canon_string_of(const cJSON *item);
void bb_plain(bb_buf_t *b, const cJSON *item);
int bb_json_equal(const cJSON *a, const cJSON *b);
/* The unit a time of this size reads best in (ns, us, ms, s) and its scale
 * from seconds. */
const char *bb_seconds_unit(double seconds, double *scale_out);
const cJSON *bb_json_path(const cJSON *doc, const char *dotted);
const char *bb_get_str(const cJSON *o, const char *name);
/* simulated.c: " simulated=VERSION/PLATFORM-HASH" into b when doc's
 * runtime.simulated is an object (SimGrid SMPI), nothing for a measured
 * record; in the points' matching keys and labels. */
void bb_simulated_key(bb_buf_t *b, const cJSON *doc);

/* load.c: record sets */

typedef struct bb_set_record {
    char *path;
    dev_t dev;           /* the file read, so that no output replaces it */
    ino_t ino;
    cJSON *doc;
    const char *benchmark;
    int64_t ranks;
    int64_t hosts;       /* topology.hosts; 1 when absent (older records) */
} bb_set_record_t;

struct bb_record_set {
    char *path;
    int is_dir;          /* path is a directory of records: nothing may be
                            written inside it */
    dev_t dev;
    ino_t ino;
    bb_set_record_t *records;
    size_t n, cap;
    size_t points;
    char **skipped;      /* "FILE: why": JSON files of a directory that are
                            not records (a saved compare report) */
    size_t nskipped;
};

/* Kinds of quantity, as comparison sees them. */
typedef enum bb_qkind {
    BB_Q_OTHER = 0,   /* ratios, rss, samples-bearing counts: shown, not judged */
    BB_Q_TIMING,      /* unit s with a median and a range */
    BB_Q_TIMING_NULL, /* unit s, not measured */
    BB_Q_DETERMINISTIC
} bb_qkind_t;
/* What a quantity is to comparison, from its unit, shape and declaration. */
bb_qkind_t bb_quantity_kind(const char *name, const cJSON *q);

/* match.c: points and their matching keys */

typedef struct bb_point_ref {
    const bb_set_record_t *record;
    size_t record_index;
    int index;           /* in the record's points array */
    const cJSON *point;
    char *key;           /* benchmark, ranks, canonical parameters */
    char *label;         /* "sum n=2 count=8 mode=protocol" */
} bb_point_ref_t;
/* Every point of set with its key (benchmark, ranks, hosts, canonical
 * parameters less the ignored ones) and label, sorted by key;
 * BB_ERR_PARSE when a key appears twice (err names both places). */
bb_status_t bb_points_collect(const bb_record_set_t *set,
                              const bb_compare_options_t *options,
                              bb_point_ref_t **out, char *err,
                              size_t errlen);
void bb_points_free(bb_point_ref_t *v, size_t n);
/* short_label of every pair: only the parameters that differ among the
 * pairs of its benchmark. */
void bb_short_labels(cJSON *pairs);
/* Add p to the list of unmatched points and to its group (side,
 * benchmark, ranks, hosts). */
void bb_add_unmatched(cJSON *list, cJSON *groups, const char *side,
                      const bb_point_ref_t *p);

/* judge.c: one matched pair */

typedef struct bb_pair_tally {
    size_t regressions, improvements, contract, noise, unmeasured, withheld;
    size_t unresolved;  /* judged without an interval of the median on a side */
} bb_pair_tally_t;
/* Can the rule judge this pair honestly?  BB_ERR_PARSE (err names file,
 * point and quantity) for another unit or a base timing the candidate lacks
 * or gives as a plain value. */
bb_status_t bb_check_pair(const bb_point_ref_t *b, const bb_point_ref_t *c,
                          char *err, size_t errlen);
/* The pair's report entry: status, contract changes, timings' verdicts;
 * tally counts them.  The timings are withheld (shown, never judged) when
 * the two records were measured under two MPI libraries, or when either
 * says it was oversubscribed and time_oversubscribed is 0. */
cJSON *bb_judge_pair(const bb_point_ref_t *b, const bb_point_ref_t *c,
                     double tol, int time_oversubscribed, bb_pair_tally_t *tally);

/* statistics.c: the rank test and a median */

/* The rank-based test needs this many samples a side; below it, only the
 * range rule: the test has next to no power there (3 against 3 never goes
 * under p = 0.1 exactly) and its normal approximation is poor, while 5
 * against 5 reaches 2 / C(10, 5) = 0.008. */
#define BB_MW_MIN_SAMPLES 5
#define BB_MW_ALPHA 0.05

/* Two-sided p of the Mann-Whitney U test of samples x against y (U of x in
 * *u_out), -1 when out of memory. */
double bb_mann_whitney(const cJSON *x, const cJSON *y, double *u_out);
/* The median of the finite positive numbers v[0, n) (reordered), or NaN. */
double bb_median_of(double *v, size_t n);

/* table.c: a table of strings */

/* A table of strings, rendered aligned or as Markdown. */
typedef struct bb_report_table {
    size_t ncols, nrows, cap;
    char **cells;        /* nrows * ncols; row 0 is the header */
    unsigned char *span; /* per row: 1 = a heading line (cell 0 only) */
    const char *indent;  /* before every ordinary row (text only) */
    int failed;          /* an allocation failed: rows are missing */
} bb_report_table_t;
void bb_report_table_add(bb_report_table_t *t, const char *const *cols, int span);
void bb_report_table_row(bb_report_table_t *t, const char *const *cols);
void bb_report_table_render(const bb_report_table_t *t, int markdown, bb_buf_t *out);
void bb_report_table_free(bb_report_table_t *t);

#endif /* BB_COMPARE_H */
