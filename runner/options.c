/* options.c: the runner's options: the shared option table and --help, the
 * parsers of option values a benchmark calls (bb_run_parse_*), and the
 * parse of a program's argv into the run. */
#include "config.h"
#include "runner-int.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Long-only shared options, just below the benchmarks' codes. */
/* Below BB_OPT_LONG, where a benchmark's own long options begin: one more
 * common option moves OPT_BUDGET down (the array's size fails to compile
 * otherwise). */
enum { OPT_BUDGET = BB_OPT_LONG - 12, OPT_TIMING, OPT_WINDOW, OPT_FORMAT, OPT_FULL_SWEEP,
       OPT_WARMUP_BLOCKS, OPT_RANK_STAT, OPT_MALLOC, OPT_CONFIDENCE, OPT_UNTIL_CI,
       OPT_MAX_SAMPLES, OPT_CANARY, OPT_COMMON_END };
/* --max-samples when --until-ci is given alone. */
enum { RUN_MAX_SAMPLES = 30 };
/* --canary's default: four blocks of 8 round trips (about 10 us here). */
enum { RUN_CANARY_CALLS = 32 };
typedef char common_options_below_bench_options[(int)OPT_COMMON_END <= (int)BB_OPT_LONG ? 1 : -1];
/* Warm-up blocks until steady, at most (--warmup-blocks). */
enum { RUN_STEADY_MAX = 8 };
static const char *const timing_names[] = { "block", "barrier", "window" };
static const char *const rank_stat_names[] = { "max", "mean" };

static const bb_option_t common_options[] = {
    {"samples", 's', "N", "samples per point, an integer >= 3 (default 3; with\n"
                          "--until-ci, the fewest)"},
    {"confidence", OPT_CONFIDENCE, "L", "the level of every interval of the median\n"
                                       "(default 0.95): [x(j), x(n+1-j)] of the sorted\n"
                                       "samples; 6 samples or more at 0.95"},
    {"until-ci", OPT_UNTIL_CI, "REL", "take rounds of samples (every row) until each\n"
                                      "row's interval half-width is at most REL x its\n"
                                      "median, or --max-samples; every rank alike"},
    {"max-samples", OPT_MAX_SAMPLES, "N", "the most rounds --until-ci takes (default 30)"},
    {"canary", OPT_CANARY, "N", "8-byte round trips between ranks 0 and 1 before\n"
                                "each round and after the last (default 32; none:\n"
                                "no canary): rounds whose path changed speed are\n"
                                "left out of the paired ratios"},
    {"reps", 'r', "N", "calls per sample (default: as many as fit --budget)"},
    {"iterations", 'i', "N", "the same as --reps (OSU's -i)"},
    {"budget", OPT_BUDGET, "SECONDS", "time per sample when --reps is not given"},
    {"warmup", 'w', "N", "calls after the first call, before sampling"},
    {"warmup-calls", 'x', "N", "the same as --warmup (OSU's -x)"},
    {"warmup-blocks", OPT_WARMUP_BLOCKS, "N", "then warm-up blocks of half a sample until two\n"
                                             "in a row agree within 5%, at most N (default 8;\n"
                                             "0: none)"},
    {"full", 'f', NULL, "more columns per time: min, max, mean, median and\n"
                        "the calls timed (OSU's -f)"},
    {"message-size", 'm', "MIN:MAX", "message sizes in bytes (OSU's -m): powers of two\n"
                                     "times MIN up to MAX; MIN: and :MAX take the missing\n"
                                     "end from the default list; one size alone (64K)"},
    {"full-sweep", OPT_FULL_SWEEP, NULL, "the long default lists instead of the quick\n"
                                         "ones (a run several times longer)"},
    {"timing", OPT_TIMING, "METHOD", "block (calls back to back, the default), barrier\n"
                                     "(a barrier before each call) or window (calls\n"
                                     "start together on synchronized clocks)"},
    {"window", OPT_WINDOW, "SECONDS", "the window of --timing window (default: twice\n"
                                      "the slowest warm call + 10 us)"},
    {"rank-stat", OPT_RANK_STAT, "STAT", "a sample across ranks: max (the slowest rank's\n"
                                         "time, with its parts: the default) or mean (the\n"
                                         "mean over ranks, as osu_allreduce prints\n"
                                         "without -f)"},
    {"malloc", OPT_MALLOC, "POLICY", "default (the C library's allocator as it is) or\n"
                                    "no-trim (glibc never trims the heap top, and\n"
                                    "serves up to 32 MiB from the heap: a fresh\n"
                                    "buffer reuses the last one's pages)"},
    {"output", 'o', "FILE", "write the JSON record to FILE"},
    {"format", OPT_FORMAT, "FORMAT", "stdout as table (the default), csv or json"},
    {"quiet", 'q', NULL, "nothing on stderr but errors and warnings"},
    {"help", 'h', NULL, "this text"},
    {"version", 'V', NULL, "the version"},
    {NULL, 0, NULL, NULL}
};

