/* record.c: JSON measurement records (schema bbench.record/1, doc/records.md):
 * building, atomic writing, reading back with shape validation.
 *
 * MPI-free on purpose: records are built and checked by tools and unit
 * tests that never initialize MPI. */
#include "config.h"
#include "private/bbtext.h"
#include "bbrecord.h"
#include "record/bb-git.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Records are small (kilobytes to a few megabytes); refuse to slurp files
 * that cannot be one. */
#define BB_RECORD_MAX_BYTES ((size_t)1 << 30)

struct bb_record {
    cJSON *doc;
    cJSON *points;  /* borrowed from doc; kept as its last member */
    double confidence; /* the level of every interval of the median */
};

/* ------------------------------------------------------------------------ */
/* Building                                                                 */
/* ------------------------------------------------------------------------ */

/* Add item under key, taking ownership: 0 when item is NULL (a failed
 * allocation upstream) or the add failed (item freed), so that a chain of
 * adds can be checked with one flag. */
static int bb_add(cJSON *obj, const char *key, cJSON *item)
{
    if (item == NULL)
        return 0;
    if (!cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        return 0;
    }
    return 1;
}

static int bb_push(cJSON *arr, cJSON *item)
{
    if (item == NULL)
        return 0;
    if (!cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        return 0;
    }
    return 1;
}

/* A copy of s without leading and trailing blanks, as a cJSON string
 * (configure-time strings carry stray spaces). */
static cJSON *bb_trimmed_string(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy, s, n);
    copy[n] = '\0';
    cJSON *item = cJSON_CreateString(copy);
    free(copy);
    return item;
}

static cJSON *bb_source_provenance(void)
{
    cJSON *source = cJSON_CreateObject();
    cJSON *build = cJSON_CreateObject();
    if (source == NULL || build == NULL) {
        cJSON_Delete(build);
        cJSON_Delete(source);
        return NULL;
    }
    int ok = bb_add(source, "package", cJSON_CreateString(PACKAGE_NAME));
    ok &= bb_add(source, "version", cJSON_CreateString(PACKAGE_VERSION));
    if (BB_BUILD_GIT[0] != '\0') {
        ok &= bb_add(source, "git", cJSON_CreateString(BB_BUILD_GIT));
        /* git describe --dirty marks uncommitted changes in the tree built. */
        size_t gl = strlen(BB_BUILD_GIT);
        ok &= bb_add(source, "git_dirty",
                     cJSON_CreateBool(gl > 6 && strcmp(BB_BUILD_GIT + gl - 6, "-dirty") == 0));
    } else {
        /* A release tarball has no git history: unknown, not empty. */
        ok &= bb_add(source, "git", cJSON_CreateNull());
        ok &= bb_add(source, "git_reason", cJSON_CreateString(
            "not configured from a git checkout (git describe failed)"));
    }
    ok &= bb_add(build, "cc", bb_trimmed_string(BB_BUILD_CC));
    ok &= bb_add(build, "cflags", bb_trimmed_string(BB_BUILD_CFLAGS));
    ok &= bb_add(build, "configure", bb_trimmed_string(BB_BUILD_CONFIGURE));
    ok &= bb_add(source, "build", build);
    if (!ok) {
        cJSON_Delete(source);
        return NULL;
    }
    return source;
}

bb_status_t bb_record_create(const char *benchmark, int argc,
                             char *const argv[], bb_record_t **record_out)
{
    if (benchmark == NULL || record_out == NULL || argc < 0
        || (argc > 0 && argv == NULL))
        return BB_ERR_ARG;

    bb_record_t *rec = calloc(1, sizeof *rec);
    if (rec == NULL)
        return BB_ERR_NOMEM;
    rec->confidence = BB_CONFIDENCE_DEFAULT;
    rec->doc = cJSON_CreateObject();
    if (rec->doc == NULL)
        goto free_rec;

    char when[32];
    time_t now = time(NULL);
    struct tm utc;
    if (now == (time_t)-1 || gmtime_r(&now, &utc) == NULL
        || strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
        snprintf(when, sizeof when, "unknown");

    int ok = bb_add(rec->doc, "schema", cJSON_CreateString(BB_RECORD_SCHEMA));
    ok &= bb_add(rec->doc, "vocabulary",
                 cJSON_CreateString(BB_RECORD_VOCABULARY));
    ok &= bb_add(rec->doc, "benchmark", cJSON_CreateString(benchmark));
    ok &= bb_add(rec->doc, "created_utc", cJSON_CreateString(when));
    cJSON *command = cJSON_CreateArray();
    for (int i = 0; command != NULL && i < argc; i++)
        ok &= bb_push(command, cJSON_CreateString(argv[i] ? argv[i] : ""));
    ok &= bb_add(rec->doc, "command", command);
    ok &= bb_add(rec->doc, "source", bb_source_provenance());
    rec->points = cJSON_CreateArray();
    ok &= bb_add(rec->doc, "points", rec->points);
    if (!ok)
        goto free_doc;

    *record_out = rec;
    return BB_OK;

free_doc:
    cJSON_Delete(rec->doc);
free_rec:
    free(rec);
    return BB_ERR_NOMEM;
}

void bb_record_free(bb_record_t *record)
{
    if (record == NULL)
        return;
    cJSON_Delete(record->doc);
    free(record);
}

cJSON *bb_record_json(bb_record_t *record)
{
    return record ? record->doc : NULL;
}

/* Keep "points" last, so that a record reads top-down as doc/records.md lists it
 * (provenance first, then the measurements). */
static void bb_record_points_last(bb_record_t *record)
{
    cJSON *points = cJSON_GetObjectItemCaseSensitive(record->doc, "points");
    if (points == NULL || points->next == NULL)
        return;
    cJSON_DetachItemViaPointer(record->doc, points);
    /* Re-adding a detached item cannot fail for want of memory in the
     * list; only the key copy can, and then we keep the old key. */
    if (!cJSON_AddItemToObject(record->doc, "points", points))
        cJSON_AddItemToArray(record->doc, points);
}

bb_status_t bb_record_set(bb_record_t *record, const char *name, cJSON *item)
{
    /* Ownership of item is taken on every path, so callers never leak. */
    if (record == NULL || name == NULL || item == NULL
        || strcmp(name, "points") == 0) {
        cJSON_Delete(item);
        return BB_ERR_ARG;
    }
    if (cJSON_GetObjectItemCaseSensitive(record->doc, name) != NULL) {
        if (!cJSON_ReplaceItemInObjectCaseSensitive(record->doc, name, item)) {
            cJSON_Delete(item);
            return BB_ERR_NOMEM;
        }
        return BB_OK;
    }
    if (!cJSON_AddItemToObject(record->doc, name, item)) {
        cJSON_Delete(item);
        return BB_ERR_NOMEM;
    }
    bb_record_points_last(record);
    return BB_OK;
}

static cJSON *bb_refusal_json(const bb_refusal_t *refusal)
{
    if (refusal == NULL)
        return cJSON_CreateNull();
    cJSON *r = cJSON_CreateObject();
    if (r == NULL)
        return NULL;
    int ok = bb_add(r, "stage", cJSON_CreateString(bb_text_stage(refusal->stage)));
    /* rank -1: no rank is to blame (a pure contract mismatch). */
    ok &= bb_add(r, "rank", refusal->rank < 0
                                ? cJSON_CreateNull()
                                : cJSON_CreateNumber(refusal->rank));
    ok &= bb_add(r, "sequence", cJSON_CreateNumber((double)refusal->sequence));
    if (!ok) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

/* The declaration of every quantity (bbench.record/1 "deterministic"): true
 * for a contract, a figure fixed by the code and its parameters, false for a
 * measurement.  A quantity that already says is kept as it says.  Otherwise
 * the rule: times, ratios, rates and anything with samples are
 * measurements; bytes and counts of one call, plan or message (payload and
 * tracked bytes, request credit, batches, polls) are contracts; a run scope
 * sums over the repetitions the budget chose (messages checked, rss peak),
 * so it is a measurement. */
static void bb_quantities_declare(cJSON *quantities)
{
    cJSON *q;
    cJSON_ArrayForEach(q, quantities) {
        if (!cJSON_IsObject(q) ||
            cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(q, "deterministic")))
            continue;
        const char *unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "unit"));
        const char *scope = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "scope"));
        int det = unit != NULL && (strcmp(unit, "byte") == 0 || strcmp(unit, "count") == 0) &&
                  cJSON_GetObjectItemCaseSensitive(q, "samples") == NULL &&
                  !(scope != NULL && strncmp(scope, "run", 3) == 0);
        cJSON_AddBoolToObject(q, "deterministic", det);
    }
}

