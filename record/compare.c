/* compare.c: record sets, point matching, the regression rule, contract
 * changes, provenance warnings, and their rendering.  MPI-free: the compare
 * tool links the record library alone. */
#include "config.h"
#include "common.h"
#include "bbrecord.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------ */
/* A growable string                                                        */
/* ------------------------------------------------------------------------ */

typedef struct bb_buf {
    char *s;
    size_t len, cap;
    int failed;  /* an allocation failed: the text is incomplete */
} bb_buf_t;

static void bb_buf_reserve(bb_buf_t *b, size_t extra)
{
    if (b->failed || b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (s == NULL) {
        b->failed = 1;
        return;
    }
    b->s = s;
    b->cap = cap;
}

static void bb_buf_add(bb_buf_t *b, const char *text, size_t n)
{
    bb_buf_reserve(b, n);
    if (b->failed)
        return;
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void bb_buf_puts(bb_buf_t *b, const char *text)
{
    bb_buf_add(b, text, strlen(text));
}

static void bb_buf_printf(bb_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void bb_buf_printf(bb_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    bb_buf_reserve(b, (size_t)n);
    if (b->failed)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* The finished string (never NULL unless allocation failed). */
static char *bb_buf_take(bb_buf_t *b)
{
    if (!b->failed && b->s == NULL)
        bb_buf_add(b, "", 0);
    if (b->failed) {
        free(b->s);
        return NULL;
    }
    return b->s;
}

static char *bb_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* A name that holds a control character would break the lines of the
 * reports (a newline could forge a summary line): not a usable name. */
static int bb_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 1;
    return 0;
}

/* The longest prefix of s of at most max bytes that does not split a
 * UTF-8 sequence. */
static int bb_utf8_cut(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return (int)n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return (int)max;
}

/* ------------------------------------------------------------------------ */
/* Canonical JSON: object members sorted by name, so that member order never */
/* decides equality; numbers printed exactly                                */
/* ------------------------------------------------------------------------ */

static void bb_canon_number(bb_buf_t *b, double v)
{
    /* Integers (the common case: counts, bytes) print without exponent so
     * that 1048576 and 1.048576e6 agree. */
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0) {
        bb_buf_printf(b, "%.0f", v);
        return;
    }
    /* The shortest of %.15g and %.17g that reads back exactly. */
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v)
        snprintf(tmp, sizeof tmp, "%.17g", v);
    bb_buf_puts(b, tmp);
}

static void bb_canon_string(bb_buf_t *b, const char *s)
{
    bb_buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            bb_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            bb_buf_printf(b, "\\u%04x", *p);
        else
            bb_buf_add(b, (const char *)p, 1);
    }
    bb_buf_puts(b, "\"");
}

static int bb_cmp_item_names(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

static void bb_canon(bb_buf_t *b, const cJSON *item)
{
    if (item == NULL || cJSON_IsNull(item)) {
        bb_buf_puts(b, "null");
    } else if (cJSON_IsTrue(item)) {
        bb_buf_puts(b, "true");
    } else if (cJSON_IsFalse(item)) {
        bb_buf_puts(b, "false");
    } else if (cJSON_IsNumber(item)) {
        bb_canon_number(b, item->valuedouble);
    } else if (cJSON_IsString(item)) {
        bb_canon_string(b, item->valuestring);
    } else if (cJSON_IsArray(item)) {
        bb_buf_puts(b, "[");
        const cJSON *e;
        int first = 1;
        cJSON_ArrayForEach(e, item) {
            if (!first)
                bb_buf_puts(b, ",");
            first = 0;
            bb_canon(b, e);
        }
        bb_buf_puts(b, "]");
    } else if (cJSON_IsObject(item)) {
        size_t n = (size_t)cJSON_GetArraySize(item), i = 0;
        const cJSON **v = malloc((n ? n : 1) * sizeof *v);
        if (v == NULL) {
            b->failed = 1;
            return;
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, item) v[i++] = e;
        qsort(v, n, sizeof *v, bb_cmp_item_names);
        bb_buf_puts(b, "{");
        for (i = 0; i < n; i++) {
            if (i)
                bb_buf_puts(b, ",");
            bb_canon_string(b, v[i]->string ? v[i]->string : "");
            bb_buf_puts(b, ":");
            bb_canon(b, v[i]);
        }
        bb_buf_puts(b, "}");
        free(v);
    } else {
        bb_buf_puts(b, "?");
    }
}

static char *bb_canon_string_of(const cJSON *item)
{
    bb_buf_t b = {0};
    bb_canon(&b, item);
    return bb_buf_take(&b);
}

/* A scalar as a human reads it: strings bare, everything else canonical. */
static void bb_plain(bb_buf_t *b, const cJSON *item)
{
    if (cJSON_IsString(item))
        bb_buf_puts(b, item->valuestring);
    else
        bb_canon(b, item);
}

/* ------------------------------------------------------------------------ */
/* Record sets                                                              */
/* ------------------------------------------------------------------------ */

typedef struct bb_set_record {
    char *path;
    cJSON *doc;
    const char *benchmark;
    int64_t ranks;
    int64_t hosts;       /* topology.hosts; 1 when absent (older records) */
} bb_set_record_t;

struct bb_record_set {
    char *path;
    bb_set_record_t *records;
    size_t n, cap;
    size_t points;
};

void bb_record_set_free(bb_record_set_t *set)
{
    if (set == NULL)
        return;
    for (size_t i = 0; i < set->n; i++) {
        free(set->records[i].path);
        cJSON_Delete(set->records[i].doc);
    }
    free(set->records);
    free(set->path);
    free(set);
}

size_t bb_record_set_records(const bb_record_set_t *set) { return set->n; }
size_t bb_record_set_points(const bb_record_set_t *set) { return set->points; }

/* Kinds of quantity, as comparison sees them. */
typedef enum bb_qkind {
    BB_Q_OTHER = 0,   /* ratios, rss, samples-bearing counts: shown, not judged */
    BB_Q_TIMING,      /* unit s with a median and a range */
    BB_Q_TIMING_NULL, /* unit s, not measured */
    BB_Q_DETERMINISTIC
} bb_qkind_t;

/* Quantities that carry unit count or byte but vary from run to run.  This
 * list of benchmark quantity names is compare's own; it is meant to give
 * way to a property each record states of its quantities. */
static int bb_name_is_variable(const char *name, const char *scope)
{
    static const char *const variable[] = {"completed_during_batches",
                                           "test_completed", NULL};
    if (strstr(name, "rss") != NULL || (scope && strstr(scope, "rss") != NULL))
        return 1;
    for (size_t i = 0; variable[i]; i++) {
        size_t nl = strlen(name), vl = strlen(variable[i]);
        /* The name itself or a dotted suffix ("transfer.completed_..."). */
        if (nl >= vl && strcmp(name + nl - vl, variable[i]) == 0 &&
            (nl == vl || name[nl - vl - 1] == '.'))
            return 1;
    }
    return 0;
}

static bb_qkind_t bb_quantity_kind(const char *name, const cJSON *q)
{
    const char *unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "unit"));
    const char *scope = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "scope"));
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(q, "deterministic");
    if (unit == NULL)
        return BB_Q_OTHER;
    if (strcmp(unit, "s") == 0) {
        const cJSON *median = cJSON_GetObjectItemCaseSensitive(q, "median");
        const cJSON *range = cJSON_GetObjectItemCaseSensitive(q, "range");
        if (cJSON_IsNumber(median) && cJSON_IsArray(range))
            return BB_Q_TIMING;
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(q, "value");
        if (value == NULL || cJSON_IsNull(value))
            return BB_Q_TIMING_NULL;
    }
    if (cJSON_IsBool(det))
        return cJSON_IsTrue(det) ? BB_Q_DETERMINISTIC : BB_Q_OTHER;
    if ((strcmp(unit, "byte") == 0 || strcmp(unit, "count") == 0) &&
        cJSON_GetObjectItemCaseSensitive(q, "samples") == NULL &&
        !bb_name_is_variable(name, scope))
        return BB_Q_DETERMINISTIC;
    return BB_Q_OTHER;
}