/* ---- option values ------------------------------------------------------ */

/* A plain decimal integer in [min, max]: counts of samples and calls take
 * no size suffixes. */
static int64_t parse_integer(bb_run_t *run, const char *opt, const char *value,
                             int64_t min, int64_t max)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (end == value || *end != '\0' || value[0] == '+' || value[0] == ' ')
        bb_run_usage(run, "--%s: '%s' is not an integer", opt, value);
    if (errno == ERANGE || v < min || v > max)
        bb_run_usage(run, "--%s: %s is out of range [%lld, %lld]", opt, value,
                     (long long)min, (long long)max);
    return (int64_t)v;
}

int64_t bb_run_parse_size(bb_run_t *run, const char *opt, const char *value,
                          int64_t min, int64_t max)
{
    char err[512];
    int64_t v = 0;
    if (bb_cli_parse_size(value, min, max, &v, err, sizeof err) != BB_OK)
        bb_run_usage(run, "--%s: %s", opt, err);
    return v;
}

void bb_run_parse_size_list(bb_run_t *run, const char *opt, const char *value,
                            int64_t min, int64_t max, bb_size_list_t *list_out)
{
    char err[512];
    bb_size_list_clear(list_out);
    if (bb_cli_parse_size_list(value, min, max, list_out, err, sizeof err) != BB_OK)
        bb_run_usage(run, "--%s: %s", opt, err);
}

double bb_run_parse_seconds(bb_run_t *run, const char *opt, const char *value,
                            double min, double max)
{
    char err[512];
    double v = 0.0;
    if (bb_cli_parse_double(value, min, max, &v, err, sizeof err) != BB_OK)
        bb_run_usage(run, "--%s: %s", opt, err);
    return v;
}

int bb_run_parse_rank(bb_run_t *run, const char *opt, const char *value)
{
    char err[512];
    const char *rest = NULL;
    int rank = -1;
    if (bb_cli_parse_rank_prefix(value, bb_run_size(run), &rank, &rest, err,
                                 sizeof err) != BB_OK)
        bb_run_usage(run, "--%s: %s", opt, err);
    if (*rest != '\0')
        bb_run_usage(run, "--%s: '%s' is not a rank", opt, value);
    return rank;
}

void bb_run_parse_rank_seconds(bb_run_t *run, const char *opt, const char *value,
                               double max_s, int *rank_out, double *seconds_out)
{
    char err[512];
    if (bb_cli_parse_rank_seconds(value, bb_run_size(run), max_s, rank_out, seconds_out,
                                  err, sizeof err) != BB_OK)
        bb_run_usage(run, "--%s: %s", opt, err);
}

/* -m MIN:MAX, MIN:, :MAX or SIZE: the ends, -1 for an open one; checked
 * when parsed so that a bad value is refused before any benchmark check. */