/* The number of a member that is a finite number, or NAN. */
static double bb_number(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : (double)NAN;
}

/* The sum over the names in includes of member key of each part in
 * quantities (sample k of its samples when k >= 0); NAN when a part lacks
 * it. */
static double bb_parts_sum(const cJSON *quantities, const cJSON *includes, const char *key,
                           int k, int n)
{
    double sum = 0.0;
    const cJSON *name;
    cJSON_ArrayForEach(name, includes) {
        const cJSON *part = cJSON_GetObjectItemCaseSensitive(
            quantities, cJSON_IsString(name) ? name->valuestring : "");
        if (k < 0) {
            sum += bb_number(part, key);
            continue;
        }
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(part, key);
        if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) != n)
            return NAN;
        sum += cJSON_GetArrayItem(s, k)->valuedouble;
    }
    return sum;
}

/* A remainder: what a whole leaves to its parts, never negative (its parts
 * come from the same calls on the same rank, so only rounding can make it
 * so). */
static double bb_remainder(double whole, double parts)
{
    return whole - parts > 0.0 ? whole - parts : 0.0;
}

enum { BB_REMAINDERS_MAX = 8 };

/* Every timing that lists what it includes gets its remainder as a named
 * part, NAME.other: the whole minus its parts in each sample and at the
 * whole's median (at_whole_median), listed among the includes, so that the
 * parts account for the whole exactly.  first_call's value likewise. */
static void bb_quantities_remainders(cJSON *quantities, cJSON *first_call)
{
    cJSON *wholes[BB_REMAINDERS_MAX], *q;
    int nwholes = 0;
    cJSON_ArrayForEach(q, quantities)
        if (nwholes < BB_REMAINDERS_MAX
            && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(q, "includes"))
            && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(q, "samples")))
            wholes[nwholes++] = q;
    for (int w = 0; w < nwholes; w++) {
        cJSON *whole = wholes[w];
        cJSON *inc = cJSON_GetObjectItemCaseSensitive(whole, "includes");
        const cJSON *samples = cJSON_GetObjectItemCaseSensitive(whole, "samples");
        int n = cJSON_GetArraySize(samples);
        char name[128];
        if (n < 1 || n > 100000 || strlen(whole->string) + 7 >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%s.other", whole->string);
        if (cJSON_GetObjectItemCaseSensitive(quantities, name) != NULL)
            continue;
        double *other = malloc((size_t)n * sizeof *other);
        if (other == NULL)
            continue;
        int ok = 1;
        for (int k = 0; k < n && ok; k++) {
            double parts = bb_parts_sum(quantities, inc, "samples", k, n);
            ok = !isnan(parts);
            other[k] = bb_remainder(cJSON_GetArrayItem(samples, k)->valuedouble, parts);
        }
        const cJSON *scope = cJSON_GetObjectItemCaseSensitive(whole, "scope");
        cJSON *rq = ok ? bb_quantity_timing(other, (size_t)n, cJSON_GetStringValue(scope), NULL)
                       : NULL;
        free(other);
        if (rq == NULL)
            continue;
        double at = bb_parts_sum(quantities, inc, "at_whole_median", -1, n);
        if (!isnan(at))
            cJSON_AddNumberToObject(rq, "at_whole_median",
                                    bb_remainder(bb_number(whole, "median"), at));
        /* first_call: the same remainder of the cold call, when it has the whole. */
        cJSON *fw = cJSON_GetObjectItemCaseSensitive(first_call, whole->string);
        cJSON *finc = cJSON_GetObjectItemCaseSensitive(fw, "includes");
        double fparts = cJSON_IsArray(finc) ? bb_parts_sum(first_call, finc, "value", -1, 0)
                                            : (double)NAN;
        if (!isnan(fparts) && !isnan(bb_number(fw, "value"))
            && bb_push(finc, cJSON_CreateString(name)))
            bb_quantities_add(first_call, name,
                              bb_quantity_value(bb_remainder(bb_number(fw, "value"), fparts),
                                                "s", cJSON_GetStringValue(scope)));
        if (bb_push(inc, cJSON_CreateString(name)))
            bb_quantities_add(quantities, name, rq);
        else
            cJSON_Delete(rq);
    }
}

/* A part within this many clock reads of zero is noted so: a bound, not a
 * duration. */
enum { BB_NEAR_ZERO_READS = 4 };

/* Each timed part whose figure (at_whole_median, else its median) is within
 * BB_NEAR_ZERO_READS clock reads of read_s seconds of zero gets a note. */