#define BB_COMPARE_MAX_QUANTITIES 10000

/* What comparison needs of one quantities object beyond the record shape
 * that bb_record_parse has checked (every quantity an object with a string
 * unit): a timing's median is a number inside its range [min, max]. */
static bb_status_t bb_check_quantities(const char *file, int pi, const char *member,
                                       const cJSON *qs, char *err, size_t errlen)
{
    /* Matching quantities by name is linear per look-up: bound their
     * number so that a hostile point cannot make comparison quadratic in
     * a gigabyte (a real point has a few dozen). */
    if (cJSON_GetArraySize(qs) > BB_COMPARE_MAX_QUANTITIES) {
        bb_errorf(err, errlen, "%s: points[%d].%s: more than %d quantities", file,
                  pi, member, BB_COMPARE_MAX_QUANTITIES);
        return BB_ERR_PARSE;
    }
    const cJSON *q;
    cJSON_ArrayForEach(q, qs) {
        const char *name = q->string;
        if (bb_has_control(name)) {
            bb_errorf(err, errlen, "%s: points[%d].%s: a quantity name holds a "
                      "control character", file, pi, member);
            return BB_ERR_PARSE;
        }
        /* A string: the record validator checked it. */
        const cJSON *unit = cJSON_GetObjectItemCaseSensitive(q, "unit");
        const cJSON *median = cJSON_GetObjectItemCaseSensitive(q, "median");
        const cJSON *range = cJSON_GetObjectItemCaseSensitive(q, "range");
        /* Times are durations: a negative or infinite one (1e999 reads as
         * infinity) would be judged an improvement or a regression. */
        if (strcmp(unit->valuestring, "s") == 0) {
            static const char *const members[] = {"value", "median", "range",
                                                  "samples", NULL};
            for (size_t m = 0; members[m] != NULL; m++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(q, members[m]);
                for (const cJSON *e = cJSON_IsArray(v) ? v->child : v; e != NULL;
                     e = cJSON_IsArray(v) ? e->next : NULL) {
                    if (!cJSON_IsNumber(e))
                        continue;
                    if (!isfinite(e->valuedouble) || e->valuedouble < 0) {
                        bb_errorf(err, errlen, "%s: points[%d].%s.%s.%s%s: %g s is "
                                  "not a duration", file, pi, member, name, members[m],
                                  cJSON_IsArray(v) ? "[...]" : "", e->valuedouble);
                        return BB_ERR_PARSE;
                    }
                }
            }
        }
        const cJSON *samples = cJSON_GetObjectItemCaseSensitive(q, "samples");
        if (samples != NULL && !cJSON_IsNull(samples)) {
            const cJSON *e = cJSON_IsArray(samples) ? samples->child : NULL;
            while (e != NULL && cJSON_IsNumber(e))
                e = e->next;
            if (!cJSON_IsArray(samples) || e != NULL) {
                bb_errorf(err, errlen, "%s: points[%d].%s.%s.samples: not an array "
                          "of numbers", file, pi, member, name);
                return BB_ERR_PARSE;
            }
        }
        if (median != NULL && !cJSON_IsNull(median) && !cJSON_IsNumber(median)) {
            bb_errorf(err, errlen, "%s: points[%d].%s.%s.median: not a number",
                      file, pi, member, name);
            return BB_ERR_PARSE;
        }
        if (cJSON_IsNumber(median)) {
            const cJSON *lo = cJSON_GetArrayItem(range, 0);
            const cJSON *hi = cJSON_GetArrayItem(range, 1);
            if (!cJSON_IsArray(range) || cJSON_GetArraySize(range) != 2 ||
                !cJSON_IsNumber(lo) || !cJSON_IsNumber(hi)) {
                bb_errorf(err, errlen,
                          "%s: points[%d].%s.%s.range: not [min, max] numbers",
                          file, pi, member, name);
                return BB_ERR_PARSE;
            }
            if (!(lo->valuedouble <= median->valuedouble &&
                  median->valuedouble <= hi->valuedouble)) {
                bb_errorf(err, errlen,
                          "%s: points[%d].%s.%s: median %g outside range [%g, %g]",
                          file, pi, member, name, median->valuedouble,
                          lo->valuedouble, hi->valuedouble);
                return BB_ERR_PARSE;
            }
        }
    }
    return BB_OK;
}

/* r->doc has passed bb_record_read, the one record validator (schema,
 * benchmark, points with parameters, status and quantities); here only
 * what comparison needs besides: topology.ranks and the timings. */
static bb_status_t bb_check_record(bb_set_record_t *r, size_t *points,
                                   char *err, size_t errlen)
{
    r->benchmark = cJSON_GetObjectItemCaseSensitive(r->doc, "benchmark")->valuestring;
    const cJSON *topo = cJSON_GetObjectItemCaseSensitive(r->doc, "topology");
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(topo, "ranks");
    if (!cJSON_IsObject(topo)) {
        bb_errorf(err, errlen, "%s: topology: %s", r->path,
                  topo ? "not an object" : "missing");
        return BB_ERR_PARSE;
    }
    if (!cJSON_IsNumber(ranks) || ranks->valuedouble < 1 ||
        ranks->valuedouble > 1e9 || ranks->valuedouble != floor(ranks->valuedouble)) {
        bb_errorf(err, errlen, "%s: topology.ranks: %s", r->path,
                  ranks ? "not a positive integer" : "missing");
        return BB_ERR_PARSE;
    }
    r->ranks = (int64_t)ranks->valuedouble;
    /* Hosts match like ranks: shared memory and a network are not the same
     * point.  Absent (or null) means one host. */
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(topo, "hosts");
    r->hosts = 1;
    if (hosts != NULL && !cJSON_IsNull(hosts)) {
        if (!cJSON_IsNumber(hosts) || hosts->valuedouble < 1 || hosts->valuedouble > 1e9
            || hosts->valuedouble != floor(hosts->valuedouble)) {
            bb_errorf(err, errlen, "%s: topology.hosts: not a positive integer", r->path);
            return BB_ERR_PARSE;
        }
        r->hosts = (int64_t)hosts->valuedouble;
    }
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(r->doc, "points");
    int pi = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, pts) {
        const cJSON *pm;
        cJSON_ArrayForEach(pm, cJSON_GetObjectItemCaseSensitive(p, "parameters")) {
            if (bb_has_control(pm->string)) {
                bb_errorf(err, errlen, "%s: points[%d].parameters: a parameter "
                          "name holds a control character", r->path, pi);
                return BB_ERR_PARSE;
            }
        }
        bb_status_t st = bb_check_quantities(
            r->path, pi, "quantities",
            cJSON_GetObjectItemCaseSensitive(p, "quantities"), err, errlen);
        if (st == BB_OK)
            st = bb_check_quantities(r->path, pi, "first_call",
                                     cJSON_GetObjectItemCaseSensitive(p, "first_call"),
                                     err, errlen);
        if (st != BB_OK)
            return st;
        pi++;
    }
    *points += (size_t)pi;
    return BB_OK;
}

static bb_status_t bb_set_add(bb_record_set_t *set, const char *path, char *err,
                              size_t errlen)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 8;
        bb_set_record_t *v = realloc(set->records, cap * sizeof *v);
        if (v == NULL)
            return BB_ERR_NOMEM;
        set->records = v;
        set->cap = cap;
    }
    bb_set_record_t *r = &set->records[set->n];
    memset(r, 0, sizeof *r);
    r->path = bb_strdup(path);
    if (r->path == NULL)
        return BB_ERR_NOMEM;
    bb_status_t st = bb_record_read(path, &r->doc, err, errlen);
    if (st != BB_OK) {
        free(r->path);
        return st;
    }
    set->n++;
    return bb_check_record(r, &set->points, err, errlen);
}

