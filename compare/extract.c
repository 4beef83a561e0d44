/* extract.c: tab-separated plot data of a record set (bbench-compare
 * --extract).  Part of bbench-compare's comparison (compare.h); MPI-free. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

#include <stdlib.h>
#include <string.h>

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