static void bb_quantities_near_zero(cJSON *quantities, double read_s)
{
    if (!(read_s > 0.0))
        return;
    cJSON *q;
    cJSON_ArrayForEach(q, quantities) {
        double fig = bb_number(q, "at_whole_median");
        if (isnan(fig))
            continue;  /* only a part of a whole */
        if (fig < BB_NEAR_ZERO_READS * read_s) {
            const char *had = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "note"));
            char note[512];
            snprintf(note, sizeof note, "%.300s%swithin %d clock reads (%.0f ns each) of "
                     "zero: a bound, not a duration", had ? had : "", had ? "; " : "",
                     BB_NEAR_ZERO_READS, read_s * 1e9);
            cJSON_DeleteItemFromObjectCaseSensitive(q, "note");
            cJSON_AddStringToObject(q, "note", note);
        }
    }
}

bb_status_t bb_record_set_confidence(bb_record_t *record, double level)
{
    if (record == NULL || !(level > 0.0 && level < 1.0))
        return BB_ERR_ARG;
    record->confidence = level;
    return BB_OK;
}

double bb_record_confidence(const bb_record_t *record)
{
    return record != NULL ? record->confidence : BB_CONFIDENCE_DEFAULT;
}

cJSON *bb_interval_json(const bb_interval_t *ci)
{
    if (ci == NULL || ci->j == 0)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    int ok = bb_add(o, "level", cJSON_CreateNumber(ci->level));
    ok &= bb_add(o, "low", cJSON_CreateNumber(ci->low));
    ok &= bb_add(o, "high", cJSON_CreateNumber(ci->high));
    ok &= bb_add(o, "coverage", cJSON_CreateNumber(ci->coverage));
    ok &= bb_add(o, "order", cJSON_CreateNumber((double)ci->j));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *bb_ratio_figure_interval_json(const bb_ratio_figure_t *ratio)
{
    if (ratio == NULL || isnan(ratio->low) || isnan(ratio->high))
        return cJSON_CreateNull();
    cJSON *iv = cJSON_CreateArray();
    if (iv != NULL && (!bb_push(iv, cJSON_CreateNumber(ratio->low))
                       || !bb_push(iv, cJSON_CreateNumber(ratio->high)))) {
        cJSON_Delete(iv);
        return NULL;
    }
    return iv;
}

void bb_interval_reason(size_t n, double level, char *buf, size_t len)
{
    size_t need = 1;
    while (need < 100000 && bb_stats_ci_order(need, level, NULL) == 0)
        need++;
    snprintf(buf, len, "%zu samples: an interval of the median at level %g needs %zu "
             "or more (even [min, max] covers %.4g)", n, level, need,
             bb_stats_range_confidence(n));
}

/* Every summarized quantity of an object (a point's quantities) gets the
 * interval of its median at the record's level: ci, or ci null and
 * ci_reason. */
static void bb_quantities_intervals(cJSON *quantities, double level)
{
    for (cJSON *q = quantities != NULL ? quantities->child : NULL; q != NULL; q = q->next) {
        const cJSON *samples = cJSON_GetObjectItemCaseSensitive(q, "samples");
        if (!cJSON_IsArray(samples) || !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(q, "median"))
            || cJSON_HasObjectItem(q, "ci"))
            continue;
        size_t n = (size_t)cJSON_GetArraySize(samples), k = 0;
        double *v = malloc((n > 0 ? n : 1) * sizeof *v);
        if (v == NULL)
            continue;
        const cJSON *e;
        cJSON_ArrayForEach(e, samples) v[k++] = e->valuedouble;
        bb_interval_t ci;
        if (n > 0 && bb_stats_ci(v, n, level, &ci) == BB_OK) {
            bb_add(q, "ci", bb_interval_json(&ci));
            if (ci.j == 0) {
                char why[160];
                bb_interval_reason(n, level, why, sizeof why);
                bb_add(q, "ci_reason", cJSON_CreateString(why));
            }
        }
        free(v);
    }
}

bb_status_t bb_record_add_point(bb_record_t *record, cJSON *parameters,
                                const char *status, const bb_refusal_t *refusal,
                                cJSON *first_call, cJSON *quantities)
{
    /* Ownership of the three items is taken on every path. */
    if (record == NULL || status == NULL
        || (strcmp(status, "ok") != 0 && strcmp(status, "refused") != 0)) {
        cJSON_Delete(parameters);
        cJSON_Delete(first_call);
        cJSON_Delete(quantities);
        return BB_ERR_ARG;
    }
    bb_quantities_remainders(quantities, first_call);
    bb_quantities_near_zero(quantities,
                            bb_number(cJSON_GetObjectItemCaseSensitive(
                                          cJSON_GetObjectItemCaseSensitive(record->doc, "runtime"),
                                          "timer"), "read_s"));
    bb_quantities_declare(first_call);
    bb_quantities_declare(quantities);
    bb_quantities_intervals(quantities, record->confidence);
    cJSON *point = cJSON_CreateObject();
    if (point == NULL) {
        cJSON_Delete(parameters);
        cJSON_Delete(first_call);
        cJSON_Delete(quantities);
        return BB_ERR_NOMEM;
    }
    /* bb_add frees what it cannot attach, so after these lines every item is
     * either in point or gone. */
    int ok = bb_add(point, "parameters",
                    parameters ? parameters : cJSON_CreateObject());
    ok &= bb_add(point, "status", cJSON_CreateString(status));
    ok &= bb_add(point, "refusal", bb_refusal_json(refusal));
    ok &= bb_add(point, "first_call",
                 first_call ? first_call : cJSON_CreateNull());
    ok &= bb_add(point, "quantities",
                 quantities ? quantities : cJSON_CreateObject());
    if (!ok || !bb_push(record->points, point)) {
        if (ok)
            return BB_ERR_NOMEM; /* bb_push freed point */
        cJSON_Delete(point);
        return BB_ERR_NOMEM;
    }
    return BB_OK;
}

/* {value, unit, scope, reason}: the members every quantity has. */
static cJSON *bb_quantity_base(cJSON *value, const char *unit, const char *scope,
                               const char *reason)
{
    cJSON *q = cJSON_CreateObject();
    if (q == NULL) {
        cJSON_Delete(value);
        return NULL;
    }
    int ok = bb_add(q, "value", value);
    ok &= bb_add(q, "unit", cJSON_CreateString(unit ? unit : ""));
    ok &= bb_add(q, "scope", cJSON_CreateString(scope ? scope : ""));
    ok &= bb_add(q, "reason",
                 reason ? cJSON_CreateString(reason) : cJSON_CreateNull());
    if (!ok) {
        cJSON_Delete(q);
        return NULL;
    }
    return q;
}

