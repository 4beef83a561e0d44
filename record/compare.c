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

void bb_record_set_free(bb_record_set_t *set)
{
    if (set == NULL)
        return;
    for (size_t i = 0; i < set->n; i++) {
        free(set->records[i].path);
        cJSON_Delete(set->records[i].doc);
    }
    free(set->records);
    for (size_t i = 0; i < set->nskipped; i++)
        free(set->skipped[i]);
    free(set->skipped);
    free(set->path);
    free(set);
}

const char *bb_record_set_skipped(const bb_record_set_t *set, size_t i)
{
    return i < set->nskipped ? set->skipped[i] : NULL;
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

/* A quantity is a contract when its record declares it so ("deterministic":
 * true, which bbench writes on every quantity) and a measurement when it
 * says false.  Records written before the declaration (no member) are read
 * by the rule their writer now applies: bytes and counts without samples
 * outside a run scope are contracts. */
static bb_qkind_t bb_quantity_kind(const char *name, const cJSON *q)
{
    (void)name;
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
        !(scope != NULL && strncmp(scope, "run", 3) == 0))
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
    /* The reader refused anything but a regular file; its identity now. */
    struct stat sb;
    if (stat(path, &sb) == 0) {
        r->dev = sb.st_dev;
        r->ino = sb.st_ino;
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

/* Did bb_record_read refuse path because its JSON is not a record at all
 * (the error names the top level or the schema member), rather than a
 * record that is broken?  A schema that names a record of another version
 * ("bbench.record/2") is a record this tool cannot read: an error, never a
 * skip, or a candidate could drop out of the comparison by its schema. */
static int bb_not_a_record(const char *err, const char *path)
{
    size_t pl = strlen(path);
    if (strncmp(err, path, pl) != 0 || strncmp(err + pl, ": ", 2) != 0)
        return 0;
    const char *why = err + pl + 2;
    static const char other_version[] = "schema: \"bbench.record";
    if (strncmp(why, other_version, sizeof other_version - 1) == 0)
        return 0;
    return strncmp(why, "schema: ", 8) == 0 ||
           strcmp(why, "top level: not an object") == 0;
}

static const char *bb_get_str(const cJSON *o, const char *name);
static void bb_short_labels(cJSON *pairs);

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
        /* JSON that is not a record (another schema such as a saved
         * bbench.compare/1 report, or no schema member) is skipped with a
         * warning: a report kept beside the records it judged must not make
         * the next comparison unusable.  The validator says why in err. */
        if (st == BB_ERR_PARSE && bb_not_a_record(err, path)) {
            char **v = realloc(set->skipped, (set->nskipped + 1) * sizeof *v);
            if (v == NULL || (v[set->nskipped] = bb_strdup(err)) == NULL) {
                if (v != NULL)
                    set->skipped = v;
                st = BB_ERR_NOMEM;
            } else {
                set->skipped = v;
                set->nskipped++;
                st = BB_OK;
            }
        }
        free(path);
    }
    if (st == BB_OK && set->n == 0) {
        bb_errorf(err, errlen, "%s: no records among its %zu *.json files "
                  "(%s)", dir, n, set->skipped[0]);
        st = BB_ERR_IO;
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
        set->is_dir = 1;
        set->dev = sb.st_dev;
        set->ino = sb.st_ino;
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

/* The record of set whose file is (dev, ino), or NULL. */
static const bb_set_record_t *bb_set_file(const bb_record_set_t *set, dev_t dev,
                                          ino_t ino)
{
    for (size_t i = 0; set != NULL && i < set->n; i++)
        if (set->records[i].dev == dev && set->records[i].ino == ino)
            return &set->records[i];
    return NULL;
}

/* Is the directory dir, or one of its ancestors, a directory operand of
 * set?  Walks the resolved path up to the root, component by component. */
static int bb_set_dir_holds(const bb_record_set_t *set, const char *dir)
{
    if (set == NULL || !set->is_dir)
        return 0;
    char *real = realpath(dir, NULL);
    if (real == NULL)
        return 0;
    int inside = 0;
    for (;;) {
        struct stat sb;
        if (stat(real[0] ? real : "/", &sb) == 0 && sb.st_dev == set->dev &&
            sb.st_ino == set->ino) {
            inside = 1;
            break;
        }
        char *slash = strrchr(real, '/');
        if (slash == NULL || real[0] == '\0')
            break;
        *slash = '\0';
    }
    free(real);
    return inside;
}

bb_status_t bb_compare_check_output(const bb_record_set_t *base,
                                    const bb_record_set_t *cand, const char *what,
                                    const char *path, int fd, char *err,
                                    size_t errlen)
{
    const bb_record_set_t *sets[2] = {base, cand};
    static const char *const sides[2] = {"base", "candidate"};
    struct stat sb;
    int exists;
    if (fd >= 0) {
        if (fstat(fd, &sb) != 0) {
            bb_errorf(err, errlen, "%s: %s", what, strerror(errno));
            return BB_ERR_IO;
        }
        exists = 1;
        /* Standard output (no path) may be a terminal or a pipe. */
        if (path == NULL && !S_ISREG(sb.st_mode))
            return BB_OK;
    } else {
        if (path == NULL || path[0] == '\0') {
            bb_errorf(err, errlen, "%s: empty path", what);
            return BB_ERR_ARG;
        }
        /* lstat, never open: opening a FIFO waits for a reader, and a
         * link would be followed to whatever it names. */
        exists = lstat(path, &sb) == 0;
        if (!exists && errno != ENOENT) {
            bb_errorf(err, errlen, "%s %s: %s", what, path, strerror(errno));
            return BB_ERR_IO;
        }
        if (exists && S_ISLNK(sb.st_mode)) {
            bb_errorf(err, errlen, "%s %s: a symbolic link; %s writes only a regular "
                      "file or a new path", what, path, what);
            return BB_ERR_ARG;
        }
    }
    if (exists && !S_ISREG(sb.st_mode)) {
        bb_errorf(err, errlen, "%s %s: a %s; %s writes only a regular file or a new "
                  "path", what, path ? path : "", bb_file_kind(sb.st_mode), what);
        return BB_ERR_ARG;
    }
    for (int k = 0; k < 2; k++) {
        const bb_set_record_t *r = exists ? bb_set_file(sets[k], sb.st_dev, sb.st_ino) : NULL;
        if (r != NULL) {
            bb_errorf(err, errlen, "%s%s%s is the %s record %s: the report would "
                      "overwrite an input", what, path ? " " : "", path ? path : "",
                      sides[k], r->path);
            return BB_ERR_ARG;
        }
    }
    if (path == NULL)
        return BB_OK;
    char *copy = bb_strdup(path);
    if (copy == NULL) {
        bb_errorf(err, errlen, "%s: out of memory", what);
        return BB_ERR_NOMEM;
    }
    char *slash = strrchr(copy, '/');
    const char *dir = slash == NULL ? "." : slash == copy ? "/" : (*slash = '\0', copy);
    bb_status_t st = BB_OK;
    for (int k = 0; k < 2 && st == BB_OK; k++) {
        if (bb_set_dir_holds(sets[k], dir)) {
            bb_errorf(err, errlen, "%s %s: inside the %s directory %s; the report "
                      "must not be written among the records it reads", what, path,
                      sides[k], sets[k]->path);
            st = BB_ERR_ARG;
        }
    }
    free(copy);
    return st;
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
    size_t regressions, improvements, contract, noise, unmeasured;
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

/* The declaration of a quantity: whether it is a contract and what it is
 * a value of.  Both are fixed by the code, never by a run, so a difference
 * is a contract change; members a side does not state (an older record)
 * are not compared. */
static const char *const bb_declaration_members[] = {"deterministic", "scope", NULL};

static void bb_judge_declarations(const cJSON *bq, const cJSON *cq, const char *prefix,
                                  cJSON *changes, bb_pair_tally_t *tally)
{
    const cJSON *q;
    cJSON_ArrayForEach(q, bq) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(cq, q->string);
        if (o == NULL)
            continue;
        for (size_t m = 0; bb_declaration_members[m] != NULL; m++) {
            const cJSON *bd = cJSON_GetObjectItemCaseSensitive(q, bb_declaration_members[m]);
            const cJSON *cd = cJSON_GetObjectItemCaseSensitive(o, bb_declaration_members[m]);
            if (bd == NULL || cd == NULL || bb_json_equal(bd, cd))
                continue;
            bb_buf_t nb = {0};
            bb_buf_printf(&nb, "%s%s.%s", prefix, q->string, bb_declaration_members[m]);
            char *name = bb_buf_take(&nb);
            if (name != NULL)
                bb_add_contract(changes, name, bd, cd, NULL, tally);
            free(name);
        }
    }
}

/* Contract quantities of one quantities object (prefix "" or "first_call."),
 * as the base declares them: the candidate under test cannot exempt a
 * quantity by declaring it a measurement (that is a declaration change,
 * bb_judge_declarations).  A contract the candidate lost, or one it adds,
 * is a change too. */
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
                continue;  /* both have it: the base's declaration rules */
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

/* ------------------------------------------------------------------------ */
/* Mann-Whitney U                                                           */
/* ------------------------------------------------------------------------ */

/* The rank-based test needs this many samples a side; below it, only the
 * range rule (5 a side is the least for which two-sided p can go under
 * 0.05 at all: 2 / C(10, 5) = 0.008). */
#define BB_MW_MIN_SAMPLES 5
#define BB_MW_ALPHA 0.05

typedef struct bb_ranked {
    double v;
    int side;  /* 0 base, 1 candidate */
} bb_ranked_t;

static int bb_cmp_ranked(const void *a, const void *b)
{
    double x = ((const bb_ranked_t *)a)->v, y = ((const bb_ranked_t *)b)->v;
    return (x > y) - (x < y);
}

/* Two-sided p-value of the Mann-Whitney U test of samples x (n1) against
 * y (n2): ranks of the pooled samples (ties share their mean rank), U of x,
 * and the normal approximation with the tie correction of the variance and a
 * continuity correction of 0.5.  *u_out is U of x.  -1 when out of memory. */
static double bb_mann_whitney(const cJSON *x, const cJSON *y, double *u_out)
{
    size_t n1 = (size_t)cJSON_GetArraySize(x), n2 = (size_t)cJSON_GetArraySize(y);
    size_t n = n1 + n2;
    bb_ranked_t *v = malloc(n * sizeof *v);
    if (v == NULL)
        return -1.0;
    size_t k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, x) v[k++] = (bb_ranked_t){e->valuedouble, 0};
    cJSON_ArrayForEach(e, y) v[k++] = (bb_ranked_t){e->valuedouble, 1};
    qsort(v, n, sizeof *v, bb_cmp_ranked);
    double r1 = 0.0, ties = 0.0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j].v == v[i].v)
            j++;
        double rank = 0.5 * (double)(i + 1 + j);  /* mean of ranks i+1 .. j */
        double t = (double)(j - i);
        ties += t * t * t - t;
        for (size_t m = i; m < j; m++)
            if (v[m].side == 0)
                r1 += rank;
        i = j;
    }
    free(v);
    double dn1 = (double)n1, dn2 = (double)n2, dn = (double)n;
    double u = r1 - dn1 * (dn1 + 1.0) / 2.0;
    *u_out = u;
    double var = dn1 * dn2 / 12.0 * ((dn + 1.0) - ties / (dn * (dn - 1.0)));
    if (!(var > 0.0))
        return 1.0;  /* every sample equal */
    double z = (fabs(u - dn1 * dn2 / 2.0) - 0.5) / sqrt(var);
    if (z < 0.0)
        z = 0.0;
    double p = erfc(z / sqrt(2.0));
    return p > 1.0 ? 1.0 : p;
}