static int bb_cmp_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int bb_has_json_suffix(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

static bb_status_t bb_set_add_dir(bb_record_set_t *set, const char *dir,
                                  char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        bb_errorf(err, errlen, "%s: %s", dir, strerror(errno));
        return BB_ERR_IO;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    bb_status_t st = BB_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!bb_has_json_suffix(e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **v = realloc(names, cap * sizeof *v);
            if (v == NULL) {
                st = BB_ERR_NOMEM;
                goto free_names;
            }
            names = v;
        }
        if ((names[n] = bb_strdup(e->d_name)) == NULL) {
            st = BB_ERR_NOMEM;
            goto free_names;
        }
        n++;
    }
    if (n == 0) {
        bb_errorf(err, errlen, "%s: no *.json records in this directory", dir);
        st = BB_ERR_IO;
        goto free_names;
    }
    qsort(names, n, sizeof *names, bb_cmp_strings);
    for (size_t i = 0; i < n && st == BB_OK; i++) {
        bb_buf_t p = {0};
        size_t dl = strlen(dir);
        bb_buf_puts(&p, dir);
        if (dl == 0 || dir[dl - 1] != '/')
            bb_buf_puts(&p, "/");
        bb_buf_puts(&p, names[i]);
        char *path = bb_buf_take(&p);
        if (path == NULL) {
            st = BB_ERR_NOMEM;
            break;
        }
        st = bb_set_add(set, path, err, errlen);
        free(path);
    }
free_names:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    if (st == BB_ERR_NOMEM)
        bb_errorf(err, errlen, "%s: out of memory", dir);
    return st;
}

bb_status_t bb_record_set_load(const char *path, bb_record_set_t **set_out,
                               char *err, size_t errlen)
{
    if (path == NULL || set_out == NULL)
        return BB_ERR_ARG;
    bb_record_set_t *set = calloc(1, sizeof *set);
    if (set == NULL || (set->path = bb_strdup(path)) == NULL) {
        free(set);
        bb_errorf(err, errlen, "%s: out of memory", path);
        return BB_ERR_NOMEM;
    }
    struct stat sb;
    bb_status_t st;
    if (stat(path, &sb) != 0) {
        bb_errorf(err, errlen, "%s: %s", path, strerror(errno));
        st = BB_ERR_IO;
    } else if (S_ISDIR(sb.st_mode)) {
        st = bb_set_add_dir(set, path, err, errlen);
    } else {
        st = bb_set_add(set, path, err, errlen);
        if (st == BB_ERR_NOMEM)
            bb_errorf(err, errlen, "%s: out of memory", path);
    }
    if (st != BB_OK) {
        bb_record_set_free(set);
        return st;
    }
    *set_out = set;
    return BB_OK;
}

/* ------------------------------------------------------------------------ */
/* Points and their matching keys                                           */
/* ------------------------------------------------------------------------ */

typedef struct bb_point_ref {
    const bb_set_record_t *record;
    size_t record_index;
    int index;           /* in the record's points array */
    const cJSON *point;
    char *key;           /* benchmark, ranks, canonical parameters */
    char *label;         /* "sum n=2 count=8 mode=protocol" */
} bb_point_ref_t;

static int bb_ignored(const bb_compare_options_t *o, const char *name);

static char *bb_point_label(const bb_set_record_t *r, const cJSON *params,
                            const bb_compare_options_t *options)
{
    bb_buf_t b = {0};
    bb_buf_printf(&b, "%s n=%lld", r->benchmark, (long long)r->ranks);
    if (r->hosts != 1)
        bb_buf_printf(&b, " hosts=%lld", (long long)r->hosts);
    const cJSON *e;
    cJSON_ArrayForEach(e, params) {
        if (options && bb_ignored(options, e->string))
            continue;
        bb_buf_printf(&b, " %s=", e->string);
        /* Descriptive strings are cut short: the label is for reading,
         * matching uses the full canonical key. */
        bb_buf_t vb = {0};
        bb_plain(&vb, e);
        char *v = bb_buf_take(&vb);
        /* A value is free text: its control characters become spaces so
         * that a label stays on its line. */
        for (char *c = v; c != NULL && *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = ' ';
        if (v == NULL)
            b.failed = 1;
        else if (strlen(v) > 24)
            bb_buf_printf(&b, "%.*s...", bb_utf8_cut(v, 21), v);
        else
            bb_buf_puts(&b, v);
        free(v);
    }
    return bb_buf_take(&b);
}

static void bb_points_free(bb_point_ref_t *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].key);
        free(v[i].label);
    }
    free(v);
}

static int bb_cmp_point_keys(const void *a, const void *b)
{
    const bb_point_ref_t *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c != 0)
        return c;
    /* Stable order among duplicates, so the message names the first. */
    if (x->record_index != y->record_index)
        return x->record_index < y->record_index ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int bb_ignored(const bb_compare_options_t *o, const char *name)
{
    for (size_t i = 0; i < o->n_ignore; i++)
        if (strcmp(o->ignore_parameters[i], name) == 0)
            return 1;
    return 0;
}

static bb_status_t bb_points_collect(const bb_record_set_t *set,
                                     const bb_compare_options_t *options,
                                     bb_point_ref_t **out, char *err,
                                     size_t errlen)
{
    bb_point_ref_t *v = calloc(set->points ? set->points : 1, sizeof *v);
    if (v == NULL)
        goto nomem;
    size_t k = 0;
    for (size_t ri = 0; ri < set->n; ri++) {
        const bb_set_record_t *r = &set->records[ri];
        const cJSON *pts = cJSON_GetObjectItemCaseSensitive(r->doc, "points");
        const cJSON *p;
        int pi = 0;
        cJSON_ArrayForEach(p, pts) {
            const cJSON *params = cJSON_GetObjectItemCaseSensitive(p, "parameters");
            bb_buf_t kb = {0};
            bb_canon_string(&kb, r->benchmark);
            bb_buf_printf(&kb, " %lld %lld ", (long long)r->ranks, (long long)r->hosts);
            if (options->n_ignore == 0) {
                bb_canon(&kb, params);
            } else {
                cJSON *kept = cJSON_Duplicate(params, 1);
                for (size_t i = 0; kept && i < options->n_ignore; i++)
                    cJSON_DeleteItemFromObjectCaseSensitive(kept, options->ignore_parameters[i]);
                if (kept == NULL)
                    kb.failed = 1;
                bb_canon(&kb, kept);
                cJSON_Delete(kept);
            }
            v[k].record = r;
            v[k].record_index = ri;
            v[k].index = pi++;
            v[k].point = p;
            v[k].key = bb_buf_take(&kb);
            v[k].label = bb_point_label(r, params, options);
            k++;
            if (v[k - 1].key == NULL || v[k - 1].label == NULL) {
                bb_points_free(v, k);
                goto nomem;
            }
        }
    }
    qsort(v, k, sizeof *v, bb_cmp_point_keys);
    for (size_t i = 1; i < k; i++) {
        if (strcmp(v[i - 1].key, v[i].key) == 0) {
            bb_errorf(err, errlen,
                      "point \"%s\" appears twice: %s: points[%d] and %s: points[%d]",
                      v[i].label, v[i - 1].record->path, v[i - 1].index,
                      v[i].record->path, v[i].index);
            bb_points_free(v, k);
            return BB_ERR_PARSE;
        }
    }
    *out = v;
    return BB_OK;
nomem:
    bb_errorf(err, errlen, "%s: out of memory", set->path);
    return BB_ERR_NOMEM;
}

/* ------------------------------------------------------------------------ */
/* Judging one matched pair                                                 */
/* ------------------------------------------------------------------------ */