cJSON *bb_quantity_includes(cJSON *q, const char *const *includes)
{
    if (q == NULL || includes == NULL || includes[0] == NULL)
        return q;
    /* On a failed allocation q is left without its list (its caller sees
     * no "includes"). */
    cJSON *inc = cJSON_CreateArray();
    for (size_t k = 0; inc != NULL && includes[k] != NULL; k++)
        if (!bb_push(inc, cJSON_CreateString(includes[k]))) {
            cJSON_Delete(inc);
            return q;
        }
    bb_add(q, "includes", inc);
    return q;
}

cJSON *bb_quantity_timing(const double *samples, size_t n, const char *scope,
                          const char *const *includes)
{
    return bb_quantity_samples(samples, n, "s", scope, includes);
}

cJSON *bb_quantity_samples(const double *samples, size_t n, const char *unit,
                           const char *scope, const char *const *includes)
{
    bb_summary_t sum;
    if (n == 0 || bb_stats_summarize(samples, n, &sum) != BB_OK)
        return NULL;
    cJSON *q = bb_quantity_base(cJSON_CreateNumber(sum.median), unit, scope, NULL);
    if (q == NULL)
        return NULL;

    cJSON *arr = cJSON_CreateArray();
    int ok = arr != NULL;
    for (size_t i = 0; arr != NULL && i < n; i++)
        ok &= bb_push(arr, cJSON_CreateNumber(samples[i]));
    ok &= bb_add(q, "samples", arr);
    ok &= bb_add(q, "median", cJSON_CreateNumber(sum.median));
    cJSON *range = cJSON_CreateArray();
    if (range != NULL) {
        ok &= bb_push(range, cJSON_CreateNumber(sum.min));
        ok &= bb_push(range, cJSON_CreateNumber(sum.max));
    }
    ok &= bb_add(q, "range", range);
    ok &= bb_add(q, "range_confidence",
                 cJSON_CreateNumber(bb_stats_range_confidence(n)));
    if (includes != NULL && includes[0] != NULL)
        ok &= bb_quantity_includes(q, includes) != NULL
              && cJSON_HasObjectItem(q, "includes");
    if (!ok) {
        cJSON_Delete(q);
        return NULL;
    }
    return q;
}

cJSON *bb_quantity_value(double value, const char *unit, const char *scope)
{
    /* JSON has no NaN or infinity; an unusable measurement is unknown. */
    if (!isfinite(value))
        return bb_quantity_null(unit, scope, "measured value was not finite");
    return bb_quantity_base(cJSON_CreateNumber(value), unit, scope, NULL);
}

cJSON *bb_quantity_null(const char *unit, const char *scope, const char *reason)
{
    return bb_quantity_base(cJSON_CreateNull(), unit, scope,
                            reason ? reason : "not measured");
}

void bb_quantities_add(cJSON *quantities, const char *name, cJSON *q)
{
    if (quantities == NULL || name == NULL || q == NULL
        || !cJSON_IsObject(quantities)) {
        cJSON_Delete(q);
        return;
    }
    if (cJSON_GetObjectItemCaseSensitive(quantities, name) != NULL) {
        if (!cJSON_ReplaceItemInObjectCaseSensitive(quantities, name, q))
            cJSON_Delete(q);
        return;
    }
    if (!cJSON_AddItemToObject(quantities, name, q))
        cJSON_Delete(q);
}

void bb_quantities_add_unobservable(cJSON *quantities)
{
    bb_quantities_add(quantities, "network.bytes",
                      bb_quantity_null("byte", "call/rank", "not observable: MPI does "
                                       "not report wire traffic; payload bytes are not "
                                       "network bytes"));
    bb_quantities_add(quantities, "memory.mpi_internal",
                      bb_quantity_null("byte", "run/rank", "not observable: MPI internal "
                                       "allocations are not reported"));
    bb_quantities_add(quantities, "time.full_run",
                      bb_quantity_null("s", "run/max-rank", "not observable: a "
                                       "microbenchmark times calls, not a complete "
                                       "scientific run"));
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* The directory part of path ("." when there is none); caller frees. */
static char *bb_path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (dir != NULL) {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    return dir;
}

/* mkstemp template "DIR/.bbench-record.XXXXXX"; caller frees. */
static char *bb_temp_template(const char *dir)
{
    static const char name[] = "/.bbench-record.XXXXXX";
    size_t n = strlen(dir) + sizeof name;
    char *t = malloc(n);
    if (t != NULL)
        snprintf(t, n, "%s%s", dir, name);
    return t;
}

const char *bb_file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "directory";
    if (S_ISFIFO(mode))
        return "FIFO";
    if (S_ISCHR(mode))
        return "character device";
    if (S_ISBLK(mode))
        return "block device";
    if (S_ISSOCK(mode))
        return "socket";
    return "special file";
}

/* Why path cannot take a record, or BB_OK.  The final rename replaces what
 * is at path, so only a regular file or nothing may be there: never a
 * device node, FIFO, socket or directory, nor a symbolic link to one (a
 * link to a regular file is itself replaced, its target left alone, as
 * sed -i does).  lstat, not open: opening a device or FIFO has effects. */
static bb_status_t bb_check_target(const char *path, const char *dir, char *err,
                                   size_t errlen)
{
    struct stat sb;
    if (path[0] == '\0') {
        bb_errorf(err, errlen, "record path is empty");
        return BB_ERR_ARG;
    }
    size_t plen = strlen(path);
    if (plen >= PATH_MAX) {
        bb_errorf(err, errlen, "%.40s...: the path is %zu bytes, the limit is %d",
                  path, plen, PATH_MAX - 1);
        return BB_ERR_ARG;
    }
    for (const char *c = path; *c != '\0';) {
        size_t n = strcspn(c, "/");
        if (n > NAME_MAX) {
            bb_errorf(err, errlen, "%.40s...: a name in the path is %zu bytes, "
                      "the limit is %d", c, n, NAME_MAX);
            return BB_ERR_ARG;
        }
        c += n + (c[n] == '/');
    }
    if (path[plen - 1] == '/'
        || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))) {
        bb_errorf(err, errlen, "%s: is a directory, not a file name", path);
        return BB_ERR_IO;
    }
    if (lstat(path, &sb) == 0) {
        if (S_ISLNK(sb.st_mode)) {
            struct stat tb;
            if (stat(path, &tb) == 0 && !S_ISREG(tb.st_mode)) {
                bb_errorf(err, errlen, "%s: a symbolic link to a %s; a record "
                          "replaces only a regular file", path,
                          bb_file_kind(tb.st_mode));
                return BB_ERR_IO;
            }
            /* A dangling link is replaced like an absent file. */
        } else if (!S_ISREG(sb.st_mode)) {
            bb_errorf(err, errlen, "%s: a %s; a record replaces only a regular "
                      "file", path, bb_file_kind(sb.st_mode));
            return BB_ERR_IO;
        }
    } else if (errno != ENOENT && errno != ENOTDIR) {
        /* ENOTDIR: the directory checks below say which part is wrong. */
        bb_errorf(err, errlen, "%s: %s", path, strerror(errno));
        return BB_ERR_IO;
    }
    if (stat(dir, &sb) != 0) {
        bb_errorf(err, errlen, "%s: directory %s %s", path, dir,
                  errno == ENOENT ? "does not exist" : strerror(errno));
        return BB_ERR_IO;
    }
    if (!S_ISDIR(sb.st_mode)) {
        bb_errorf(err, errlen, "%s: %s is not a directory", path, dir);
        return BB_ERR_IO;
    }
    return BB_OK;
}

