/* match.c: points and their matching keys, labels (the full one and the short
 * one of the report), unmatched points.  Part of bbench-compare's comparison
 * (compare.h); MPI-free. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

#include <stdlib.h>
#include <string.h>

static int bb_ignored(const bb_compare_options_t *o, const char *name)
{
    for (size_t i = 0; i < o->n_ignore; i++)
        if (strcmp(o->ignore_parameters[i], name) == 0)
            return 1;
    return 0;
}

/* " NAME=VALUE" of one parameter for a label.  Descriptive strings are cut
 * short (a label is for reading; matching uses the full canonical key), and
 * a value is free text: its control characters become spaces so that a
 * label stays on its line. */
static void bb_label_add(bb_buf_t *b, const cJSON *e)
{
    bb_buf_t vb = {0};
    bb_plain(&vb, e);
    char *v = bb_buf_take(&vb);
    for (char *c = v; c != NULL && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
    if (v == NULL)
        b->failed = 1;
    else if (strlen(v) > 24)
        bb_buf_printf(b, " %s=%.*s...", e->string, bb_utf8_cut(v, 21), v);
    else
        bb_buf_printf(b, " %s=%s", e->string, v);
    free(v);
}

/* " rank_stat=mean" into b when doc's samples are means over ranks: such a
 * point matches only points taken alike (a mean is below the slowest
 * rank's time by construction, never an improvement).  Nothing for max, the
 * default, which records older than --rank-stat took too. */
static void bb_rank_stat_key(bb_buf_t *b, const cJSON *doc)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "run"), "measurement");
    const cJSON *stat = cJSON_GetObjectItemCaseSensitive(m, "rank_stat");
    if (cJSON_IsString(stat) && strcmp(stat->valuestring, "max") != 0)
        bb_buf_printf(b, " rank_stat=%.16s", stat->valuestring);
}

static char *bb_point_label(const bb_set_record_t *r, const cJSON *params,
                            const bb_compare_options_t *options)
{
    bb_buf_t b = {0};
    bb_buf_printf(&b, "%s n=%lld", r->benchmark, (long long)r->ranks);
    if (r->hosts != 1)
        bb_buf_printf(&b, " hosts=%lld", (long long)r->hosts);
    bb_simulated_key(&b, r->doc);
    bb_rank_stat_key(&b, r->doc);
    const cJSON *e;
    cJSON_ArrayForEach(e, params) {
        if (options && bb_ignored(options, e->string))
            continue;
        bb_label_add(&b, e);
    }
    return bb_buf_take(&b);
}

void bb_points_free(bb_point_ref_t *v, size_t n)
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

bb_status_t bb_points_collect(const bb_record_set_t *set,
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
            /* never a simulated point against a measured one */
            bb_simulated_key(&kb, r->doc);
            bb_rank_stat_key(&kb, r->doc);
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

/* Labels for the one-line report: the parameters whose values differ among
 * the matched points of the same benchmark (a sweep repeats source=0,
 * samples=3 ... on every point; they tell nothing apart). */
void bb_short_labels(cJSON *pairs)
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
            bb_label_add(&b, e);
        }
        char *label = bb_buf_take(&b);
        if (label != NULL)
            cJSON_AddStringToObject(p, "short_label", label);
        free(label);
    }
free_seen:
    cJSON_Delete(seen);
}

void bb_add_unmatched(cJSON *list, cJSON *groups, const char *side,
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