static cJSON *bb_timing_side(const cJSON *q)
{
    cJSON *o = cJSON_CreateObject();
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(q, "range");
    cJSON_AddNumberToObject(o, "median",
                            cJSON_GetObjectItemCaseSensitive(q, "median")->valuedouble);
    cJSON *r = cJSON_AddArrayToObject(o, "range");
    cJSON_AddItemToArray(r, cJSON_CreateNumber(cJSON_GetArrayItem(range, 0)->valuedouble));
    cJSON_AddItemToArray(r, cJSON_CreateNumber(cJSON_GetArrayItem(range, 1)->valuedouble));
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(q, "samples");
    if (cJSON_IsArray(samples))
        cJSON_AddNumberToObject(o, "samples", cJSON_GetArraySize(samples));
    return o;
}

typedef struct bb_pair_tally {
    size_t regressions, improvements, contract;
} bb_pair_tally_t;

static void bb_add_contract(cJSON *changes, const char *name, const cJSON *base,
                            const cJSON *cand, const char *unit,
                            bb_pair_tally_t *tally)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddItemToObject(c, "base", base ? cJSON_Duplicate(base, 1) : cJSON_CreateString("(absent)"));
    cJSON_AddItemToObject(c, "candidate", cand ? cJSON_Duplicate(cand, 1) : cJSON_CreateString("(absent)"));
    if (unit)
        cJSON_AddStringToObject(c, "unit", unit);
    cJSON_AddItemToArray(changes, c);
    tally->contract++;
}

static int bb_json_equal(const cJSON *a, const cJSON *b)
{
    char *x = bb_canon_string_of(a), *y = bb_canon_string_of(b);
    int eq = x && y && strcmp(x, y) == 0;
    free(x);
    free(y);
    return eq;
}

/* Deterministic quantities of one quantities object (prefix "" or
 * "first_call."), both directions, so a vanished quantity is a change. */
static void bb_judge_deterministic(const cJSON *bq, const cJSON *cq,
                                   const char *prefix, cJSON *changes,
                                   bb_pair_tally_t *tally)
{
    for (int side = 0; side < 2; side++) {
        const cJSON *from = side ? cq : bq, *other = side ? bq : cq;
        const cJSON *q;
        cJSON_ArrayForEach(q, from) {
            if (bb_quantity_kind(q->string, q) != BB_Q_DETERMINISTIC)
                continue;
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(other, q->string);
            if (side == 1 && o != NULL)
                continue;  /* seen from the base side already */
            /* A quantity that either record declares a measurement
             * ("deterministic": false) is not a contract. */
            if (o != NULL && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "deterministic")))
                continue;
            bb_buf_t nb = {0};
            bb_buf_printf(&nb, "%s%s", prefix, q->string);
            char *name = bb_buf_take(&nb);
            if (name == NULL)
                continue;
            const char *unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "unit"));
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(q, "value");
            if (o == NULL) {
                bb_add_contract(changes, name, side ? NULL : v, side ? v : NULL,
                                unit, tally);
            } else {
                const char *ounit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "unit"));
                const cJSON *ov = cJSON_GetObjectItemCaseSensitive(o, "value");
                if (!bb_json_equal(v, ov) || ounit == NULL || strcmp(unit, ounit) != 0)
                    bb_add_contract(changes, name, v, ov, unit, tally);
            }
            free(name);
        }
    }
}

static void bb_judge_timings(const cJSON *bq, const cJSON *cq, double tol,
                             cJSON *timings, bb_pair_tally_t *tally)
{
    const cJSON *q;
    cJSON_ArrayForEach(q, bq) {
        bb_qkind_t bk = bb_quantity_kind(q->string, q);
        if (bk != BB_Q_TIMING && bk != BB_Q_TIMING_NULL)
            continue;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(cq, q->string);
        bb_qkind_t ck = o ? bb_quantity_kind(q->string, o) : BB_Q_OTHER;
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", q->string);
        const char *verdict;
        if (bk == BB_Q_TIMING && ck == BB_Q_TIMING) {
            double bm = cJSON_GetObjectItemCaseSensitive(q, "median")->valuedouble;
            double cm = cJSON_GetObjectItemCaseSensitive(o, "median")->valuedouble;
            const cJSON *br = cJSON_GetObjectItemCaseSensitive(q, "range");
            const cJSON *cr = cJSON_GetObjectItemCaseSensitive(o, "range");
            double blo = cJSON_GetArrayItem(br, 0)->valuedouble;
            double bhi = cJSON_GetArrayItem(br, 1)->valuedouble;
            double clo = cJSON_GetArrayItem(cr, 0)->valuedouble;
            double chi = cJSON_GetArrayItem(cr, 1)->valuedouble;
            cJSON_AddItemToObject(t, "base", bb_timing_side(q));
            cJSON_AddItemToObject(t, "candidate", bb_timing_side(o));
            if (bm > 0)
                cJSON_AddNumberToObject(t, "ratio", cm / bm);
            else
                cJSON_AddNullToObject(t, "ratio");
            if (cm > bm * (1.0 + tol) && clo > bhi) {
                verdict = "regression";
                tally->regressions++;
            } else if (bm > cm * (1.0 + tol) && blo > chi) {
                verdict = "improvement";
                tally->improvements++;
            } else {
                verdict = "same";
            }
        } else {
            verdict = "unmeasured";  /* null or absent on one side: not judged */
        }
        cJSON_AddStringToObject(t, "verdict", verdict);
        cJSON_AddItemToArray(timings, t);
    }
}

/* A matched pair the rule cannot judge honestly is unusable input: the
 * candidate would otherwise pass as "unmeasured" or unjudged.  A quantity in
 * both with different units (ms against s), and a base timing (median and
 * range) that the candidate lacks or gives as a plain value; a candidate
 * timing that is null with its reason is not measured, and is shown so. */
static bb_status_t bb_check_pair_member(const bb_point_ref_t *b,
                                        const bb_point_ref_t *c,
                                        const char *member, int timings,
                                        char *err, size_t errlen)
{
    const cJSON *bq = cJSON_GetObjectItemCaseSensitive(b->point, member);
    const cJSON *cq = cJSON_GetObjectItemCaseSensitive(c->point, member);
    const cJSON *q, *from = cJSON_IsObject(bq) ? bq : NULL;
    cJSON_ArrayForEach(q, from) {
        const cJSON *o = cJSON_IsObject(cq)
                             ? cJSON_GetObjectItemCaseSensitive(cq, q->string) : NULL;
        bb_qkind_t bk = bb_quantity_kind(q->string, q);
        if (o == NULL) {
            if (timings && bk == BB_Q_TIMING) {
                bb_errorf(err, errlen, "%s: points[%d].%s.%s: missing; the base "
                          "(%s: points[%d]) has this timing", c->record->path,
                          c->index, member, q->string, b->record->path, b->index);
                return BB_ERR_PARSE;
            }
            continue;
        }
        const char *bu = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "unit"));
        const char *cu = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "unit"));
        if (bu != NULL && cu != NULL && strcmp(bu, cu) != 0) {
            bb_errorf(err, errlen, "%s: points[%d].%s.%s: unit \"%.16s\" where the "
                      "base (%s: points[%d]) has \"%.16s\"", c->record->path,
                      c->index, member, q->string, cu, b->record->path, b->index, bu);
            return BB_ERR_PARSE;
        }
        bb_qkind_t ck = bb_quantity_kind(q->string, o);
        if (timings && bk == BB_Q_TIMING && ck != BB_Q_TIMING && ck != BB_Q_TIMING_NULL) {
            bb_errorf(err, errlen, "%s: points[%d].%s.%s: a value without median "
                      "and range [min, max]; the base (%s: points[%d]) has them",
                      c->record->path, c->index, member, q->string,
                      b->record->path, b->index);
            return BB_ERR_PARSE;
        }
    }
    return BB_OK;
}