/* Remove the temporaries a killed writer left in dir: ours by name, regular,
 * owned by us, older than a minute (a younger one may sit between mkstemp
 * and flock), and not locked (a writer holds flock on its temporary until
 * it is renamed).  Errors are ignored: this only tidies. */
static void bb_temp_clean(const char *dir)
{
    static const char prefix[] = ".bbench-record.";
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    int dfd = dirfd(d);
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, sizeof prefix - 1) != 0
            || strlen(e->d_name) != sizeof prefix - 1 + 6)
            continue;
        struct stat sb, fb;
        if (fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0
            || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid()
            || now - sb.st_mtime < 60)
            continue;
        int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &fb) == 0
            && fb.st_ino == sb.st_ino && fb.st_dev == sb.st_dev)
            (void)unlinkat(dfd, e->d_name, 0);
        close(fd);
    }
    closedir(d);
}

/* mkstemp, then flock so that bb_temp_clean leaves the file alone. */
static int bb_temp_create(char *tmpl)
{
    int fd = mkstemp(tmpl);
    if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
        int saved = errno;
        close(fd);
        unlink(tmpl);
        errno = saved;
        return -1;
    }
    return fd;
}

/* Length of the valid UTF-8 sequence at p, 0 if the bytes there are not
 * one (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t bb_utf8_len(const unsigned char *p)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    unsigned char lo = 0x80, hi = 0xBF;
    size_t n;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    /* A NUL is never a continuation byte, so this stops at the end. */
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

size_t bb_utf8_invalid_at(const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        size_t n = bb_utf8_len(p + i);
        if (n == 0 || n > len - i)
            return i;
        i += n;
    }
    return len;
}

/* cJSON_Print indents with tabs and writes "key":<TAB>value.  Rewrite that
 * as two spaces per level and "key": value, the layout people and grep
 * expect.  Safe on the whole text: cJSON escapes every control character
 * inside strings, so a raw tab is always layout.  Caller frees. */
static char *bb_json_relayout(const char *text)
{
    size_t tabs = 0, n = 0;
    for (const char *p = text; *p != '\0'; p++, n++)
        tabs += *p == '\t';
    char *out = malloc(n + tabs + 1);
    if (out == NULL)
        return NULL;
    char *o = out;
    for (const char *p = text; *p != '\0'; p++) {
        if (*p != '\t') {
            *o++ = *p;
        } else if (o > out && o[-1] == ':') {
            *o++ = ' ';
        } else {
            *o++ = ' ';
            *o++ = ' ';
        }
    }
    *o = '\0';
    return out;
}

/* cJSON copies string bytes as they are, so an argument or environment
 * value that is not UTF-8 would make the text invalid JSON: each byte that
 * is not part of a valid UTF-8 sequence (in JSON text from cJSON_Print it
 * can only be inside a string) becomes \ufffd, the replacement character. */
char *bb_json_text_utf8(const char *text)
{
    size_t extra = 0, len = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0';) {
        size_t n = bb_utf8_len(p);
        extra += n == 0 ? 5 : 0;
        len += n ? n : 1;
        p += n ? n : 1;
    }
    char *out = malloc(len + extra + 1);
    if (out == NULL)
        return NULL;
    char *o = out;
    for (const char *p = text; *p != '\0';) {
        size_t n = bb_utf8_len((const unsigned char *)p);
        if (n == 0) {
            memcpy(o, "\\ufffd", 6);
            o += 6;
            p++;
        } else {
            memcpy(o, p, n);
            o += n;
            p += n;
        }
    }
    *o = '\0';
    return out;
}

static int bb_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

