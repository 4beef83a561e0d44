/* load.c: record sets: loading files and directories of records, what
 * comparison checks beyond the record shape, the kinds of quantity, and where
 * the report may be written.  Part of bbench-compare's comparison
 * (compare.h); MPI-free. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* A quantity is a contract when its record declares it so ("deterministic":
 * true, which bbench writes on every quantity) and a measurement when it
 * says false.  Records written before the declaration (no member) are read
 * by the rule their writer now applies: bytes and counts without samples
 * outside a run scope are contracts. */
bb_qkind_t bb_quantity_kind(const char *name, const cJSON *q)
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
        /* A closed standard output replaces nothing; writing to it fails
         * later, as lost output. */
        if (fstat(fd, &sb) != 0 && path == NULL)
            return BB_OK;
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