static bb_status_t bb_check_pair(const bb_point_ref_t *b, const bb_point_ref_t *c,
                                 char *err, size_t errlen)
{
    const char *bs = cJSON_GetObjectItemCaseSensitive(b->point, "status")->valuestring;
    const char *cs = cJSON_GetObjectItemCaseSensitive(c->point, "status")->valuestring;
    /* Only ok points are timed; a status change is a contract change. */
    if (strcmp(bs, "ok") != 0 || strcmp(cs, "ok") != 0)
        return BB_OK;
    bb_status_t st = bb_check_pair_member(b, c, "quantities", 1, err, errlen);
    if (st == BB_OK)
        st = bb_check_pair_member(b, c, "first_call", 0, err, errlen);
    return st;
}

static cJSON *bb_judge_pair(const bb_point_ref_t *b, const bb_point_ref_t *c,
                            double tol, bb_pair_tally_t *tally)
{
    cJSON *pair = cJSON_CreateObject();
    cJSON_AddStringToObject(pair, "label", b->label);
    cJSON_AddStringToObject(pair, "benchmark", b->record->benchmark);
    cJSON_AddNumberToObject(pair, "ranks", (double)b->record->ranks);
    cJSON_AddItemToObject(pair, "parameters",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(b->point, "parameters"), 1));
    cJSON_AddStringToObject(pair, "base_file", b->record->path);
    cJSON_AddNumberToObject(pair, "base_index", b->index);
    cJSON_AddStringToObject(pair, "candidate_file", c->record->path);
    cJSON_AddNumberToObject(pair, "candidate_index", c->index);

    const char *bs = cJSON_GetObjectItemCaseSensitive(b->point, "status")->valuestring;
    const char *cs = cJSON_GetObjectItemCaseSensitive(c->point, "status")->valuestring;
    cJSON *status = cJSON_AddObjectToObject(pair, "status");
    cJSON_AddStringToObject(status, "base", bs);
    cJSON_AddStringToObject(status, "candidate", cs);

    cJSON *timings = cJSON_AddArrayToObject(pair, "timings");
    cJSON *changes = cJSON_AddArrayToObject(pair, "contract_changes");
    bb_pair_tally_t t = {0};
    if (strcmp(bs, cs) != 0) {
        bb_add_contract(changes, "status", cJSON_GetObjectItemCaseSensitive(b->point, "status"),
                        cJSON_GetObjectItemCaseSensitive(c->point, "status"), NULL, &t);
    } else {
        const cJSON *br = cJSON_GetObjectItemCaseSensitive(b->point, "refusal");
        const cJSON *cr = cJSON_GetObjectItemCaseSensitive(c->point, "refusal");
        if (!bb_json_equal(br, cr))
            bb_add_contract(changes, "refusal", br, cr, NULL, &t);
        const cJSON *bq = cJSON_GetObjectItemCaseSensitive(b->point, "quantities");
        const cJSON *cq = cJSON_GetObjectItemCaseSensitive(c->point, "quantities");
        bb_judge_deterministic(bq, cq, "", changes, &t);
        bb_judge_deterministic(cJSON_GetObjectItemCaseSensitive(b->point, "first_call"),
                               cJSON_GetObjectItemCaseSensitive(c->point, "first_call"),
                               "first_call.", changes, &t);
        if (strcmp(bs, "ok") == 0)
            bb_judge_timings(bq, cq, tol, timings, &t);
    }
    const char *verdict = t.contract ? "contract change"
                          : t.regressions ? "regression"
                          : t.improvements ? "improvement" : "same";
    cJSON_AddStringToObject(pair, "verdict", verdict);
    tally->regressions += t.regressions;
    tally->improvements += t.improvements;
    tally->contract += t.contract;
    return pair;
}

/* ------------------------------------------------------------------------ */
/* Provenance warnings                                                      */
/* ------------------------------------------------------------------------ */

static const char *const bb_provenance_fields[] = {
    "runtime.mpi_library", "runtime.mpi_standard",
    "runtime.thread_level_requested", "runtime.thread_level_provided",
    "runtime.timer", "runtime.env",
    "topology.oversubscribed", "topology.threads_per_rank",
    "topology.machine", "source.build", NULL};

static const cJSON *bb_json_path(const cJSON *doc, const char *dotted)
{
    char name[64];
    const cJSON *cur = doc;
    while (cur != NULL && *dotted) {
        const char *dot = strchr(dotted, '.');
        size_t n = dot ? (size_t)(dot - dotted) : strlen(dotted);
        if (n >= sizeof name)
            return NULL;
        memcpy(name, dotted, n);
        name[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, name);
        dotted += n + (dot != NULL);
    }
    return cur;
}

static void bb_warn_provenance(const bb_set_record_t *b, const bb_set_record_t *c,
                               cJSON *warnings)
{
    for (size_t i = 0; bb_provenance_fields[i]; i++) {
        const char *field = bb_provenance_fields[i];
        const cJSON *bv = bb_json_path(b->doc, field);
        const cJSON *cv = bb_json_path(c->doc, field);
        if (bb_json_equal(bv, cv))
            continue;
        /* One warning per distinct difference, however many record pairs
         * share it (a sweep repeats the same provenance in every record). */
        cJSON *w;
        int found = 0;
        cJSON_ArrayForEach(w, warnings) {
            if (strcmp(cJSON_GetObjectItemCaseSensitive(w, "field")->valuestring, field) == 0 &&
                bb_json_equal(cJSON_GetObjectItemCaseSensitive(w, "base"), bv) &&
                bb_json_equal(cJSON_GetObjectItemCaseSensitive(w, "candidate"), cv)) {
                cJSON *pairs = cJSON_GetObjectItemCaseSensitive(w, "record_pairs");
                cJSON_SetNumberValue(pairs, pairs->valuedouble + 1);
                found = 1;
                break;
            }
        }
        if (found)
            continue;
        w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "field", field);
        cJSON_AddItemToObject(w, "base", bv ? cJSON_Duplicate(bv, 1) : cJSON_CreateNull());
        cJSON_AddItemToObject(w, "candidate", cv ? cJSON_Duplicate(cv, 1) : cJSON_CreateNull());
        cJSON_AddStringToObject(w, "base_file", b->path);
        cJSON_AddStringToObject(w, "candidate_file", c->path);
        cJSON_AddNumberToObject(w, "record_pairs", 1);
        cJSON_AddItemToArray(warnings, w);
    }
}

/* ------------------------------------------------------------------------ */
/* The comparison                                                           */
/* ------------------------------------------------------------------------ */

static void bb_add_unmatched(cJSON *list, const char *side, const bb_point_ref_t *p)
{
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "side", side);
    cJSON_AddStringToObject(u, "label", p->label);
    cJSON_AddStringToObject(u, "file", p->record->path);
    cJSON_AddNumberToObject(u, "index", p->index);
    cJSON_AddItemToArray(list, u);
}

static cJSON *bb_set_summary(const bb_record_set_t *set)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", set->path);
    cJSON_AddNumberToObject(o, "records", (double)set->n);
    cJSON_AddNumberToObject(o, "points", (double)set->points);
    return o;
}