/* The verdict on one timing: regression, improvement or within noise, and
 * why.  With at least BB_MW_MIN_SAMPLES samples a side a move beyond the
 * tolerance must also be significant (Mann-Whitney p < 0.05); with fewer,
 * the ranges must not overlap.  Both figures are reported. */
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
        const char *verdict, *reason = NULL;
        char why[96];
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
            int slower = cm > bm * (1.0 + tol), faster = bm > cm * (1.0 + tol);
            int disjoint = slower ? clo > bhi : faster ? blo > chi
                                              : (clo > bhi || blo > chi);
            cJSON_AddBoolToObject(t, "ranges_disjoint", disjoint);
            const cJSON *bs = cJSON_GetObjectItemCaseSensitive(q, "samples");
            const cJSON *cs = cJSON_GetObjectItemCaseSensitive(o, "samples");
            double p = -1.0, u = 0.0;
            if (cJSON_GetArraySize(bs) >= BB_MW_MIN_SAMPLES &&
                cJSON_GetArraySize(cs) >= BB_MW_MIN_SAMPLES)
                p = bb_mann_whitney(bs, cs, &u);
            if (p >= 0.0) {
                cJSON *mw = cJSON_AddObjectToObject(t, "mann_whitney");
                cJSON_AddNumberToObject(mw, "u", u);
                cJSON_AddNumberToObject(mw, "p", p);
                cJSON_AddNumberToObject(mw, "alpha", BB_MW_ALPHA);
            }
            int significant = p >= 0.0 ? p < BB_MW_ALPHA : disjoint;
            if ((slower || faster) && significant) {
                verdict = slower ? "regression" : "improvement";
                if (slower)
                    tally->regressions++;
                else
                    tally->improvements++;
            } else {
                verdict = "within noise";
                tally->noise++;
                if (!slower && !faster)
                    reason = "under tolerance";
                else if (p >= 0.0) {
                    snprintf(why, sizeof why, "Mann-Whitney p = %.2g >= %.2g", p,
                             BB_MW_ALPHA);
                    reason = why;
                } else
                    reason = "ranges overlap";
            }
        } else {
            verdict = "unmeasured";  /* null or absent on one side: not judged */
            reason = bk == BB_Q_TIMING_NULL ? "null in the base" : "null in the candidate";
            tally->unmeasured++;
        }
        cJSON_AddStringToObject(t, "verdict", verdict);
        if (reason)
            cJSON_AddStringToObject(t, "reason", reason);
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
    /* The vocabulary defines what every quantity name means
     * (doc/protocol.md): a record with another one is another contract. */
    const cJSON *bv = cJSON_GetObjectItemCaseSensitive(b->record->doc, "vocabulary");
    const cJSON *cv = cJSON_GetObjectItemCaseSensitive(c->record->doc, "vocabulary");
    if (!bb_json_equal(bv, cv))
        bb_add_contract(changes, "vocabulary", bv, cv, NULL, &t);
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
        const cJSON *bf = cJSON_GetObjectItemCaseSensitive(b->point, "first_call");
        const cJSON *cf = cJSON_GetObjectItemCaseSensitive(c->point, "first_call");
        bb_judge_declarations(bq, cq, "", changes, &t);
        bb_judge_declarations(bf, cf, "first_call.", changes, &t);
        bb_judge_deterministic(bq, cq, "", changes, &t);
        bb_judge_deterministic(bf, cf, "first_call.", changes, &t);
        if (strcmp(bs, "ok") == 0)
            bb_judge_timings(bq, cq, tol, timings, &t);
    }
    const char *verdict = t.contract ? "contract change"
                          : t.regressions ? "regression"
                          : t.improvements ? "improvement" : "within noise";
    cJSON_AddStringToObject(pair, "verdict", verdict);
    tally->regressions += t.regressions;
    tally->improvements += t.improvements;
    tally->contract += t.contract;
    tally->noise += t.noise;
    tally->unmeasured += t.unmeasured;
    return pair;
}