bb_status_t bb_record_write(const bb_record_t *record, const char *path,
                            char *err, size_t errlen)
{
    bb_status_t st = BB_ERR_IO;
    char *text = NULL, *dir = NULL, *tmp = NULL;
    int fd = -1;

    if (record == NULL || path == NULL) {
        bb_errorf(err, errlen, "no record or no path");
        return BB_ERR_ARG;
    }
    char *raw = cJSON_Print(record->doc);
    char *utf8 = raw ? bb_json_text_utf8(raw) : NULL;
    cJSON_free(raw);
    text = utf8 ? bb_json_relayout(utf8) : NULL;
    free(utf8);
    dir = bb_path_dir(path);
    if (text == NULL || dir == NULL || (tmp = bb_temp_template(dir)) == NULL) {
        bb_errorf(err, errlen, "%s: out of memory writing the record", path);
        st = BB_ERR_NOMEM;
        goto free_strings;
    }
    st = bb_check_target(path, dir, err, errlen);
    if (st != BB_OK)
        goto free_strings;
    st = BB_ERR_IO;

    bb_temp_clean(dir);
    fd = bb_temp_create(tmp);
    if (fd < 0) {
        bb_errorf(err, errlen, "%s: cannot create a file in %s: %s", path, dir,
                  strerror(errno));
        goto free_strings;
    }
    /* mkstemp makes the file 0600; a record is an ordinary file, so give it
     * the mode open(2) would have under the caller's umask. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0
        || bb_write_all(fd, text, strlen(text)) != 0
        || bb_write_all(fd, "\n", 1) != 0 || fsync(fd) != 0) {
        bb_errorf(err, errlen, "%s: writing %s: %s", path, tmp, strerror(errno));
        goto unlink_temp;
    }
    /* What is at path may have changed since the start-up check: look
     * again right before the rename replaces it. */
    st = bb_check_target(path, dir, err, errlen);
    if (st != BB_OK)
        goto unlink_temp;
    st = BB_ERR_IO;
    /* Rename while the lock is held, so no cleaner takes the temporary. */
    if (rename(tmp, path) != 0) {
        bb_errorf(err, errlen, "%s: renaming %s into place: %s", path, tmp,
                  strerror(errno));
        goto unlink_temp;
    }
    int rc = close(fd);
    fd = -1;
    if (rc != 0) {
        /* The data were synced; the record is in place but say so. */
        bb_errorf(err, errlen, "%s: closing the record: %s", path, strerror(errno));
        goto free_strings;
    }
    /* Make the rename itself durable; the record is complete either way. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    st = BB_OK;
    goto free_strings;

unlink_temp:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
free_strings:
    free(tmp);
    free(dir);
    free(text);
    return st;
}

bb_status_t bb_record_check_path(const char *path, char *err, size_t errlen)
{
    if (path == NULL) {
        bb_errorf(err, errlen, "no record path");
        return BB_ERR_ARG;
    }
    char *dir = bb_path_dir(path);
    char *tmp = dir ? bb_temp_template(dir) : NULL;
    bb_status_t st = BB_ERR_NOMEM;
    if (tmp == NULL) {
        bb_errorf(err, errlen, "%s: out of memory", path);
        goto free_strings;
    }
    st = bb_check_target(path, dir, err, errlen);
    if (st != BB_OK)
        goto free_strings;
    /* The one reliable test of writability (ACLs, read-only mounts, root):
     * create a file the way bb_record_write will. */
    bb_temp_clean(dir);
    int fd = bb_temp_create(tmp);
    if (fd < 0) {
        bb_errorf(err, errlen, "%s: cannot create a file in directory %s: %s",
                  path, dir, strerror(errno));
        st = BB_ERR_IO;
        goto free_strings;
    }
    close(fd);
    unlink(tmp);
    st = BB_OK;
free_strings:
    free(tmp);
    free(dir);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Reading and validation                                                   */
/* ------------------------------------------------------------------------ */

/* Do a summary member as recorded and as recomputed from the samples agree
 * within rounding?  Records carry full doubles (cJSON prints 17 digits where
 * 15 do not read back), so the only differences an honest writer makes are
 * rounding ones: a relative difference of at most BB_SUMMARY_REL_TOL (a
 * summary printed with 7 significant digits agrees; one moved by a part in
 * a million does not). */
#define BB_SUMMARY_REL_TOL 1e-6

static int bb_summary_agrees(double recorded, double computed)
{
    return fabs(recorded - computed) <= BB_SUMMARY_REL_TOL * fmax(fabs(recorded), fabs(computed));
}

/* A recorded interval of the median (ci) is that of its samples at its
 * own level: the order statistics it names, and a coverage that reaches the
 * level; ci null only where the samples are too few for the level. */
static bb_status_t bb_check_interval(const cJSON *q, const double *v, size_t n,
                                     const char *place, const char *name, char *err,
                                     size_t errlen)
{
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(q, "ci");
    if (ci == NULL)
        return BB_OK;  /* a record from before intervals */
    if (cJSON_IsNull(ci)) {
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(q, "ci_reason"))) {
            bb_errorf(err, errlen, "%s.%s: ci is null without a ci_reason", place, name);
            return BB_ERR_PARSE;
        }
        return BB_OK;
    }
    const cJSON *level = cJSON_GetObjectItemCaseSensitive(ci, "level");
    const cJSON *low = cJSON_GetObjectItemCaseSensitive(ci, "low");
    const cJSON *high = cJSON_GetObjectItemCaseSensitive(ci, "high");
    const cJSON *coverage = cJSON_GetObjectItemCaseSensitive(ci, "coverage");
    if (!cJSON_IsObject(ci) || !cJSON_IsNumber(level) || !cJSON_IsNumber(low)
        || !cJSON_IsNumber(high) || !cJSON_IsNumber(coverage)) {
        bb_errorf(err, errlen, "%s.%s.ci: not an object of numbers level, low, high, "
                  "coverage", place, name);
        return BB_ERR_PARSE;
    }
    bb_interval_t want;
    if (bb_stats_ci(v, n, level->valuedouble, &want) != BB_OK) {
        bb_errorf(err, errlen, "%s.%s.ci: level %.9g is not in (0, 1)", place, name,
                  level->valuedouble);
        return BB_ERR_PARSE;
    }
    if (want.j == 0) {
        bb_errorf(err, errlen, "%s.%s.ci: %zu samples have no interval of the median "
                  "at level %.9g", place, name, n, level->valuedouble);
        return BB_ERR_PARSE;
    }
    if (!bb_summary_agrees(low->valuedouble, want.low)
        || !bb_summary_agrees(high->valuedouble, want.high)
        || !bb_summary_agrees(coverage->valuedouble, want.coverage)) {
        bb_errorf(err, errlen, "%s.%s.ci: [%.9g, %.9g] coverage %.9g is not the interval "
                  "of its %zu samples at level %.9g ([%.9g, %.9g], x(%zu) and x(%zu), "
                  "coverage %.9g)", place, name, low->valuedouble, high->valuedouble,
                  coverage->valuedouble, n, level->valuedouble, want.low, want.high,
                  want.j, n + 1 - want.j, want.coverage);
        return BB_ERR_PARSE;
    }
    return BB_OK;
}

/* The summary members of q against its n samples v (summarized in s). */
static bb_status_t bb_check_summary_values(const cJSON *q, const double *v, size_t n,
                                           const bb_summary_t *sp, const char *place,
                                           const char *name, char *err, size_t errlen)
{
    bb_summary_t s = *sp;
    const cJSON *median = cJSON_GetObjectItemCaseSensitive(q, "median");
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(q, "range");
    if (cJSON_IsNumber(median) && !bb_summary_agrees(median->valuedouble, s.median)) {
        bb_errorf(err, errlen, "%s.%s: median %.9g is not the median of its %zu "
                  "samples (%.9g)", place, name, median->valuedouble, n, s.median);
        return BB_ERR_PARSE;
    }
    const cJSON *lo = cJSON_GetArrayItem(range, 0), *hi = cJSON_GetArrayItem(range, 1);
    if (cJSON_IsArray(range) && cJSON_GetArraySize(range) == 2 && cJSON_IsNumber(lo) &&
        cJSON_IsNumber(hi) &&
        !(bb_summary_agrees(lo->valuedouble, s.min) && bb_summary_agrees(hi->valuedouble, s.max))) {
        bb_errorf(err, errlen, "%s.%s: range [%.9g, %.9g] is not [min, max] of its "
                  "%zu samples ([%.9g, %.9g])", place, name, lo->valuedouble,
                  hi->valuedouble, n, s.min, s.max);
        return BB_ERR_PARSE;
    }
    return bb_check_interval(q, v, n, place, name, err, errlen);
}

/* One record, one truth: a quantity's samples and its summary (median,
 * range [min, max]) say the same.  Comparison judges timings by their
 * medians and ranges, and by Mann-Whitney on their samples; a summary that
 * disagrees with its samples would let one half of a quantity pass while
 * the other regressed. */