bb_status_t bb_compare_sets(const bb_record_set_t *base,
                            const bb_record_set_t *cand,
                            const bb_compare_options_t *options,
                            cJSON **report_out,
                            bb_compare_summary_t *summary_out, char *err,
                            size_t errlen)
{
    if (base == NULL || cand == NULL || options == NULL || report_out == NULL ||
        !(options->tolerance >= 0.0) || !isfinite(options->tolerance) ||
        (options->n_ignore > 0 && options->ignore_parameters == NULL))
        return BB_ERR_ARG;
    double tolerance = options->tolerance;
    bb_point_ref_t *bp = NULL, *cp = NULL;
    bb_status_t st = bb_points_collect(base, options, &bp, err, errlen);
    if (st != BB_OK)
        return st;
    st = bb_points_collect(cand, options, &cp, err, errlen);
    if (st != BB_OK)
        goto free_base;

    cJSON *report = cJSON_CreateObject();
    if (report == NULL) {
        st = BB_ERR_NOMEM;
        goto free_cand;
    }
    cJSON_AddStringToObject(report, "schema", "bbench.compare/1");
    cJSON_AddItemToObject(report, "base", bb_set_summary(base));
    cJSON_AddItemToObject(report, "candidate", bb_set_summary(cand));
    cJSON_AddNumberToObject(report, "tolerance", tolerance);
    cJSON_AddStringToObject(report, "rule",
        "regression: candidate median > base median * (1 + tolerance) and "
        "candidate range entirely above base range (cand min > base max); "
        "improvement: the same with base and candidate swapped; "
        "deterministic quantities and point status must be equal (else a "
        "contract change)");
    cJSON *summary = cJSON_AddObjectToObject(report, "summary");
    cJSON *pairs = cJSON_AddArrayToObject(report, "points");
    cJSON *unmatched = cJSON_AddArrayToObject(report, "unmatched");
    cJSON *warnings = cJSON_AddArrayToObject(report, "warnings");

    /* Record pairs already checked for provenance. */
    size_t ncells = base->n * cand->n;
    unsigned char *seen = calloc(ncells > 0 ? ncells : 1, 1);
    if (seen == NULL) {
        cJSON_Delete(report);
        st = BB_ERR_NOMEM;
        goto free_cand;
    }

    bb_compare_summary_t s = {0};
    bb_pair_tally_t tally = {0};
    size_t i = 0, j = 0, nb = base->points, nc = cand->points;
    while (i < nb || j < nc) {
        int c = i >= nb ? 1 : j >= nc ? -1 : strcmp(bp[i].key, cp[j].key);
        if (c < 0) {
            bb_add_unmatched(unmatched, "base", &bp[i++]);
            s.unmatched_base++;
        } else if (c > 0) {
            bb_add_unmatched(unmatched, "candidate", &cp[j++]);
            s.unmatched_candidate++;
        } else {
            st = bb_check_pair(&bp[i], &cp[j], err, errlen);
            if (st != BB_OK) {
                free(seen);
                cJSON_Delete(report);
                goto free_cand;
            }
            cJSON_AddItemToArray(pairs, bb_judge_pair(&bp[i], &cp[j], tolerance, &tally));
            size_t cell = bp[i].record_index * cand->n + cp[j].record_index;
            if (!seen[cell]) {
                seen[cell] = 1;
                bb_warn_provenance(bp[i].record, cp[j].record, warnings);
            }
            s.matched++;
            i++;
            j++;
        }
    }
    free(seen);
    s.regressions = tally.regressions;
    s.improvements = tally.improvements;
    s.contract_changes = tally.contract;
    s.warnings = (size_t)cJSON_GetArraySize(warnings);

    cJSON_AddNumberToObject(summary, "matched", (double)s.matched);
    cJSON_AddNumberToObject(summary, "unmatched_base", (double)s.unmatched_base);
    cJSON_AddNumberToObject(summary, "unmatched_candidate", (double)s.unmatched_candidate);
    cJSON_AddNumberToObject(summary, "regressions", (double)s.regressions);
    cJSON_AddNumberToObject(summary, "improvements", (double)s.improvements);
    cJSON_AddNumberToObject(summary, "contract_changes", (double)s.contract_changes);
    cJSON_AddNumberToObject(summary, "warnings", (double)s.warnings);

    *report_out = report;
    if (summary_out)
        *summary_out = s;
    st = BB_OK;
free_cand:
    bb_points_free(cp, cand->points);
free_base:
    bb_points_free(bp, base->points);
    if (st == BB_ERR_NOMEM)
        bb_errorf(err, errlen, "out of memory");
    return st;
}

int bb_compare_exit_code(const bb_compare_summary_t *s, int report_only)
{
    if (s->matched == 0)
        return BB_EXIT_USAGE;
    if (s->contract_changes > 0)
        return BB_EXIT_FAILURE;
    if (s->regressions > 0 && !report_only)
        return BB_EXIT_FAILURE;
    return BB_EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Rendering                                                                */
/* ------------------------------------------------------------------------ */

/* A table of strings, rendered aligned or as Markdown. */
typedef struct bb_table {
    size_t ncols, nrows, cap;
    char **cells;        /* nrows * ncols; row 0 is the header */
    unsigned char *span; /* per row: 1 = a heading line (cell 0 only) */
    const char *indent;  /* before every ordinary row (text only) */
    int failed;          /* an allocation failed: rows are missing */
} bb_table_t;

static void bb_table_add(bb_table_t *t, const char *const *cols, int span)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char **v = realloc(t->cells, cap * t->ncols * sizeof *v);
        if (v == NULL) {
            t->failed = 1;
            return;
        }
        t->cells = v;
        unsigned char *f = realloc(t->span, cap);
        if (f == NULL) {
            t->failed = 1;
            return;
        }
        t->span = f;
        t->cap = cap;
    }
    for (size_t c = 0; c < t->ncols; c++)
        t->cells[t->nrows * t->ncols + c] =
            bb_strdup(cols[c] && (!span || c == 0) ? cols[c] : "");
    t->span[t->nrows] = (unsigned char)span;
    t->nrows++;
}

static void bb_table_row(bb_table_t *t, const char *const *cols)
{
    bb_table_add(t, cols, 0);
}

static void bb_table_render(const bb_table_t *t, int markdown, bb_buf_t *out)
{
    if (t->failed) {
        out->failed = 1;
        return;
    }
    size_t *w = calloc(t->ncols, sizeof *w);
    if (w == NULL) {
        out->failed = 1;
        return;
    }
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols && !t->span[r]; c++) {
            const char *s = t->cells[r * t->ncols + c];
            size_t n = s ? strlen(s) : 0;
            if (n > w[c])
                w[c] = n;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        if (t->span[r]) {
            bb_buf_printf(out, "%s\n", t->cells[r * t->ncols] ? t->cells[r * t->ncols] : "");
            continue;
        }
        if (markdown)
            bb_buf_puts(out, "| ");
        else if (t->indent)
            bb_buf_puts(out, t->indent);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            s = s ? s : "";
            int last = c + 1 == t->ncols;
            if (markdown)
                bb_buf_printf(out, "%-*s |%s", (int)w[c], s, last ? "" : " ");
            else if (last)
                bb_buf_puts(out, s);
            else
                bb_buf_printf(out, "%-*s  ", (int)w[c], s);
        }
        bb_buf_puts(out, "\n");
        if (markdown && r == 0) {
            bb_buf_puts(out, "|");
            for (size_t c = 0; c < t->ncols; c++) {
                for (size_t k = 0; k < w[c] + 2; k++)
                    bb_buf_puts(out, "-");
                bb_buf_puts(out, "|");
            }
            bb_buf_puts(out, "\n");
        }
    }
    free(w);
}

static void bb_table_free(bb_table_t *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t->span);
}

/* Engineering units, three significant digits, one unit for the cell. */
static void bb_format_timing(const cJSON *side, char *buf, size_t len)
{
    double m = cJSON_GetObjectItemCaseSensitive(side, "median")->valuedouble;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(side, "range");
    double lo = cJSON_GetArrayItem(r, 0)->valuedouble;
    double hi = cJSON_GetArrayItem(r, 1)->valuedouble;
    double a = fabs(m), scale;
    const char *unit;
    if (a < 1e-6) { scale = 1e9; unit = "ns"; }
    else if (a < 1e-3) { scale = 1e6; unit = "us"; }
    else if (a < 1.0) { scale = 1e3; unit = "ms"; }
    else { scale = 1.0; unit = "s"; }
    snprintf(buf, len, "%.3g [%.3g, %.3g] %s", m * scale, lo * scale,
             hi * scale, unit);
}