static void parse_message_size(bb_run_t *run, const char *value)
{
    char err[512], piece[64];
    const char *colon = strchr(value, ':');
    int64_t ends[2] = { -1, -1 };
    if (colon == NULL) {
        ends[0] = ends[1] = bb_run_parse_size(run, "message-size", value, 0, INT32_MAX);
    } else {
        if (strchr(colon + 1, ':') != NULL || (colon == value && colon[1] == '\0'))
            bb_run_usage(run, "--message-size: '%s' is not MIN:MAX, MIN:, :MAX or one size",
                         value);
        const char *text[2] = { value, colon + 1 };
        size_t len[2] = { (size_t)(colon - value), strlen(colon + 1) };
        for (int e = 0; e < 2; e++) {
            if (len[e] == 0)
                continue;
            if (len[e] >= sizeof piece)
                bb_run_usage(run, "--message-size: '%.24s...' is too long", text[e]);
            memcpy(piece, text[e], len[e]);
            piece[len[e]] = '\0';
            if (bb_cli_parse_size(piece, 0, INT32_MAX, &ends[e], err, sizeof err) != BB_OK)
                bb_run_usage(run, "--message-size: %s", err);
        }
        if (ends[0] >= 0 && ends[1] >= 0 && ends[0] > ends[1])
            bb_run_usage(run, "--message-size: MIN %lld is above MAX %lld",
                         (long long)ends[0], (long long)ends[1]);
    }
    run->message_size = value;
    run->message_min = ends[0];
    run->message_max = ends[1];
}

int bb_run_message_sizes(bb_run_t *run, const char *list_opt, int64_t element_bytes,
                         int64_t default_min, int64_t default_max,
                         bb_size_list_t *list_inout)
{
    if (run->message_size == NULL)
        return 0;
    if (list_inout->n > 0)
        bb_run_usage(run, "--message-size and --%s both give the sizes: give one", list_opt);
    int64_t lo = run->message_min >= 0 ? run->message_min : default_min;
    int64_t hi = run->message_max >= 0 ? run->message_max : default_max;
    if (lo > hi)
        bb_run_usage(run, "--message-size %s: from %lld B to %lld B (the default's other "
                     "end) is empty", run->message_size, (long long)lo, (long long)hi);
    /* MIN, 2 MIN, 4 MIN, ... <= MAX; from 0: 0, 1, 2, 4, ... (as LO:HI:x2). */
    int64_t values[64];
    size_t n = 0, rounded = 0, dropped = 0;
    for (int64_t b = lo; b <= hi && n < 64; b = b == 0 ? 1 : 2 * b) {
        int64_t e = b / element_bytes;
        if (b > 0 && e == 0) {
            dropped++;
            continue;
        }
        rounded += e * element_bytes != b;
        values[n++] = e;
    }
    if (n == 0)
        bb_run_usage(run, "--message-size %s: no size holds one %lld-byte element",
                     run->message_size, (long long)element_bytes);
    bb_size_list_clear(list_inout);
    list_inout->values = malloc(n * sizeof *list_inout->values);
    if (list_inout->values == NULL)
        bb_run_fatal(run, "out of memory");
    memcpy(list_inout->values, values, n * sizeof *values);
    list_inout->n = n;
    char a[32], b[32];
    bb_cli_format_size(lo, a, sizeof a);
    bb_cli_format_size(hi, b, sizeof b);
    if (element_bytes == 1)
        snprintf(run->message_note, sizeof run->message_note,
                 "-m %s: %zu sizes, powers of two times %s B up to %s B", run->message_size,
                 n, a, b);
    else if (rounded == 0 && dropped == 0)
        snprintf(run->message_note, sizeof run->message_note,
                 "-m %s: %zu sizes, powers of two times %s B up to %s B, as --%s = bytes / "
                 "%lld", run->message_size, n, a, b, list_opt, (long long)element_bytes);
    else
        snprintf(run->message_note, sizeof run->message_note,
                 "-m %s: %zu sizes, powers of two times %s B up to %s B, as --%s = bytes / "
                 "%lld rounded down (%zu rounded, %zu under one element dropped)",
                 run->message_size, n, a, b, list_opt, (long long)element_bytes, rounded,
                 dropped);
    return 1;
}