static bb_status_t bb_check_summary(const cJSON *q, const char *place,
                                    const char *name, char *err, size_t errlen)
{
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(q, "samples");
    if (samples == NULL || cJSON_IsNull(samples))
        return BB_OK;
    size_t n = 0;
    const cJSON *e = cJSON_IsArray(samples) ? samples->child : NULL;
    for (; e != NULL && cJSON_IsNumber(e); e = e->next)
        n++;
    if (!cJSON_IsArray(samples) || e != NULL) {
        bb_errorf(err, errlen, "%s.%s.samples: not an array of numbers", place, name);
        return BB_ERR_PARSE;
    }
    const cJSON *median = cJSON_GetObjectItemCaseSensitive(q, "median");
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(q, "range");
    if (n == 0 || (!cJSON_IsNumber(median) && !cJSON_IsArray(range)))
        return BB_OK;  /* nothing summarized (a ratio over calls keeps its samples) */
    double *v = malloc(n * sizeof *v);
    if (v == NULL) {
        bb_errorf(err, errlen, "%s.%s: out of memory", place, name);
        return BB_ERR_NOMEM;
    }
    size_t k = 0;
    cJSON_ArrayForEach(e, samples) v[k++] = e->valuedouble;
    bb_summary_t s;
    bb_status_t st = bb_stats_summarize(v, n, &s);
    if (st == BB_OK)
        st = bb_check_summary_values(q, v, n, &s, place, name, err, errlen);
    else if (st == BB_ERR_NOMEM)
        bb_errorf(err, errlen, "%s.%s: out of memory", place, name);
    else {
        bb_errorf(err, errlen, "%s.%s.samples: a sample is not a finite number",
                  place, name);
        st = BB_ERR_PARSE;
    }
    free(v);
    return st;
}

/* Quantities object at place ("points[3].quantities"): every member an
 * object with a string unit, whose summary agrees with its samples. */
static bb_status_t bb_check_quantities(const cJSON *qs, const char *place,
                                       char *err, size_t errlen)
{
    if (!cJSON_IsObject(qs)) {
        bb_errorf(err, errlen, "%s: not an object", place);
        return BB_ERR_PARSE;
    }
    for (const cJSON *q = qs->child; q != NULL; q = q->next) {
        const char *name = q->string ? q->string : "?";
        if (!cJSON_IsObject(q)) {
            bb_errorf(err, errlen, "%s.%s: not an object", place, name);
            return BB_ERR_PARSE;
        }
        const cJSON *unit = cJSON_GetObjectItemCaseSensitive(q, "unit");
        if (unit == NULL) {
            bb_errorf(err, errlen, "%s.%s: unit missing", place, name);
            return BB_ERR_PARSE;
        }
        if (!cJSON_IsString(unit) || unit->valuestring == NULL) {
            bb_errorf(err, errlen, "%s.%s: unit is not a string", place, name);
            return BB_ERR_PARSE;
        }
        bb_status_t st = bb_check_summary(q, place, name, err, errlen);
        if (st != BB_OK)
            return st;
    }
    return BB_OK;
}

static bb_status_t bb_check_point(const cJSON *point, size_t i, char *err,
                                  size_t errlen)
{
    char place[64];
    snprintf(place, sizeof place, "points[%zu]", i);
    if (!cJSON_IsObject(point)) {
        bb_errorf(err, errlen, "%s: not an object", place);
        return BB_ERR_PARSE;
    }
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(point, "parameters");
    if (params == NULL) {
        bb_errorf(err, errlen, "%s.parameters: missing", place);
        return BB_ERR_PARSE;
    }
    if (!cJSON_IsObject(params)) {
        bb_errorf(err, errlen, "%s.parameters: not an object", place);
        return BB_ERR_PARSE;
    }
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(point, "status");
    if (status == NULL) {
        bb_errorf(err, errlen, "%s.status: missing", place);
        return BB_ERR_PARSE;
    }
    if (!cJSON_IsString(status) || status->valuestring == NULL
        || (strcmp(status->valuestring, "ok") != 0
            && strcmp(status->valuestring, "refused") != 0)) {
        bb_errorf(err, errlen, "%s.status: not \"ok\" or \"refused\"", place);
        return BB_ERR_PARSE;
    }
    const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(point, "refusal");
    if (refusal != NULL && !cJSON_IsNull(refusal) && !cJSON_IsObject(refusal)) {
        bb_errorf(err, errlen, "%s.refusal: neither null nor an object", place);
        return BB_ERR_PARSE;
    }
    const cJSON *qs = cJSON_GetObjectItemCaseSensitive(point, "quantities");
    char sub[96];
    snprintf(sub, sizeof sub, "%s.quantities", place);
    if (qs == NULL) {
        bb_errorf(err, errlen, "%s: missing", sub);
        return BB_ERR_PARSE;
    }
    bb_status_t st = bb_check_quantities(qs, sub, err, errlen);
    if (st != BB_OK)
        return st;
    const cJSON *first = cJSON_GetObjectItemCaseSensitive(point, "first_call");
    if (first != NULL && !cJSON_IsNull(first)) {
        snprintf(sub, sizeof sub, "%s.first_call", place);
        st = bb_check_quantities(first, sub, err, errlen);
    }
    return st;
}

static bb_status_t bb_check_record(const cJSON *doc, char *err, size_t errlen)
{
    if (!cJSON_IsObject(doc)) {
        bb_errorf(err, errlen, "top level: not an object");
        return BB_ERR_PARSE;
    }
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    if (schema == NULL) {
        bb_errorf(err, errlen, "schema: missing");
        return BB_ERR_PARSE;
    }
    if (!cJSON_IsString(schema) || schema->valuestring == NULL) {
        bb_errorf(err, errlen, "schema: not a string");
        return BB_ERR_PARSE;
    }
    if (strcmp(schema->valuestring, BB_RECORD_SCHEMA) != 0) {
        bb_errorf(err, errlen, "schema: \"%.64s\" is not \"%s\"",
                  schema->valuestring, BB_RECORD_SCHEMA);
        return BB_ERR_PARSE;
    }
    const cJSON *bench = cJSON_GetObjectItemCaseSensitive(doc, "benchmark");
    if (bench == NULL) {
        bb_errorf(err, errlen, "benchmark: missing");
        return BB_ERR_PARSE;
    }
    if (!cJSON_IsString(bench) || bench->valuestring == NULL) {
        bb_errorf(err, errlen, "benchmark: not a string");
        return BB_ERR_PARSE;
    }
    const cJSON *points = cJSON_GetObjectItemCaseSensitive(doc, "points");
    if (points == NULL) {
        bb_errorf(err, errlen, "points: missing");
        return BB_ERR_PARSE;
    }
    if (!cJSON_IsArray(points)) {
        bb_errorf(err, errlen, "points: not an array");
        return BB_ERR_PARSE;
    }
    size_t i = 0;
    for (const cJSON *p = points->child; p != NULL; p = p->next, i++) {
        bb_status_t st = bb_check_point(p, i, err, errlen);
        if (st != BB_OK)
            return st;
    }
    return BB_OK;
}