/* A value for a text line, cut short so a long MPI library string does not
 * swamp the report. */
static void bb_format_value(const cJSON *v, char *buf, size_t len)
{
    bb_buf_t b = {0};
    if (v == NULL || cJSON_IsNull(v))
        bb_buf_puts(&b, "null");
    else
        bb_plain(&b, v);
    char *s = bb_buf_take(&b);
    if (s == NULL) {
        snprintf(buf, len, "?");
        return;
    }
    for (char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    if (strlen(s) > 60)
        snprintf(buf, len, "%.*s...", bb_utf8_cut(s, 57), s);
    else
        snprintf(buf, len, "%s", s);
    free(s);
}

static size_t bb_summary_get(const cJSON *report, const char *name)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(report, "summary");
    return (size_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, name));
}

static void bb_render_text(const cJSON *report, int markdown, int all_timings,
                           bb_buf_t *out)
{
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(report, "base");
    const cJSON *cand = cJSON_GetObjectItemCaseSensitive(report, "candidate");
    double tol = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(report, "tolerance"));
    const char *item = markdown ? "- " : "  ";
    const cJSON *sides[2] = {base, cand};
    const char *names[2] = {"base:     ", "candidate:"};
    for (int k = 0; k < 2; k++) {
        double nr = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sides[k], "records"));
        double np = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sides[k], "points"));
        bb_buf_printf(out, "%s%s %s (%g record%s, %g point%s)\n", markdown ? "- " : "",
                      names[k],
                      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sides[k], "path")),
                      nr, nr == 1 ? "" : "s", np, np == 1 ? "" : "s");
    }
    bb_buf_printf(out,
                  "%srule: regression if cand median > base median x %.3g and cand "
                  "min > base max; improvement likewise with base and cand swapped\n\n",
                  markdown ? "- " : "", 1.0 + tol);

    /* Text: each point is a heading line with its timings indented below
     * (labels can be long); Markdown: one table, the point in column 1. */
    bb_table_t t = {.ncols = markdown ? 5 : 4, .indent = "  "};
    const char *hdr[5] = {"point", "timing", "base median [min, max]",
                          "candidate median [min, max]", "ratio  verdict"};
    if (markdown)
        hdr[4] = "ratio, verdict";
    bb_table_row(&t, markdown ? hdr : hdr + 1);
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(report, "points");
    const cJSON *p;
    cJSON_ArrayForEach(p, pairs) {
        const char *label = cJSON_GetObjectItemCaseSensitive(p, "label")->valuestring;
        const cJSON *tm;
        int shown = 0;
        cJSON_ArrayForEach(tm, cJSON_GetObjectItemCaseSensitive(p, "timings")) {
            const char *name = cJSON_GetObjectItemCaseSensitive(tm, "name")->valuestring;
            const char *verdict = cJSON_GetObjectItemCaseSensitive(tm, "verdict")->valuestring;
            int moved = strcmp(verdict, "regression") == 0 ||
                        strcmp(verdict, "improvement") == 0;
            if (!all_timings && !moved && strcmp(name, "elapsed") != 0)
                continue;
            char bcell[96] = "-", ccell[96] = "-", vcell[64];
            const cJSON *bs = cJSON_GetObjectItemCaseSensitive(tm, "base");
            const cJSON *cs = cJSON_GetObjectItemCaseSensitive(tm, "candidate");
            const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(tm, "ratio");
            if (bs)
                bb_format_timing(bs, bcell, sizeof bcell);
            if (cs)
                bb_format_timing(cs, ccell, sizeof ccell);
            if (cJSON_IsNumber(ratio))
                snprintf(vcell, sizeof vcell, "%.3f  %s", ratio->valuedouble,
                         moved ? (verdict[0] == 'r' ? "REGRESSION" : "improvement")
                               : verdict);
            else
                snprintf(vcell, sizeof vcell, "-  %s", verdict);
            const char *row[5] = {shown ? "" : label, name, bcell, ccell, vcell};
            if (!markdown && !shown)
                bb_table_add(&t, row, 1);
            bb_table_row(&t, markdown ? row : row + 1);
            shown = 1;
        }
        const char *pv = cJSON_GetObjectItemCaseSensitive(p, "verdict")->valuestring;
        if (!shown) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(p, "status");
            char scell[64];
            snprintf(scell, sizeof scell, "status %s / %s",
                     cJSON_GetObjectItemCaseSensitive(st, "base")->valuestring,
                     cJSON_GetObjectItemCaseSensitive(st, "candidate")->valuestring);
            const char *row[5] = {label, "-", scell, "", pv};
            if (!markdown)
                bb_table_add(&t, row, 1);
            bb_table_row(&t, markdown ? row : row + 1);
        }
    }
    if (t.nrows > 1)
        bb_table_render(&t, markdown, out);
    else
        bb_buf_puts(out, "no matched points\n");
    bb_table_free(&t);

    if (bb_summary_get(report, "regressions") + bb_summary_get(report, "improvements") > 0) {
        bb_buf_printf(out, "\n%stimings that moved (rule above):%s\n",
                      markdown ? "**" : "", markdown ? "**\n" : "");
        cJSON_ArrayForEach(p, pairs) {
            const cJSON *tm;
            cJSON_ArrayForEach(tm, cJSON_GetObjectItemCaseSensitive(p, "timings")) {
                const char *verdict = cJSON_GetObjectItemCaseSensitive(tm, "verdict")->valuestring;
                if (strcmp(verdict, "regression") != 0 && strcmp(verdict, "improvement") != 0)
                    continue;
                char bcell[96], ccell[96];
                bb_format_timing(cJSON_GetObjectItemCaseSensitive(tm, "base"), bcell, sizeof bcell);
                bb_format_timing(cJSON_GetObjectItemCaseSensitive(tm, "candidate"), ccell, sizeof ccell);
                bb_buf_printf(out, "%s%s %s: %s: %s -> %s (x%.3f)\n", item,
                              verdict[0] == 'r' ? "REGRESSION" : "improvement",
                              cJSON_GetObjectItemCaseSensitive(p, "label")->valuestring,
                              cJSON_GetObjectItemCaseSensitive(tm, "name")->valuestring,
                              bcell, ccell,
                              cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(tm, "ratio")));
            }
        }
    }
    size_t nc = bb_summary_get(report, "contract_changes");
    if (nc) {
        bb_buf_printf(out, "\n%scontract changes (deterministic quantities or status differ):%s\n",
                      markdown ? "**" : "", markdown ? "**\n" : "");
        cJSON_ArrayForEach(p, pairs) {
            const cJSON *c;
            cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, "contract_changes")) {
                char bv[80], cv[80];
                const char *unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "unit"));
                bb_format_value(cJSON_GetObjectItemCaseSensitive(c, "base"), bv, sizeof bv);
                bb_format_value(cJSON_GetObjectItemCaseSensitive(c, "candidate"), cv, sizeof cv);
                bb_buf_printf(out, "%sCONTRACT CHANGE %s: %s: base %s%s%s, candidate %s%s%s\n",
                              item,
                              cJSON_GetObjectItemCaseSensitive(p, "label")->valuestring,
                              cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring,
                              bv, unit ? " " : "", unit ? unit : "", cv,
                              unit ? " " : "", unit ? unit : "");
            }
        }
    }
    const cJSON *um = cJSON_GetObjectItemCaseSensitive(report, "unmatched");
    if (cJSON_GetArraySize(um) > 0) {
        bb_buf_printf(out, "\n%sunmatched points:%s\n", markdown ? "**" : "",
                      markdown ? "**\n" : "");
        const cJSON *u;
        cJSON_ArrayForEach(u, um)
            bb_buf_printf(out, "%s%s only: %s (%s: points[%g])\n", item,
                          cJSON_GetObjectItemCaseSensitive(u, "side")->valuestring,
                          cJSON_GetObjectItemCaseSensitive(u, "label")->valuestring,
                          cJSON_GetObjectItemCaseSensitive(u, "file")->valuestring,
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(u, "index")));
    }
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(report, "warnings");
    if (cJSON_GetArraySize(wl) > 0) {
        bb_buf_printf(out, "\n%swarnings (provenance differs; numbers may not be comparable):%s\n",
                      markdown ? "**" : "", markdown ? "**\n" : "");
        const cJSON *w;
        cJSON_ArrayForEach(w, wl) {
            char bv[80], cv[80];
            bb_format_value(cJSON_GetObjectItemCaseSensitive(w, "base"), bv, sizeof bv);
            bb_format_value(cJSON_GetObjectItemCaseSensitive(w, "candidate"), cv, sizeof cv);
            bb_buf_printf(out, "%sWARNING %s: base %s, candidate %s (%g record pairs)\n",
                          item, cJSON_GetObjectItemCaseSensitive(w, "field")->valuestring,
                          bv, cv,
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(w, "record_pairs")));
        }
    }
    bb_buf_printf(out,
                  "\n%ssummary: %zu points matched, %zu timing regressions, %zu "
                  "improvements, %zu contract changes, %zu unmatched (base %zu, "
                  "candidate %zu), %zu warnings\n",
                  markdown ? "- " : "", bb_summary_get(report, "matched"),
                  bb_summary_get(report, "regressions"),
                  bb_summary_get(report, "improvements"), nc,
                  bb_summary_get(report, "unmatched_base") +
                      bb_summary_get(report, "unmatched_candidate"),
                  bb_summary_get(report, "unmatched_base"),
                  bb_summary_get(report, "unmatched_candidate"),
                  bb_summary_get(report, "warnings"));
}

