/* check-record --expect EXPECT RECORD [PATH=VALUE]...: checks a bbench
 * record against a benchmark's expectations (tests/expect/NAME.json), for
 * the shell tests.  Each PATH=VALUE is a member the run must hold with that
 * value (a number, null, or else a string).
 *
 * EXPECT is JSON: {"benchmark": NAME, "members": [dotted paths that must
 * exist], "equal": {PATH: VALUE} (members with that value), "status": S
 * (every point's), "parameters": [names every point has], "quantities":
 * [RULE...]}
 * with each RULE {"name", "unit", and optionally "where": {PARAM: [VALUES]}
 * (the points the rule is for), "timing": true (>= 3 samples, median inside
 * its range, no negative sample), "value": "number" (the default) | "null"
 * | "either", "null_when": {PARAM: VALUE} (null with a reason there, a
 * number elsewhere), "min" / "max" on a number, "within": NAME (each sample
 * at most that quantity's sample)}.  A null value always needs a reason.
 * Every record must count its measurements (run.measurement.measurements
 * and .calls above 0): a benchmark that measured around the runner fails;
 * in every sample of a timing that lists what it includes, those parts
 * must add up to at most it; and first_call's timing of the same name must
 * list the same.
 *
 * Reads RECORD with the record validator (bb_record_read).  Prints every
 * failure and a summary; exit 0 all passed, 1 a check failed, 2 usage or an
 * unreadable file. */
#include "config.h"
#include "record/bbrecord.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void check(int ok, const char *where, const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL %s: %s\n", where, what);
}

static const cJSON *get(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

static int is_num(const cJSON *o) { return cJSON_IsNumber(o) && isfinite(o->valuedouble); }

/* A dotted path whose members may themselves contain dots: at each step the
 * longest member name that the rest of the path starts with. */
static const cJSON *get_path(const cJSON *node, const char *path)
{
    while (node != NULL && *path != '\0') {
        const cJSON *next = NULL, *child;
        size_t used = 0;
        cJSON_ArrayForEach(child, node) {
            size_t n = child->string ? strlen(child->string) : 0;
            if (n > used && strncmp(path, child->string, n) == 0
                && (path[n] == '.' || path[n] == '\0')) {
                next = child;
                used = n;
            }
        }
        node = next;
        path += used;
        if (*path == '.')
            path++;
    }
    return node;
}

/* Does a parameter value equal an expected one (number or string)? */
static int same_value(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
        return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a) && cJSON_IsString(b))
        return strcmp(a->valuestring, b->valuestring) == 0;
    return cJSON_IsNull(a) && cJSON_IsNull(b);
}

/* Every PARAM of cond has (one of) its values in the point's parameters. */
static int point_matches(const cJSON *params, const cJSON *cond)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cond) {
        const cJSON *have = get(params, c->string);
        int any = 0;
        if (cJSON_IsArray(c)) {
            const cJSON *v;
            cJSON_ArrayForEach(v, c)
                any |= same_value(have, v);
        } else {
            any = same_value(have, c);
        }
        if (!any)
            return 0;
    }
    return 1;
}

static void check_timing(const cJSON *q, const char *where)
{
    const cJSON *samples = get(q, "samples"), *median = get(q, "median");
    const cJSON *range = get(q, "range"), *s;
    check(cJSON_IsArray(samples) && cJSON_GetArraySize(samples) >= 3, where,
          "fewer than 3 samples");
    int negative = 0;
    cJSON_ArrayForEach(s, samples)
        negative |= !is_num(s) || s->valuedouble < 0.0;
    check(!negative, where, "a sample is negative or not a number");
    int shaped = is_num(median) && cJSON_IsArray(range) && cJSON_GetArraySize(range) == 2
                 && is_num(cJSON_GetArrayItem(range, 0))
                 && is_num(cJSON_GetArrayItem(range, 1));
    check(shaped, where, "median or range missing");
    if (shaped)
        check(cJSON_GetArrayItem(range, 0)->valuedouble <= median->valuedouble
                  && median->valuedouble <= cJSON_GetArrayItem(range, 1)->valuedouble,
              where, "median outside its range");
}

static void check_within(const cJSON *q, const cJSON *outer, const char *where)
{
    const cJSON *a = get(q, "samples"), *b = get(outer, "samples");
    check(cJSON_IsArray(a) && cJSON_IsArray(b)
              && cJSON_GetArraySize(a) == cJSON_GetArraySize(b), where,
          "no samples to compare with its whole");
    for (int i = 0; i < cJSON_GetArraySize(a) && i < cJSON_GetArraySize(b); i++)
        if (cJSON_GetArrayItem(a, i)->valuedouble > cJSON_GetArrayItem(b, i)->valuedouble) {
            check(0, where, "a sample exceeds the same sample of its whole");
            return;
        }
}