/* ------------------------------------------------------------------------ */
/* Provenance warnings                                                      */
/* ------------------------------------------------------------------------ */

/* Provenance compared field by field.  Not here: what differs between any
 * two runs (command, created_utc, the launcher line with its output path,
 * load averages, the kernel rate: the machine-speed check reads those) and
 * the revision (shown in the summary lines). */
static const char *const bb_provenance_fields[] = {
    "runtime.mpi_library", "runtime.mpi_standard",
    "runtime.thread_level_requested", "runtime.thread_level_provided",
    "runtime.timer.source", "runtime.env", "runtime.launcher.name",
    "runtime.launcher.binding.policy",
    "topology.oversubscribed", "topology.threads_per_rank",
    "topology.machine", "source.build", "system.cpu_model", "system.kernel",
    "system.os", NULL};

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

static void bb_warn_add(cJSON *warnings, const char *field, const cJSON *bv,
                        const cJSON *cv, const bb_set_record_t *b,
                        const bb_set_record_t *c)
{
    /* One warning per distinct difference, however many record pairs
     * share it (a sweep repeats the same provenance in every record). */
    cJSON *w;
    cJSON_ArrayForEach(w, warnings) {
        if (strcmp(cJSON_GetObjectItemCaseSensitive(w, "field")->valuestring, field) == 0 &&
            bb_json_equal(cJSON_GetObjectItemCaseSensitive(w, "base"), bv) &&
            bb_json_equal(cJSON_GetObjectItemCaseSensitive(w, "candidate"), cv)) {
            cJSON *pairs = cJSON_GetObjectItemCaseSensitive(w, "record_pairs");
            cJSON_SetNumberValue(pairs, pairs->valuedouble + 1);
            return;
        }
    }
    w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "field", field);
    cJSON_AddItemToObject(w, "base", bv ? cJSON_Duplicate(bv, 1) : cJSON_CreateNull());
    cJSON_AddItemToObject(w, "candidate", cv ? cJSON_Duplicate(cv, 1) : cJSON_CreateNull());
    cJSON_AddStringToObject(w, "base_file", b->path);
    cJSON_AddStringToObject(w, "candidate_file", c->path);
    cJSON_AddNumberToObject(w, "record_pairs", 1);
    cJSON_AddItemToArray(warnings, w);
}

/* Down to the members that differ: objects member by member (both sides'
 * names), anything else (strings, numbers, arrays) as one value.  depth
 * bounds the walk over hostile nesting. */
static void bb_warn_diff(cJSON *warnings, const char *field, const cJSON *bv,
                         const cJSON *cv, const bb_set_record_t *b,
                         const bb_set_record_t *c, int depth)
{
    if (bb_json_equal(bv, cv))
        return;
    if (depth < 4 && cJSON_IsObject(bv) && cJSON_IsObject(cv)) {
        for (int side = 0; side < 2; side++) {
            const cJSON *e;
            const cJSON *from = side ? cv : bv;
            cJSON_ArrayForEach(e, from) {
                if (side == 1 && cJSON_GetObjectItemCaseSensitive(bv, e->string) != NULL)
                    continue;
                if (bb_has_control(e->string))
                    continue;
                bb_buf_t nb = {0};
                bb_buf_printf(&nb, "%s.%s", field, e->string);
                char *name = bb_buf_take(&nb);
                if (name == NULL)
                    continue;
                bb_warn_diff(warnings, name, cJSON_GetObjectItemCaseSensitive(bv, e->string),
                             cJSON_GetObjectItemCaseSensitive(cv, e->string), b, c, depth + 1);
                free(name);
            }
        }
        return;
    }
    /* Arrays of one length (caches, hosts): element by element. */
    if (depth < 4 && cJSON_IsArray(bv) && cJSON_IsArray(cv) &&
        cJSON_GetArraySize(bv) == cJSON_GetArraySize(cv) && cJSON_GetArraySize(bv) <= 64) {
        int k = 0;
        for (const cJSON *x = bv->child, *y = cv->child; x && y; x = x->next, y = y->next) {
            bb_buf_t nb = {0};
            bb_buf_printf(&nb, "%s[%d]", field, k++);
            char *name = bb_buf_take(&nb);
            if (name == NULL)
                continue;
            bb_warn_diff(warnings, name, x, y, b, c, depth + 1);
            free(name);
        }
        return;
    }
    bb_warn_add(warnings, field, bv, cv, b, c);
}

static void bb_warn_provenance(const bb_set_record_t *b, const bb_set_record_t *c,
                               cJSON *warnings)
{
    for (size_t i = 0; bb_provenance_fields[i]; i++) {
        const char *field = bb_provenance_fields[i];
        const cJSON *bv = bb_json_path(b->doc, field);
        const cJSON *cv = bb_json_path(c->doc, field);
        /* A field an older record lacks is not a difference of machines. */
        if (bv == NULL || cv == NULL)
            continue;
        bb_warn_diff(warnings, field, bv, cv, b, c, 0);
    }
}

/* ------------------------------------------------------------------------ */
/* The comparison                                                           */
/* ------------------------------------------------------------------------ */