/* names[first..n-1], then extra if not NULL, as "a, b or c", for messages. */
static void names_text(const char *const *names, int first, int n, const char *extra,
                       char *buf, size_t len)
{
    int total = n - first + (extra != NULL);
    buf[0] = '\0';
    for (int i = 0; i < total; i++) {
        const char *name = i < n - first ? names[first + i] : extra;
        strncat(buf, name, len - strlen(buf) - 1);
        strncat(buf, i + 2 < total ? ", " : i + 1 < total ? " or " : "",
                len - strlen(buf) - 1);
    }
}

int bb_run_parse_one(bb_run_t *run, const char *opt, const char *value,
                     const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    char text[512];
    names_text(names, 0, n, NULL, text, sizeof text);
    bb_run_usage(run, "--%s: '%s' is not %s (give one)", opt, value, text);
}

int bb_run_parse_rank_choice(bb_run_t *run, const char *opt, const char *value,
                             const char *const *names, int first, int n, int *rank_out)
{
    char err[512];
    const char *rest = NULL;
    if (bb_cli_parse_rank_prefix(value, bb_run_size(run), rank_out, &rest, err,
                                 sizeof err) != BB_OK)
        bb_run_usage(run, "--%s: %s", opt, err);
    for (int i = first; i < n; i++)
        if (strcmp(rest, names[i]) == 0)
            return i;
    names_text(names, first, n, NULL, err, sizeof err);
    bb_run_usage(run, "--%s: field '%s' is not %s", opt, rest, err);
}