/* Every timing that lists what it includes: in each sample its parts add up
 * to at most it (the runner takes a sample's parts from the rank with the
 * slowest whole; a maximum per part would not keep this), and so do their
 * values at the whole's median sample. */
static void check_parts_add_up(const cJSON *quantities, const char *where)
{
    const cJSON *q;
    cJSON_ArrayForEach(q, quantities) {
        const cJSON *inc = get(q, "includes"), *whole = get(q, "samples"), *name;
        if (!cJSON_IsArray(inc) || !cJSON_IsArray(whole))
            continue;
        int n = cJSON_GetArraySize(whole), over = 0;
        for (int k = 0; k < n; k++) {
            double sum = 0.0;
            cJSON_ArrayForEach(name, inc) {
                const cJSON *part = get(get(quantities, cJSON_GetStringValue(name)
                                                            ? name->valuestring : ""),
                                        "samples");
                if (cJSON_IsArray(part) && cJSON_GetArraySize(part) == n)
                    sum += cJSON_GetArrayItem(part, k)->valuedouble;
            }
            /* Rounding of the means only: the parts are the same clock's. */
            over |= sum > cJSON_GetArrayItem(whole, k)->valuedouble * (1.0 + 1e-9) + 1e-15;
        }
        char what[160];
        snprintf(what, sizeof what, "the parts of %s add up to more than it in a sample",
                 q->string);
        check(!over, where, what);
    }
}

/* The cold first call's timings list what they include, as the samples'. */
static void check_first_includes(const cJSON *quantities, const cJSON *first,
                                 const char *where)
{
    const cJSON *q;
    cJSON_ArrayForEach(q, quantities) {
        const cJSON *inc = get(q, "includes"), *f = get(first, q->string);
        if (!cJSON_IsArray(inc) || f == NULL || cJSON_IsNull(get(f, "value")))
            continue;
        char what[160];
        snprintf(what, sizeof what, "first_call.%s does not list what it includes as %s does",
                 q->string, q->string);
        check(cJSON_Compare(inc, get(f, "includes"), 1), where, what);
    }
}

static void check_rule(const cJSON *rule, const cJSON *params, const cJSON *quantities,
                       const char *point_where)
{
    const char *name = cJSON_GetStringValue(get(rule, "name"));
    const char *unit = cJSON_GetStringValue(get(rule, "unit"));
    char where[512];
    snprintf(where, sizeof where, "%s.%s", point_where, name ? name : "?");
    const cJSON *q = get(quantities, name ? name : "");
    check(cJSON_IsObject(q), where, "missing");
    if (!cJSON_IsObject(q))
        return;
    const char *have_unit = cJSON_GetStringValue(get(q, "unit"));
    check(unit != NULL && have_unit != NULL && strcmp(unit, have_unit) == 0, where,
          "unit differs from the expected one");
    const cJSON *value = get(q, "value");
    const char *want = cJSON_GetStringValue(get(rule, "value"));
    if (want == NULL)
        want = "number";
    const cJSON *null_when = get(rule, "null_when");
    if (null_when != NULL)
        want = point_matches(params, null_when) ? "null" : "number";
    if (strcmp(want, "null") == 0 || (strcmp(want, "either") == 0 && cJSON_IsNull(value)))
        check(cJSON_IsNull(value), where, "a number where null is expected");
    else
        check(is_num(value), where, "not a number");
    if (cJSON_IsNull(value)) {
        const char *reason = cJSON_GetStringValue(get(q, "reason"));
        check(reason != NULL && reason[0] != '\0', where, "null without a reason");
        return;
    }
    if (is_num(get(rule, "min")) && is_num(value))
        check(value->valuedouble >= get(rule, "min")->valuedouble, where, "below its minimum");
    if (is_num(get(rule, "max")) && is_num(value))
        check(value->valuedouble <= get(rule, "max")->valuedouble, where, "above its maximum");
    if (cJSON_IsTrue(get(rule, "timing")))
        check_timing(q, where);
    const char *within = cJSON_GetStringValue(get(rule, "within"));
    if (within != NULL)
        check_within(q, get(quantities, within), where);
}

/* PATH=VALUE from the command line: null, or the member's string or
 * number written as VALUE (caller frees). */
static cJSON *arg_value(const cJSON *have, const char *text)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (strcmp(text, "null") == 0)
        return cJSON_CreateNull();
    if (cJSON_IsNumber(have) && end != text && *end == '\0')
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(text);
}