static void bb_add_unmatched(cJSON *list, cJSON *groups, const char *side,
                             const bb_point_ref_t *p)
{
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "side", side);
    cJSON_AddStringToObject(u, "label", p->label);
    cJSON_AddStringToObject(u, "file", p->record->path);
    cJSON_AddNumberToObject(u, "index", p->index);
    cJSON_AddItemToArray(list, u);
    /* Groups by side, benchmark, ranks and hosts: a sweep at another rank
     * count is one line, not a line per point. */
    cJSON *g;
    cJSON_ArrayForEach(g, groups) {
        if (strcmp(cJSON_GetObjectItemCaseSensitive(g, "side")->valuestring, side) == 0 &&
            strcmp(cJSON_GetObjectItemCaseSensitive(g, "benchmark")->valuestring,
                   p->record->benchmark) == 0 &&
            cJSON_GetObjectItemCaseSensitive(g, "ranks")->valuedouble == (double)p->record->ranks &&
            cJSON_GetObjectItemCaseSensitive(g, "hosts")->valuedouble == (double)p->record->hosts) {
            cJSON *n = cJSON_GetObjectItemCaseSensitive(g, "points");
            cJSON_SetNumberValue(n, n->valuedouble + 1);
            return;
        }
    }
    g = cJSON_CreateObject();
    cJSON_AddStringToObject(g, "side", side);
    cJSON_AddStringToObject(g, "benchmark", p->record->benchmark);
    cJSON_AddNumberToObject(g, "ranks", (double)p->record->ranks);
    cJSON_AddNumberToObject(g, "hosts", (double)p->record->hosts);
    cJSON_AddNumberToObject(g, "points", 1);
    cJSON_AddStringToObject(g, "first", p->label);
    cJSON_AddItemToArray(groups, g);
}

/* Add the string to the array unless it is there already. */
static void bb_add_distinct(cJSON *array, const char *text)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, array)
        if (strcmp(e->valuestring, text) == 0)
            return;
    if (cJSON_GetArraySize(array) < 64)
        cJSON_AddItemToArray(array, cJSON_CreateString(text));
}

static int bb_cmp_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the finite positive numbers v[0, n) (reordered), or NaN. */
static double bb_median_of(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0)
            v[k++] = v[i];
    if (k == 0)
        return NAN;
    qsort(v, k, sizeof *v, bb_cmp_doubles);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

static void bb_add_number_or_null(cJSON *o, const char *name, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, name, v);
    else
        cJSON_AddNullToObject(o, name);
}

/* One side of the report: its records, the revisions and hosts they were
 * made on, and what the records say of the machine's speed. */
static cJSON *bb_set_summary(const bb_record_set_t *set)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", set->path);
    cJSON_AddNumberToObject(o, "records", (double)set->n);
    cJSON_AddNumberToObject(o, "points", (double)set->points);
    cJSON *skipped = cJSON_AddArrayToObject(o, "skipped");
    for (size_t i = 0; i < set->nskipped; i++)
        cJSON_AddItemToArray(skipped, cJSON_CreateString(set->skipped[i]));
    cJSON *revs = cJSON_AddArrayToObject(o, "revisions");
    cJSON *hosts = cJSON_AddArrayToObject(o, "hosts");
    double *rate = calloc(set->n ? set->n : 1, sizeof *rate);
    double load = (double)NAN, timer = (double)NAN, pus = (double)NAN;
    for (size_t i = 0; i < set->n; i++) {
        const cJSON *doc = set->records[i].doc;
        const cJSON *git = bb_json_path(doc, "source.git");
        char rev[96];
        if (cJSON_IsString(git) && !bb_has_control(git->valuestring)) {
            size_t gl = strlen(git->valuestring);
            int dirty = cJSON_IsTrue(bb_json_path(doc, "source.git_dirty")) &&
                        !(gl > 6 && strcmp(git->valuestring + gl - 6, "-dirty") == 0);
            snprintf(rev, sizeof rev, "%.*s%s", bb_utf8_cut(git->valuestring, 64),
                     git->valuestring, dirty ? "-dirty" : "");
        } else {
            snprintf(rev, sizeof rev, "unknown");
        }
        bb_add_distinct(revs, rev);
        const cJSON *h;
        cJSON_ArrayForEach(h, bb_json_path(doc, "topology.per_host")) {
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "host"));
            if (name != NULL && !bb_has_control(name) && strlen(name) < 256)
                bb_add_distinct(hosts, name);
        }
        if (rate != NULL)
            rate[i] = cJSON_GetNumberValue(bb_json_path(doc, "system.kernel_rate.value"));
        static const char *const loads[] = {"system.load_average.before",
                                            "system.load_average.after"};
        for (int k = 0; k < 2; k++) {
            double l = cJSON_GetNumberValue(cJSON_GetArrayItem(bb_json_path(doc, loads[k]), 0));
            if (isfinite(l) && !(l <= load))
                load = l;
        }
        double r = cJSON_GetNumberValue(bb_json_path(doc, "runtime.timer.resolution_s"));
        if (isfinite(r) && !(r <= timer))
            timer = r;
        double p = cJSON_GetNumberValue(bb_json_path(doc, "topology.machine.pus"));
        if (isfinite(p) && p > 0)
            pus = p;
    }
    cJSON *m = cJSON_AddObjectToObject(o, "machine");
    bb_add_number_or_null(m, "kernel_rate_per_s", rate ? bb_median_of(rate, set->n) : (double)NAN);
    bb_add_number_or_null(m, "load_average_max", load);
    bb_add_number_or_null(m, "timer_resolution_s", timer);
    bb_add_number_or_null(m, "pus", pus);
    free(rate);
    return o;
}

/* Did base and candidate run on visibly different machines?  From the
 * records: the MPI-free kernel's rate the harness measures before every run
 * and overlap's compute kernel (time per iteration, matched points), the
 * load average, the timer's resolution.  Each check found in both sides is
 * listed; warning true where they differ enough to colour every timing. */
#define BB_SPEED_FACTOR 1.5

static void bb_speed_check(cJSON *list, const char *what, double b, double c,
                           double factor, const char *unit)
{
    if (!isfinite(b) || !isfinite(c) || b <= 0 || c <= 0)
        return;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "check", what);
    cJSON_AddNumberToObject(e, "base", b);
    cJSON_AddNumberToObject(e, "candidate", c);
    cJSON_AddStringToObject(e, "unit", unit);
    cJSON_AddNumberToObject(e, "ratio", c / b);
    cJSON_AddBoolToObject(e, "warning", c / b > factor || b / c > factor);
    cJSON_AddItemToArray(list, e);
}