unsigned bb_run_parse_choices(bb_run_t *run, const char *opt, const char *value,
                              const char *const *names, int n)
{
    if (strcmp(value, "all") == 0)
        return (1u << n) - 1u;
    unsigned set = 0;
    const char *p = value;
    for (;;) {
        size_t len = strcspn(p, ",");
        int found = -1;
        if (len == 0)
            bb_run_usage(run, "--%s: empty item in '%s'", opt, value);
        for (int i = 0; i < n && found < 0; i++)
            if (strlen(names[i]) == len && strncmp(p, names[i], len) == 0)
                found = i;
        /* A shorthand for a set names it alone; inside a list it would be
         * reported as "not ... or all", which contradicts itself. */
        if (found < 0 && len != strlen(value)
            && ((len == 3 && strncmp(p, "all", 3) == 0)
                || (len == 4 && strncmp(p, "both", 4) == 0)))
            bb_run_usage(run, "--%s: '%.*s' stands alone (it names a set of choices), not in "
                              "a list: '%s'", opt, (int)len, p, value);
        if (found < 0) {
            char text[512];
            names_text(names, 0, n, "all", text, sizeof text);
            bb_run_usage(run, "--%s: '%.*s' is not %s", opt, (int)len, p, text);
        }
        if (set & (1u << found))
            bb_run_usage(run, "--%s: '%s' is given twice", opt, names[found]);
        set |= 1u << found;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    return set;
}

unsigned bb_run_parse_modes(bb_run_t *run, const char *value, unsigned both)
{
    const char *names[31];
    int n = run->desc->nvariants < 31 ? run->desc->nvariants : 31;
    if (strcmp(value, "both") == 0)
        return both;
    for (int v = 0; v < n; v++)
        names[v] = run->desc->variants[v].name;
    return bb_run_parse_choices(run, "mode", value, names, n);
}


/* ---- the option table and --help ---------------------------------------- */

/* A short option is a letter; other codes are long-only options. */
static int is_letter(int key)
{
    return (key >= 'a' && key <= 'z') || (key >= 'A' && key <= 'Z');
}

static size_t option_count(const bb_option_t *t)
{
    size_t n = 0;
    while (t != NULL && t[n].name != NULL)
        n++;
    return n;
}

static void help_option(FILE *f, const bb_option_t *o)
{
    char left[64];
    int is_short = is_letter(o->key);
    snprintf(left, sizeof left, "  %c%c%c --%s%s%s", is_short ? '-' : ' ',
             is_short ? o->key : ' ', is_short ? ',' : ' ', o->name, o->arg ? " " : "",
             o->arg ? o->arg : "");
    fprintf(f, "%-28s", left);
    if (strlen(left) >= 27)
        fprintf(f, "\n%-28s", "");
    for (const char *p = o->help; *p != '\0';) {
        size_t len = strcspn(p, "\n");
        fprintf(f, "%.*s\n", (int)len, p);
        p += len;
        if (*p == '\n' && *++p != '\0')
            fprintf(f, "%-28s", "");
    }
}

bb_measure_settings_t bb_run_default_settings(const bb_bench_desc_t *d)
{
    static const bb_measure_settings_t runner = { .samples = 3, .reps = 0,
                                                  .budget_s = 0.05, .warmup = 2 };
    bb_measure_settings_t s = d->settings ? *d->settings : runner;
    s.steady_max = RUN_STEADY_MAX;  /* the runner's, for every benchmark */
    s.confidence = BB_CONFIDENCE_DEFAULT;
    s.until_rel = 0.0;
    s.max_samples = 0;
    s.canary_calls = RUN_CANARY_CALLS;
    return s;
}

/* The --help text, built from the tables (caller frees). */
static char *help_text(const bb_bench_desc_t *d)
{
    bb_measure_settings_t defaults = bb_run_default_settings(d);
    const bb_measure_settings_t *s = &defaults;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    fprintf(f, "Usage: %s [OPTION]...\n%s\n\n", d->program, d->summary);
    for (size_t i = 0; i < option_count(d->options); i++)
        help_option(f, &d->options[i]);
    for (size_t i = 0; i < option_count(common_options); i++)
        help_option(f, &common_options[i]);
    fprintf(f, "\nDefaults: %lld samples, reps fitted to a %g s budget, %lld warm-up calls\n"
               "and up to %lld warm-up blocks, %s timing.\n", (long long)s->samples,
            s->budget_s, (long long)s->warmup, (long long)s->steady_max,
            bb_timing_name(s->timing));
    if (d->notes != NULL)
        fprintf(f, "\n%s\n", d->notes);
    fprintf(f, "\nA sample is the mean time per call over a block of calls on each rank,\n"
               "taken from the rank with the slowest whole call (its parts that rank's\n"
               "too; --rank-stat mean: the mean over ranks of each).  With n samples\n"
               "the [min, max] range covers\n"
               "the median with probability 1 - 2^(1-n): 75%% for 3.  Exit: 0 ok,\n"
               "1 measured failure, 2 usage, 3 fatal (MPI error or out of memory: job\n"
               "aborted, no record).\n");
    fclose(f);
    return text;
}

/* One getopt_long table from both option tables (caller frees both). */
static void getopt_tables(const bb_bench_desc_t *d, struct option **long_out,
                          char **short_out)
{
    size_t nd = option_count(d->options), nc = option_count(common_options);
    struct option *lo = calloc(nd + nc + 1, sizeof *lo);
    char *so = calloc(2 + 2 * (nd + nc) + 1, 1);
    if (lo == NULL || so == NULL) {
        free(lo);
        free(so);
        *long_out = NULL;
        *short_out = NULL;
        return;
    }
    size_t k = 0, s = 0;
    so[s++] = ':';  /* a missing value is ':', not '?' */
    for (size_t t = 0; t < 2; t++) {
        const bb_option_t *tab = t == 0 ? d->options : common_options;
        for (size_t i = 0; i < option_count(tab); i++, k++) {
            lo[k] = (struct option){ tab[i].name, tab[i].arg ? required_argument
                                                             : no_argument,
                                     NULL, tab[i].key };
            if (is_letter(tab[i].key)) {
                so[s++] = (char)tab[i].key;
                if (tab[i].arg)
                    so[s++] = ':';
            }
        }
    }
    *long_out = lo;
    *short_out = so;
}

/* The element getopt just rejected, named as the user typed it.  For a
 * missing value getopt has moved past the option's own element; an unknown
 * short option inside a cluster ("-Zs") is named alone ("-Z"). */
__attribute__((noreturn))
static void bad_option(bb_run_t *run, char **argv, int missing_value)
{
    const char *arg = argv[optind - 1];
    if (missing_value) {
        if (arg[0] == '-' && arg[1] == '-')
            bb_run_usage(run, "option '%s' needs a value", arg);
        bb_run_usage(run, "option '-%c' needs a value", optopt);
    }
    if (optopt > 0 && optopt < BB_OPT_LONG)
        bb_run_usage(run, "unknown option '-%c'", optopt);
    bb_run_usage(run, "unknown option '%s'", arg);
}

/* 1 when arg names the long option `name` as getopt_long takes it: the
 * whole name or an abbreviation that no other option of lo shares
 * (--role, --ro), its value joined (--role=V) or the next argument;
 * *joined says which. */
static int names_option(const struct option *lo, const char *name, const char *arg,
                        int *joined)
{
    if (arg[0] != '-' || arg[1] != '-' || arg[2] == '\0')
        return 0;
    const char *s = arg + 2;
    size_t len = strcspn(s, "=");
    if (len > strlen(name) || strncmp(s, name, len) != 0)
        return 0;
    *joined = s[len] == '=';
    if (len == strlen(name))
        return 1;
    for (const struct option *o = lo; o->name != NULL; o++)
        if (strcmp(o->name, name) != 0 && strncmp(o->name, s, len) == 0)
            return 0;  /* ambiguous: getopt refuses it alike on every rank */
    return 1;
}

/* argv with the code option as "--NAME CODE" whatever its value and
 * spelling (its presence must agree, its value may differ): words joined
 * by sep, in a buffer the caller frees (NULL: no memory). */
static char *arguments_but_code(const struct option *lo, const char *name, int argc,
                                char **argv, char sep, size_t *len_out)
{
    size_t cap = 1;
    for (int i = 1; i < argc; i++)
        cap += strlen(argv[i]) + strlen(name) + 9;
    char *out = malloc(cap), *w = out;
    if (out == NULL)
        return NULL;
    int options_end = 0;
    for (int i = 1; i < argc; i++) {
        int joined = 0;
        if (!options_end && names_option(lo, name, argv[i], &joined)) {
            w += sprintf(w, "--%s%cCODE", name, sep);
            i += !joined;  /* its value is the next argument */
        } else {
            options_end |= strcmp(argv[i], "--") == 0;
            w += sprintf(w, "%s", argv[i]);
        }
        *w++ = sep;
    }
    *w = '\0';
    *len_out = (size_t)(w - out);
    return out;
}

/* The programs of an MPMD launch each parse their own argv: a difference
 * would leave some ranks on a usage error and the rest waiting in a
 * collective.  One fused MIN/MAX of a hash of the arguments (but the code
 * option's value) agrees them; on a difference, the first rank that
 * differs from rank 0 sends its list, and rank 0 says both (exit 2 on
 * every rank). */
static void agree_arguments(bb_run_t *run, const struct option *lo, int argc, char **argv)
{
    const char *name = run->desc->code_option;
    MPI_Comm comm = bb_run_comm(run);
    size_t len = 0;
    char *text = arguments_but_code(lo, name, argc, argv, '\0', &len);
    if (text == NULL)
        bb_run_fatal(run, "out of memory");
    uint64_t h = 14695981039346656037ULL;  /* FNV-1a over the words and their ends */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)text[i]) * 1099511628211ULL;
    free(text);
    int64_t mine = (int64_t)h, lo_h, hi_h;
    if (bb_agree_minmax_fused(comm, &mine, 1, &lo_h, &hi_h) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce failed while agreeing the arguments");
    if (lo_h == hi_h)
        return;
    int64_t h0 = mine;
    int me = bb_run_rank(run), size = bb_run_size(run), first = size, differs;
    if (MPI_Bcast(&h0, 1, MPI_INT64_T, 0, comm) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Bcast failed while agreeing the arguments");
    differs = h0 != mine ? me : size;
    if (MPI_Allreduce(&differs, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce failed while agreeing the arguments");
    /* Both lists as words joined by blanks, at most 200 characters each. */
    char lists[2][204] = {"", ""};
    for (int k = 0; k < 2; k++) {
        int from = k == 0 ? 0 : first;
        if (me == from) {
            char *shown = arguments_but_code(lo, name, argc, argv, ' ', &len);
            if (shown == NULL)
                bb_run_fatal(run, "out of memory");
            if (len > 0)
                shown[len - 1] = '\0';  /* the last word's blank */
            if (len > 200)
                snprintf(lists[k], sizeof lists[k], "%.196s ...", shown);
            else
                snprintf(lists[k], sizeof lists[k], "%s", shown);
            free(shown);
        }
        if (MPI_Bcast(lists[k], (int)sizeof lists[k], MPI_CHAR, from, comm) != MPI_SUCCESS)
            bb_run_fatal(run, "MPI_Bcast failed while agreeing the arguments");
    }
    bb_run_usage(run, "the launch's programs were given different arguments: every "
                 "argument but the value of --%s must be the same on every rank (rank 0: "
                 "'%s'; rank %d: '%s')", name, lists[0], first, lists[1]);
}

void bb_run_parse_options(bb_run_t *run, void *state, int argc, char **argv)
{
    const bb_bench_desc_t *d = run->desc;
    struct option *lo = NULL;
    char *so = NULL;
    getopt_tables(d, &lo, &so);
    if (lo == NULL)
        bb_run_fatal(run, "out of memory");
    if (d->code_option != NULL)
        agree_arguments(run, lo, argc, argv);
    opterr = 0;  /* our own messages, on rank 0 only */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
        switch (c) {
        case 's': run->settings.samples = parse_integer(run, "samples", optarg, 3, 100000);
            break;
        case 'r':
        case 'i': run->settings.reps = parse_integer(run, c == 'r' ? "reps" : "iterations",
                                                     optarg, 1, INT32_MAX);
            break;
        case OPT_BUDGET:
            run->settings.budget_s = bb_run_parse_seconds(run, "budget", optarg, 1e-6, 3600.0);
            break;
        case 'w':
        case 'x': run->settings.warmup = parse_integer(run, c == 'w' ? "warmup" : "warmup-calls",
                                                       optarg, 0, 1000000);
            break;
        case OPT_CONFIDENCE:
            run->settings.confidence = bb_run_parse_seconds(run, "confidence", optarg, 0.5,
                                                            0.9999);
            break;
        case OPT_UNTIL_CI:
            run->settings.until_rel = bb_run_parse_seconds(run, "until-ci", optarg, 1e-4, 1.0);
            break;
        case OPT_CANARY:
            run->settings.canary_calls = strcmp(optarg, "none") == 0
                ? 0 : parse_integer(run, "canary", optarg, BB_CANARY_BLOCK, 100000);
            if (run->settings.canary_calls % BB_CANARY_BLOCK != 0)
                bb_run_usage(run, "--canary: %s is not a multiple of %d (its blocks) or none",
                             optarg, (int)BB_CANARY_BLOCK);
            break;
        case OPT_MAX_SAMPLES:
            run->settings.max_samples = parse_integer(run, "max-samples", optarg, 3, 100000);
            break;
        case OPT_WARMUP_BLOCKS:
            run->settings.steady_max = parse_integer(run, "warmup-blocks", optarg, 0, 1000);
            break;
        case 'f': run->full = 1; break;
        case 'm': parse_message_size(run, optarg); break;
        case OPT_FULL_SWEEP: run->full_sweep = 1; break;
        case OPT_TIMING: {
            static const bb_timing_t timings[] = {BB_TIMING_BLOCK, BB_TIMING_BARRIER,
                                                  BB_TIMING_WINDOW};
            run->settings.timing = timings[bb_run_parse_one(run, "timing", optarg,
                                                            timing_names, 3)];
            break;
        }
        case OPT_WINDOW:
            run->settings.window_s = bb_run_parse_seconds(run, "window", optarg, 1e-7, 10.0);
            break;
        case OPT_RANK_STAT: {
            run->settings.rank_stat = bb_run_parse_one(run, "rank-stat", optarg,
                                                       rank_stat_names, 2) == 0
                                      ? BB_RANK_STAT_MAX : BB_RANK_STAT_MEAN;
            break;
        }
        case OPT_MALLOC: {
            const char *names[BB_MALLOC_COUNT] = { bb_malloc_name(BB_MALLOC_DEFAULT),
                                                   bb_malloc_name(BB_MALLOC_NO_TRIM) };
            run->malloc_policy = (bb_malloc_t)bb_run_parse_one(run, "malloc", optarg, names,
                                                               BB_MALLOC_COUNT);
            break;
        }
        case 'o': run->output = optarg; break;
        case OPT_FORMAT: {
            int f = bb_format_parse(optarg);
            if (f < 0)
                bb_run_usage(run, "--format: '%s' is not table, csv or json", optarg);
            run->format = (bb_format_t)f;
            break;
        }
        case 'q':
            run->quiet = 1;
            bb_bench_set_quiet(run->bench, 1);
            break;
        case 'h': {
            char *text = help_text(d);
            free(lo);
            free(so);
            bb_bench_exit_text(run->bench, text ? text : "");
        }
        case 'V': {
            char version[256];
            snprintf(version, sizeof version, "%s (%s) %s\n", d->program, PACKAGE_NAME,
                     PACKAGE_VERSION);
            bb_bench_exit_text(run->bench, version);
        }
        case ':': bad_option(run, argv, 1);
        case '?': bad_option(run, argv, 0);
        default:
            d->parse(run, state, c, optarg);
        }
    }
    if (optind < argc)
        bb_run_usage(run, "unexpected argument '%s'", argv[optind]);
    if (run->settings.window_s > 0.0 && run->settings.timing != BB_TIMING_WINDOW)
        bb_run_usage(run, "--window needs --timing window");
    if (run->settings.max_samples > 0 && run->settings.until_rel == 0.0)
        bb_run_usage(run, "--max-samples needs --until-ci");
    if (run->settings.until_rel > 0.0 && run->settings.max_samples == 0)
        run->settings.max_samples = RUN_MAX_SAMPLES > run->settings.samples
                                    ? RUN_MAX_SAMPLES : run->settings.samples;
    if (run->settings.until_rel > 0.0 && run->settings.max_samples < run->settings.samples)
        bb_run_usage(run, "--max-samples %lld is below --samples %lld",
                     (long long)run->settings.max_samples, (long long)run->settings.samples);
    /* Before the benchmark allocates anything.  Each rank's C library
     * answers for itself (a host's GLIBC_TUNABLES can make it refuse), so
     * the verdict is agreed: the first refusing rank's reason, on every
     * rank, said once.  The default policy changes nothing and cannot be
     * refused: no collective (every rank parsed the same --malloc). */
    char why[160] = "";
    int me = bb_run_rank(run), first = bb_run_size(run);
    int mine = bb_malloc_apply(run->malloc_policy, why, sizeof why) != 0 ? me : first;
    if (run->malloc_policy != BB_MALLOC_DEFAULT
        && MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, bb_run_comm(run)) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce failed while agreeing --malloc");
    if (first < bb_run_size(run)) {
        if (MPI_Bcast(why, (int)sizeof why, MPI_CHAR, first, bb_run_comm(run)) != MPI_SUCCESS)
            bb_run_fatal(run, "MPI_Bcast failed while agreeing --malloc");
        why[sizeof why - 1] = '\0';
        bb_run_usage(run, "rank %d: %s", first, why);
    }
    free(lo);
    free(so);
}