static void check_equal(const cJSON *doc, const char *path, const cJSON *want)
{
    const cJSON *have = get_path(doc, path);
    check(have != NULL && same_value(have, want), path, "not the expected value");
}

/* The expectations: plain JSON, not a record. */
static cJSON *read_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    int whole = feof(f) && !ferror(f);
    fclose(f);
    if (!whole)
        return NULL;
    buf[n] = '\0';
    return cJSON_Parse(buf);
}

int main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[1], "--expect") != 0) {
        fprintf(stderr, "usage: check-record --expect EXPECT RECORD [PATH=VALUE]...\n");
        return 2;
    }
    for (int i = 4; i < argc; i++)
        if (strchr(argv[i], '=') == NULL || argv[i][0] == '=') {
            fprintf(stderr, "check-record: '%s' is not PATH=VALUE\n", argv[i]);
            return 2;
        }
    char err[512];
    cJSON *expect = NULL, *doc = NULL;
    if ((expect = read_json(argv[2])) == NULL) {
        fprintf(stderr, "check-record: %s: unreadable or not JSON (at most 64 KiB)\n",
                argv[2]);
        return 2;
    }
    if (bb_record_read(argv[3], &doc, err, sizeof err) != BB_OK) {
        printf("FAIL %s: %s\n", argv[3], err);
        cJSON_Delete(expect);
        return 1;
    }
    const char *bench = cJSON_GetStringValue(get(expect, "benchmark"));
    const char *have = cJSON_GetStringValue(get(doc, "benchmark"));
    check(bench != NULL && have != NULL && strcmp(bench, have) == 0, "benchmark",
          "not the expected benchmark");
    const cJSON *m;
    cJSON_ArrayForEach(m, get(expect, "members"))
        check(get_path(doc, cJSON_GetStringValue(m) ? m->valuestring : "") != NULL,
              cJSON_GetStringValue(m) ? m->valuestring : "?", "missing member");

    const cJSON *eq;
    cJSON_ArrayForEach(eq, get(expect, "equal"))
        check_equal(doc, eq->string, eq);
    for (int i = 4; i < argc; i++) {
        char path[256];
        const char *value = strchr(argv[i], '=') + 1;
        snprintf(path, sizeof path, "%.*s", (int)(value - 1 - argv[i]), argv[i]);
        cJSON *want = arg_value(get_path(doc, path), value);
        check_equal(doc, path, want);
        cJSON_Delete(want);
    }
    const char *status = cJSON_GetStringValue(get(expect, "status"));

    /* Every point was measured through the runner, which counts it: a run
     * summary of 0 measurements or 0 calls is a benchmark that measured
     * around the runner. */
    const cJSON *summary = get_path(doc, "run.measurement");
    const cJSON *measurements = get(summary, "measurements"), *calls = get(summary, "calls");
    check(is_num(measurements) && measurements->valuedouble > 0,
          "run.measurement.measurements", "not counted (0 or missing)");
    check(is_num(calls) && is_num(measurements) && calls->valuedouble >= measurements->valuedouble
              && calls->valuedouble > 0,
          "run.measurement.calls", "not counted (0, missing or below the measurements)");

    int npoints = 0;
    const cJSON *pt;
    cJSON_ArrayForEach(pt, get(doc, "points")) {
        char where[64];
        snprintf(where, sizeof where, "points[%d]", npoints++);
        const cJSON *params = get(pt, "parameters"), *quantities = get(pt, "quantities");
        if (status != NULL)
            check(cJSON_GetStringValue(get(pt, "status")) != NULL
                      && strcmp(get(pt, "status")->valuestring, status) == 0,
                  where, "not the expected status");
        const cJSON *p;
        cJSON_ArrayForEach(p, get(expect, "parameters"))
            check(get(params, cJSON_GetStringValue(p) ? p->valuestring : "") != NULL, where,
                  "a parameter is missing");
        check_parts_add_up(quantities, where);
        check_first_includes(quantities, get(pt, "first_call"), where);
        const cJSON *rule;
        cJSON_ArrayForEach(rule, get(expect, "quantities"))
            if (get(rule, "where") == NULL || point_matches(params, get(rule, "where")))
                check_rule(rule, params, quantities, where);
    }
    check(npoints > 0, "points", "none");
    printf("check-record %s: %d points, %d checks passed, %d failed\n", have ? have : "?",
           npoints, passed, failed);
    cJSON_Delete(expect);
    cJSON_Delete(doc);
    return failed == 0 ? 0 : 1;
}