static cJSON *bb_machine_check(const cJSON *bside, const cJSON *cside,
                               double compute_ratio)
{
    cJSON *list = cJSON_CreateArray();
    const cJSON *bm = cJSON_GetObjectItemCaseSensitive(bside, "machine");
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(cside, "machine");
#define BB_M(side, name) cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(side, name))
    bb_speed_check(list, "kernel rate", BB_M(bm, "kernel_rate_per_s"),
                   BB_M(cm, "kernel_rate_per_s"), BB_SPEED_FACTOR, "1/s");
    if (isfinite(compute_ratio))
        bb_speed_check(list, "overlap compute time per iteration", 1.0, compute_ratio,
                       BB_SPEED_FACTOR, "ratio");
    bb_speed_check(list, "timer resolution", BB_M(bm, "timer_resolution_s"),
                   BB_M(cm, "timer_resolution_s"), 10.0, "s");
    double bl = BB_M(bm, "load_average_max"), cl = BB_M(cm, "load_average_max");
    double pus = BB_M(cm, "pus");
    if (isfinite(bl) != isfinite(cl)) {
        /* One side says its load (an older record does not): a loaded
         * machine alone is worth a warning. */
        double per = isfinite(pus) && pus > 0 ? pus : 1.0;
        double l = isfinite(bl) ? bl : cl;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "check", "load average (1 min, max)");
        bb_add_number_or_null(e, "base", bl);
        bb_add_number_or_null(e, "candidate", cl);
        cJSON_AddStringToObject(e, "unit", "runnable");
        cJSON_AddBoolToObject(e, "warning", l / per >= 0.75);
        cJSON_AddItemToArray(list, e);
    }
    if (isfinite(bl) && isfinite(cl)) {
        /* Load per processing unit: a difference of half a PU's worth of
         * runnable processes is a visibly different machine. */
        double per = isfinite(pus) && pus > 0 ? pus : 1.0;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "check", "load average (1 min, max)");
        cJSON_AddNumberToObject(e, "base", bl);
        cJSON_AddNumberToObject(e, "candidate", cl);
        cJSON_AddStringToObject(e, "unit", "runnable");
        cJSON_AddBoolToObject(e, "warning", fabs(cl - bl) / per >= 0.5 &&
                                                (cl / per >= 0.75 || bl / per >= 0.75));
        cJSON_AddItemToArray(list, e);
    }
#undef BB_M
    return list;
}

/* overlap's compute kernel runs without MPI: its time per iteration in a
 * matched pair compares the machines, not the code under test. */
static double bb_compute_per_iteration(const cJSON *point)
{
    const cJSON *qs = cJSON_GetObjectItemCaseSensitive(point, "quantities");
    const cJSON *pb = cJSON_GetObjectItemCaseSensitive(qs, "compute.per_batch");
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(qs, "compute.iterations_per_batch");
    double s = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(pb, "value"));
    double n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "value"));
    return isfinite(s) && isfinite(n) && s > 0 && n > 0 ? s / n : (double)NAN;
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
    cJSON_AddStringToObject(report, "rule", BB_COMPARE_RULE);
    /* Base points the candidate lacks: a candidate must not pass by
     * dropping what it would fail on. */
    cJSON_AddStringToObject(report, "lost_points",
                            options->report_only ? "reported (--report)"
                            : options->allow_missing ? "accepted (--allow-missing)"
                                                     : "fail");
    cJSON *summary = cJSON_AddObjectToObject(report, "summary");
    cJSON *pairs = cJSON_AddArrayToObject(report, "points");
    cJSON *unmatched = cJSON_AddArrayToObject(report, "unmatched");
    cJSON *groups = cJSON_AddArrayToObject(report, "unmatched_groups");
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
    /* Candidate/base ratios of overlap's compute time per iteration. */
    size_t ncompute = 0;
    double *compute = calloc(base->points + 1, sizeof *compute);
    size_t i = 0, j = 0, nb = base->points, nc = cand->points;
    while (i < nb || j < nc) {
        int c = i >= nb ? 1 : j >= nc ? -1 : strcmp(bp[i].key, cp[j].key);
        if (c < 0) {
            bb_add_unmatched(unmatched, groups, "base", &bp[i++]);
            s.unmatched_base++;
        } else if (c > 0) {
            bb_add_unmatched(unmatched, groups, "candidate", &cp[j++]);
            s.unmatched_candidate++;
        } else {
            st = bb_check_pair(&bp[i], &cp[j], err, errlen);
            if (st != BB_OK) {
                free(compute);
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
            double bt = bb_compute_per_iteration(bp[i].point);
            double ct = bb_compute_per_iteration(cp[j].point);
            if (compute != NULL && isfinite(bt) && isfinite(ct))
                compute[ncompute++] = ct / bt;
            s.matched++;
            i++;
            j++;
        }
    }
    free(seen);
    bb_short_labels(pairs);
    cJSON_AddItemToObject(report, "machine_check",
                          bb_machine_check(cJSON_GetObjectItemCaseSensitive(report, "base"),
                                           cJSON_GetObjectItemCaseSensitive(report, "candidate"),
                                           compute ? bb_median_of(compute, ncompute) : (double)NAN));
    free(compute);
    s.regressions = tally.regressions;
    s.improvements = tally.improvements;
    s.contract_changes = tally.contract;
    s.within_noise = tally.noise;
    s.unmeasured = tally.unmeasured;
    s.warnings = (size_t)cJSON_GetArraySize(warnings);
    s.skipped = base->nskipped + cand->nskipped;
    s.lost_failing = options->report_only || options->allow_missing ? 0 : s.unmatched_base;

    cJSON_AddNumberToObject(summary, "matched", (double)s.matched);
    cJSON_AddNumberToObject(summary, "unmatched_base", (double)s.unmatched_base);
    cJSON_AddNumberToObject(summary, "unmatched_candidate", (double)s.unmatched_candidate);
    cJSON_AddNumberToObject(summary, "regressions", (double)s.regressions);
    cJSON_AddNumberToObject(summary, "improvements", (double)s.improvements);
    cJSON_AddNumberToObject(summary, "within_noise", (double)s.within_noise);
    cJSON_AddNumberToObject(summary, "unmeasured", (double)s.unmeasured);
    cJSON_AddNumberToObject(summary, "contract_changes", (double)s.contract_changes);
    cJSON_AddNumberToObject(summary, "warnings", (double)s.warnings);
    cJSON_AddNumberToObject(summary, "skipped", (double)s.skipped);
    cJSON_AddNumberToObject(summary, "lost_failing", (double)s.lost_failing);

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

/* Labels for the one-line report: the parameters whose values differ among
 * the matched points of the same benchmark (a sweep repeats source=0,
 * samples=3 ... on every point; they tell nothing apart). */
static void bb_short_labels(cJSON *pairs)
{
    /* One pass: per benchmark, the number of pairs, and per parameter name
     * its first value (canonical), the pairs that have it and whether a
     * value differs; a parameter varies when a value differs or some pair
     * of the benchmark lacks it. */
    cJSON *seen = cJSON_CreateObject();
    if (seen == NULL)
        return;
    cJSON *p;
    cJSON_ArrayForEach(p, pairs) {
        const char *bench = bb_get_str(p, "benchmark");
        cJSON *bs = cJSON_GetObjectItemCaseSensitive(seen, bench);
        if (bs == NULL) {
            bs = cJSON_AddObjectToObject(seen, bench);
            if (bs == NULL)
                goto free_seen;
            cJSON_AddNumberToObject(bs, "\x01pairs", 0);
        }
        cJSON *np = cJSON_GetObjectItemCaseSensitive(bs, "\x01pairs");
        cJSON_SetNumberValue(np, np->valuedouble + 1);
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p, "parameters")) {
            char *v = bb_canon_string_of(e);
            if (v == NULL)
                goto free_seen;
            cJSON *ps = cJSON_GetObjectItemCaseSensitive(bs, e->string);
            if (ps == NULL) {
                ps = cJSON_AddObjectToObject(bs, e->string);
                cJSON_AddStringToObject(ps, "first", v);
                cJSON_AddNumberToObject(ps, "pairs", 0);
                cJSON_AddFalseToObject(ps, "differs");
            } else if (strcmp(bb_get_str(ps, "first"), v) != 0) {
                cJSON_ReplaceItemInObjectCaseSensitive(ps, "differs", cJSON_CreateTrue());
            }
            free(v);
            cJSON *n = cJSON_GetObjectItemCaseSensitive(ps, "pairs");
            if (n != NULL)
                cJSON_SetNumberValue(n, n->valuedouble + 1);
        }
    }
    cJSON_ArrayForEach(p, pairs) {
        const char *bench = bb_get_str(p, "benchmark");
        const cJSON *bs = cJSON_GetObjectItemCaseSensitive(seen, bench);
        double npairs = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(bs, "\x01pairs"));
        bb_buf_t b = {0};
        bb_buf_printf(&b, "%s n=%g", bench,
                      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(p, "ranks")));
        const char *hosts = strstr(bb_get_str(p, "label"), " hosts=");
        if (hosts != NULL)
            bb_buf_printf(&b, " hosts=%lld", strtoll(hosts + 7, NULL, 10));
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p, "parameters")) {
            const cJSON *ps = cJSON_GetObjectItemCaseSensitive(bs, e->string);
            if (ps != NULL && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ps, "differs")) &&
                cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ps, "pairs")) == npairs)
                continue;
            bb_buf_t vb = {0};
            bb_plain(&vb, e);
            char *v = bb_buf_take(&vb);
            for (char *c = v; c != NULL && *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                    *c = ' ';
            if (v == NULL)
                b.failed = 1;
            else if (strlen(v) > 24)
                bb_buf_printf(&b, " %s=%.*s...", e->string, bb_utf8_cut(v, 21), v);
            else
                bb_buf_printf(&b, " %s=%s", e->string, v);
            free(v);
        }
        char *label = bb_buf_take(&b);
        if (label != NULL)
            cJSON_AddStringToObject(p, "short_label", label);
        free(label);
    }