char *bb_compare_render(const cJSON *report, bb_compare_format_t format,
                        int all_timings)
{
    if (report == NULL)
        return NULL;
    if (format == BB_COMPARE_JSON) {
        char *raw = cJSON_Print(report);
        /* File names need not be UTF-8; the report must be. */
        char *s = raw ? bb_json_text_utf8(raw) : NULL;
        cJSON_free(raw);
        if (s == NULL)
            return NULL;
        /* Hand back memory bb_free() can release, with a final newline. */
        bb_buf_t b = {0};
        bb_buf_puts(&b, s);
        bb_buf_puts(&b, "\n");
        free(s);
        return bb_buf_take(&b);
    }
    bb_buf_t b = {0};
    bb_render_text(report, format == BB_COMPARE_MARKDOWN, all_timings, &b);
    return bb_buf_take(&b);
}

/* ------------------------------------------------------------------------ */
/* Extraction for plots                                                     */
/* ------------------------------------------------------------------------ */

#define BB_EXTRACT_MAX_COLUMNS 1000

static void bb_tsv_field(bb_buf_t *b, const char *s)
{
    for (const char *p = s; *p; p++)
        bb_buf_add(b, (*p == '\t' || *p == '\n' || *p == '\r') ? " " : p, 1);
}

static void bb_tsv_number(bb_buf_t *b, const cJSON *v)
{
    if (cJSON_IsNumber(v))
        bb_canon_number(b, v->valuedouble);
    else
        bb_buf_puts(b, "NaN");
}

bb_status_t bb_record_set_extract(const bb_record_set_t *set,
                                  const char *const *quantities, size_t nq,
                                  char **tsv_out, char *err, size_t errlen)
{
    if (set == NULL || tsv_out == NULL || (nq > 0 && quantities == NULL))
        return BB_ERR_ARG;
    /* Parameter columns: the union of names, in first-seen order.  The
     * search is linear in the columns, so their number is bounded: a
     * hostile record with a huge parameters object must not take hours. */
    cJSON *cols = cJSON_CreateArray();
    if (cols == NULL)
        goto nomem;
    size_t ncols = 0;
    for (size_t ri = 0; ri < set->n; ri++) {
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(set->records[ri].doc, "points")) {
            const cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p, "parameters")) {
                int have = 0;
                const cJSON *c;
                cJSON_ArrayForEach(c, cols) have |= strcmp(c->valuestring, e->string) == 0;
                if (!have && ++ncols > BB_EXTRACT_MAX_COLUMNS) {
                    cJSON_Delete(cols);
                    bb_errorf(err, errlen, "%s: more than %d distinct parameter "
                              "names, too many columns to extract",
                              set->records[ri].path, BB_EXTRACT_MAX_COLUMNS);
                    return BB_ERR_PARSE;
                }
                if (!have)
                    cJSON_AddItemToArray(cols, cJSON_CreateString(e->string));
            }
        }
    }
    bb_buf_t b = {0};
    bb_buf_puts(&b, "file\tpoint\tbenchmark\tranks\tstatus");
    const cJSON *c;
    cJSON_ArrayForEach(c, cols) {
        bb_buf_puts(&b, "\t");
        bb_tsv_field(&b, c->valuestring);
    }
    for (size_t k = 0; k < nq; k++) {
        /* Names from the command line: a tab in one would shift columns. */
        for (int part = 0; part < 3; part++) {
            bb_buf_puts(&b, "\t");
            bb_tsv_field(&b, quantities[k]);
            bb_buf_puts(&b, part == 0 ? "" : part == 1 ? ".min" : ".max");
        }
    }
    bb_buf_puts(&b, "\n");
    for (size_t ri = 0; ri < set->n; ri++) {
        const bb_set_record_t *r = &set->records[ri];
        const cJSON *p;
        int pi = 0;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r->doc, "points")) {
            bb_tsv_field(&b, r->path);
            bb_buf_printf(&b, "\t%d\t", pi++);
            bb_tsv_field(&b, r->benchmark);
            bb_buf_printf(&b, "\t%lld\t%s", (long long)r->ranks,
                          cJSON_GetObjectItemCaseSensitive(p, "status")->valuestring);
            const cJSON *params = cJSON_GetObjectItemCaseSensitive(p, "parameters");
            cJSON_ArrayForEach(c, cols) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, c->valuestring);
                bb_buf_puts(&b, "\t");
                if (v == NULL) {
                    bb_buf_puts(&b, "-");
                } else {
                    bb_buf_t vb = {0};
                    bb_plain(&vb, v);
                    char *s = bb_buf_take(&vb);
                    if (s == NULL)
                        b.failed = 1;
                    else
                        bb_tsv_field(&b, s);
                    free(s);
                }
            }
            const cJSON *qs = cJSON_GetObjectItemCaseSensitive(p, "quantities");
            for (size_t k = 0; k < nq; k++) {
                const cJSON *q = cJSON_GetObjectItemCaseSensitive(qs, quantities[k]);
                bb_buf_puts(&b, "\t");
                const cJSON *median = cJSON_GetObjectItemCaseSensitive(q, "median");
                if (cJSON_IsNumber(median) &&
                    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(q, "range")) == 2) {
                    const cJSON *range = cJSON_GetObjectItemCaseSensitive(q, "range");
                    bb_tsv_number(&b, median);
                    bb_buf_puts(&b, "\t");
                    bb_tsv_number(&b, cJSON_GetArrayItem(range, 0));
                    bb_buf_puts(&b, "\t");
                    bb_tsv_number(&b, cJSON_GetArrayItem(range, 1));
                } else {
                    bb_tsv_number(&b, cJSON_GetObjectItemCaseSensitive(q, "value"));
                    bb_buf_puts(&b, "\tNaN\tNaN");
                }
            }
            bb_buf_puts(&b, "\n");
        }
    }
    cJSON_Delete(cols);
    char *s = bb_buf_take(&b);
    if (s == NULL)
        goto nomem;
    *tsv_out = s;
    return BB_OK;
nomem:
    bb_errorf(err, errlen, "%s: out of memory", set->path);
    return BB_ERR_NOMEM;
}