static int bb_cmp_member_names(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

/* No object in the tree under item has a member twice.  cJSON keeps both
 * and its look-ups find the first, other readers the last: such a record
 * means two things at once.  place (256 bytes, used bytes in use) is where
 * item is; sorting makes this O(n log n) for a huge object.  Recursion is
 * bounded by cJSON's nesting limit. */
static bb_status_t bb_check_unique(const cJSON *item, char *place, size_t used,
                                   char *err, size_t errlen)
{
    const size_t cap = 256;
    if (!cJSON_IsObject(item) && !cJSON_IsArray(item))
        return BB_OK;
    size_t n = 0;
    for (const cJSON *c = item->child; c != NULL; c = c->next)
        n++;
    if (cJSON_IsObject(item) && n > 1) {
        const cJSON **v = malloc(n * sizeof *v);
        if (v == NULL) {
            bb_errorf(err, errlen, "out of memory checking member names");
            return BB_ERR_NOMEM;
        }
        size_t i = 0;
        for (const cJSON *c = item->child; c != NULL; c = c->next)
            v[i++] = c;
        qsort(v, n, sizeof *v, bb_cmp_member_names);
        for (i = 1; i < n; i++) {
            if (bb_cmp_member_names(&v[i - 1], &v[i]) == 0) {
                bb_errorf(err, errlen, "%s: member \"%.64s\" appears twice",
                          used ? place : "top level", v[i]->string);
                free(v);
                return BB_ERR_PARSE;
            }
        }
        free(v);
    }
    size_t k = 0;
    for (const cJSON *c = item->child; c != NULL; c = c->next, k++) {
        if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
            continue;
        int w = cJSON_IsObject(item)
                    ? snprintf(place + used, cap - used, "%s%s", used ? "." : "",
                               c->string ? c->string : "")
                    : snprintf(place + used, cap - used, "[%zu]", k);
        size_t next = w < 0 || (size_t)w >= cap - used ? cap - 1 : used + (size_t)w;
        bb_status_t st = bb_check_unique(c, place, next, err, errlen);
        place[used] = '\0';
        if (st != BB_OK)
            return st;
    }
    return BB_OK;
}

bb_status_t bb_record_parse(const char *text, size_t len, cJSON **doc_out,
                            char *err, size_t errlen)
{
    if (doc_out == NULL || (text == NULL && len > 0)) {
        bb_errorf(err, errlen, "no text or no output");
        return BB_ERR_ARG;
    }
    if (len >= BB_RECORD_MAX_BYTES) {
        bb_errorf(err, errlen, "%zu bytes: too large for a record", len);
        return BB_ERR_PARSE;
    }
    /* cJSON trusts a NUL inside its buffer; a JSON text has none, so one
     * there means the input is not what it claims to be. */
    const char *nul = len ? memchr(text, '\0', len) : NULL;
    if (nul != NULL) {
        bb_errorf(err, errlen, "byte %zu: NUL byte inside the text",
                  (size_t)(nul - text));
        return BB_ERR_PARSE;
    }
    /* JSON text is UTF-8 (RFC 8259) and cJSON does not check it; a record
     * with other bytes would pass here and break every other reader. */
    size_t bad = bb_utf8_invalid_at(text, len);
    if (bad < len) {
        bb_errorf(err, errlen, "byte %zu: not UTF-8 (a record is UTF-8 text)", bad);
        return BB_ERR_PARSE;
    }
    /* The caller's buffer need not be NUL-terminated; cJSON reads one byte
     * past a string's end while scanning, so parse a terminated copy. */
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        bb_errorf(err, errlen, "out of memory (%zu bytes)", len);
        return BB_ERR_NOMEM;
    }
    if (len > 0)
        memcpy(copy, text, len);
    copy[len] = '\0';

    const char *end = NULL;
    /* The length includes the terminator: with require_null_terminated
     * cJSON wants to see it after the value. */
    cJSON *doc = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 1);
    if (doc == NULL) {
        size_t at = (end != NULL && end >= copy && end <= copy + len)
                        ? (size_t)(end - copy) : len;
        bb_errorf(err, errlen, "byte %zu: %s", at,
                  len == 0 ? "empty text, not JSON" : "malformed JSON");
        free(copy);
        return BB_ERR_PARSE;
    }
    free(copy);
    char place[256] = "";
    bb_status_t st = bb_check_unique(doc, place, 0, err, errlen);
    if (st == BB_OK)
        st = bb_check_record(doc, err, errlen);
    if (st != BB_OK) {
        cJSON_Delete(doc);
        return st;
    }
    *doc_out = doc;
    return BB_OK;
}

bb_status_t bb_record_read(const char *path, cJSON **doc_out, char *err,
                           size_t errlen)
{
    if (path == NULL || doc_out == NULL) {
        bb_errorf(err, errlen, "no path or no output");
        return BB_ERR_ARG;
    }
    bb_status_t st = BB_ERR_IO;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    /* Look before opening: opening a FIFO waits for a writer, and opening
     * a device can act on it.  O_NONBLOCK covers a swap in between; fstat
     * then says what was opened. */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        bb_errorf(err, errlen, "%s: a %s, not a regular file", path,
                  bb_file_kind(sb.st_mode));
        return BB_ERR_IO;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        bb_errorf(err, errlen, "%s: %s", path, strerror(errno));
        return BB_ERR_IO;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        bb_errorf(err, errlen, "%s: not a regular file", path);
        goto close_fd;
    }
    for (;;) {
        if (len == cap) {
            if (cap >= BB_RECORD_MAX_BYTES) {
                bb_errorf(err, errlen, "%s: larger than %zu bytes, not a "
                          "record", path, BB_RECORD_MAX_BYTES);
                st = BB_ERR_PARSE;
                goto free_buf;
            }
            size_t ncap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, ncap);
            if (nb == NULL) {
                bb_errorf(err, errlen, "%s: out of memory", path);
                st = BB_ERR_NOMEM;
                goto free_buf;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            bb_errorf(err, errlen, "%s: %s", path, strerror(errno));
            goto free_buf;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }

    char why[256];
    st = bb_record_parse(buf, len, doc_out, why, sizeof why);
    if (st != BB_OK)
        bb_errorf(err, errlen, "%s: %s", path, why);

free_buf:
    free(buf);
close_fd:
    close(fd);
    return st;
}