free_seen:
    cJSON_Delete(seen);
}

int bb_compare_exit_code(const bb_compare_summary_t *s, int report_only)
{
    if (s->matched == 0)
        return BB_EXIT_USAGE;
    if (s->contract_changes > 0 || s->lost_failing > 0)
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

/* A provenance value for a line: strings quoted as JSON (escapes for
 * control characters, so a line stays a line), others canonical.  A long
 * string is shown around its first difference from other, between "...",
 * never cut inside a UTF-8 sequence or an escape. */
static void bb_format_provenance(const cJSON *v, const cJSON *other, bb_buf_t *out)
{
    if (v == NULL) {
        bb_buf_puts(out, "(absent)");
        return;
    }
    if (!cJSON_IsString(v)) {
        bb_buf_t b = {0};
        bb_canon(&b, v);
        char *t = bb_buf_take(&b);
        if (t == NULL) {
            out->failed = 1;
            return;
        }
        /* Never cut inside JSON: a long array or object is named by its
         * size (the JSON report holds it whole). */
        if (strlen(t) > 160)
            bb_buf_printf(out, "(%s of %d %s, %zu characters; in --format json)",
                          cJSON_IsArray(v) ? "an array" : "an object", cJSON_GetArraySize(v),
                          cJSON_IsArray(v) ? "items" : "members", strlen(t));
        else
            bb_buf_puts(out, t);
        free(t);
        return;
    }
    const char *s = v->valuestring;
    size_t n = strlen(s);
    if (n <= 100) {
        bb_canon_string(out, s);
        return;
    }
    const char *o = cJSON_IsString(other) ? other->valuestring : "";
    size_t k = 0;
    while (s[k] && s[k] == o[k])
        k++;
    size_t start = k > 30 ? k - 30 : 0;
    while (start > 0 && ((unsigned char)s[start] & 0xC0) == 0x80)
        start--;
    size_t len = (size_t)bb_utf8_cut(s + start, 70);
    char *piece = malloc(len + 1);
    if (piece == NULL) {
        out->failed = 1;
        return;
    }
    memcpy(piece, s + start, len);
    piece[len] = '\0';
    bb_buf_puts(out, start > 0 ? "\"..." : "\"");
    bb_buf_t q = {0};
    bb_canon_string(&q, piece);
    char *qs = bb_buf_take(&q);
    if (qs == NULL)
        out->failed = 1;
    else
        bb_buf_add(out, qs + 1, strlen(qs) - 2);  /* without its quotes */
    free(qs);
    free(piece);
    bb_buf_printf(out, "%s\" (%zu characters, differ from character %zu)",
                  start + len < n ? "..." : "", n, k + 1);
}

static const char *bb_get_str(const cJSON *o, const char *name)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
    return v ? v : "";
}

/* The short label where there is one (the varying parameters only). */
static const char *bb_pair_label(const cJSON *p)
{
    const char *s = bb_get_str(p, "short_label");
    return *s ? s : bb_get_str(p, "label");
}

static void bb_list_strings(bb_buf_t *out, const cJSON *array, const char *none)
{
    const cJSON *e;
    int k = 0;
    cJSON_ArrayForEach(e, array)
        bb_buf_printf(out, "%s%s", k++ ? ", " : "", e->valuestring);
    if (k == 0)
        bb_buf_puts(out, none);
}

static void bb_format_moved(bb_buf_t *out, const char *item, const cJSON *p,
                            const cJSON *tm)
{
    const char *verdict = bb_get_str(tm, "verdict");
    char bcell[96], ccell[96];
    bb_format_timing(cJSON_GetObjectItemCaseSensitive(tm, "base"), bcell, sizeof bcell);
    bb_format_timing(cJSON_GetObjectItemCaseSensitive(tm, "candidate"), ccell, sizeof ccell);
    const cJSON *mw = cJSON_GetObjectItemCaseSensitive(tm, "mann_whitney");
    char why[64];
    if (mw != NULL)
        snprintf(why, sizeof why, "Mann-Whitney p = %.2g",
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(mw, "p")));
    else
        snprintf(why, sizeof why, "ranges disjoint");
    bb_buf_printf(out, "%s%s %s: %s: %s -> %s (x%.3f, %s)\n", item,
                  verdict[0] == 'r' ? "REGRESSION" : "improvement",
                  bb_pair_label(p), bb_get_str(tm, "name"), bcell, ccell,
                  cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(tm, "ratio")), why);
}

/* Lines of regressions (and of improvements) in the default report: a
 * screen holds the summary, the warnings and these. */
#define BB_MOVED_LINES 10

static void bb_render_text(const cJSON *report, int markdown, int all_timings,
                           bb_buf_t *out)
{
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(report, "base");
    const cJSON *cand = cJSON_GetObjectItemCaseSensitive(report, "candidate");
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(report, "points");
    double tol = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(report, "tolerance"));
    const char *item = markdown ? "- " : "  ";
    const char *h0 = markdown ? "\n**" : "\n", *h1 = markdown ? "**\n" : "\n";
    const cJSON *p, *tm;

    /* 1. The summary: counts, then which revision and machine is which. */
    size_t overlap = 0, under = 0, pvalue = 0;
    cJSON_ArrayForEach(p, pairs) {
        cJSON_ArrayForEach(tm, cJSON_GetObjectItemCaseSensitive(p, "timings")) {
            const char *r = bb_get_str(tm, "reason");
            if (strcmp(bb_get_str(tm, "verdict"), "within noise") != 0)
                continue;
            if (strcmp(r, "ranges overlap") == 0)
                overlap++;
            else if (strcmp(r, "under tolerance") == 0)
                under++;
            else
                pvalue++;
        }
    }
    const cJSON *mc = cJSON_GetObjectItemCaseSensitive(report, "machine_check");
    size_t machine_warnings = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, mc)
        machine_warnings += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "warning"));
    size_t nc = bb_summary_get(report, "contract_changes");
    char skipped[64] = "";
    if (bb_summary_get(report, "skipped") > 0)
        snprintf(skipped, sizeof skipped, ", %zu files skipped (not records)",
                 bb_summary_get(report, "skipped"));
    bb_buf_printf(out,
                  "%ssummary: %zu points matched, %zu timing regressions, %zu "
                  "improvements, %zu within noise (%zu ranges overlap, %zu under "
                  "tolerance, %zu p >= 0.05), %zu unmeasured, %zu contract changes, "
                  "%zu unmatched (base %zu, candidate %zu), %zu warnings, %zu machine "
                  "warnings%s%s\n",
                  markdown ? "**" : "", bb_summary_get(report, "matched"),
                  bb_summary_get(report, "regressions"),
                  bb_summary_get(report, "improvements"),
                  bb_summary_get(report, "within_noise"), overlap, under, pvalue,
                  bb_summary_get(report, "unmeasured"), nc,
                  bb_summary_get(report, "unmatched_base") +
                      bb_summary_get(report, "unmatched_candidate"),
                  bb_summary_get(report, "unmatched_base"),
                  bb_summary_get(report, "unmatched_candidate"),
                  bb_summary_get(report, "warnings"), machine_warnings, skipped,
                  markdown ? "**\n" : "");
    const cJSON *sides[2] = {base, cand};
    const char *names[2] = {"base:     ", "candidate:"};
    for (int k = 0; k < 2; k++) {
        double nr = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sides[k], "records"));
        double np = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sides[k], "points"));
        bb_buf_printf(out, "%s%s %s (%g record%s, %g point%s); git ", item, names[k],
                      bb_get_str(sides[k], "path"), nr, nr == 1 ? "" : "s", np,
                      np == 1 ? "" : "s");
        bb_list_strings(out, cJSON_GetObjectItemCaseSensitive(sides[k], "revisions"), "unknown");
        bb_buf_puts(out, "; host ");
        bb_list_strings(out, cJSON_GetObjectItemCaseSensitive(sides[k], "hosts"), "unknown");
        bb_buf_puts(out, "\n");
    }
    bb_buf_printf(out, "%srule (t = %.3g): %s\n", item, tol, bb_get_str(report, "rule"));

    /* 2. Skipped files, the machines, provenance: what colours every number. */
    for (int k = 0; k < 2; k++) {
        const cJSON *sk;
        cJSON_ArrayForEach(sk, cJSON_GetObjectItemCaseSensitive(sides[k], "skipped"))
            bb_buf_printf(out, "%sSKIPPED (not a record) %s\n", item, sk->valuestring);
    }
    if (cJSON_GetArraySize(mc) > 0) {
        bb_buf_printf(out, "%smachine speed (from the records):%s", h0, h1);
        cJSON_ArrayForEach(e, mc) {
            int warn = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "warning"));
            const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(e, "ratio");
            double bv = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "base"));
            double cv = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "candidate"));
            bb_buf_printf(out, "%s%s%s: ", item, warn ? "WARNING " : "",
                          bb_get_str(e, "check"));
            if (strcmp(bb_get_str(e, "unit"), "ratio") == 0)
                bb_buf_printf(out, "candidate/base x%.2f (median of the matched points)", cv);
            else if (bb_buf_puts(out, "base "), isfinite(bv))
                bb_buf_printf(out, "%.3g", bv);
            else
                bb_buf_puts(out, "not recorded");
            if (strcmp(bb_get_str(e, "unit"), "ratio") == 0)
                ;
            else if (isfinite(cv))
                bb_buf_printf(out, ", candidate %.3g %s", cv, bb_get_str(e, "unit"));
            else
                bb_buf_printf(out, ", candidate not recorded (%s)", bb_get_str(e, "unit"));
            if (cJSON_IsNumber(ratio) && strcmp(bb_get_str(e, "unit"), "ratio") != 0)
                bb_buf_printf(out, " (x%.2f)", ratio->valuedouble);
            bb_buf_puts(out, !warn ? "\n"
                             : cJSON_IsNumber(ratio)
                                 ? ": base and candidate ran on visibly different "
                                   "machines; timings are not comparable\n"
                                 : ": a loaded machine; timings include time-sharing\n");
        }
    }
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(report, "warnings");
    if (cJSON_GetArraySize(wl) > 0) {
        bb_buf_printf(out, "%sprovenance differences (numbers may not be comparable):%s",
                      h0, h1);
        const cJSON *w;
        cJSON_ArrayForEach(w, wl) {
            const cJSON *bv = cJSON_GetObjectItemCaseSensitive(w, "base");
            const cJSON *cv = cJSON_GetObjectItemCaseSensitive(w, "candidate");
            bb_buf_printf(out, "%sWARNING %s: base ", item, bb_get_str(w, "field"));
            bb_format_provenance(bv, cv, out);
            bb_buf_puts(out, " candidate ");
            bb_format_provenance(cv, bv, out);
            double n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(w, "record_pairs"));
            bb_buf_printf(out, " (%g record pair%s)\n", n, n == 1 ? "" : "s");
        }
    }

    /* 3. What changed: contract changes, regressions, improvements, each once. */
    if (nc) {
        bb_buf_printf(out, "%scontract changes (deterministic quantities or status differ):%s",
                      h0, h1);
        cJSON_ArrayForEach(p, pairs) {
            const cJSON *c;
            cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, "contract_changes")) {
                char bv[80], cv[80];
                const char *unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "unit"));
                bb_format_value(cJSON_GetObjectItemCaseSensitive(c, "base"), bv, sizeof bv);
                bb_format_value(cJSON_GetObjectItemCaseSensitive(c, "candidate"), cv, sizeof cv);
                bb_buf_printf(out, "%sCONTRACT CHANGE %s: %s: base %s%s%s, candidate %s%s%s\n",
                              item, bb_get_str(p, "label"), bb_get_str(c, "name"),
                              bv, unit ? " " : "", unit ? unit : "", cv,
                              unit ? " " : "", unit ? unit : "");
            }
        }
    }
    static const char *const moved[2] = {"regression", "improvement"};
    static const char *const moved_title[2] = {"regressions", "improvements"};
    /* One line per point (its elapsed, else its first timing that moved,
     * with the count of the others), at most BB_MOVED_LINES of them unless
     * --all: every timing that moved, one line each. */
    for (int k = 0; k < 2; k++) {
        size_t total = bb_summary_get(report, moved_title[k]);
        if (total == 0)
            continue;
        bb_buf_printf(out, "%s%s (rule above)%s:%s", h0, moved_title[k],
                      all_timings ? "" : ", one line per point", h1);
        size_t lines = 0, points = 0;
        cJSON_ArrayForEach(p, pairs) {
            const cJSON *lead = NULL;
            size_t n = 0;
            cJSON_ArrayForEach(tm, cJSON_GetObjectItemCaseSensitive(p, "timings")) {
                if (strcmp(bb_get_str(tm, "verdict"), moved[k]) != 0)
                    continue;
                n++;
                if (all_timings)
                    bb_format_moved(out, item, p, tm);
                else if (lead == NULL || strcmp(bb_get_str(tm, "name"), "elapsed") == 0)
                    lead = lead && strcmp(bb_get_str(lead, "name"), "elapsed") == 0 ? lead : tm;
            }
            if (n == 0 || all_timings)
                continue;
            points++;
            if (lines >= BB_MOVED_LINES)
                continue;
            lines++;
            bb_format_moved(out, item, p, lead);
            if (n > 1) {
                /* Before the line's newline: "(+N more timings)". */
                out->len--;
                bb_buf_printf(out, " +%zu more timing%s\n", n - 1, n == 2 ? "" : "s");
            }
        }
        if (points > lines)
            bb_buf_printf(out, "%s... and %zu more point%s (%zu %s in all; --all or "
                          "--details FILE lists them)\n", item, points - lines,
                          points - lines == 1 ? "" : "s", total, moved_title[k]);
    }

    /* 4. Lost points: base points the candidate lacks, named one by one
     * (at most BB_MOVED_LINES; --all lists every unmatched point below). */
    size_t lost = bb_summary_get(report, "unmatched_base");
    if (lost > 0) {
        const char *how = bb_get_str(report, "lost_points");
        bb_buf_printf(out, "%slost points (in the base, not in the candidate; %s):%s", h0,
                      strcmp(how, "fail") == 0 ? "they fail, --allow-missing accepts them"
                                               : how, h1);
        size_t shown = 0;
        const cJSON *u;
        cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(report, "unmatched")) {
            if (strcmp(bb_get_str(u, "side"), "base") != 0 || shown == BB_MOVED_LINES)
                continue;
            shown++;
            bb_buf_printf(out, "%sLOST %s (%s: points[%g])\n", item, bb_get_str(u, "label"),
                          bb_get_str(u, "file"),
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(u, "index")));
        }
        if (lost > shown)
            bb_buf_printf(out, "%s... and %zu more lost point%s (--all lists them)\n", item,
                          lost - shown, lost - shown == 1 ? "" : "s");
    }

    /* 5. Unmatched points, one line per benchmark and rank count. */
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(report, "unmatched_groups");
    if (cJSON_GetArraySize(groups) > 0) {
        bb_buf_printf(out, "%sunmatched points (by benchmark and rank count):%s", h0, h1);
        const cJSON *g;
        cJSON_ArrayForEach(g, groups) {
            double n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(g, "points"));
            double hosts = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(g, "hosts"));
            bb_buf_printf(out, "%s%s only: %s n=%g", item, bb_get_str(g, "side"),
                          bb_get_str(g, "benchmark"),
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(g, "ranks")));
            if (hosts != 1)
                bb_buf_printf(out, " hosts=%g", hosts);
            bb_buf_printf(out, ": %g point%s\n", n, n == 1 ? "" : "s");
        }
    }

    /* 6. With --all, every timing of every matched point. */
    if (!all_timings)
        return;
    bb_buf_printf(out, "%sall timings:%s", h0, h1);
    bb_table_t t = {.ncols = markdown ? 5 : 4, .indent = "  "};
    const char *hdr[5] = {"point", "timing", "base median [min, max]",
                          "candidate median [min, max]", "ratio  verdict"};
    if (markdown)
        hdr[4] = "ratio, verdict";
    bb_table_row(&t, markdown ? hdr : hdr + 1);
    cJSON_ArrayForEach(p, pairs) {
        const char *label = bb_get_str(p, "label");
        int shown = 0;
        cJSON_ArrayForEach(tm, cJSON_GetObjectItemCaseSensitive(p, "timings")) {
            const char *verdict = bb_get_str(tm, "verdict");
            const char *reason = bb_get_str(tm, "reason");
            char bcell[96] = "-", ccell[96] = "-", vcell[128];
            const cJSON *bs = cJSON_GetObjectItemCaseSensitive(tm, "base");
            const cJSON *cs = cJSON_GetObjectItemCaseSensitive(tm, "candidate");
            const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(tm, "ratio");
            if (bs)
                bb_format_timing(bs, bcell, sizeof bcell);
            if (cs)
                bb_format_timing(cs, ccell, sizeof ccell);
            int up = strcmp(verdict, "regression") == 0;
            if (cJSON_IsNumber(ratio))
                snprintf(vcell, sizeof vcell, "%.3f  %s%s%s%s", ratio->valuedouble,
                         up ? "REGRESSION" : verdict, *reason ? " (" : "", reason,
                         *reason ? ")" : "");
            else
                snprintf(vcell, sizeof vcell, "-  %s%s%s%s", verdict, *reason ? " (" : "",
                         reason, *reason ? ")" : "");
            const char *row[5] = {shown ? "" : label, bb_get_str(tm, "name"), bcell, ccell,
                                  vcell};
            if (!markdown && !shown)
                bb_table_add(&t, row, 1);
            bb_table_row(&t, markdown ? row : row + 1);
            shown = 1;
        }
        if (!shown) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(p, "status");
            char scell[64];
            snprintf(scell, sizeof scell, "status %s / %s", bb_get_str(st, "base"),
                     bb_get_str(st, "candidate"));
            const char *row[5] = {label, "-", scell, "", bb_get_str(p, "verdict")};
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
    const cJSON *um = cJSON_GetObjectItemCaseSensitive(report, "unmatched");
    if (cJSON_GetArraySize(um) > 0) {
        bb_buf_printf(out, "%sall unmatched points:%s", h0, h1);
        const cJSON *u;
        cJSON_ArrayForEach(u, um)
            bb_buf_printf(out, "%s%s only: %s (%s: points[%g])\n", item,
                          bb_get_str(u, "side"), bb_get_str(u, "label"),
                          bb_get_str(u, "file"),
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(u, "index")));
    }
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
